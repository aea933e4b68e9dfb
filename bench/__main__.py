"""Entry point of ``python -m bench`` (and of ``tox -e bench``)."""

import sys

from bench import cli

if __name__ == "__main__":
    sys.exit(cli.main())
