"""Differential fuzzing of the scanners: the compiled module against the pure-Python twin (run by hand).

    python tests/fuzz/fuzz_scanners.py -max_total_time=180

Each input picks a framing (SSE or JSON array), a ``max_buffer``, ``flush_incomplete`` and a chunking, then
feeds the same bytes to both implementations. Any difference in events, parser state after each call, or the
exception type raised by each call, is a crash. The file name keeps pytest from collecting it.
"""

from __future__ import annotations

import sys
from typing import Any

import atheris

with atheris.instrument_imports():
    from ssewire import _scanner_c, _scanner_py

CLOSE = object()
MAX_BUFFERS = (None, 1, 4, 16, 64, 300, 4096)


def _state(parser: Any) -> tuple[Any, ...]:
    if hasattr(parser, "last_event_id"):
        return (parser.last_event_id, parser.retry, parser.events_parsed, parser.bytes_fed)
    return (parser.finished, parser.events_parsed, parser.bytes_fed)


def _as_type(chunk: bytes, kind: int) -> Any:
    if kind == 1:
        return bytearray(chunk)
    if kind == 2:
        return memoryview(chunk)
    if kind == 3:
        doubled = bytearray(len(chunk) * 2)
        doubled[::2] = chunk
        return memoryview(doubled)[::2]
    return chunk


def _trace(mod: Any, json_array: bool, kwargs: dict[str, Any], calls: list[Any]) -> list[tuple[Any, ...]]:
    parser = mod.JSONArrayStreamParser(**kwargs) if json_array else mod.SSEParser(**kwargs)
    out: list[tuple[Any, ...]] = []
    for call in calls:
        try:
            if call is CLOSE:
                events = parser.close()
            else:
                chunk, kind = call
                events = parser.feed(_as_type(chunk, kind))
            out.append(("ok", [(e.event, e.data, e.id, e.retry) for e in events], _state(parser)))
        except Exception as exc:
            out.append(("raised", type(exc), _state(parser)))
    return out


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    json_array = fdp.ConsumeBool()
    max_buffer = MAX_BUFFERS[fdp.ConsumeIntInRange(0, len(MAX_BUFFERS) - 1)]
    kwargs: dict[str, Any] = {} if max_buffer is None else {"max_buffer": max_buffer}
    if not json_array:
        kwargs["flush_incomplete"] = fdp.ConsumeBool()
    cuts = [fdp.ConsumeIntInRange(0, 255) for _ in range(fdp.ConsumeIntInRange(0, 8))]
    kinds = [fdp.ConsumeIntInRange(0, 3) for _ in range(4)]
    body = fdp.ConsumeBytes(fdp.remaining_bytes())
    if json_array and fdp.ConsumeBool():
        body = b"[" + body
    calls: list[Any] = []
    pos = 0
    for i, size in enumerate(cuts):
        calls.append((body[pos : pos + size], kinds[i % 4]))
        pos += size
    calls.append((body[pos:], kinds[0]))
    calls += [CLOSE, (b"x", 0), CLOSE]
    expected = _trace(_scanner_py, json_array, kwargs, calls)
    got = _trace(_scanner_c, json_array, kwargs, calls)
    if got != expected:
        raise AssertionError(f"implementations differ\n  python: {expected}\n  cython: {got}\n  input: {data!r}")


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
