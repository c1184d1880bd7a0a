"""The result checks of the corpus and fixture tests, shared by every test that parses those streams."""

from __future__ import annotations

from typing import Any, Sequence

from helpers.corpus import unified_stop
from ssewire import StreamResult, Unified


def check_corpus_result(result: StreamResult, capture: dict[str, Any]) -> None:
    """``result`` is exactly what the manifest entry ``capture`` expects."""
    expected = capture["expected"]
    assert result.text == expected["text"]
    assert result.reasoning == expected["reasoning"]
    calls = result.client_tool_calls
    assert [c.name for c in calls] == [c["name"] for c in expected["tool_calls"]]
    for got, want in zip(calls, expected["tool_calls"]):
        assert got.arguments == want["arguments"]
        if want["id"] is not None:
            assert got.id == want["id"]
        else:
            assert got.id  # a synthetic id, never empty
        if "arguments_raw" in want:  # null where the provider sent parsed arguments
            assert got.arguments_raw == want["arguments_raw"]
    assert len({c.id for c in result.tool_calls}) == len(result.tool_calls), "tool call ids must be unique"
    if "server_tool_calls" in expected:
        assert [c.id for c in result.server_tool_calls] == [c["id"] for c in expected["server_tool_calls"]]
    else:
        assert result.server_tool_calls == []
    assert result.raw_stop_reason == expected["stop"]
    assert result.stop_reason == unified_stop(capture)
    assert (result.usage.raw if result.usage else None) == expected["usage"]
    if expected["error"]:
        assert result.error is not None
        inner = expected["error"].get("error", expected["error"])
        assert result.error["message"] == inner["message"]
        assert result.error["type"] == str(inner.get("type") or inner.get("code"))
    else:
        assert result.error is None
    assert result.signatures == expected.get("signatures", [])


def check_fixture_result(result: StreamResult, events: Sequence[Unified], expected: dict[str, Any]) -> None:
    """``result`` (collected from ``events``) is what a fixture's ``.expected.json`` says."""
    assert result.text == expected["text"]
    assert result.reasoning == expected["reasoning"]
    calls = result.client_tool_calls
    assert [(c.name, c.arguments) for c in calls] == [(c["name"], c["arguments"]) for c in expected["tool_calls"]]
    for got, want in zip(calls, expected["tool_calls"]):
        if want.get("id") is not None:
            assert got.id == want["id"]
        if "arguments_raw" in want:  # null where the provider sent parsed arguments
            assert got.arguments_raw == want["arguments_raw"]
    assert len({c.id for c in result.tool_calls}) == len(result.tool_calls)
    assert [c.id for c in result.server_tool_calls] == [c["id"] for c in expected.get("server_tool_calls", [])]
    assert result.raw_stop_reason == expected["stop"]
    assert result.stop_reason == expected["unified_stop"]
    assert (result.usage.raw if result.usage else None) == expected["usage"]
    if expected["error"] is None:
        assert result.error is None
    else:
        assert result.error is not None
        assert result.error["type"] == expected["error"]["type"]
        assert expected["error"]["message"] in result.error["message"]
    assert result.signatures == expected.get("signatures", [])
    if "encrypted_reasoning" in expected:
        assert result.encrypted_reasoning == expected["encrypted_reasoning"]
    if "citations" in expected:
        assert [c.to_dict(with_raw=False) for c in result.citations] == expected["citations"]
    incomplete = expected.get("incomplete_tool_calls", [])
    assert [(c.id, c.name, c.arguments_raw) for c in result.incomplete_tool_calls] == [
        (c["id"], c["name"], c["arguments_raw"]) for c in incomplete
    ]
    assert all(c.arguments is None and not c.complete for c in result.incomplete_tool_calls)
    truncated = [e for e in events if e.type == "error" and e.error and e.error["type"] == "stream_truncated"]
    assert bool(truncated) == expected["truncated"]
    if truncated:
        assert events[-1] is truncated[0]
        assert truncated[0].error is not None
        assert truncated[0].error["incomplete_tool_calls"] == incomplete
