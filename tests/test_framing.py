"""The framing registry: one entry per framing gives make_scanner, auto-detection, the adapters' content-type
mapping and the command line's choices."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ssewire import SSEBufferOverflowError, UnknownFramingError, framing
from ssewire.names import FramingName, literal_values


def test_the_literal_type_names_exactly_the_registered_framings() -> None:
    assert set(literal_values(FramingName)) == set(framing.FRAMINGS)
    assert framing.FRAMINGS[0] == "auto"


def test_the_registry_and_its_functions_have_one_home() -> None:
    """framing.py is where framings are named and built: the glue imports them from it, and re-exports none."""
    import ssewire
    from ssewire import adapters, stream

    for name in ("FRAMINGS", "FRAMINGS_BY_NAME", "AutoScanner", "make_scanner", "framing_for_content_type"):
        assert name in framing.__all__
        for module in (ssewire, stream, adapters):
            assert name not in module.__all__, (module.__name__, name)
    assert not hasattr(ssewire, "FRAMINGS") and not hasattr(stream, "AutoScanner")


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("json_array", "json_array"),
        ("json-array", "json_array"),
        ("aws-eventstream", "aws-eventstream"),
        ("aws_eventstream", "aws-eventstream"),
        ("sse", "sse"),
        ("ndjson", "ndjson"),
        ("auto", "auto"),
    ],
)
def test_a_framing_name_is_taken_in_either_spelling(given: str, name: str) -> None:
    assert framing.framing_name(given) == name
    if name != "auto":
        assert type(framing.make_scanner(given)) is framing.FRAMINGS_BY_NAME[name].scanner  # type: ignore[arg-type]


@pytest.mark.parametrize("given", ["SSE", "json array", "jsonarray", "", None, 1, ["sse"]])
def test_other_framing_names_are_refused(given: object) -> None:
    with pytest.raises(UnknownFramingError, match="unknown framing"):
        framing.framing_name(given)
    with pytest.raises(UnknownFramingError):
        framing.make_scanner(given)  # type: ignore[arg-type]


def test_make_scanner_takes_max_buffer_by_keyword_only() -> None:
    with pytest.raises(TypeError):
        framing.make_scanner("sse", 10)  # type: ignore[misc]
    scanner = framing.make_scanner("json-array", max_buffer=10)  # type: ignore[arg-type]
    with pytest.raises(SSEBufferOverflowError):
        scanner.feed(b'[{"a": "' + b"x" * 20)


def test_make_scanner_builds_each_registered_framing() -> None:
    for name, entry in framing.FRAMINGS_BY_NAME.items():
        scanner = framing.make_scanner(name)  # type: ignore[arg-type]
        assert type(scanner) is entry.scanner
    assert isinstance(framing.make_scanner("auto"), framing.AutoScanner)


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/json", "auto"),  # a streamed array or JSON lines: the first bytes tell
        ("Application/JSON; charset=utf-8", "auto"),
        ("application/x-ndjson", "ndjson"),
        ("application/jsonl", "ndjson"),
        ("text/event-stream", "sse"),
        ("text/event-stream;charset=UTF-8", "sse"),
        ("text/plain", "sse"),
        (None, "sse"),
        ("", "sse"),
    ],
)
def test_content_type_to_framing(content_type: object, expected: str) -> None:
    assert framing.framing_for_content_type(content_type) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'[{"a":1}]', "json_array"),
        (b'\xef\xbb\xbf \r\n [{"a":1}]', "json_array"),
        (b"data: x\n\n", "sse"),
        (b": comment\n\ndata: x\n\n", "sse"),
        (b"\n\n\nevent: e\ndata: x\n\n", "sse"),
    ],
)
def test_auto_scanner_recognises_the_framing_at_any_chunking(body: bytes, expected: str) -> None:
    for size in (1, 2, 3, 5, len(body)):
        scanner = framing.AutoScanner()
        events = []
        for i in range(0, len(body), size):
            events += scanner.feed(body[i : i + size])
        events += scanner.close()
        assert scanner.framing == expected, size
        assert len(events) == 1


def test_auto_scanner_holds_only_the_start_and_bounds_it() -> None:
    scanner = framing.AutoScanner(max_buffer=16)
    assert scanner.feed(b" " * 16) == []
    with pytest.raises(SSEBufferOverflowError):
        scanner.feed(b" ")


def test_a_new_framing_is_one_entry(monkeypatch: pytest.MonkeyPatch, scanner: ModuleType) -> None:
    """A framing added to the registry is built by name, recognised by auto and mapped from its content type."""

    class Lines:
        def __init__(self, max_buffer: int) -> None:
            self.parser = scanner.SSEParser(max_buffer)

        def feed(self, data: Any) -> list[Any]:
            return list(self.parser.feed(bytes(data).replace(b"\n", b"\n\n").replace(b"~", b"data: ")))

        def close(self) -> list[Any]:
            return list(self.parser.close())

    entry = framing.Framing("tilde", Lines, ("application/x-tilde",), lambda head: head[:1] == b"~")
    registry = {"tilde": entry, **framing.FRAMINGS_BY_NAME}
    monkeypatch.setattr(framing, "FRAMINGS_BY_NAME", registry)
    assert framing.framing_for_content_type("application/x-tilde") == "tilde"  # type: ignore[comparison-overlap]
    auto = framing.AutoScanner()
    events = auto.feed(b"~hello\n") + auto.close()
    assert auto.framing == "tilde" and [e.data for e in events] == ["hello"]
    assert isinstance(framing.make_scanner("tilde"), Lines)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [1, 3, 5, 64])
def test_a_body_never_recognised_is_read_as_sse_at_close_with_its_events(
    monkeypatch: pytest.MonkeyPatch, scanner: ModuleType, size: int
) -> None:
    """Bytes that show no framing (binary junk first) are read as SSE when the body ends: the events of the bytes
    held until then are given, not dropped (found by the scanner fuzzer)."""
    registry = {
        name: entry._replace(scanner=getattr(scanner, entry.scanner.__name__))
        for name, entry in framing.FRAMINGS_BY_NAME.items()
    }
    monkeypatch.setattr(framing, "FRAMINGS_BY_NAME", registry)
    body = b"\x00\xd7\x1a\ndata\n\n"  # short: no recogniser decides before the end
    named = scanner.SSEParser()
    want = [(e.event, e.data) for e in list(named.feed(body)) + list(named.close())]
    auto = framing.AutoScanner(max_buffer=4096)
    got = []
    for i in range(0, len(body), size):
        got += auto.feed(body[i : i + size])
    got += auto.close()
    assert auto.framing == "sse" and [(e.event, e.data) for e in got] == want == [("message", "")]


@given(first=st.integers(0, 255), rest=st.binary(max_size=40))
@example(first=ord("{"), rest=b'"a": 1}\n{"b": 2}\n')
@example(first=ord("{"), rest=b'"a": 1}')
@example(first=0, rest=b"\x00\x00\x10\x00\x00\x00\x00" + (0x4A3C5F0E).to_bytes(4, "big"))
@example(first=ord("["), rest=b"{}")
def test_the_first_byte_table_gives_the_recognisers_verdicts(first: int, rest: bytes) -> None:
    """Auto-detection tells most heads by their first byte alone, from a table made of the recognisers' own verdicts
    on that byte: the same verdict the recognisers give on the whole head, whatever follows."""
    head = bytes((first,)) + rest
    assert framing.AutoScanner._recognise(head) == framing._recognised(head)


def test_the_first_byte_table_follows_a_replaced_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    sse = framing.FRAMINGS_BY_NAME["sse"]
    assert framing.AutoScanner._recognise(b"data: x") == "sse"
    monkeypatch.setattr(framing, "FRAMINGS_BY_NAME", {"ndjson": sse._replace(name="ndjson")})
    assert framing.AutoScanner._recognise(b"data: x") == "ndjson"
