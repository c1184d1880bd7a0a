"""Differential fuzzing of the scanners: the compiled module against the pure-Python twin (run by hand).

    python tests/fuzz/fuzz_scanners.py -max_total_time=180

Each input picks a framing (SSE, JSON array or NDJSON), a ``max_buffer``, ``flush_incomplete``, a chunking and the
compiled module's vector loops (AVX2 or SSE2), then feeds the same bytes to both implementations. Any difference
in events, parser state after each call, or the exception type raised by each call, is a crash. The file name
keeps pytest from collecting it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: the shared trace helpers
from helpers.trace import CLOSE, run_calls

with atheris.instrument_imports():
    from ssewire import _scanner_c, _scanner_py

MAX_BUFFERS = (None, 1, 4, 16, 64, 300, 4096)


SCANNERS = ("SSEParser", "JSONArrayStreamParser", "NDJSONParser")


def _trace(mod: Any, scanner: str, kwargs: dict[str, Any], calls: list[Any]) -> list[tuple[Any, ...]]:
    return run_calls(getattr(mod, scanner)(**kwargs), calls)


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    scanner = SCANNERS[fdp.ConsumeIntInRange(0, len(SCANNERS) - 1)]
    json_array = scanner == "JSONArrayStreamParser"
    max_buffer = MAX_BUFFERS[fdp.ConsumeIntInRange(0, len(MAX_BUFFERS) - 1)]
    kwargs: dict[str, Any] = {} if max_buffer is None else {"max_buffer": max_buffer}
    if scanner == "SSEParser":
        kwargs["flush_incomplete"] = fdp.ConsumeBool()
    cuts = [fdp.ConsumeIntInRange(0, 255) for _ in range(fdp.ConsumeIntInRange(0, 8))]
    kinds = [fdp.ConsumeIntInRange(0, 3) for _ in range(4)]
    open_bracket = json_array and fdp.ConsumeBool()
    _scanner_c._select_simd(fdp.ConsumeBool())  # the AVX2 loops, or the SSE2 ones (same where there is no AVX2)
    body = fdp.ConsumeBytes(fdp.remaining_bytes())
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
