"""Resume: cursors, reconnecting with the same normaliser, replayed events dropped."""

from __future__ import annotations

import gzip
import hashlib
import json
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from ssewire import Normalizer, StreamDecoder, Unified, collect, iter_unified
from ssewire.resume import ReplayFilter, ResumeCursor
from ssewire.stream import iter_resumable


class Seq(Normalizer):
    """Test normaliser: payload {"seq": n, "t": text} -> text_delta with sequence n; {"end": 1} terminates."""

    provider = "seq"

    def __init__(self) -> None:
        super().__init__()
        self.response_id = "resp_1"

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        if obj.get("end"):
            self.done = True
            return [Unified("done", stop_reason="end")]
        return [Unified("text_delta", text=obj["t"], sequence=obj.get("sequence_number"))]


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def sequenced(n: int) -> list[bytes]:
    events = [b'data: {"sequence_number": %d, "t": "%d "}\n\n' % (i, i) for i in range(n)]
    return [*events, b'data: {"end": 1}\n\n']


def ided(n: int, ids: list[str]) -> list[bytes]:
    return [*(b'id: %s\ndata: {"t": "%d "}\n\n' % (ids[i].encode(), i) for i in range(n)), b'data: {"end": 1}\n\n']


def text_of(events: list[Unified]) -> str:
    return "".join(e.text for e in events if e.type == "text_delta")


def test_cursor_and_reconnect_drop_a_full_replay() -> None:
    decoder = StreamDecoder(Seq())
    body = sequenced(6)
    out = []
    for chunk in body[:3]:
        out += decoder.feed(chunk)
    cursor = decoder.reconnect()
    assert (cursor.sequence, cursor.response_id, cursor.resumable) == (2, "resp_1", True)
    assert cursor.query_params() == {"starting_after": 2}
    for chunk in body:  # the server replays from the start
        out += decoder.feed(chunk)
    out += decoder.close()
    assert text_of(out) == "0 1 2 3 4 5 "
    assert out[-1].type == "done"


def test_reconnect_to_a_server_that_resumes_properly() -> None:
    decoder = StreamDecoder(Seq())
    body = sequenced(6)
    out = [e for chunk in body[:3] for e in decoder.feed(chunk)]
    decoder.reconnect()
    for chunk in body[3:]:
        out += decoder.feed(chunk)
    out += decoder.close()
    assert text_of(out) == "0 1 2 3 4 5 "


def test_numeric_and_opaque_event_ids() -> None:
    for ids in (["1", "2", "3", "4"], ["a", "b", "c", "d"]):
        decoder = StreamDecoder(Seq())
        body = ided(4, ids)
        out = [e for chunk in body[:2] for e in decoder.feed(chunk)]
        cursor = decoder.reconnect()
        assert cursor.last_event_id == ids[1]
        for chunk in body:
            out += decoder.feed(chunk)
        out += decoder.close()
        assert text_of(out) == "0 1 2 3 ", ids


def test_replay_filter_disarms_after_the_first_new_event() -> None:
    from ssewire import SSEEvent

    replay = ReplayFilter(ResumeCursor("p", sequence=5))
    assert replay.is_replay(SSEEvent("m", '{"sequence_number": 3}'))
    assert not replay.is_replay(SSEEvent("m", '{"sequence_number": 6}'))
    assert not replay.armed
    assert not replay.is_replay(SSEEvent("m", '{"sequence_number": 1}'))  # past the replayed prefix


