"""``python -m pmanifest``: the same command line as the ``pmanifest`` script."""

from __future__ import annotations

from pmanifest.cli.main import main

if __name__ == "__main__":
    main(prog_name="pmanifest")
