"""End to end (``iter_unified`` built by hand): scanner -> provider normaliser, per implementation and stream."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from .conftest import ROUNDS
from .contenders import CHUNK_SIZE, Case, ssewire_e2e
from .measure import Reference, check_outcome


def test_end_to_end(benchmark: Any, stream_case: tuple[Case, Reference], scanner_module: ModuleType) -> None:
    case, ref = stream_case
    if ref.unified is None:
        pytest.fail(f"pure-twin reference failed on {case.stream.name}: {ref.error}")
    run = ssewire_e2e(scanner_module)
    problem = check_outcome(run(case), ref)
    assert problem is None, problem
    benchmark.group = f"end-to-end {case.stream.name}"
    benchmark.extra_info.update(bytes=case.stream.size, events=ref.events, chunk_size=CHUNK_SIZE, correct=True)
    benchmark.pedantic(run, args=(case,), rounds=ROUNDS, iterations=1, warmup_rounds=1)
