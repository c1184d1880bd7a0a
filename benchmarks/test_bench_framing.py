"""Framing alone: each scanner implementation on each stream, 16 KiB chunks, output checked before timing."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from .conftest import ROUNDS
from .contenders import CHUNK_SIZE, Case, ssewire_framing
from .measure import Reference, check_outcome


def test_framing(benchmark: Any, stream_case: tuple[Case, Reference], scanner_module: ModuleType) -> None:
    case, ref = stream_case
    run = ssewire_framing(scanner_module)
    problem = check_outcome(run(case), ref)
    assert problem is None, problem
    benchmark.group = f"framing {case.stream.name}"
    benchmark.extra_info.update(bytes=case.stream.size, events=ref.events, chunk_size=CHUNK_SIZE, correct=True)
    benchmark.pedantic(run, args=(case,), rounds=ROUNDS, iterations=1, warmup_rounds=1)
