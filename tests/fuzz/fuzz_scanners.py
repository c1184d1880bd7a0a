"""Differential fuzzing of the scanners: the compiled module against the pure-Python twin (run by hand).

    python tests/fuzz/fuzz_scanners.py -max_total_time=60 -seed=1   # libFuzzer prints "INFO: Seed: 1" first

Each input picks a framing (SSE, JSON array, NDJSON, the AWS event-stream, or ``auto``), a ``max_buffer``,
``flush_incomplete``, a chunking and the compiled module's vector loops (AVX2 or SSE2), then feeds the same bytes to
both implementations. Any difference in events (an event-stream message's headers, payload, message and content
type included), parser state after each call, or the exception raised by each call, is a crash. Event-stream
inputs are mostly built from the fuzzer's bytes as messages with valid CRCs (else nearly every input would stop
at the first prelude CRC): typed headers, raw header blocks, lengths of its choosing, then maybe a flipped byte.
Text bodies may be given a hostile shape: whitespace before the first event, an event of many (empty) data lines,
deeply nested JSON in an array. ``auto`` runs :class:`ssewire.framing.AutoScanner` on each implementation's
scanners: both must agree, and give the events (and error type) of the framing they recognised, named.
The file name keeps pytest from collecting it.
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import atheris

# ssewire first, under instrumentation: the helpers import ssewire too, and a module imported before this block is
# not instrumented (the fuzzer then runs without coverage guidance: "no interesting inputs were found")
with atheris.instrument_imports(include=["ssewire"]):
    from ssewire import framing
    from ssewire._scan import scanner_c as _scanner_c
    from ssewire._scan import scanner_py as _scanner_py

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: the shared trace helpers
from helpers.trace import CLOSE, as_buffer_type, event_key, run_calls

MAX_BUFFERS = (None, 1, 4, 16, 64, 300, 4096)
#: An event-stream message is at least 16 bytes: smaller bounds refuse every message.
EVENT_STREAM_MAX_BUFFERS = (None, None, 16, 40, 100, 300, 4096)


SCANNERS = ("SSEParser", "JSONArrayStreamParser", "NDJSONParser", "EventStreamParser", "auto")
WHITESPACE = (b" ", b"\t", b"\r", b"\n", b"\r\n", b"\n\n")
DATA_LINES = (b"data:", b"data", b"data: ", b"data:x", b"data: yz")
EOLS = (b"\n", b"\r\n", b"\r")
#: Each implementation's registry of framings, for ``auto`` (AutoScanner reads the module's registry).
REGISTRIES = {
    mod: {
        name: entry._replace(scanner=getattr(mod, entry.scanner.__name__))
        for name, entry in framing.FRAMINGS_BY_NAME.items()
    }
    for mod in (_scanner_py, _scanner_c)
}
UNDECIDED = "the start of the body exceeds max_buffer"
#: Header names the event-stream messages draw from (invalid UTF-8 ones decode to the same text).
NAMES = (b":event-type", b":message-type", b":content-type", b":exception-type", b":error-code", b"x", b"", b"\xff")
VALUES = (b"event", b"exception", b"error", b"chunk", b"application/json", b"", b"\xfe")
INTS = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}


def _prelude(total: int, headers: int) -> bytes:
    head = struct.pack(">II", total & 0xFFFFFFFF, headers & 0xFFFFFFFF)
    return head + struct.pack(">I", zlib.crc32(head))


def _header(fdp: atheris.FuzzedDataProvider) -> bytes:
    """One header of any of the 10 types (or, rarely, a type that does not exist)."""
    name = NAMES[fdp.ConsumeIntInRange(0, len(NAMES) - 1)] if fdp.ConsumeBool() else fdp.ConsumeBytes(3)
    kind = fdp.ConsumeIntInRange(0, 10)
    if kind in INTS:
        size = struct.calcsize(INTS[kind])
        value = struct.pack(INTS[kind], fdp.ConsumeIntInRange(-(2 ** (8 * size - 1)), 2 ** (8 * size - 1) - 1))
    elif kind in (6, 7):
        raw = VALUES[fdp.ConsumeIntInRange(0, len(VALUES) - 1)] if fdp.ConsumeBool() else fdp.ConsumeBytes(80)
        value = struct.pack(">H", len(raw)) + raw
    elif kind == 9:
        value = fdp.ConsumeBytes(16).ljust(16, b"\x00")
    elif kind == 10:
        kind = fdp.ConsumeIntInRange(10, 255)
        value = fdp.ConsumeBytes(4)
    else:
        value = b""
    return bytes([len(name)]) + name + bytes([kind]) + value


def _event_stream(fdp: atheris.FuzzedDataProvider) -> bytes:
    """Messages built from the fuzzer's bytes: typed headers or a raw block, a payload, CRCs that hold, lengths that
    may not; then maybe a flipped byte, and maybe the fuzzer's own bytes after them."""
    out = bytearray()
    for _ in range(fdp.ConsumeIntInRange(0, 8)):
        if fdp.ConsumeBool():
            block = b"".join(_header(fdp) for _ in range(fdp.ConsumeIntInRange(0, 4)))
        else:
            block = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 24))
        payload = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 300))
        total, headers = 16 + len(block) + len(payload), len(block)
        if fdp.ConsumeIntInRange(0, 15) == 0:  # lengths of the fuzzer's choosing (the prelude CRC still holds)
            total, headers = fdp.ConsumeIntInRange(0, 2**32 - 1), fdp.ConsumeIntInRange(0, 2**32 - 1)
        body = _prelude(total, headers) + block + payload
        out += body + struct.pack(">I", zlib.crc32(body))
    if out and fdp.ConsumeIntInRange(0, 3) == 0:
        at = fdp.ConsumeIntInRange(0, len(out) - 1)
        out[at] ^= fdp.ConsumeIntInRange(1, 255)
    return bytes(out)


