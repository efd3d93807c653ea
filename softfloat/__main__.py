"""``python -m softfloat``: the same command line as the ``softfloat`` script."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
