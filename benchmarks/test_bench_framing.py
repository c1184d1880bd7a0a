"""Framing alone: each scanner implementation on each stream, 16 KiB chunks, output checked before timing."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from .conftest import measure
from .contenders import Case, ssewire_framing
from .measure import Reference


def test_framing(benchmark: Any, stream_case: tuple[Case, Reference], scanner_module: ModuleType) -> None:
    case, ref = stream_case
    measure(benchmark, "framing", ssewire_framing(scanner_module), case, ref)
