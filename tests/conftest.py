"""Fixtures only (shared helpers live in the ``helpers`` package): the scanner implementations every scanner
test runs on, and the hypothesis profile."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from helpers import COMPILED
from ssewire import _scanner_py

# The implementation fixtures hold no state, so function-scoped fixtures are safe under hypothesis.
settings.register_profile("ssewire", suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
settings.load_profile("ssewire")

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


@pytest.fixture
def typed_decoding_off() -> Iterator[None]:
    """Typed decoding (the compiled delta reader and msgspec's structs) off for one test, then on again."""
    from ssewire.normalizers import typed

    typed.set_enabled(False)
    try:
        yield
    finally:
        typed.set_enabled(True)
