"""Which scanner is active, how to force the twin, and the compiled types behaving like the twin's."""

from __future__ import annotations

import copy
import gc
import pickle
import sys
import threading
import time
from types import ModuleType
from typing import Any

import pytest

import ssewire
from helpers import COMPILED, run_python
from helpers.eventstream import encode_message, event
from ssewire import _scan as _scanner
from ssewire._config import env_flag
from ssewire._scan import scanner_py as _scanner_py
from ssewire.normalizers._fast import typed

NAMES = (
    "DEFAULT_MAX_BUFFER",
    "EventStreamMessage",
    "EventStreamParser",
    "JSONArrayStreamParser",
    "NDJSONParser",
    "SSEEvent",
    "SSEParser",
    "Utf8Event",
)
SHARED = (*NAMES, "SIMD", "_select_simd")  # every name one module has, the other has too
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="compiled scanner not built")


def test_compiled_scanner_is_active_when_required() -> None:
    """CI sets SSEWIRE_REQUIRE_EXTENSIONS=1: a silently missing compiled module must fail the build."""
    if not env_flag("SSEWIRE_REQUIRE_EXTENSIONS"):
        pytest.skip("SSEWIRE_REQUIRE_EXTENSIONS is not set")
    assert COMPILED is not None, "ssewire._scan.scanner_c cannot be imported"
    assert ssewire.IMPLEMENTATION == "cython"
    assert typed.delta_rule((("type",),), {}, 0) is not None, "ssewire.normalizers._fast.deltas_c cannot be imported"


def test_implementation_names_the_active_module() -> None:
    module = COMPILED if ssewire.IMPLEMENTATION == "cython" else _scanner_py
    assert ssewire.IMPLEMENTATION in ("cython", "python")
    assert module is not None
    assert ssewire.SSEParser is module.SSEParser
    assert ssewire.JSONArrayStreamParser is module.JSONArrayStreamParser
    assert ssewire.SSEEvent is module.SSEEvent
    assert _scanner.EventStreamParser is module.EventStreamParser
    assert _scanner.EventStreamMessage is module.EventStreamMessage
    if COMPILED is not None and not env_flag("SSEWIRE_NO_EXTENSIONS"):
        assert ssewire.IMPLEMENTATION == "cython"


def test_no_extensions_env_forces_the_twin() -> None:
    code = "import ssewire; print(ssewire.IMPLEMENTATION, ssewire.SSEParser.__module__)"
    assert run_python(code, SSEWIRE_NO_EXTENSIONS="1") == "python ssewire._scan.scanner_py"
    assert run_python(code, SSEWIRE_NO_EXTENSIONS="true") == "python ssewire._scan.scanner_py"


@needs_compiled
@pytest.mark.parametrize("value", ["0", "", "false", "off"])
def test_no_extensions_off_values_keep_the_compiled_scanner(value: str) -> None:
    assert run_python("import ssewire; print(ssewire.IMPLEMENTATION)", SSEWIRE_NO_EXTENSIONS=value) == "cython"


@pytest.mark.parametrize(
    ("value", "on"), [("1", True), ("true", True), ("TRUE", True), ("yes", True), ("0", False), ("", False),
                      ("false", False), ("off", False), (" 0 ", False)]
)  # fmt: skip
def test_env_flag_values(monkeypatch: pytest.MonkeyPatch, value: str, on: bool) -> None:
    monkeypatch.setenv("SSEWIRE_TEST_FLAG", value)
    assert env_flag("SSEWIRE_TEST_FLAG") is on
    monkeypatch.delenv("SSEWIRE_TEST_FLAG")
    assert env_flag("SSEWIRE_TEST_FLAG") is False


@needs_compiled
def test_default_is_the_compiled_scanner_in_a_fresh_interpreter() -> None:
    assert run_python("import ssewire; print(ssewire.IMPLEMENTATION)") == "cython"


def test_package_works_when_the_compiled_module_cannot_be_imported() -> None:
    code = (
        "import sys; sys.modules['ssewire._scan.scanner_c'] = None\n"  # makes the import raise ImportError
        "import ssewire\n"
        "events = ssewire.SSEParser().feed(b'data: hi\\n\\n')\n"
        "print(ssewire.IMPLEMENTATION, events[0].data)"
    )
    assert run_python(code) == "python hi"


