"""Input and output at the edges: the one reader (``reading``: regular files, FIFOs and stdin,
bounded) and the one writer (``writing``: atomic files, stdout, never an input).

May import ``pmanifest.errors`` only.
"""
