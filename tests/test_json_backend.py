"""The payload JSON decoder gives the same values whichever decoder is installed (msgspec, orjson, json)."""

from __future__ import annotations

import importlib
import json
from typing import Any, Callable

import pytest

import ssewire._json as backend

SAMPLES = [
    '{"a": 1}',
    "[1, 2.5, null, true]",
    '"\\ud83c\\udf89"',
    "9223372036854775807",
    "-9223372036854775808",
    "NaN",
    "1e400",
    '{"a": "\\ud800"}',
]


def test_same_values_as_the_standard_library() -> None:
    for text in SAMPLES:
        got = backend.loads(text)
        want = json.loads(text)
        assert got == want or (got != got and want != want)  # NaN != NaN


def test_invalid_json_raises_value_error() -> None:
    for text in ["{", "", "[DONE]", "{'a': 1}"]:
        with pytest.raises(ValueError):
            backend.loads(text)


@pytest.mark.parametrize("variable", ["SSEWIRE_NO_FAST_JSON", "SSEWIRE_NO_ORJSON"])
def test_env_var_forces_the_standard_library(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "1")
    reloaded = importlib.reload(backend)
    try:
        assert reloaded.BACKEND == "json"
        assert reloaded.loads('{"a": [1]}') == {"a": [1]}
    finally:
        monkeypatch.delenv(variable)
        importlib.reload(backend)


def test_msgspec_is_preferred_and_can_be_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("msgspec")
    for variable in ("SSEWIRE_NO_MSGSPEC", "SSEWIRE_NO_FAST_JSON", "SSEWIRE_NO_ORJSON"):
        monkeypatch.delenv(variable, raising=False)
    assert importlib.reload(backend).BACKEND == "msgspec"
    monkeypatch.setenv("SSEWIRE_NO_MSGSPEC", "1")
    try:
        assert importlib.reload(backend).BACKEND in ("orjson", "json")
    finally:
        monkeypatch.delenv("SSEWIRE_NO_MSGSPEC")
        importlib.reload(backend)


def test_integers_beyond_64_bits_are_the_documented_orjson_difference() -> None:
    value = backend.loads("123456789012345678901234567890")
    if backend.BACKEND == "orjson":
        assert value == float(123456789012345678901234567890)
    else:
        assert value == 123456789012345678901234567890


def test_two_step_decode_gives_the_same_values_as_loads() -> None:
    def two_step(text: str) -> object:
        try:
            return backend.loads_first(text)
        except backend.FIRST_ERRORS:
            if backend.loads_retry is None:
                raise
            return backend.loads_retry(text)

    for text in SAMPLES:
        got, want = two_step(text), backend.loads(text)
        assert got == want or (got != got and want != want)
    for text in ["{", "", "[DONE]"]:
        with pytest.raises(backend.FIRST_ERRORS):
            two_step(text)


def _peak(fn: Callable[[], object]) -> int:
    tracemalloc: Any = pytest.importorskip("tracemalloc", reason="no tracemalloc on this interpreter (PyPy)")
    tracemalloc.start()
    try:
        fn()
        peak: int = tracemalloc.get_traced_memory()[1]
        return peak
    finally:
        tracemalloc.stop()


_BACKEND_SWITCHES = {"msgspec": {}, "orjson": {"SSEWIRE_NO_MSGSPEC": "1"}, "json": {"SSEWIRE_NO_FAST_JSON": "1"}}


@pytest.mark.parametrize("name", list(_BACKEND_SWITCHES))
def test_decoding_a_large_payload_allocates_about_its_size(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Memory bounded by one event needs a small constant behind it, whichever decoder is installed: orjson
    allocates ~13x a large string-heavy document, so large payloads go to the standard library."""
    pytest.importorskip(name)
    for variable in ("SSEWIRE_NO_FAST_JSON", "SSEWIRE_NO_ORJSON", "SSEWIRE_NO_MSGSPEC"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in _BACKEND_SWITCHES[name].items():
        monkeypatch.setenv(variable, value)
    reloaded = importlib.reload(backend)
    try:
        active = reloaded.BACKEND
        assert active == name
        text = json.dumps({"inlineData": {"data": "QUJD" * 250_000}, "parts": [{"text": "é" * 1000}] * 50})
        assert _peak(lambda: reloaded.loads(text)) <= 2 * len(text)
        assert _peak(lambda: reloaded.loads_first(text)) <= 2 * len(text)
    finally:
        monkeypatch.undo()
        importlib.reload(backend)
