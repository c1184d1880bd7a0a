"""What the tests share, in one package (tests never import from ``conftest``, which only holds fixtures):
paths to the fixtures and the shared corpus, chunking, the compiled module, and the submodules ``corpus``
(manifest -> provider), ``checks`` (result checks), ``events`` (feeding normalisers, event views), ``trace``
(scanner call traces) and ``http_server`` (the local HTTP server).

``SSEWIRE_REQUIRE_CORPUS=1`` (set by ``.ci/run``) turns a missing ``../shared/corpus`` into an error instead of
skipped corpus tests.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Optional

import pytest

from ssewire._config import env_flag

__all__ = [
    "CHUNK_SIZES",
    "COMPILED",
    "CORPUS",
    "FIXTURES",
    "ROOT",
    "chunked",
    "examples",
    "framed_at_every_split",
    "framed_data",
    "load_manifest",
    "peak_traced",
]

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = Path(os.environ.get("SSEWIRE_CORPUS", ROOT.parent / "shared" / "corpus"))

CHUNK_SIZES = (1, 7, 13, 17, 29, 33, 41, 50, 64, 4096, None)  # None: the whole stream in one feed


def _compiled() -> Optional[ModuleType]:
    try:
        return importlib.import_module("ssewire._scan.scanner_c")
    except ImportError:
        return None


#: The compiled scanner module, or None where it is not built.
COMPILED = _compiled()


def chunked(data: bytes, size: Optional[int]) -> list[bytes]:
    """``data`` cut into ``size``-byte chunks (one chunk when ``size`` is None)."""
    if size is None:
        return [data]
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def framed_data(parser: Any, data: bytes, size: Optional[int] = None) -> list[str]:
    """The data of every event ``parser`` frames from ``data`` fed in ``size``-byte chunks, then ``close()``; the
    events of the JSON framings carry no event name, id or retry, and ``events_parsed`` counts them."""
    out = []
    for chunk in chunked(data, size):
        out += parser.feed(chunk)
    out += parser.close()
    assert all(e.event is None and e.id is None and e.retry is None for e in out)
    assert parser.events_parsed == len(out)
    return [e.data for e in out]


def framed_at_every_split(make: Callable[[], Any], data: bytes) -> list[str]:
    """:func:`framed_data` of a parser from ``make()``, checked to be the same fed split at every byte and fed a byte
    at a time."""
    whole = framed_data(make(), data)
    for cut in range(len(data) + 1):
        parser = make()
        got = parser.feed(data[:cut]) + parser.feed(data[cut:]) + parser.close()
        assert [e.data for e in got] == whole, f"split at {cut}"
    assert framed_data(make(), data, 1) == whole
    return whole


def result_snapshot(result: Any) -> tuple[Any, ...]:
    """Everything a :class:`~ssewire.StreamResult` holds, comparable with ``==`` (calls and usage as dicts)."""
    usage = result.usage
    return (
        result.text,
        result.reasoning,
        [c.to_dict() for c in result.tool_calls],
        [c.to_dict() for c in result.incomplete_tool_calls],
        result.stop_reason,
        result.raw_stop_reason,
        None if usage is None else (usage.to_dict(), usage.raw),
        result.error,
        result.signatures,
        result.encrypted_reasoning,
        result.response_id,
        result.model,
        result.last_sequence,
        result.service_tier,
    )


def examples(n: int) -> int:
    """A property test's example count: ``n`` under the ``ci`` hypothesis profile (``SSEWIRE_HYPOTHESIS_PROFILE=ci``,
    set by ``.ci/run``), a quarter of it (at least 10) under the default one (``tests/conftest.py``)."""
    from hypothesis import settings

    profile = settings.default
    assert profile is not None  # tests/conftest.py loaded one
    return max(10, n * profile.max_examples // 100)


def run_python(code: str, **env: str) -> str:
    """The stripped stdout of ``python -c code`` in a fresh interpreter, with ``env`` over this environment (less
    ``SSEWIRE_NO_EXTENSIONS``: a test names it when it wants it); raises when the code fails."""
    environ = {k: v for k, v in os.environ.items() if k != "SSEWIRE_NO_EXTENSIONS"}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True
    ).stdout.strip()


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
    """The corpus captures; an empty list when ``../shared/corpus`` is absent, unless ``SSEWIRE_REQUIRE_CORPUS``
    is set, which makes its absence an error (CI must not pass by skipping the recordings)."""
    manifest = CORPUS / "manifest.json"
    if not manifest.is_file():
        if env_flag("SSEWIRE_REQUIRE_CORPUS"):
            raise RuntimeError(f"SSEWIRE_REQUIRE_CORPUS is set but there is no corpus at {CORPUS}")
        return []
    captures = list(json.loads(manifest.read_text(encoding="utf-8"))["captures"])
    return captures + _more_providers()


def _more_providers() -> list[dict[str, Any]]:
    """The captures of ``more-providers/`` whose provider ssewire reads so far (files named from ``CORPUS``)."""
    from .corpus import PROVIDER_FOR

    manifest = CORPUS / "more-providers" / "manifest.json"
    if not manifest.is_file():
        if env_flag("SSEWIRE_REQUIRE_CORPUS"):
            raise RuntimeError(f"SSEWIRE_REQUIRE_CORPUS is set but there is no {manifest}")
        return []
    captures = json.loads(manifest.read_text(encoding="utf-8"))["captures"]
    return [
        dict(capture, file=f"more-providers/{capture['file']}")
        for capture in captures
        if (capture["api"], capture["provider"]) in PROVIDER_FOR
    ]
