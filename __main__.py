"""``python -m algorank``: the command-line interface."""

import sys

__all__: list[str] = []

if __name__ == "__main__":
    try:
        from algorank.cli import main
    except KeyboardInterrupt:  # Ctrl-C while Python starts: no traceback
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    sys.exit(main())
