"""End to end (``iter_unified`` built by hand): scanner -> provider normaliser, per implementation and stream."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from .conftest import measure
from .contenders import Case, ssewire_e2e
from .measure import Reference


def test_end_to_end(benchmark: Any, stream_case: tuple[Case, Reference], scanner_module: ModuleType) -> None:
    case, ref = stream_case
    if ref.unified is None:
        pytest.fail(f"pure-twin reference failed on {case.stream.name}: {ref.error}")
    measure(benchmark, "end-to-end", ssewire_e2e(scanner_module), case, ref)
