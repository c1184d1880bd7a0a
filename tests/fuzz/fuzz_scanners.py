"""Differential fuzzing of the scanners: the compiled module against the pure-Python twin (run by hand).

    python tests/fuzz/fuzz_scanners.py -max_total_time=180

Each input picks a framing (SSE, JSON array, NDJSON or the AWS event-stream), a ``max_buffer``,
``flush_incomplete``, a chunking and the compiled module's vector loops (AVX2 or SSE2), then feeds the same bytes to
both implementations. Any difference in events (an event-stream message's headers, payload, message and content
type included), parser state after each call, or the exception raised by each call, is a crash. Event-stream
inputs are mostly built from the fuzzer's bytes as messages with valid CRCs (else nearly every input would stop
at the first prelude CRC): typed headers, raw header blocks, lengths of its choosing, then maybe a flipped byte.
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
    from ssewire import _scanner_c, _scanner_py

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: the shared trace helpers
from helpers.trace import CLOSE, run_calls

MAX_BUFFERS = (None, 1, 4, 16, 64, 300, 4096)
#: An event-stream message is at least 16 bytes: smaller bounds refuse every message.
EVENT_STREAM_MAX_BUFFERS = (None, None, 16, 40, 100, 300, 4096)


SCANNERS = ("SSEParser", "JSONArrayStreamParser", "NDJSONParser", "EventStreamParser")
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


def _trace(mod: Any, scanner: str, kwargs: dict[str, Any], calls: list[Any]) -> list[tuple[Any, ...]]:
    return run_calls(getattr(mod, scanner)(**kwargs), calls)


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    scanner = SCANNERS[fdp.ConsumeIntInRange(0, len(SCANNERS) - 1)]
    json_array = scanner == "JSONArrayStreamParser"
    bounds = EVENT_STREAM_MAX_BUFFERS if scanner == "EventStreamParser" else MAX_BUFFERS
    max_buffer = bounds[fdp.ConsumeIntInRange(0, len(bounds) - 1)]
    kwargs: dict[str, Any] = {} if max_buffer is None else {"max_buffer": max_buffer}
    if scanner == "SSEParser":
        kwargs["flush_incomplete"] = fdp.ConsumeBool()
    cuts = [fdp.ConsumeIntInRange(0, 255) for _ in range(fdp.ConsumeIntInRange(0, 8))]
    event_stream = scanner == "EventStreamParser" and fdp.ConsumeIntInRange(0, 7) != 0  # else the raw bytes
    kinds = [fdp.ConsumeIntInRange(0, 3) for _ in range(4)]
    open_bracket = json_array and fdp.ConsumeBool()
    _scanner_c._select_simd(fdp.ConsumeBool())  # the AVX2 loops, or the SSE2 ones (same where there is no AVX2)
    body = _event_stream(fdp) if event_stream else b""
    if not event_stream or fdp.ConsumeBool():
        body += fdp.ConsumeBytes(fdp.remaining_bytes())
    if open_bracket:
        body = b"[" + body
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
