"""Where the compiled scanner lived before 0.2 (:mod:`ssewire._scan.scanner_c`): ``ssewire._scanner_c.SIMD`` and
pickles of its objects made by earlier versions keep working."""

import sys

from ._scan import scanner_c

sys.modules[__name__] = scanner_c  # this name is the module itself: every attribute, now and later
