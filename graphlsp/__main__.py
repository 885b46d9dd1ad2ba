"""`python -m graphlsp`: the same as the `graphlsp` command."""

import sys

from graphlsp.cli import main

sys.exit(main())
