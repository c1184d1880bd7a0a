"""Accumulator / collect: the finished result of a stream."""

from __future__ import annotations

from ssewire import Accumulator, ToolCall, Unified, collect


def test_text_reasoning_and_calls_in_order() -> None:
    events = [
        Unified("reasoning_delta", text="think "),
        Unified("reasoning_delta", text="hard"),
        Unified("text_delta", text="Hel"),
        Unified("text_delta", text="lo"),
        Unified("tool_call_start", tool_call_id="b", tool_name="second"),
        Unified("tool_call_start", tool_call_id="a", tool_name="first"),
        Unified("tool_call_delta", tool_call_id="a", arguments_delta='{"x"'),
        Unified("tool_call_delta", tool_call_id="b", arguments_delta="{}"),
        Unified("tool_call_delta", tool_call_id="a", arguments_delta=": 1}"),
        Unified("tool_call_done", tool_call_id="a", arguments={"x": 1}),
        Unified("tool_call_done", tool_call_id="b", arguments={}),
        Unified("tool_call_start", tool_call_id="s", tool_name="web_search", server=True),
        Unified("tool_call_done", tool_call_id="s", arguments={"q": "x"}, server=True),
        Unified("usage", usage={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}),
        Unified("done", stop_reason="tool_use", raw_stop_reason="completed"),
    ]
    result = collect(events)
    assert (result.text, result.reasoning) == ("Hello", "think hard")
    assert result.tool_calls == [
        ToolCall("b", "second", {}, None),  # done carried parsed arguments and no raw string: an object
        ToolCall("a", "first", {"x": 1}, None),
        ToolCall("s", "web_search", {"q": "x"}, None, server=True),
    ]
    assert [c.id for c in result.client_tool_calls] == ["b", "a"]
    assert [c.id for c in result.server_tool_calls] == ["s"]
    assert (result.stop_reason, result.raw_stop_reason) == ("tool_use", "completed")
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.partial) == (3, 4, False)
    assert result.error is None


def test_done_without_parsed_arguments_parses_the_fragments() -> None:
    result = collect(
        [
            Unified("tool_call_start", tool_call_id="c", tool_name="f"),
            Unified("tool_call_delta", tool_call_id="c", arguments_delta='{"a": '),
            Unified("tool_call_delta", tool_call_id="c", arguments_delta="[1]}"),
            Unified("tool_call_done", tool_call_id="c"),
        ]
    )
    assert result.tool_calls[0].arguments == {"a": [1]}
    assert result.tool_calls[0].arguments_raw == '{"a": [1]}'


def test_arguments_raw_from_done_wins() -> None:
    result = collect(
        [
            Unified("tool_call_start", tool_call_id="c", tool_name="f"),
            Unified("tool_call_done", tool_call_id="c", arguments={"k": 2}, arguments_raw='{"k":2}'),
        ]
    )
    assert result.tool_calls[0].arguments_raw == '{"k":2}'


def test_truncated_stream_keeps_best_usage_marked_partial() -> None:
    acc = Accumulator()
    acc.add(Unified("text_delta", text="par"))
    acc.add(
        Unified(
            "error",
            error={"type": "stream_truncated", "message": "cut"},
            usage={"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7},
        )
    )
    result = acc.result
    assert result.text == "par"
    assert result.error == {"type": "stream_truncated", "message": "cut"}
    assert result.usage is not None and result.usage.partial and result.usage.total_tokens == 7
    assert result.stop_reason is None


def test_signatures_in_order_and_last_signature() -> None:
    result = collect(
        [
            Unified("raw", signature="s1"),
            Unified("text_delta", text="a", signature="s2"),
            Unified("tool_call_start", tool_call_id="c", tool_name="f", signature="s3"),
        ]
    )
    assert result.signatures == ["s1", "s2", "s3"]
    assert result.last_signature == "s3"


def test_response_id_and_model_from_payloads() -> None:
    openai = collect([Unified("raw", raw={"type": "response.created", "response": {"id": "resp_1", "model": "m1"}})])
    assert (openai.response_id, openai.model) == ("resp_1", "m1")
    anthropic = collect([Unified("raw", raw={"type": "message_start", "message": {"id": "msg_1", "model": "c"}})])
    assert (anthropic.response_id, anthropic.model) == ("msg_1", "c")
    chat = collect([Unified("text_delta", raw={"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "g"})])
    assert (chat.response_id, chat.model) == ("chatcmpl-1", "g")
    gemini = collect([Unified("text_delta", raw={"responseId": "r9", "modelVersion": "gemini-x"})])
    assert (gemini.response_id, gemini.model) == ("r9", "gemini-x")


def test_result_is_linear_in_the_number_of_deltas() -> None:
    acc = Accumulator()
    delta = Unified("text_delta", text="x")
    for _ in range(300_000):
        acc.add(delta)
    assert len(acc.result.text) == 300_000


def test_a_result_as_a_dict_is_json_ready_and_says_everything() -> None:
    import json

    from helpers import FIXTURES
    from ssewire import collect, iter_unified

    for name, provider in (
        ("openai-responses-annotations.sse", "openai"),
        ("anthropic-messages-tool-use.sse", "anthropic"),
    ):
        result = collect(iter_unified([(FIXTURES / name).read_bytes()], provider))  # type: ignore[arg-type]
        out = result.to_dict()
        assert json.loads(json.dumps(out)) == out
        assert out["text"] == result.text and len(out["tool_calls"]) == len(result.tool_calls)
        assert [c["url"] for c in out["citations"]] == [c.url for c in result.citations]
        assert "raw" not in result.to_dict(with_raw=False)["usage"]
