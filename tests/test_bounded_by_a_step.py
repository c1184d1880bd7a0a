"""A chunk is read a step at a time: a large chunk in windows, a compressed one by each piece it inflates to, so
the events held at once are one step's (never a whole 100 MB stored body's, or a small gzip chunk's that inflates to
a hundred times its size), on both implementations of the decoder; and inflating costs time in proportion to the
bytes, however many gzip members or however large the chunk."""

from __future__ import annotations

import base64
import gzip
import importlib
import random
import tracemalloc
import zlib
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

import ssewire.content_encoding as content_encoding
from ssewire import _decoding_py, iter_unified, transcode
from ssewire._scan.chunks import WINDOW
from ssewire.content_encoding import BodyDecoder, UnsupportedEncodingError

try:
    MODULES: list[ModuleType] = [_decoding_py, importlib.import_module("ssewire._decoding_c")]
except ImportError:  # the pure-Python install
    MODULES = [_decoding_py]

EVENT = b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
DONE = b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


def _body(size: int) -> bytes:
    return EVENT * (size // len(EVENT)) + DONE


def _view(events: list[Any]) -> list[tuple[Any, ...]]:
    return [(e.type, e.text, e.stop_reason) for e in events]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("encoding", ["identity", "gzip", "deflate"])
def test_a_large_or_compressed_chunk_is_read_in_steps_that_join_to_what_feed_gives(
    module: ModuleType, encoding: str
) -> None:
    body = _body(3 * WINDOW)
    chunk = {"identity": body, "gzip": gzip.compress(body), "deflate": zlib.compress(body)}[encoding]
    fed = module.StreamDecoder("openai-chat", "sse").feed(chunk)
    decoder = module.StreamDecoder("openai-chat", "sse")
    assert decoder.stepped(chunk)
    steps = list(decoder.feed_steps(chunk))
    assert len(steps) > 3 and max(map(len, steps)) < 2 * (WINDOW // len(EVENT))
    assert _view([event for step in steps for event in step]) == _view(fed)
    assert [e.type for e in decoder.close()] == []  # ([DONE] came: nothing owed)
    assert _view(list(module.StreamDecoder("openai-chat", "sse").events(chunk))) == _view(fed)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_a_small_plain_chunk_is_read_whole_and_other_pieces_in_steps(module: ModuleType) -> None:
    decoder = module.StreamDecoder("openai-chat", "sse")
    assert not decoder.stepped(EVENT)
    assert isinstance(decoder.events(EVENT), list)
    assert decoder.stepped(bytearray(EVENT)) and decoder.stepped(memoryview(EVENT))
    assert _view(list(decoder.events(bytearray(EVENT)))) == [("text_delta", "x", None)]
    assert not decoder.stepped({"chunk": {}})
    with pytest.raises(TypeError):  # (ChunkTypeError: typed, and a TypeError)
        list(module.StreamDecoder("openai-chat", "sse").events(12))  # type: ignore[arg-type]


def _peak(run: Any) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_small_gzip_chunk_that_inflates_a_hundredfold_holds_one_step_of_events() -> None:
    bomb = gzip.compress(_body(24 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 256 * 1024

    def read() -> None:
        count = sum(1 for _ in iter_unified([bomb], "openai-chat"))
        assert count > 200_000

    def write() -> None:
        assert sum(map(len, transcode([bomb], "openai-chat", to="openai-chat"))) > 24 * 1024 * 1024

    assert _peak(read) < 8 * 1024 * 1024  # (every event of the chunk at once: hundreds of MB)
    assert _peak(write) < 8 * 1024 * 1024


class _Counting:
    """A decompressor that counts the compressed bytes it is given (every call: what it copies back is as much)."""

    given = 0

    def __init__(self, wbits: int) -> None:
        self.inner = zlib.decompressobj(wbits)

    def decompress(self, data: Any, max_length: int = 0) -> bytes:
        _Counting.given += len(data)
        return self.inner.decompress(data, max_length)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.parametrize("shape", ["members", "one member"])
def test_inflating_one_chunk_costs_time_in_proportion_to_its_bytes(shape: str, monkeypatch: Any) -> None:
    if shape == "members":  # thousands of gzip members back to back (each one event)
        chunk, bound = gzip.compress(EVENT) * 4000, 64
    else:  # one member of text that hardly compresses: it inflates to many output pieces
        text = base64.b64encode(random.Random(0).randbytes(3 * 1024 * 1024))
        chunk, bound = gzip.compress(b"data: %s\n\n" % text, compresslevel=1), 4
    fake = SimpleNamespace(decompressobj=_Counting, error=zlib.error, MAX_WBITS=zlib.MAX_WBITS)
    monkeypatch.setattr(content_encoding, "zlib", fake)
    _Counting.given = 0
    inflated = sum(map(len, BodyDecoder("gzip").decode(chunk)))
    assert inflated >= 4000 * len(EVENT)
    # each call is given at most what is left of one step's input: linear in the input (the whole rest of the
    # chunk at each member's end, or at each piece of output, was quadratic: tens to hundreds of times the chunk)
    assert _Counting.given <= bound * len(chunk)


def test_bytes_after_the_end_of_a_deflate_stream_are_an_error_not_ignored() -> None:
    body = zlib.compress(EVENT + DONE) + b"more bytes"
    for chunks in ([body], [body[:10], body[10:]]):
        with pytest.raises(UnsupportedEncodingError, match="bytes after its end"):
            list(iter_unified(chunks, "openai-chat", content_encoding="deflate"))
    two = zlib.compress(EVENT) + zlib.compress(DONE)  # (a second stream is not one deflate body either)
    with pytest.raises(UnsupportedEncodingError):
        list(iter_unified([two], "openai-chat", content_encoding="deflate"))
