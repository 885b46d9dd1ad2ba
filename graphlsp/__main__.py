"""`python -m graphlsp`: the same as the `graphlsp` command."""

import sys

from graphlsp.cli import drop_working_directory, main

drop_working_directory()
sys.exit(main())