def _hostile(fdp: atheris.FuzzedDataProvider, body: bytes) -> bytes:
    """``body`` maybe given a hostile shape: whitespace before it, an event of many data lines in it, or (inside
    an array) JSON nested deep."""
    shape = fdp.ConsumeIntInRange(0, 7)
    if shape == 1:  # whitespace first: an SSE body may open with blank lines, any framing with whitespace
        run = [WHITESPACE[fdp.ConsumeIntInRange(0, len(WHITESPACE) - 1)] for _ in range(fdp.ConsumeIntInRange(0, 60))]
        return b"".join(run) * fdp.ConsumeIntInRange(1, 8) + body
    if shape == 2:  # many data lines (past the twin's fold of 64 values), maybe empty, then the rest
        line = DATA_LINES[fdp.ConsumeIntInRange(0, len(DATA_LINES) - 1)] + EOLS[fdp.ConsumeIntInRange(0, 2)]
        at = fdp.ConsumeIntInRange(0, len(body))
        return body[:at] + line * fdp.ConsumeIntInRange(0, 400) + body[at:]
    if shape == 3:  # deep nesting inside an array element, closed or cut short
        tokens = [b'{"a":' if fdp.ConsumeBool() else b"[" for _ in range(fdp.ConsumeIntInRange(1, 8))]
        times = fdp.ConsumeIntInRange(0, 3000) // len(tokens) + 1
        opens = b"".join(tokens) * times
        closes = b"".join(b"]" if token == b"[" else b"}" for token in reversed(tokens)) * times
        return b'[{"x":' + opens + body + closes[: fdp.ConsumeIntInRange(0, len(closes))] + b"}]"
    return body


def _trace(mod: Any, scanner: str, kwargs: dict[str, Any], calls: list[Any]) -> list[tuple[Any, ...]]:
    if scanner == "auto":
        return _auto_trace(mod, kwargs, calls)
    return run_calls(getattr(mod, scanner)(**kwargs), calls)


