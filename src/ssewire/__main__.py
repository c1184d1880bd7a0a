"""``python -m ssewire``: the command line (see :mod:`ssewire.cli`)."""

import sys

from .cli import console

sys.exit(console())
