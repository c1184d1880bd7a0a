"""NDJSONParser (newline-delimited JSON: Ollama, recorded WebSocket sessions), on both implementations (the
``scanner`` fixture); ``framing="ndjson"`` and its recognition through the framing registry."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Optional

import pytest

from helpers import chunked, framed_at_every_split, framed_data
from ssewire import SSEBufferOverflow, iter_events
from ssewire.framing import AutoScanner, framing_for_content_type, make_scanner


def lines(scanner: ModuleType, data: bytes, size: Optional[int] = None, max_buffer: int = 1 << 20) -> list[str]:
    return framed_data(scanner.NDJSONParser(max_buffer), data, size)


def every_split(scanner: ModuleType, data: bytes) -> list[str]:
    return framed_at_every_split(scanner.NDJSONParser, data)


def test_one_event_per_line_whatever_the_line_end(scanner: ModuleType) -> None:
    body = b'{"a":1}\n{"b":2}\r\n{"c":3}\r{"d":"\xc3\xa9 \xe6\x9d\xb1"}\n'
    assert every_split(scanner, body) == ['{"a":1}', '{"b":2}', '{"c":3}', '{"d":"é 東"}']


def test_blank_lines_are_skipped_and_the_text_is_kept_as_sent(scanner: ModuleType) -> None:
    body = b'\n\n \t \r\n  {"a": 1}  \n\r\n\t\n{"b":2}'
    assert every_split(scanner, body) == ['  {"a": 1}  ', '{"b":2}']


def test_a_leading_bom_is_dropped_once(scanner: ModuleType) -> None:
    assert every_split(scanner, b'\xef\xbb\xbf{"a":1}\n') == ['{"a":1}']
    assert every_split(scanner, b'\xef\xbb\xbf\xef\xbb\xbf{"a":1}\n') == ['\ufeff{"a":1}']


def test_the_last_line_needs_no_line_end_and_bad_utf8_is_replaced(scanner: ModuleType) -> None:
    assert every_split(scanner, b'{"a":1}\n{"b":"\xff"}') == ['{"a":1}', '{"b":"\ufffd"}']


def test_lines_are_not_parsed_here(scanner: ModuleType) -> None:
    assert every_split(scanner, b"not json\n[1,2]\n{\n") == ["not json", "[1,2]", "{"]


def test_a_line_over_max_buffer_raises_and_stays_failed(scanner: ModuleType) -> None:
    parser = scanner.NDJSONParser(max_buffer=10)
    assert [e.data for e in parser.feed(b'{"a":1}\n')] == ['{"a":1}']
    with pytest.raises(SSEBufferOverflow):
        parser.feed(b'{"a":"long line"}\n')
    with pytest.raises(SSEBufferOverflow):
        parser.feed(b"{}\n")
    held = scanner.NDJSONParser(max_buffer=10)
    held.feed(b"{" + b"x" * 8)
    with pytest.raises(SSEBufferOverflow):
        held.feed(b"xx")  # the pending line alone goes over: memory stays bounded by one line


def test_large_lines_at_any_chunking(scanner: ModuleType) -> None:
    line = json.dumps({"message": {"content": "é" * 5000 + "x" * 70_000}})
    body = (line + "\n" + line + "\r\n" + line).encode()
    for size in (None, 7, 4093, 16384, 100_000):
        assert lines(scanner, body, size) == [line, line, line]


def test_the_framing_is_registered_and_recognised() -> None:
    assert framing_for_content_type("application/x-ndjson") == "ndjson"
    assert framing_for_content_type("application/json; charset=utf-8") == "auto"
    body = b'\n  {"model":"m","done":false}\n{"model":"m","done":true}\n'
    assert [e.data for e in iter_events([body], "ndjson")] == [
        '  {"model":"m","done":false}',
        '{"model":"m","done":true}',
    ]
    auto = AutoScanner()
    got = []
    for chunk in chunked(body, 1):
        got += auto.feed(chunk)
    got += auto.close()
    assert auto.framing == "ndjson" and [e.data for e in got] == [e.data for e in iter_events([body], "ndjson")]
    assert type(make_scanner("ndjson")).__name__ == "NDJSONParser"
