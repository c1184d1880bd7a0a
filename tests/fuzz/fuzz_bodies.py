"""Fuzzing whole bodies end to end (run by hand, and by ``.ci/run`` for a bounded time):

    python tests/fuzz/fuzz_bodies.py -max_total_time=60 -seed=1   # libFuzzer prints "INFO: Seed: 1" first

Each input becomes a body -- as it is, gzip- or zlib-compressed (an inflating body: repeated to many times its
size before compression), or a corrupt compressed stream -- read by :class:`ssewire.StreamDecoder` for a provider
and framing the input picks, in a chunking it picks, with small ``max_buffer`` and ``max_inflated`` bounds, into an
accumulator as ``collect()`` and the tap read it. Anything but an ``SSEwireError`` (a ``ValueError``, a
``RecursionError``, a ``KeyError`` ...) is a crash, and so is a result without an ending: every body ends in a
``done``, an ``error`` event or a typed exception. The file name keeps pytest from collecting it.
"""

from __future__ import annotations

import gzip
import sys
import zlib

import atheris

with atheris.instrument_imports(include=["ssewire"]):
    from ssewire import PROVIDERS, SSEwireError, StreamDecoder
    from ssewire.result import Accumulator

_PROVIDERS = ("auto", *sorted(PROVIDERS))
_FRAMINGS = ("auto", "sse", "ndjson", "json_array", "aws-eventstream")
_MAX_INFLATED = 256 * 1024
_MAX_BUFFER = 64 * 1024


def _body(data: atheris.FuzzedDataProvider) -> bytes:
    shape = data.ConsumeIntInRange(0, 4)
    raw = data.ConsumeBytes(data.ConsumeIntInRange(0, 4096))
    if shape == 0:
        return raw
    if shape == 1:  # inflating: the same bytes many times over, compressed
        return gzip.compress(raw * data.ConsumeIntInRange(1, 2000), compresslevel=1)
    if shape == 2:
        return zlib.compress(raw)
    packed = bytearray(gzip.compress(raw) if shape == 3 else zlib.compress(raw))
    if packed:  # a corrupt compressed stream: one byte flipped
        packed[data.ConsumeIntInRange(0, len(packed) - 1)] ^= 1 + data.ConsumeIntInRange(0, 254)
    return bytes(packed)


def test_one_input(buffer: bytes) -> None:
    data = atheris.FuzzedDataProvider(buffer)
    provider = _PROVIDERS[data.ConsumeIntInRange(0, len(_PROVIDERS) - 1)]
    framing = _FRAMINGS[data.ConsumeIntInRange(0, len(_FRAMINGS) - 1)]
    size = data.ConsumeIntInRange(1, 512)
    body = _body(data)
    decoder = StreamDecoder(provider, framing, max_buffer=_MAX_BUFFER, max_inflated=_MAX_INFLATED)  # type: ignore[arg-type]
    accumulator = Accumulator()
    try:
        for start in range(0, max(len(body), 1), size):
            decoder.feed_into(body[start : start + size], accumulator)
        decoder.close_into(accumulator)
    except SSEwireError:
        return  # a typed exception: the answer the contract allows
    result = accumulator.result
    if provider not in ("openai-realtime", "gemini-live"):  # sessions owe no terminal event
        assert accumulator.done or result.error is not None, "a body ended without done or an error"
    assert len(result.text) <= _MAX_INFLATED + len(body)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
