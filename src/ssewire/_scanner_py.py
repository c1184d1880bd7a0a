"""Where the pure-Python scanner lived before 0.2 (:mod:`ssewire._scan.scanner_py`): pickles of its objects made by
earlier versions keep loading."""

import sys

from ._scan import scanner_py

sys.modules[__name__] = scanner_py  # this name is the module itself: every attribute, now and later
