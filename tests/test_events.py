"""Unified and the SSEEvent value types."""

from __future__ import annotations

import os
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest

import ssewire
from helpers import COMPILED
from ssewire import UNIFIED_TYPES, Unified
from ssewire.events import SSEEvent


def test_unified_positional_fields_match_the_reference() -> None:
    u = Unified("tool_call_done", "", "c1", "add", "", {"a": 1}, None, None, None, 3, {"x": 1})
    assert (u.type, u.tool_call_id, u.tool_name, u.arguments, u.sequence, u.raw) == (
        "tool_call_done",
        "c1",
        "add",
        {"a": 1},
        3,
        {"x": 1},
    )


def test_unified_to_dict_keeps_only_set_fields_and_raw_on_request() -> None:
    u = Unified("text_delta", text="hi", raw={"p": 1})
    assert u.to_dict() == {"type": "text_delta", "text": "hi"}
    assert u.to_dict(with_raw=True) == {"type": "text_delta", "text": "hi", "raw": {"p": 1}}
    done = Unified("done", stop_reason="end", raw_stop_reason="STOP")
    assert done.to_dict() == {"type": "done", "stop_reason": "end", "raw_stop_reason": "STOP"}
    assert Unified("tool_call_done", arguments={}, server=True).to_dict() == {
        "type": "tool_call_done",
        "arguments": {},
        "server": True,
    }


def test_unified_equality_and_repr() -> None:
    assert Unified("text_delta", text="a") == Unified("text_delta", text="a")
    assert Unified("text_delta", text="a") != Unified("text_delta", text="b")
    assert repr(Unified("text_delta", text="a")) == "Unified('text_delta', text='a')"
    assert "raw" in UNIFIED_TYPES and len(UNIFIED_TYPES) == 9


def test_sse_event_values(scanner: ModuleType) -> None:
    event = scanner.SSEEvent
    e = event()
    assert (e.event, e.data, e.id, e.retry) == ("message", "", None, None)
    assert event("x", "1") == event("x", "1")
    assert event("x", "1") != event("x", "2")
    assert event("x", "1") != "x"
    assert event("x", '{"a": 1}').json() == {"a": 1}
    assert event("x", "{").json() is None


def test_fast_constructors_match_the_keyword_constructor() -> None:
    from ssewire.events import new_done, new_event, new_tool_event, new_usage

    raw = {"a": 1}
    assert new_event("raw", raw) == Unified("raw", raw=raw)
    assert new_event("text_delta", raw, "hi", 7, "sig") == Unified(
        "text_delta", text="hi", sequence=7, raw=raw, signature="sig"
    )
    start = new_tool_event("tool_call_start", "c1", "f", raw, "", 3, True)
    assert start == Unified("tool_call_start", tool_call_id="c1", tool_name="f", sequence=3, raw=raw, server=True)
    delta = new_tool_event("tool_call_delta", "c1", None, raw, '{"x"')
    assert delta == Unified("tool_call_delta", tool_call_id="c1", arguments_delta='{"x"', raw=raw)
    assert type(delta) is Unified and all(hasattr(delta, name) for name in Unified.__slots__)
    assert new_usage({"n": 1}, raw) == Unified("usage", usage={"n": 1}, raw=raw)
    assert new_usage({"n": 1}, raw, 4) == Unified("usage", usage={"n": 1}, sequence=4, raw=raw)
    assert new_done("end", "stop", raw) == Unified("done", stop_reason="end", raw_stop_reason="stop", raw=raw)
    assert new_done("end", None, raw, 9) == Unified("done", stop_reason="end", sequence=9, raw=raw)


def _factories() -> list[Any]:
    from ssewire import events

    made = [pytest.param(events.python_new_event, id="python")]
    if COMPILED:
        from ssewire._scan import scanner_c

        assert scanner_c.use_unified(Unified, Unified.__slots__, events.unified_defaults())  # (switched off: unused)
        made.append(pytest.param(scanner_c.new_unified, id="cython"))
    return made


@pytest.mark.parametrize("make", _factories())
def test_each_event_factory_sets_every_slot_as_the_constructor(make: object) -> None:
    raw, lazy = {"a": 1}, ssewire.events.LazyPayload('{"a": 1}')
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        (("raw", raw), {"raw": raw}),
        (("text_delta", raw, "hi"), {"text": "hi", "raw": raw}),
        (("text_delta", lazy, "hi", 7, "sig"), {"text": "hi", "sequence": 7, "raw": lazy, "signature": "sig"}),
        (("done", None, "", None, None), {}),
    ]
    for args, fields in cases:
        made = make(*args)  # type: ignore[operator]
        expected = Unified(args[0], **fields)
        assert type(made) is Unified
        assert [getattr(made, name) for name in Unified.__slots__] == [
            getattr(expected, name) for name in Unified.__slots__
        ]
        assert made._raw is expected._raw  # (a lazy payload stays lazy, the same object)
    with pytest.raises(TypeError):
        make()  # type: ignore[operator]


def test_the_compiled_factory_is_in_use_where_the_scanners_are_compiled() -> None:
    from ssewire import events

    assert (events.new_event is not events.python_new_event) == (ssewire.IMPLEMENTATION == "cython")


_EVENT_CLASS = """
import ssewire, ssewire.events
events = list(ssewire.iter_events([b"data: a\\n\\n[", b"x"], "sse")) + ssewire.parse_sse_bytes(b"data: b\\n\\n")
events += ssewire.framing.make_scanner("json-array").feed(b'[{"c": 1},')
assert len(events) == 3, events
assert all(isinstance(event, ssewire.events.SSEEvent) for event in events), [type(e) for e in events]
assert ssewire.events.SSEEvent is ssewire.SSEEvent
print(ssewire.IMPLEMENTATION, ssewire.events.SSEEvent.__module__)
"""


@pytest.mark.parametrize(
    ("switch", "implementation"), [("1", "python"), ("", "python" if COMPILED is None else "cython")]
)
def test_events_owns_the_class_the_active_scanner_yields(switch: str, implementation: str) -> None:
    """``isinstance(event, ssewire.events.SSEEvent)`` holds for every framed event, compiled or twin."""
    env = {**os.environ, "SSEWIRE_NO_EXTENSIONS": switch}
    done = subprocess.run([sys.executable, "-c", _EVENT_CLASS], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    module = "ssewire._scan.scanner_py" if implementation == "python" else "ssewire._scan.scanner_c"
    assert done.stdout.split() == [implementation, module]


def test_the_active_scanner_events_are_events_sse_events() -> None:
    event = ssewire.SSEParser().feed(b"data: x\n\n")[0]
    assert isinstance(event, SSEEvent) and type(event) is SSEEvent is ssewire.SSEEvent
    assert SSEEvent("message", "x") == event
