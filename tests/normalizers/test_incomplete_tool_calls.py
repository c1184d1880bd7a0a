"""A tool call the provider never closed is never ``tool_call_done``: every fixture and shared recording with a
tool call streamed across events, cut between the call's start and the event that closes it -- at the event
boundaries and sampled offsets by default, at every byte offset under ``slow`` (``.ci/run``) -- on the active scanner
(run with ``SSEWIRE_NO_EXTENSIONS=1`` for the twin). The cut call gets no ``tool_call_done``, the
``stream_truncated`` error lists it, and ``collect()`` puts it in ``incomplete_tool_calls``, never in
``tool_calls``."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from helpers.corpus import framing_for, provider_for
from ssewire import StreamDecoder, Unified, _scan, collect
from ssewire.names import FramingName, ProviderName


class Stream(NamedTuple):
    name: str
    data: bytes
    provider: ProviderName
    framing: FramingName


def _streams() -> list[Stream]:
    out = []
    for expected_file in sorted(FIXTURES.glob("*.expected.json")):
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        stream = expected_file.with_name(expected_file.name[: -len(".expected.json")])
        out.append(Stream(stream.name, stream.read_bytes(), expected["provider"], expected["framing"]))
    for capture in load_manifest():
        data = Path(CORPUS / capture["file"]).read_bytes()
        out.append(Stream(capture["file"], data, provider_for(capture), framing_for(capture)))
    return out


def _decoder(module: ModuleType, stream: Stream) -> StreamDecoder:
    """A decoder for ``stream`` whose scanner comes from ``module`` (the twin or the compiled one)."""
    decoder = StreamDecoder(stream.provider, stream.framing)
    parser = module.JSONArrayStreamParser if stream.framing == "json_array" else module.SSEParser
    decoder.scanner = parser()
    return decoder


def _parse(module: ModuleType, stream: Stream, data: bytes) -> list[Unified]:
    decoder = _decoder(module, stream)
    return decoder.feed(data) + decoder.close()


class Window(NamedTuple):
    call_id: str
    first: int  # shortest prefix that shows the call's tool_call_start
    last: int  # longest prefix before the framed event that closes it (exclusive of that event's bytes)


def _windows(module: ModuleType, stream: Stream) -> tuple[list[Window], list[int]]:
    """For each closed call: the range of prefix lengths that cut it between its start and its closing event, found
    by feeding the stream a byte at a time; and the prefix length at which each framed event completed."""
    decoder = _decoder(module, stream)
    scanner, normalizer = decoder.scanner, decoder.normalizer
    started: dict[str, int] = {}
    frame_ends = [0]
    windows = []
    for i in range(len(stream.data)):
        for framed in scanner.feed(stream.data[i : i + 1]):
            for event in normalizer(framed):
                call = event.tool_call_id
                if event.type == "tool_call_start" and call is not None:
                    started.setdefault(call, i + 1)
                elif event.type == "tool_call_done" and call in started:
                    windows.append(Window(call, started.pop(call), frame_ends[-1]))
            frame_ends.append(i + 1)
    return [w for w in windows if w.first <= w.last], frame_ends


def _split_calls(module: ModuleType, stream: Stream) -> set[str]:
    """The calls whose ``tool_call_start`` and ``tool_call_done`` come from different framed events, from one feed
    of the whole stream: exactly the calls a cut can catch open."""
    decoder = _decoder(module, stream)
    started: dict[str, int] = {}
    split = set()
    for index, framed in enumerate(decoder.scanner.feed(stream.data) + decoder.scanner.close()):
        for event in decoder.normalizer(framed):
            call = event.tool_call_id
            if event.type == "tool_call_start" and call is not None:
                started.setdefault(call, index)
            elif event.type == "tool_call_done" and call in started and started.pop(call) < index:
                split.add(call)
    return split


def _sampled_cuts(window: Window, frame_ends: list[int], samples: int = 12) -> list[int]:
    """The cuts that matter in ``window``: its two ends, each side of (up to ``samples``) event boundaries inside it,
    and ``samples`` evenly spaced plus ``samples`` seeded random offsets between them."""
    first, last = window.first, window.last
    inside = [end for end in frame_ends if first < end < last]
    boundaries = inside[:: max(1, len(inside) // samples)]
    rng = random.Random(f"{window.call_id}:{first}:{last}")
    cuts = {first, last}
    cuts.update(c for end in boundaries for c in (end - 1, end, end + 1))
    cuts.update(first + (last - first) * k // samples for k in range(samples + 1))
    cuts.update(rng.randint(first, last) for _ in range(samples))
    return sorted(c for c in cuts if first <= c <= last)


def _check_cuts(module: ModuleType, stream: Stream, window: Window, cuts: list[int]) -> None:
    for cut in cuts:
        events = _parse(module, stream, stream.data[:cut])
        where = f"{window.call_id} cut at byte {cut}"
        assert not [e for e in events if e.type == "tool_call_done" and e.tool_call_id == window.call_id], where
        assert not any(e.type == "done" for e in events), where
        error = events[-1].error
        assert events[-1].type == "error" and error is not None, where
        assert error["type"] == "stream_truncated", where
        assert window.call_id in [c["id"] for c in error["incomplete_tool_calls"]], where
        result = collect(events)
        assert window.call_id not in [c.id for c in result.tool_calls], where
        assert window.call_id in [c.id for c in result.incomplete_tool_calls], where


TOOL_STREAMS = [s for s in _streams() if b"tool_call" in s.data or b"tool_use" in s.data or b"functionCall" in s.data
                or b"function_call" in s.data or b"_call" in s.data]  # fmt: skip
STREAMS = [s for s in TOOL_STREAMS if _split_calls(_scan, s)]  # a stream with whole calls only has nothing to cut


@pytest.mark.parametrize("stream", STREAMS, ids=[s.name for s in STREAMS])
def test_cut_inside_a_tool_call_never_reports_it_done(stream: Stream) -> None:
    """On the active scanner (the differential tests prove the others frame the same), at the cuts that matter:
    every event boundary's neighbourhood is where a scanner or normaliser can go wrong; the samples catch the rest."""
    windows, frame_ends = _windows(_scan, stream)
    assert {w.call_id for w in windows} == _split_calls(_scan, stream), "a call streamed across events has no window"
    for window in windows:
        _check_cuts(_scan, stream, window, _sampled_cuts(window, frame_ends))