@needs_compiled
def test_both_modules_export_the_same_names() -> None:
    assert COMPILED is not None
    assert sorted(COMPILED.__all__) == sorted(_scanner_py.__all__) == sorted(NAMES)
    assert COMPILED.DEFAULT_MAX_BUFFER == _scanner_py.DEFAULT_MAX_BUFFER
    for name in SHARED:
        assert hasattr(COMPILED, name) and hasattr(_scanner_py, name), name
    assert _scanner_py.SIMD == "none" and COMPILED.SIMD in ("none", "sse2", "avx2")
    assert _scanner_py.SSEEvent.__module__ == "ssewire._scan.scanner_py"  # each twin defines its own event type


@pytest.mark.parametrize("kind", ["SSEParser", "JSONArrayStreamParser", "NDJSONParser", "EventStreamParser"])
def test_a_parser_fed_from_a_second_thread_while_feeding_refuses(scanner: ModuleType, kind: str) -> None:
    """One parser belongs to one stream and one thread: both implementations refuse a feed(), close() or
    __init__() that arrives while a feed() is running, and the running feed() is unharmed."""
    from ssewire.errors import ParserBusyError

    # the compiled feed() holds the GIL for long stretches: it needs a long body to be caught running; the twin's
    # Python code is switched out every few milliseconds, so an eighth of it is already ~100 switches
    n = 8 if scanner is _scanner_py else 1
    count = 300_000 // n + 1 if kind == "JSONArrayStreamParser" else 400_000 // n
    if kind == "SSEParser":
        body = b'data: {"choices":[{"delta":{"content":"hello there"}}]}\n\n' * count
    elif kind == "NDJSONParser":
        body = b'{"message":{"content":"hello there"},"done":false}\n' * count
    elif kind == "EventStreamParser":
        # small messages, and every 1000th one long enough for the compiled parser to check its CRC without the GIL
        unit = encode_message({}, b'{"t":"hello there"}') * 999 + encode_message({}, b"x" * 5000)
        body, count = unit * (200 // n), 200_000 // n
    else:
        body = b"[" + b'{"candidates":[{"content":{"parts":[{"text":"hello there"}]}}]},' * (count - 1) + b"{}"
    for _attempt in range(10):
        parser = getattr(scanner, kind)(max_buffer=1 << 20)
        refused: list[str] = []
        outcome: list[int] = []
        started = threading.Event()

        def feed_all(p: Any, started: threading.Event, outcome: list[int]) -> None:
            started.set()
            try:
                outcome.append(len(p.feed(body)))
            except Exception:  # the main thread closed the parser before this feed began: try again
                outcome.append(-1)

        worker = threading.Thread(target=feed_all, args=(parser, started, outcome))
        worker.start()
        started.wait()
        while worker.is_alive():
            for call in (lambda p=parser: p.feed(b""), parser.close, lambda p=parser: p.__init__()):
                try:
                    call()
                except ParserBusyError as exc:
                    refused.append(str(exc))
                except Exception:  # the feed finished in between: the call met an idle parser
                    pass
            time.sleep(0)
        worker.join()
        if refused:
            break
    assert refused, "no call ever met the parser while it was feeding"
    assert any("re-entered" in r or "while the parser is feeding" in r for r in refused)
    assert outcome == [count]  # the running feed() completed, whole


def test_event_attributes_are_writable(scanner: ModuleType) -> None:
    [event] = scanner.SSEParser().feed(b"event: a\ndata: 1\nid: 7\nretry: 5\n\n")
    event.event, event.data, event.id, event.retry = "b", "[2]", None, None
    assert (event.event, event.data, event.id, event.retry) == ("b", "[2]", None, None)
    assert event.json() == [2]
    with pytest.raises(AttributeError):
        event.other = 1  # slots only, as in the twin


@pytest.mark.parametrize("field", ["event", "data", "id", "retry"])
def test_a_deleted_event_field_raises_attribute_error(scanner: ModuleType, field: str) -> None:
    [event] = scanner.SSEParser().feed(b"data: 1\n\n")
    other = scanner.SSEEvent("message", "1")
    delattr(event, field)
    uses = [lambda: getattr(event, field), lambda: repr(event), lambda: hash(event)]
    if field == "data":
        uses.append(event.json)
    for use in uses:
        with pytest.raises(AttributeError):
            use()
    assert (event == other) is False
    setattr(event, field, getattr(other, field))
    assert event == other


@pytest.mark.parametrize("kind", ["SSEEvent", "EventStreamMessage"])
def test_events_of_a_subclass_are_built_and_freed(scanner: ModuleType, kind: str) -> None:
    class Tagged(getattr(scanner, kind)):  # type: ignore[misc]
        __slots__ = ("tag",)

    events = [Tagged("e", str(i)) for i in range(1000)]
    for i, ev in enumerate(events):
        ev.tag = i
    assert [(ev.data, ev.tag) for ev in events[:2]] == [("0", 0), ("1", 1)]
    del events  # freed through the base type's deallocator, then parsing still works
    assert [e.data for e in scanner.SSEParser().feed(b"data: a\n\n" * 300)] == ["a"] * 300
    assert [e.event for e in scanner.EventStreamParser().feed(event("a", {}) * 300)] == ["a"] * 300


@needs_compiled
def test_compiled_events_do_not_leak_or_drop_references_to_their_type() -> None:
    # the compiled event type has its own deallocator and free list: a heap type (or a subclass) must get back
    # every reference its objects took
    class Tagged(COMPILED.SSEEvent):  # type: ignore[misc,name-defined,union-attr]
        __slots__ = ("tag",)

    for cls in (COMPILED.SSEEvent, Tagged):  # type: ignore[union-attr]
        before = sys.getrefcount(cls)
        for _ in range(3):
            made = [cls("a", str(i)) for i in range(600)]  # more than the free list holds
            parsed = COMPILED.SSEParser().feed(b"data: x\n\n" * 600)  # type: ignore[union-attr]
            del made, parsed
        assert sys.getrefcount(cls) == before


@needs_compiled
def test_compiled_messages_do_not_leak_or_drop_references_to_their_type() -> None:
    class Tagged(COMPILED.EventStreamMessage):  # type: ignore[misc,name-defined,union-attr]
        __slots__ = ("tag",)

    stream = event("chunk", {"i": 1}) * 600
    for cls in (COMPILED.EventStreamMessage, Tagged):  # type: ignore[union-attr]
        gc.collect()  # messages left by earlier tests, in cycles, must not be freed during the count
        before = sys.getrefcount(cls)
        for _ in range(3):
            made = [cls("a", str(i), {"h": i}, b"p") for i in range(600)]
            parsed = COMPILED.EventStreamParser().feed(stream)  # type: ignore[union-attr]
            del made, parsed
        assert sys.getrefcount(cls) == before


@pytest.mark.parametrize("field", ["event", "data", "headers", "payload", "message_type", "content_type"])
def test_a_deleted_message_field_raises_attribute_error(scanner: ModuleType, field: str) -> None:
    """As in the twin (``__slots__``): a deleted field raises AttributeError (the compiled type's own fields do not
    read None), the message then compares unequal, and setting the field again restores it."""
    [message] = scanner.EventStreamParser().feed(encode_message({":event-type": "e", ":content-type": "t"}, b"{}"))
    other = scanner.EventStreamMessage("e", "{}", {":event-type": "e", ":content-type": "t"}, b"{}", None, "t")
    assert message == other
    value = getattr(message, field)
    delattr(message, field)
    uses = [lambda: getattr(message, field), lambda: delattr(message, field)]
    if field in ("event", "data", "message_type", "content_type"):
        uses.append(lambda: repr(message))
    if field in ("event", "data", "message_type", "payload"):
        uses.append(lambda: hash(message))
    for use in uses:
        with pytest.raises(AttributeError):
            use()
    assert (message == other) is False and (other == message) is False
    setattr(message, field, value)
    assert message == other and hash(message) == hash(other)


def test_compiled_event_fields_are_member_descriptors() -> None:
    # as __slots__ makes them in the twin, so the interpreter's specialised attribute loads apply
    if COMPILED is None:
        pytest.skip("compiled scanner not built")
    for field in ("event", "data", "id", "retry"):
        assert type(COMPILED.SSEEvent.__dict__[field]) is type(_scanner_py.SSEEvent.__dict__[field])


def test_event_copy_and_pickle(scanner: ModuleType) -> None:
    message = scanner.EventStreamMessage("chunk", '{"a": 1}', {"n": 1, "u": b"\x00"}, b'{"a": 1}', "event", "json")
    for original in (scanner.SSEEvent("x", '{"a": 1}', "3", 100), message):
        for clone in (copy.copy(original), copy.deepcopy(original), pickle.loads(pickle.dumps(original))):
            assert type(clone) is type(original)
            assert clone == original
            assert repr(clone) == repr(original)
    clone = pickle.loads(pickle.dumps(message))
    assert (clone.headers, clone.payload, clone.message_type, clone.content_type) == (
        {"n": 1, "u": b"\x00"},
        b'{"a": 1}',
        "event",
        "json",
    )


def test_event_defaults_and_comparisons(scanner: ModuleType) -> None:
    assert scanner.SSEEvent() == _scanner_py.SSEEvent("message", "", None, None)
    assert scanner.SSEEvent(data="x") != object()
    assert (scanner.SSEEvent() == 1) is False
    assert len({scanner.SSEEvent("a", "b"), _scanner_py.SSEEvent("a", "b")}) == 1


def test_parser_attributes_read_and_write_like_the_twin(scanner: ModuleType) -> None:
    parser = scanner.SSEParser(100, flush_incomplete=False)
    assert (parser.max_buffer, parser.flush_incomplete, parser.last_event_id, parser.retry) == (100, False, None, None)
    assert (parser.events_parsed, parser.bytes_fed) == (0, 0)
    parser.retry = 5
    parser.max_buffer = 12
    assert parser.feed(b"data: 1234\n\n")[0].retry == 5
    with pytest.raises(ssewire.SSEBufferOverflow):
        parser.feed(b"data: 123456789\n\n")
    json_parser = scanner.JSONArrayStreamParser(10)
    assert (json_parser.max_buffer, json_parser.finished, json_parser.events_parsed) == (10, False, 0)
    with pytest.raises(ValueError, match="positive"):
        scanner.JSONArrayStreamParser(0)
    with pytest.raises(ValueError, match="positive"):
        scanner.SSEParser(-1)
    event_parser = scanner.EventStreamParser(1000)
    assert (event_parser.max_buffer, event_parser.events_parsed, event_parser.bytes_fed) == (1000, 0, 0)
    small = event("e", {})
    event_parser.max_buffer = len(small)
    assert len(event_parser.feed(small)) == 1 and (event_parser.events_parsed, event_parser.bytes_fed) == (
        1,
        len(small),
    )
    with pytest.raises(ssewire.SSEBufferOverflow):
        event_parser.feed(event("e", {"a": 1}))
    with pytest.raises(ValueError, match="positive"):
        scanner.EventStreamParser(0)


def test_input_types(scanner: ModuleType) -> None:
    data = b"data: a\n\n"
    for chunk in (data, bytearray(data), memoryview(data), memoryview(bytearray(data * 2))[::2][:0]):
        parser = scanner.SSEParser()
        parser.feed(chunk)
    with pytest.raises(TypeError):
        scanner.SSEParser().feed("data: a\n\n")
    with pytest.raises(TypeError):
        scanner.JSONArrayStreamParser().feed(None)
    with pytest.raises(TypeError):
        scanner.EventStreamParser().feed("\x00\x00\x00\x10")
    with pytest.raises(TypeError):
        scanner.EventStreamParser().feed(16)


@needs_compiled
def test_compiled_scanner_releases_the_gil_while_scanning() -> None:
    """Another thread runs during a large feed(): with a switch interval far longer than the feed, it can only
    run when the scanner releases the GIL itself."""
    assert COMPILED is not None
    data = (b"data: " + b"a" * 200_000 + b"\n\n") * 300  # 60 MB: the GIL is released for each 256 KiB window
    counter = [0]
    started = threading.Event()
    stop = threading.Event()

    def count() -> None:
        started.set()
        while not stop.is_set():
            counter[0] += 1
            if counter[0] % 200 == 0:
                time.sleep(0)  # hand the GIL back promptly once the scanner wants it again

    interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    thread = threading.Thread(target=count)
    during = 0
    try:
        thread.start()
        started.wait()
        for _attempt in range(5):  # a waiting thread is woken by the OS: give a slow wake-up a few more chances
            before = counter[0]
            events = COMPILED.SSEParser().feed(data)
            during = counter[0] - before
            assert len(events) == 300
            if during > 0:
                break
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert during > 0, "no other thread ran while the compiled scanner worked on 60 MB"


@needs_compiled
def test_compiled_event_stream_parser_checks_long_messages_without_the_gil() -> None:
    """The CRC of a message of 4 KiB or more is computed with the GIL released: another thread runs during the
    feeds, with a switch interval far longer than they take."""
    assert COMPILED is not None
    data = memoryview(encode_message({":event-type": "big"}, b"b" * 200_000) * 100)  # 20 MB
    step = 1 << 20  # fed in 1 MiB chunks, the messages dropped
    counter = [0]
    started = threading.Event()
    stop = threading.Event()

    def count() -> None:
        started.set()
        while not stop.is_set():
            counter[0] += 1
            if counter[0] % 200 == 0:
                time.sleep(0)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    thread = threading.Thread(target=count)
    during = 0
    try:
        thread.start()
        started.wait()
        for _attempt in range(40):  # (a busy machine, CI's builds beside the tests, may not run the thread at once)
            before = counter[0]
            parser = COMPILED.EventStreamParser()
            got = sum(len(parser.feed(data[i : i + step])) for i in range(0, len(data), step))
            during = counter[0] - before
            assert got == 100
            if during > 0:
                break
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert during > 0, "no other thread ran while the compiled parser checked 20 MB of messages"
