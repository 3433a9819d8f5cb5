"""The command line: every command and its options (click), and the one error boundary that
turns failures into one line and an exit code. This is where features are composed: render's
warnings are lint run on render's output (``render_warnings``), and ``render --cluster`` fits
the rendered workloads with the cluster's capacity model (``render_fit``).

May import every other package; nothing imports it but ``pmanifest.__main__``.
"""
