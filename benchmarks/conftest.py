"""Fixtures for the pytest-benchmark suites (``pytest benchmarks/ --benchmark-only``).

Streams are generated once per session at ``SSEWIRE_BENCH_MB`` megabytes (default 4) and fed in 16 KiB chunks;
each benchmark runs ``SSEWIRE_BENCH_ROUNDS`` rounds (default 15) after one warm-up, with its output checked
against the pure twin's first. The compiled parameter is skipped, with the reason, when it is not built.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any, Callable

import pytest
from tests.helpers.markers import register as register_markers

from ssewire._scan import scanner_py as _scanner_py

from .contenders import CHUNK_SIZE, Case, Outcome, compiled_scanner, prepare
from .generate import STREAMS, load
from .measure import Reference, check_outcome, reference

SIZE = int(float(os.environ.get("SSEWIRE_BENCH_MB", "4")) * 1_000_000)
ROUNDS = int(os.environ.get("SSEWIRE_BENCH_ROUNDS", "15"))

COMPILED, WHY_NOT = compiled_scanner()
IMPLEMENTATIONS = [
    pytest.param("cython", id="cython", marks=pytest.mark.skipif(COMPILED is None, reason=str(WHY_NOT))),
    pytest.param("python", id="python"),
]

_cases: dict[str, tuple[Case, Reference]] = {}


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config)  # the suite's markers (addopts deselects `slow`)


def _case(name: str) -> tuple[Case, Reference]:
    if name not in _cases:
        case = prepare(load(name, SIZE))
        _cases[name] = (case, reference(case))
    return _cases[name]


@pytest.fixture(params=list(STREAMS))
def stream_case(request: pytest.FixtureRequest) -> tuple[Case, Reference]:
    """One generated stream (cut into chunks) and the pure twin's reference output on it."""
    return _case(request.param)


@pytest.fixture(params=IMPLEMENTATIONS)
def scanner_module(request: pytest.FixtureRequest) -> ModuleType:
    """The scanner implementation under test: ``ssewire._scan.scanner_c`` or ``ssewire._scan.scanner_py``."""
    return COMPILED if request.param == "cython" else _scanner_py  # type: ignore[return-value]


def measure(benchmark: Any, group: str, run: Callable[[Case], Outcome], case: Case, ref: Reference) -> None:
    """Check ``run``'s output on ``case`` against the reference, then time it in ``group``."""
    problem = check_outcome(run(case), ref)
    assert problem is None, problem
    benchmark.group = f"{group} {case.stream.name}"
    benchmark.extra_info.update(bytes=case.stream.size, events=ref.events, chunk_size=CHUNK_SIZE, correct=True)
    benchmark.pedantic(run, args=(case,), rounds=ROUNDS, iterations=1, warmup_rounds=1)
