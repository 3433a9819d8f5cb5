"""Input and output at the edges: the one reader (``reading``: regular files, FIFOs and stdin,
bounded, decoded by one set of rules), the one writer (``writing``: atomic files, stdout, never
an input), the one escaper (``terminal``: text bound for a terminal or a log) and the bounds
every parser and analyser of input keeps (``limits``).

May import ``pmanifest.errors`` only.
"""
