"""SSEParser against WHATWG HTML 9.2.6, on both implementations (the ``scanner`` fixture)."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import chunked, examples, peak_traced
from ssewire import SSEBufferOverflow, SSEwireError


def parse(scanner: ModuleType, data: bytes, size: Optional[int] = None, **kw: Any) -> list[tuple[Any, ...]]:
    parser = scanner.SSEParser(**kw)
    events = []
    for chunk in chunked(data, size):
        events += parser.feed(chunk)
    events += parser.close()
    return [(e.event, e.data, e.id, e.retry) for e in events]


def every_split(scanner: ModuleType, data: bytes, **kw: Any) -> list[tuple[Any, ...]]:
    """The events of ``data``, asserting that every two-chunk split and 1-byte chunks give the same."""
    whole = parse(scanner, data, **kw)
    for cut in range(len(data) + 1):
        parser = scanner.SSEParser(**kw)
        events = parser.feed(data[:cut]) + parser.feed(data[cut:]) + parser.close()
        assert [(e.event, e.data, e.id, e.retry) for e in events] == whole, f"split at {cut}"
    assert parse(scanner, data, 1, **kw) == whole
    return whole


def test_basic_event_fields(scanner: ModuleType) -> None:
    data = b"event: add\ndata: 73857293\nid: 1\n\n"
    assert every_split(scanner, data) == [("add", "73857293", "1", None)]


def test_default_event_type_is_message(scanner: ModuleType) -> None:
    assert parse(scanner, b"data: x\n\n") == [("message", "x", None, None)]


def test_multi_line_data_joined_with_lf(scanner: ModuleType) -> None:
    assert every_split(scanner, b"data: YHOO\ndata: +2\ndata: 10\n\n") == [("message", "YHOO\n+2\n10", None, None)]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_endings(scanner: ModuleType, eol: bytes) -> None:
    data = eol.join([b"event: a", b"data: 1", b"", b"data: 2", b"data: 3", b"", b""])
    assert every_split(scanner, data) == [("a", "1", None, None), ("message", "2\n3", None, None)]


def test_mixed_line_endings(scanner: ModuleType) -> None:
    data = b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r"
    assert every_split(scanner, data) == [("message", "a\nb\nc", None, None), ("message", "d", None, None)]


def test_crlf_split_across_chunks_is_one_line_end(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    assert parser.feed(b"data: a\r") == []
    # the LF completes the CRLF; it must not count as the blank line that dispatches
    assert parser.feed(b"\n") == []
    events = parser.feed(b"\r")
    assert [(e.data) for e in events] == ["a"]


def test_cr_then_cr_is_blank_line(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert [e.data for e in parser.feed(b"\rdata: b\r\n\r\n")] == ["a", "b"]


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c"])
def test_never_split_on_other_line_breaks(scanner: ModuleType, char: str) -> None:
    data = f'data: {{"t":"a{char}b"}}\n\n'.encode()
    assert every_split(scanner, data) == [("message", f'{{"t":"a{char}b"}}', None, None)]


def test_utf8_split_across_chunks_is_intact(scanner: ModuleType) -> None:
    text = "héllo 世界 🎉"
    data = f"data: {text}\n\n".encode()
    assert every_split(scanner, data) == [("message", text, None, None)]


def test_invalid_utf8_becomes_replacement_character(scanner: ModuleType) -> None:
    data = b"event: \xff\ndata: a\xc3\xff\xe2\x82b\n\n"
    assert every_split(scanner, data) == [("\ufffd", "a\ufffd\ufffd\ufffdb", None, None)]


def test_bom_stripped_once_at_stream_start(scanner: ModuleType) -> None:
    data = b"\xef\xbb\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\ndata: \xef\xbb\xbfc\n\n"
    # the second BOM starts a line whose field name is "\ufeffdata": unknown, ignored
    assert every_split(scanner, data) == [("message", "a", None, None), ("message", "\ufeffc", None, None)]


def test_double_bom_only_first_stripped(scanner: ModuleType) -> None:
    assert every_split(scanner, b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n") == [("message", "b", None, None)]


def test_partial_bom_prefix_is_data(scanner: ModuleType) -> None:
    assert every_split(scanner, b"\xef\xbbdata: a\n\ndata: b\n\n") == [("message", "b", None, None)]


def test_comments_and_keepalives_dispatch_nothing(scanner: ModuleType) -> None:
    data = b": keep-alive\n\n:OPENROUTER PROCESSING\n\ndata: x\n: inside\n\n"
    assert every_split(scanner, data) == [("message", "x", None, None)]


def test_field_without_colon_has_empty_value(scanner: ModuleType) -> None:
    assert every_split(scanner, b"data\n\ndata\ndata\n\n") == [
        ("message", "", None, None),
        ("message", "\n", None, None),
    ]


def test_only_one_leading_space_stripped(scanner: ModuleType) -> None:
    assert every_split(scanner, b"data:  two\ndata:none\ndata:\tt\n\n") == [("message", " two\nnone\n\tt", None, None)]


def test_unknown_fields_and_case_sensitive_names_ignored(scanner: ModuleType) -> None:
    assert every_split(scanner, b"Data: no\nfoo: bar\nEvent: x\ndata: yes\n\n") == [("message", "yes", None, None)]


def test_value_may_contain_colons(scanner: ModuleType) -> None:
    assert parse(scanner, b'data: {"a": "b:c"}\n\n') == [("message", '{"a": "b:c"}', None, None)]


def test_block_without_data_dispatches_nothing_but_commits_id(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    assert parser.feed(b"event: ping\nid: 7\nretry: 300\n\n") == []
    assert parser.last_event_id == "7"
    assert parser.retry == 300
    [event] = parser.feed(b"data: x\n\n")
    assert (event.event, event.data, event.id, event.retry) == ("message", "x", "7", 300)


def test_event_type_resets_after_empty_block(scanner: ModuleType) -> None:
    assert parse(scanner, b"event: a\n\ndata: x\n\n") == [("message", "x", None, None)]


def test_empty_event_name_is_message(scanner: ModuleType) -> None:
    assert parse(scanner, b"event:\ndata: x\n\n") == [("message", "x", None, None)]


def test_id_persists_and_empty_id_resets(scanner: ModuleType) -> None:
    data = b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n"
    assert every_split(scanner, data) == [
        ("message", "a", "1", None),
        ("message", "b", "1", None),
        ("message", "c", "", None),
    ]


def test_id_with_nul_is_ignored(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    events = parser.feed(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [e.id for e in events] == ["1", "1"]
    assert parser.last_event_id == "1"


def test_id_is_committed_only_at_dispatch(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    parser.feed(b"id: 5\ndata: a\n")
    assert parser.last_event_id is None
    parser.feed(b"\n")
    assert parser.last_event_id == "5"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"retry: 1000", 1000),
        (b"retry:0", 0),
        (b"retry: 10a", None),
        (b"retry: -1", None),
        (b"retry: 1.5", None),
        (b"retry:", None),
        (b"retry: \xd9\xa3", None),  # ARABIC-INDIC DIGIT THREE is not an ASCII digit
        (b"retry:  5", None),  # the second space is part of the value
        (b"retry: " + b"9" * 40, None),  # absurd values are ignored, never an exception
        (b"retry: 000000000000000000000000000042", 42),
    ],
)
def test_retry_ascii_digits_only(scanner: ModuleType, line: bytes, expected: Optional[int]) -> None:
    parser = scanner.SSEParser()
    assert parser.feed(line + b"\ndata: x\n\n")[0].retry == expected
    assert parser.retry == expected


def test_retry_persists_on_later_events(scanner: ModuleType) -> None:
    assert [r for *_, r in parse(scanner, b"retry: 5\ndata: a\n\ndata: b\n\n")] == [5, 5]


def test_nul_in_data_is_kept(scanner: ModuleType) -> None:
    assert parse(scanner, b"data: a\x00b\n\n") == [("message", "a\x00b", None, None)]


def test_close_flushes_event_without_blank_line_by_default(scanner: ModuleType) -> None:
    assert parse(scanner, b"data: a\n\ndata: b") == [("message", "a", None, None), ("message", "b", None, None)]
    assert parse(scanner, b"event: e\ndata: b\n") == [("e", "b", None, None)]
    assert parse(scanner, b"data: b\r") == [("message", "b", None, None)]


def test_close_discards_incomplete_event_when_asked(scanner: ModuleType) -> None:
    assert parse(scanner, b"data: a\n\ndata: b\n", flush_incomplete=False) == [("message", "a", None, None)]
    assert parse(scanner, b"data: a\n\ndata: b", flush_incomplete=False) == [("message", "a", None, None)]


def test_close_is_idempotent_and_feed_after_close_raises(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    parser.feed(b"data: a")
    assert [e.data for e in parser.close()] == ["a"]
    assert parser.close() == []
    with pytest.raises(SSEwireError):
        parser.feed(b"data: b\n\n")


def test_accepts_bytes_bytearray_memoryview(scanner: ModuleType) -> None:
    data = b"data: a\n\ndata: b\n\n"
    for chunk in (data, bytearray(data), memoryview(data), memoryview(bytearray(data))):
        parser = scanner.SSEParser()
        assert [e.data for e in parser.feed(chunk)] == ["a", "b"]
    parser = scanner.SSEParser()
    assert [e.data for e in parser.feed(memoryview(data)[6:])] == ["b"]


def test_many_events_in_one_chunk_and_empty_chunks(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    assert parser.feed(b"") == []
    events = parser.feed(b"".join(b"data: %d\n\n" % i for i in range(1000)))
    assert [e.data for e in events] == [str(i) for i in range(1000)]
    assert parser.events_parsed == 1000


def test_counters(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    parser.feed(b"data: a\n\n")
    parser.feed(b"data: b")
    assert parser.bytes_fed == 16
    parser.close()
    assert parser.events_parsed == 2


def test_sse_event_object(scanner: ModuleType) -> None:
    [event] = scanner.SSEParser().feed(b'event: x\ndata: {"a": [1]}\nid: 3\n\n')
    assert event.json() == {"a": [1]}
    assert event == scanner.SSEEvent("x", '{"a": [1]}', "3", None)
    assert event != scanner.SSEEvent("x", '{"a": [1]}', "4", None)
    assert repr(event) == "SSEEvent(event='x', data='{\"a\": [1]}', id='3', retry=None)"
    assert scanner.SSEEvent("message", "[DONE]").json() is None
    assert hash(event) == hash(scanner.SSEEvent("x", '{"a": [1]}', "3", None))


# --- bounds --------------------------------------------------------------------------------------------


def test_line_over_max_buffer_raises_whatever_the_chunking(scanner: ModuleType) -> None:
    data = b"data: " + b"x" * 200 + b"\n\n"
    for size in (1, 7, 64, None):
        with pytest.raises(SSEBufferOverflow):
            parse(scanner, data, size, max_buffer=100)
    assert parse(scanner, data, 7, max_buffer=206) == [("message", "x" * 200, None, None)]


def test_accumulated_data_lines_are_bounded(scanner: ModuleType) -> None:
    # every line is short, but the event keeps growing: the bound must still hold
    data = b"data: 0123456789\n" * 20
    parser = scanner.SSEParser(max_buffer=100)
    with pytest.raises(SSEBufferOverflow):
        parser.feed(data)
    # just under the bound: 9 lines of 10 bytes + 8 newlines = 98 bytes
    assert parse(scanner, b"data: 0123456789\n" * 9 + b"\n", max_buffer=98) == [
        ("message", "\n".join(["0123456789"] * 9), None, None)
    ]


def test_overflowing_comment_line_raises(scanner: ModuleType) -> None:
    with pytest.raises(SSEBufferOverflow):
        parse(scanner, b": " + b"k" * 500 + b"\n\ndata: x\n\n", 16, max_buffer=100)


def test_events_before_an_overflow_are_returned_then_error_raised(scanner: ModuleType) -> None:
    parser = scanner.SSEParser(max_buffer=50)
    events = parser.feed(b"data: good\n\ndata: " + b"y" * 100 + b"\n\n")
    assert [e.data for e in events] == ["good"]
    with pytest.raises(SSEBufferOverflow):
        parser.feed(b"data: more\n\n")
    with pytest.raises(SSEBufferOverflow):  # the parser stays failed
        parser.close()


def test_huge_chunk_of_small_events_is_fine(scanner: ModuleType) -> None:
    event = b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hi"}\n\n'
    data = event * (4 * 1024 * 1024 // len(event))  # 4 MB in one call: 64 times max_buffer, 16 windows
    parser = scanner.SSEParser(max_buffer=64 * 1024)
    events = parser.feed(data)
    assert len(events) == len(data) // len(event)
    assert parser.close() == []


def test_memory_is_bounded_by_one_event_not_by_the_stream(scanner: ModuleType) -> None:
    data = (b"data: " + b"z" * 100 + b"\n\n") * 40_000  # ~4.2 MB: a peak that followed the stream fails the bound
    parser = scanner.SSEParser()
    view = memoryview(data)
    counted = []

    def run() -> None:
        n = 0
        for start in range(0, len(data), 16384):
            n += len(parser.feed(view[start : start + 16384]))  # events dropped as a consumer would
        counted.append(n)

    peak = peak_traced(run)
    assert counted == [40_000]
    assert peak < 2 * 1024 * 1024, f"peak {peak} bytes"


def test_memory_is_not_bounded_by_the_chunk_size(scanner: ModuleType) -> None:
    data = (b": keep-alive padding " + b"p" * 100 + b"\n") * 200_000  # ~24 MB that completes no event
    parser = scanner.SSEParser()
    peak = peak_traced(lambda: parser.feed(data))
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes for a {len(data)} byte chunk"


def test_one_byte_chunks_of_a_long_line_stay_linear(scanner: ModuleType) -> None:
    parser = scanner.SSEParser()
    payload = b"data: " + b"a" * 300_000 + b"\n\n"
    view = memoryview(payload)
    out = []
    for i in range(len(payload)):
        out += parser.feed(view[i : i + 1])
    assert [len(e.data) for e in out] == [300_000]


def test_large_event_fed_whole(scanner: ModuleType) -> None:
    blob = b"Q" * (20 * 1024 * 1024)
    events = scanner.SSEParser(max_buffer=32 * 1024 * 1024).feed(b"data: " + blob + b"\n\n")
    assert len(events) == 1 and len(events[0].data) == len(blob)


# --- properties ----------------------------------------------------------------------------------------

_lines = st.lists(
    st.one_of(
        st.sampled_from([b"", b"data", b"data:", b"id: 1", b"retry: 10", b": c", b"event: e", b"id", b"\xef\xbb\xbf"]),
        st.binary(max_size=12).map(lambda b: b"data: " + b.replace(b"\r", b"").replace(b"\n", b"")),
        st.binary(max_size=10),
    ),
    max_size=25,
)


@settings(max_examples=examples(200), deadline=None)
@given(lines=_lines, eols=st.lists(st.sampled_from([b"\n", b"\r", b"\r\n"]), min_size=1), data=st.data())
def test_any_rechunking_gives_the_same_events(
    scanner: ModuleType, lines: list[bytes], eols: list[bytes], data: st.DataObject
) -> None:
    stream = b"".join(line + eols[i % len(eols)] for i, line in enumerate(lines))
    whole = parse(scanner, stream)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    parser = scanner.SSEParser()
    events = []
    prev = 0
    for cut in [*cuts, len(stream)]:
        events += parser.feed(stream[prev:cut])
        prev = cut
    events += parser.close()
    assert [(e.event, e.data, e.id, e.retry) for e in events] == whole


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("size", [None, 4096, 16384])
def test_few_long_lines_with_every_line_end(scanner: ModuleType, eol: bytes, size: Optional[int]) -> None:
    # blocks of a few long lines take a search-based split in the twin; results must not change
    long_a, long_b = b"a" * 6000, b"b" * 9000
    data = b"event: big" + eol + b"data: " + long_a + eol + b"data: " + long_b + eol + eol + b"data: x" + eol + eol
    assert parse(scanner, data, size) == [
        ("big", "a" * 6000 + "\n" + "b" * 9000, None, None),
        ("message", "x", None, None),
    ]