@pytest.mark.slow
@pytest.mark.parametrize("stream", STREAMS, ids=[s.name for s in STREAMS])
def test_cut_at_every_byte_inside_a_tool_call_never_reports_it_done(stream: Stream) -> None:
    """The exhaustive sweep (quadratic in the stream's length: ``.ci/run`` runs it): every cut in every window."""
    windows, _ = _windows(_scan, stream)
    assert windows
    for window in windows:
        _check_cuts(_scan, stream, window, list(range(window.first, window.last + 1)))


def test_the_cut_streams_cover_every_provider() -> None:
    providers = {s.provider for s in STREAMS}
    assert {"openai", "openai-chat", "anthropic", "xai", "gemini"} <= providers


def _args_of(calls: list[Any]) -> list[Any]:
    return [(c.id, c.arguments) for c in calls]


@pytest.mark.parametrize("stream", TOOL_STREAMS, ids=[s.name for s in TOOL_STREAMS])
def test_whole_stream_closes_every_call_it_started(scanner: ModuleType, stream: Stream) -> None:
    events = _parse(scanner, stream, stream.data)
    result = collect(events)
    started = [str(e.tool_call_id) for e in events if e.type == "tool_call_start"]
    done = [str(e.tool_call_id) for e in events if e.type == "tool_call_done"]
    truncated = [e for e in events if e.type == "error" and e.error and "incomplete_tool_calls" in e.error]
    if truncated:  # a fixture that is itself cut short
        assert truncated[0].error is not None
        assert sorted(c["id"] for c in truncated[0].error["incomplete_tool_calls"]) == sorted(set(started) - set(done))
    else:
        assert sorted(done) == sorted(started)
        assert result.incomplete_tool_calls == []
    assert all(c.id in done for c in result.tool_calls)


