"""`python -m corpus` (from the repository's root): the same command line as corpus/build.py."""
from __future__ import annotations

import sys

from .driver import main

sys.exit(main(prog="python -m corpus"))