def test_iter_resumable_reopens_with_the_cursor() -> None:
    body = sequenced(8)
    opened: list[Optional[ResumeCursor]] = []

    def open_stream(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        opened.append(cursor)
        start = 0 if cursor is None else cursor.sequence + 1  # type: ignore[operator]
        for i, chunk in enumerate(body[start:]):
            if len(opened) < 3 and i == 3:
                raise ConnectionResetError("peer went away")
            yield chunk

    events = list(iter_resumable(open_stream, Seq()))
    assert text_of(events) == "".join(f"{i} " for i in range(8))
    assert events[-1].type == "done"
    assert [c.sequence if c else None for c in opened] == [None, 2, 5]


def test_iter_resumable_gives_up_after_max_reconnects_with_truncation() -> None:
    def open_stream(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        start = 0 if cursor is None else cursor.sequence + 1  # type: ignore[operator]
        yield sequenced(50)[start]
        raise ConnectionResetError

    events = list(iter_resumable(open_stream, Seq(), max_reconnects=2))
    assert text_of(events) == "0 1 2 "
    assert events[-1].type == "error" and events[-1].error["type"] == "stream_truncated"  # type: ignore[index]


def test_stream_without_cursor_is_not_reopened() -> None:
    calls = []

    def open_stream(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        calls.append(cursor)
        yield b'data: {"t": "x"}\n\n'

    events = list(iter_resumable(open_stream, Seq()))
    assert calls == [None]
    assert events[-1].type == "error"


def test_unicode_digit_ids_are_opaque_not_numbers() -> None:
    decoder = StreamDecoder(Seq())
    decoder.feed('id: ²\ndata: {"t": "a "}\n\n'.encode())
    cursor = decoder.reconnect()  # must not try int("²")
    assert cursor.last_event_id == "²"
    out = decoder.feed('id: ²\ndata: {"t": "a "}\n\nid: ³\ndata: {"t": "b "}\n\n'.encode())
    assert text_of(out) == "b "


def some_ided(ids: list[Optional[str]]) -> list[bytes]:
    """One event per entry of ``ids``: its SSE id (None: no id line, so it inherits the last one), text "i "."""
    lines = [b"" if i is None else b"id: %s\n" % i.encode() for i in ids]
    events = [line + b'data: {"t": "%d "}\n\n' % n for n, line in enumerate(lines)]
    return [*events, b'data: {"end": 1}\n\n']


def test_a_replay_keeps_the_undelivered_events_that_inherit_the_last_id() -> None:
    # e2..e4 carry no id of their own: they inherit "2". Three events with id 2 were delivered (e1, e2, e3); the
    # replay's e4 also reads id 2 but was never delivered.
    for ids in (["1", "2", None, None, None, "3"], ["a", "b", None, None, None, "c"]):
        body = some_ided(ids)
        decoder = StreamDecoder(Seq())
        out = [e for chunk in body[:4] for e in decoder.feed(chunk)]
        cursor = decoder.reconnect()
        assert (cursor.last_event_id, cursor.last_id_events) == (ids[1], 3)
        for chunk in body:  # the server replays from the start
            out += decoder.feed(chunk)
        out += decoder.close()
        assert text_of(out) == "0 1 2 3 4 5 ", ids
        assert out[-1].type == "done"


def test_the_cursor_names_the_id_of_the_last_event_delivered() -> None:
    # "id: 7" alone sets the scanner's last id but delivers no event: the cursor stays at the last event delivered,
    # and the replay's event that inherits 7 is new
    body = [b'id: 6\ndata: {"t": "0 "}\n\n', b"id: 7\n\n", b'data: {"t": "1 "}\n\n', b'data: {"end": 1}\n\n']
    decoder = StreamDecoder(Seq())
    out = [e for chunk in body[:2] for e in decoder.feed(chunk)]
    cursor = decoder.reconnect()
    assert (cursor.last_event_id, cursor.last_id_events) == ("6", 1)
    for chunk in body:
        out += decoder.feed(chunk)
    out += decoder.close()
    assert text_of(out) == "0 1 "


def test_a_connection_that_sent_no_id_resumes_from_the_last_one() -> None:
    # As a browser's EventSource: the last event id outlives a connection that dispatched none.
    body = ided(6, ["1", "2", "3", "4", "5", "6"])
    opened: list[Optional[str]] = []

    def open_stream(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        opened.append(None if cursor is None else cursor.last_event_id)
        if len(opened) == 2:
            raise ConnectionResetError("dropped before its first event")
        start = 0 if cursor is None else int(cursor.last_event_id or 0)  # the events after the last id
        for i, chunk in enumerate(body[start:]):
            if len(opened) == 1 and i == 2:
                raise ConnectionResetError("peer went away")
            yield chunk

    events = list(iter_resumable(open_stream, Seq()))
    assert opened == [None, "2", "2"]
    assert text_of(events) == "0 1 2 3 4 5 "
    assert events[-1].type == "done"


def test_a_hand_made_cursor_without_a_count_takes_every_event_with_its_id_as_delivered() -> None:
    from ssewire import SSEEvent

    replay = ReplayFilter(ResumeCursor("p", last_event_id="b"))
    assert all(replay.is_replay(SSEEvent("m", "{}", "b")) for _ in range(3))
    assert not replay.is_replay(SSEEvent("m", "{}", "c"))
    counted = ReplayFilter(ResumeCursor("p", last_event_id="9", last_id_events=2))
    assert [counted.is_replay(SSEEvent("m", "{}", "9")) for _ in range(3)] == [True, True, False]


def chat_chunk(text: str, id_line: bytes = b"") -> bytes:
    choice = {"index": 0, "delta": {"content": text}}
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return id_line + b"data: %s\n\n" % json.dumps(chunk).encode()


CHAT_END = (
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},'
    b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def replaying(events: list[bytes], cuts: list[int]) -> Callable[[Optional[ResumeCursor]], Iterator[bytes]]:
    """A server that replays the whole stream on every connection, the n-th cut after ``cuts[n]`` events (each
    connection's events sent in one chunk, then the drop)."""
    opened: list[Optional[ResumeCursor]] = []

    def open_stream(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        opened.append(cursor)
        n = len(opened) - 1
        if n < len(cuts):
            yield b"".join(events[: cuts[n]])
            raise ConnectionResetError("peer went away")
        yield b"".join(events)

    open_stream.opened = opened  # type: ignore[attr-defined]
    return open_stream


def test_a_sequence_number_decides_alone_when_the_events_also_carry_an_id() -> None:
    # every event inherits the one SSE id: the ones past the cursor's sequence number are new, whatever their id
    events = [b"id: resp_1\n" + sequenced(8)[0], *sequenced(8)[1:]]
    open_stream = replaying(events, [3])
    out = list(iter_resumable(open_stream, Seq()))
    assert text_of(out) == "0 1 2 3 4 5 6 7 "
    assert out[-1].type == "done"


def test_a_drop_during_the_replay_resumes_from_what_was_delivered() -> None:
    # the second connection drops while it is still replaying: its replayed ids were not delivered again
    events = [*(b'id: %d\ndata: {"t": "%d "}\n\n' % (i, i) for i in range(1, 6)), b'data: {"end": 1}\n\n']
    open_stream = replaying(events, [3, 2])
    out = list(iter_resumable(open_stream, Seq()))
    assert [(c.last_event_id, c.last_id_events) for c in open_stream.opened[1:]] == [("3", 1), ("3", 1)]  # type: ignore[attr-defined]
    assert text_of(out) == "1 2 3 4 5 "


def test_every_opaque_id_of_a_chunk_is_known_to_the_replay_filter() -> None:
    events = [chat_chunk(f"{i} ", b"id: evt-%d\n" % i) for i in range(5)] + [CHAT_END]
    open_stream = replaying(events, [3])  # three events in one chunk, then the drop
    result = collect(iter_resumable(open_stream, "openai-chat"))
    assert (result.text, result.stop_reason, result.error) == ("0 1 2 3 4 ", "end", None)


def test_an_empty_id_is_no_id_to_resume_from() -> None:
    # WHATWG: "id:" with no value resets the last event id, and a browser then sends no Last-Event-ID
    events = [chat_chunk("0 ", b"id: 1\n"), chat_chunk("1 ", b"id:\n"), chat_chunk("2 "), CHAT_END]
    decoder = StreamDecoder("openai-chat")
    for chunk in events[:2]:
        decoder.feed(chunk)
    cursor = decoder.cursor()
    assert (cursor.last_event_id, cursor.resumable, cursor.headers()) == (None, False, {})
    assert ResumeCursor("p", last_event_id="").headers() == {}
    open_stream = replaying(events, [2])
    result = collect(iter_resumable(open_stream, "openai-chat"))
    assert len(open_stream.opened) == 1  # type: ignore[attr-defined]  # not reopened: nothing to resume from
    assert result.text == "0 1 " and result.error is not None and result.error["type"] == "stream_truncated"


def test_a_compressed_body_is_decompressed_anew_on_each_connection() -> None:
    texts = [hashlib.sha256(b"%d" % i).hexdigest() for i in range(8)]  # (text that does not compress to nothing)
    events = [chat_chunk(text, b"id: %d\n" % (i + 1)) for i, text in enumerate(texts)] + [CHAT_END]
    opened: list[Optional[str]] = []

    def open_stream(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        opened.append(None if cursor is None else cursor.last_event_id)
        if cursor is None:
            body = gzip.compress(b"".join(events))
            yield body[: len(body) // 2]  # half a gzip body, then the drop
            raise ConnectionResetError("peer went away")
        yield gzip.compress(b"".join(events[int(cursor.last_event_id or 0) :]))  # from the event after the id

    result = collect(iter_resumable(open_stream, "openai-chat"))
    assert len(opened) == 2 and opened[1] is not None
    assert (result.text, result.stop_reason, result.error) == ("".join(texts), "end", None)


def test_an_interactions_stream_resumes_from_its_payloads_event_id() -> None:
    # Gemini Interactions names each event in its payload (event_id), not with an SSE id line
    body = (FIXTURES / "gemini-interactions-step-delta.sse").read_bytes()
    cut = body.index(b'"evt_8"')
    resumed_at = body.rindex(b"\n\n", 0, cut) + 2  # the event evt_8 starts: never delivered
    seen: list[Optional[str]] = []

    def open_stream(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        seen.append(None if cursor is None else cursor.query_params().get("last_event_id"))
        if cursor is None:
            yield body[:cut]
            raise ConnectionResetError("peer went away")
        yield body[resumed_at:]  # the events after the one the cursor names

    result = collect(iter_resumable(open_stream, "gemini"))
    assert seen == [None, "evt_7"]
    assert result.to_dict() == collect(iter_unified([body], "gemini")).to_dict()


def test_a_body_that_ends_without_its_last_blank_line_is_not_reopened() -> None:
    # the last event's line came, the blank line after it did not: read as iter_unified reads it, no reconnect
    for ending in (b"\n", b"\r\n", b"\r"):
        body = b"".join(sequenced(3)).rstrip(b"\n") + ending
        opened: list[Optional[ResumeCursor]] = []

        def open_stream(
            cursor: Optional[ResumeCursor], body: bytes = body, opened: list[Optional[ResumeCursor]] = opened
        ) -> Iterator[bytes]:
            opened.append(cursor)
            if cursor is not None:
                raise RuntimeError("HTTP 404: the response is complete")  # what a finished response may answer
            yield body

        out = list(iter_resumable(open_stream, Seq()))
        assert (text_of(out), out[-1].type, len(opened)) == ("0 1 2 ", "done", 1), ending


def test_a_body_cut_inside_its_last_line_is_reopened_and_that_event_read_once() -> None:
    body = b"".join(sequenced(4))
    cut = body.index(b'"t": "3 "') + 3  # inside the last text event's line
    opened: list[Optional[int]] = []

    def open_stream(cursor: Optional[ResumeCursor]) -> Iterator[bytes]:
        opened.append(None if cursor is None else cursor.sequence)
        yield body[:cut] if cursor is None else body  # a clean end mid-line, then the whole stream replayed

    out = list(iter_resumable(open_stream, Seq()))
    assert opened == [None, 2]
    assert (text_of(out), out[-1].type) == ("0 1 2 3 ", "done")
    assert not [e for e in out if e.type == "raw"]  # the cut line was never read as an event


def test_long_ids_are_remembered_by_their_digest_and_their_replays_still_dropped() -> None:
    # up to 1,024 recent ids each up to max_buffer long held a thousand times the one event memory is bounded by
    def chunk(i: int) -> bytes:
        data = json.dumps({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": f"{i},"}}]})
        return b"id: %08d" % i + b"k" * 50_000 + b"\ndata: " + data.encode() + b"\n\n"

    decoder = StreamDecoder("openai-chat", "sse", max_buffer=200_000)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(200):
            decoder.feed(chunk(i))
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2_000_000  # (200 ids of 50 KB: 10 MB)
    decoder.reconnect()
    replayed = [e.text for e in decoder.feed(b"".join(chunk(i) for i in range(190, 205)))]
    assert replayed == [f"{i}," for i in range(200, 205)]
