"""Unified and the pure-Python SSEEvent value types."""

from __future__ import annotations

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


def test_python_sse_event() -> None:
    e = SSEEvent()
    assert (e.event, e.data, e.id, e.retry) == ("message", "", None, None)
    assert SSEEvent("x", "1") == SSEEvent("x", "1")
    assert SSEEvent("x", "1") != SSEEvent("x", "2")
    assert SSEEvent("x", "1") != "x"
    assert SSEEvent("x", '{"a": 1}').json() == {"a": 1}
    assert SSEEvent("x", "{").json() is None


def test_fast_constructors_match_the_keyword_constructor() -> None:
    from ssewire.events import new_event, new_tool_event

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