# -- every entry point: the same stream cut inside a call's arguments --------------------------------------------

CUT_STREAM = FIXTURES / "anthropic-messages-tool-use.sse"
CUT_BODY = CUT_STREAM.read_bytes()
CUT_AT = CUT_BODY.index(b'nt\\": 250') + 3  # inside the delta after the one carrying {"amou


def _check_cut(events: list[Unified], arrived: bool = True) -> None:
    """``events`` of the cut stream: the call is incomplete, with the argument text that ``arrived`` (a TCP reset
    may discard bytes the client had not read yet, so then some of it may be missing)."""
    started = [e.tool_call_id for e in events if e.type == "tool_call_start"]
    assert started or not arrived, "the cut must come after the call started"
    assert "tool_call_done" not in [e.type for e in events]
    error = events[-1].error
    assert events[-1].type == "error" and error is not None and error["type"] == "stream_truncated"
    assert [c["id"] for c in error["incomplete_tool_calls"]] == started
    result = collect(events)
    assert result.tool_calls == [] and result.client_tool_calls == []
    assert [c.id for c in result.incomplete_tool_calls] == started
    assert all(c.arguments is None for c in result.incomplete_tool_calls)
    assert all(c.arguments_raw is not None and '{"amount": 250'.startswith(c.arguments_raw.replace("\\", ""))
               for c in result.incomplete_tool_calls)  # fmt: skip
    if arrived:
        assert all(c.arguments_raw for c in result.incomplete_tool_calls)


def test_cut_call_through_iter_unified_and_aiter_unified() -> None:
    from ssewire import aiter_unified, iter_unified

    prefix = CUT_BODY[:CUT_AT]
    _check_cut(list(iter_unified([prefix[:100], prefix[100:]], "anthropic")))

    async def chunks() -> Any:
        yield prefix[:100]
        yield prefix[100:]

    async def run() -> list[Unified]:
        return [e async for e in aiter_unified(chunks(), "anthropic")]

    import asyncio

    _check_cut(asyncio.run(run()))


@pytest.mark.parametrize("abort", [False, True], ids=["eof", "reset"])
def test_cut_call_through_every_http_client(abort: bool) -> None:
    from helpers.http_server import CLIENTS, StreamServer, fetch

    for module in ("httpx", "aiohttp", "requests"):
        pytest.importorskip(module)
    with StreamServer() as server:
        url = server.url(f"/file/fixtures/{CUT_STREAM.name}", cut=CUT_AT, abort=1 if abort else None, maxchunk=64)
        for client in CLIENTS:
            events = fetch(client, url, "anthropic")
            _check_cut(events, arrived=not abort)
            assert events[-1].error is not None and "connection lost" in events[-1].error["message"], client


def test_cut_call_through_the_tap() -> None:
    from ssewire import StreamTap

    tap = StreamTap("anthropic")
    for i in range(0, CUT_AT, 50):
        tap.feed(CUT_BODY[i : min(i + 50, CUT_AT)])
    result = tap.close()
    assert result.tool_calls == []
    assert [c.name for c in result.incomplete_tool_calls] == ["convert_currency"]
    assert result.error is not None and result.error["type"] == "stream_truncated"
    assert [c["name"] for c in result.error["incomplete_tool_calls"]] == ["convert_currency"]


def test_a_tap_that_gives_up_mid_call_reports_it_incomplete_and_says_why() -> None:
    from ssewire import StreamTap

    tap = StreamTap("anthropic", max_buffer=4096)
    tap.feed(CUT_BODY[:CUT_AT])
    tap.feed(b"data: " + b"x" * 5000)  # one line beyond max_buffer: the tap stops parsing
    result = tap.close()
    assert tap.failure is not None
    assert result.error is not None and result.error["type"] == "buffer_overflow"
    assert "SSEBufferOverflow" in result.error["message"]
    assert [c["name"] for c in result.error["incomplete_tool_calls"]] == ["convert_currency"]
    assert result.tool_calls == [] and [c.name for c in result.incomplete_tool_calls] == ["convert_currency"]
