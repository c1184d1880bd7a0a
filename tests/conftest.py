"""Fixtures only (shared helpers live in the ``helpers`` package): the scanner implementations every scanner
test runs on, and the hypothesis profiles."""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from helpers import COMPILED
from helpers.markers import register as register_markers
from ssewire._scan import scanner_py as _scanner_py

# The default profile runs a quarter of each property test's examples (``helpers.examples``); ``ci``, selected by
# ``SSEWIRE_HYPOTHESIS_PROFILE=ci`` (``.ci/run``), runs them all.
settings.register_profile(
    "ssewire", suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None, max_examples=25
)
settings.register_profile("ci", settings.get_profile("ssewire"), max_examples=100)
settings.load_profile(os.environ.get("SSEWIRE_HYPOTHESIS_PROFILE") or "ssewire")


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config)  # here, not in pyproject.toml: they hold where the suite runs outside the tree


NO_COMPILED = pytest.mark.skipif(COMPILED is None, reason="compiled scanner not built")
IMPLEMENTATIONS = [
    pytest.param((_scanner_py, True), id="python"),
    pytest.param((COMPILED, True), id="cython", marks=NO_COMPILED),
    # the compiled scanner's SSE2 loops, where this CPU would otherwise run their AVX2 versions
    pytest.param(
        (COMPILED, False),
        id="cython-sse2",
        marks=pytest.mark.skipif(getattr(COMPILED, "SIMD", None) != "avx2", reason="no AVX2 loops to switch off"),
    ),
]


@pytest.fixture(params=IMPLEMENTATIONS)
def scanner(request: pytest.FixtureRequest) -> Iterator[ModuleType]:
    """The scanner module under test: ``SSEParser``, ``JSONArrayStreamParser`` and ``SSEEvent`` from each twin
    (and the compiled one once more with only its SSE2 loops, on CPUs where it picks AVX2)."""
    module, allow_avx2 = request.param
    if allow_avx2:
        yield module
        return
    module._select_simd(False)
    try:
        yield module
    finally:
        module._select_simd(True)


@pytest.fixture(params=["parquet", "jsonl", "csv"])
def out_format(request: pytest.FixtureRequest) -> str:
    """An output format of ``ssewire batch``: ``parquet`` (skipped where pyarrow is not installed), ``jsonl``,
    ``csv``."""
    fmt: str = request.param
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    return fmt


@pytest.fixture
def typed_decoding_off() -> Iterator[None]:
    """Typed decoding (the compiled delta reader and msgspec's structs) off for one test, then on again."""
    from ssewire.normalizers._fast import typed

    typed.set_enabled(False)
    try:
        yield
    finally:
        typed.set_enabled(True)
