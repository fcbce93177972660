"""``python -m algorank``: the command-line interface."""

import sys

from algorank.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
