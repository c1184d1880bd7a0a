"""Resume: cursors, reconnecting with the same normaliser, replayed events dropped."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ssewire import Normalizer, StreamDecoder, Unified
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


def test_an_id_set_by_a_block_without_data_was_carried_by_no_delivered_event() -> None:
    body = [b'id: 6\ndata: {"t": "0 "}\n\n', b"id: 7\n\n", b'data: {"t": "1 "}\n\n', b'data: {"end": 1}\n\n']
    decoder = StreamDecoder(Seq())
    out = [e for chunk in body[:2] for e in decoder.feed(chunk)]
    cursor = decoder.reconnect()
    assert (cursor.last_event_id, cursor.last_id_events) == ("7", 0)
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