def _auto_trace(mod: Any, kwargs: dict[str, Any], calls: list[Any]) -> list[tuple[Any, ...]]:
    """Every call's outcome through AutoScanner built on ``mod``'s scanners, then the framing it recognised;
    checked against that framing named (same events; the same error type, or auto's own past max_buffer)."""
    framing.FRAMINGS_BY_NAME = REGISTRIES[mod]
    auto = framing.AutoScanner(**kwargs)
    out: list[tuple[Any, ...]] = []
    for call in calls:
        try:
            events = auto.close() if call is CLOSE else auto.feed(as_buffer_type(*call))
            out.append(("ok", [event_key(e) for e in events]))
        except Exception as exc:
            out.append(("raised", type(exc), str(exc)))
    named = auto.framing or "sse"
    body = b"".join(call[0] for call in calls[: calls.index(CLOSE)])
    expected = run_calls(REGISTRIES[mod][named].scanner(**kwargs), [(body, 0), CLOSE])
    got = [event for outcome in out[: calls.index(CLOSE) + 1] if outcome[0] == "ok" for event in outcome[1]]
    want = [event for outcome in expected if outcome[0] == "ok" for event in outcome[1]]
    errors = [outcome[1] for outcome in out[: calls.index(CLOSE) + 1] if outcome[0] == "raised"]
    wanted = [outcome[1] for outcome in expected if outcome[0] == "raised"]
    undecided = any(outcome[0] == "raised" and UNDECIDED in outcome[2] for outcome in out)
    if not undecided and (got != want or errors[:1] != wanted[:1]):
        raise AssertionError(f"auto ({named}) differs from {named}\n  auto: {out}\n  {named}: {expected}")
    return [*out, auto.framing]


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    scanner = SCANNERS[fdp.ConsumeIntInRange(0, len(SCANNERS) - 1)]
    json_array = scanner == "JSONArrayStreamParser"
    bounds = EVENT_STREAM_MAX_BUFFERS if scanner == "EventStreamParser" else MAX_BUFFERS
    max_buffer = bounds[fdp.ConsumeIntInRange(0, len(bounds) - 1)]
    kwargs: dict[str, Any] = {} if max_buffer is None else {"max_buffer": max_buffer}
    if scanner == "SSEParser":
        kwargs["flush_incomplete"] = fdp.ConsumeBool()
    if scanner == "auto" and max_buffer is None:
        kwargs["max_buffer"] = 1 << 16
    cuts = [fdp.ConsumeIntInRange(0, 255) for _ in range(fdp.ConsumeIntInRange(0, 8))]
    event_stream = scanner == "EventStreamParser" and fdp.ConsumeIntInRange(0, 7) != 0  # else the raw bytes
    event_stream = event_stream or (scanner == "auto" and fdp.ConsumeIntInRange(0, 3) == 0)
    kinds = [fdp.ConsumeIntInRange(0, 3) for _ in range(4)]
    open_bracket = json_array and fdp.ConsumeBool()
    _scanner_c._select_simd(fdp.ConsumeBool())  # the AVX2 loops, or the SSE2 ones (same where there is no AVX2)
    body = _event_stream(fdp) if event_stream else b""
    if not event_stream or fdp.ConsumeBool():
        body += fdp.ConsumeBytes(fdp.remaining_bytes())
    if open_bracket:
        body = b"[" + body
    if not event_stream:
        body = _hostile(fdp, body)
    calls: list[Any] = []
    pos = 0
    for i, size in enumerate(cuts):
        calls.append((body[pos : pos + size], kinds[i % 4]))
        pos += size
    calls.append((body[pos:], kinds[0]))
    calls += [CLOSE, (b"x", 0), CLOSE]
    expected = _trace(_scanner_py, scanner, kwargs, calls)
    got = _trace(_scanner_c, scanner, kwargs, calls)
    if got != expected:
        raise AssertionError(f"implementations differ\n  python: {expected}\n  cython: {got}\n  input: {data!r}")


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
