"""Shared fixtures: the scanner implementations (every scanner test runs on each) and the shared corpus."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Optional

import pytest
from hypothesis import HealthCheck, settings

from ssewire import _scanner_py

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = Path(os.environ.get("SSEWIRE_CORPUS", ROOT.parent / "shared" / "corpus"))
# The implementation fixtures hold no state, so function-scoped fixtures are safe under hypothesis.
settings.register_profile("ssewire", suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
settings.load_profile("ssewire")

CHUNK_SIZES = (1, 7, 13, 17, 29, 33, 41, 50, 64, 4096, None)  # None: the whole stream in one feed


def _compiled() -> Optional[ModuleType]:
    try:
        return importlib.import_module("ssewire._scanner_c")
    except ImportError:
        return None


COMPILED = _compiled()
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


def chunked(data: bytes, size: Optional[int]) -> list[bytes]:
    """``data`` cut into ``size``-byte chunks (one chunk when ``size`` is None)."""
    if size is None:
        return [data]
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def peak_traced(fn: Callable[[], Any]) -> int:
    """Peak traced memory (bytes) while ``fn()`` runs; skips the test where tracemalloc is missing (PyPy)."""
    tracemalloc = pytest.importorskip("tracemalloc")
    tracemalloc.start()
    try:
        fn()
        return int(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def load_manifest() -> list[dict[str, Any]]:
    """The corpus captures, or an empty list when ``../shared/corpus`` is absent."""
    manifest = CORPUS / "manifest.json"
    if not manifest.is_file():
        return []
    return list(json.loads(manifest.read_text(encoding="utf-8"))["captures"])
