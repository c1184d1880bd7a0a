"""The per-stream machinery (``_decoding_py.py``: ``StreamDecoder`` and ``Accumulator``) and the module compiled from
the same source (``_decoding_c``) give the same results on every stream at any chunking: the events each chunk
completes, the end's events, and the result collected through ``feed_into`` (straight into the accumulator) and
from the events; and the selector picks the compiled module unless it is switched off."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import chunked, examples, result_snapshot
from helpers.streams import all_streams
from ssewire import Accumulator, StreamDecoder, StreamTap, _decoding, _decoding_py, collect
from ssewire._config import env_flag, no_extensions
from ssewire.errors import SSEwireError

try:
    COMPILED: Optional[ModuleType] = importlib.import_module("ssewire._decoding_c")
except ImportError:  # the pure-Python install
    COMPILED = None
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="_decoding_c not built")
STREAMS = all_streams()


def _events(events: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (e.type, e.text, e.tool_call_id, e.tool_name, e.arguments_delta, e.arguments, e.stop_reason, e.error, e.usage)
        for e in events
    ]


def _run(module: ModuleType, data: bytes, provider: Any, framing: Any, size: Optional[int]) -> tuple[Any, ...]:
    """What ``module``'s decoder makes of ``data`` fed in ``size`` pieces: the events of each feed and of the end
    (or the error that stopped it), and the result fed straight into its accumulator (``collect``'s path)."""
    decoder = module.StreamDecoder(provider, framing)
    fed: list[Any] = []
    try:
        for chunk in chunked(data, size):
            fed.append(_events(decoder.feed(chunk)))
        fed.append(_events(decoder.close()))
    except SSEwireError as exc:
        fed.append((type(exc).__name__, str(exc)))
    decoder, accumulator = module.StreamDecoder(provider, framing), module.Accumulator()
    try:
        for chunk in chunked(data, size):
            decoder.feed_into(chunk, accumulator)
        decoder.close_into(accumulator)
        into: Any = result_snapshot(accumulator.result)
    except SSEwireError as exc:
        into = (type(exc).__name__, str(exc))
    return fed, into, accumulator.events, accumulator.deltas


def _tapped(module: ModuleType, data: bytes, provider: Any, framing: Any, size: Optional[int]) -> tuple[Any, ...]:
    """What ``module``'s tap makes of ``data`` fed in ``size`` pieces, on a clock that ticks once a reading: the
    result, every metric, the failure's type, and the chunks it held unparsed after each feed."""
    ticks = iter(range(1, 1 << 30))
    tap = module.StreamTap(provider, framing, clock=lambda: next(ticks) / 8)
    held = []
    for chunk in chunked(data, size):
        tap.feed(chunk)
        held.append(len(tap._noted))
    result = result_snapshot(tap.close())
    failure = tap.failure
    return result, tap.metrics.to_dict(), None if failure is None else type(failure).__name__, held


@needs_compiled
@pytest.mark.parametrize("run", [_run, _tapped], ids=["decoder", "tap"])
@pytest.mark.parametrize(("name", "data", "provider", "framing"), STREAMS, ids=[s[0] for s in STREAMS])
def test_the_compiled_machinery_reads_every_stream_as_the_python_one(
    run: Any, name: str, data: bytes, provider: Any, framing: Any
) -> None:
    """The decoder (every feed's events, the end's, the result fed into the accumulator) and the tap (its result,
    metrics, failure and the chunks it held) give the same on every stream at three chunkings."""
    assert COMPILED is not None
    for size in (None, 1 if len(data) < 4096 else 97, 4096):
        assert run(COMPILED, data, provider, framing, size) == run(_decoding_py, data, provider, framing, size), size


@needs_compiled
@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_any_chunking_any_cut_reads_alike(data: st.DataObject) -> None:
    """A stream cut anywhere (a truncated body) and fed in chunks of any sizes: the same events and result."""
    name, body, provider, framing = data.draw(st.sampled_from(STREAMS[:200]))
    body = body[: data.draw(st.integers(0, len(body)))]
    size = data.draw(st.integers(1, max(1, len(body))))
    assert COMPILED is not None
    for named, framed in ((provider, framing), ("auto", "auto")):
        want = _run(_decoding_py, body, named, framed, size)
        assert _run(COMPILED, body, named, framed, size) == want, (name, named, len(body), size)


def _iterated(module: ModuleType, data: bytes, provider: Any, framing: Any, read: int) -> tuple[Any, ...]:
    """``module``'s ``UnifiedEvents`` over ``data`` (in 97-byte chunks): ``read`` events taken by iterating (-1:
    closed first), then ``collect`` of the rest (its own fast path when nothing was read), and what is left."""
    events = module.UnifiedEvents(list(chunked(data, 97)), provider, framing, 1 << 20)
    try:
        if read < 0:
            events.close()
            taken: list[Any] = []
        else:
            taken = _events([next(events) for _ in range(read)])
        result = result_snapshot(module.collect(events))
    except (SSEwireError, StopIteration) as exc:
        return (type(exc).__name__, str(exc))
    return taken, result, list(events)


@needs_compiled
@pytest.mark.parametrize(("name", "data", "provider", "framing"), STREAMS[:60], ids=[s[0] for s in STREAMS[:60]])
def test_the_iterator_reads_alike_whole_after_some_events_and_closed(
    name: str, data: bytes, provider: Any, framing: Any
) -> None:
    """``collect(iter_unified(...))`` reads straight into the accumulator before any event is read, the rest of the
    events after some were (the result then holds only the rest), nothing once closed: alike in both."""
    assert COMPILED is not None
    for read in (-1, 0, 1, 3):
        want = _iterated(_decoding_py, data, provider, framing, read)
        assert _iterated(COMPILED, data, provider, framing, read) == want, read
    taken, whole, left = _iterated(_decoding_py, data, provider, framing, 0)
    assert (taken, left) == ([], [])
    assert whole == result_snapshot(collect(list(_decoding_py.UnifiedEvents([data], provider, framing, 1 << 20))))


@needs_compiled
def test_the_public_pair_is_one_implementation() -> None:
    """``ssewire.StreamDecoder`` takes ``ssewire.Accumulator`` (a compiled decoder refuses the Python accumulator:
    the pair is always selected together), and ``collect`` feeds it."""
    assert COMPILED is not None
    decoder = COMPILED.StreamDecoder("openai-chat", "sse")
    with pytest.raises(TypeError):
        decoder.feed_into(b"data: {}\n\n", _decoding_py.Accumulator())
    assert (StreamDecoder, Accumulator, collect) == (_decoding.StreamDecoder, _decoding.Accumulator, _decoding.collect)


def test_the_compiled_module_is_the_one_in_use_when_built() -> None:
    if env_flag("SSEWIRE_REQUIRE_EXTENSIONS"):
        assert COMPILED is not None, "ssewire._decoding_c cannot be imported"
    in_use = COMPILED is not None and not no_extensions()
    module = COMPILED if in_use and COMPILED is not None else _decoding_py
    assert ("cython" if in_use else "python") == _decoding.IMPLEMENTATION
    assert (StreamDecoder, Accumulator, collect) == (module.StreamDecoder, module.Accumulator, module.collect)
    assert StreamTap is module.StreamTap
