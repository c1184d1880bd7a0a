"""Chat Completions and the compatible servers: one test per rule of :mod:`ssewire.normalizers.chat` added for
them, and ``provider="auto"`` giving the named provider's very result on every chat fixture and recording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from helpers.corpus import framing_for, provider_for
from helpers.events import feed, only, types
from ssewire import ChatCompletionsNormalizer, StreamResult, collect, iter_unified, normalizer_for
from ssewire.citations import Citation
from ssewire.normalizers import chat
from ssewire.normalizers._fast import typed
from ssewire.normalizers.providers import detect_provider
from ssewire.usage import Usage

DONE = "[DONE]"
_CHAT_PROVIDERS = ("openai-chat", "mistral", "xai")


def chunk(delta: Optional[dict[str, Any]] = None, finish: Optional[str] = None, **extra: Any) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m", "choices": [choice], **extra}


def legacy(text: str, finish: Optional[str] = None, **extra: Any) -> dict[str, Any]:
    choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": finish}
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "model": "gpt-3.5-turbo-instruct",
        "choices": [choice],
        **extra,
    }


def both(*items: Any) -> tuple[StreamResult, StreamResult]:
    """The result of ``items`` under ``openai-chat`` and under ``auto``."""
    named = collect(feed(normalizer_for("openai-chat"), *items, named=False))
    auto = collect(feed(normalizer_for("auto"), *items, named=False))
    return named, auto


def view(result: StreamResult) -> dict[str, Any]:
    """Every field of a result that a provider's rules decide."""
    return result.to_dict()


# -- auto == the named provider, on every chat fixture and recording ---------------------------------------------


def _chat_fixtures() -> list[tuple[str, Path, str, str]]:
    out = []
    for expected_file in sorted(FIXTURES.glob("*.expected.json")):
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        stream = expected_file.with_name(expected_file.name[: -len(".expected.json")])
        is_chat = expected["provider"] in ("openai-chat", "mistral") or stream.name.startswith("xai-chat-")
        if is_chat:
            out.append((stream.name, stream, expected["provider"], expected["framing"]))
    return out


def _chat_recordings() -> list[tuple[str, Path, str, str]]:
    out: list[tuple[str, Path, str, str]] = []
    for capture in load_manifest():
        if capture["api"] in ("chat-completions", "mistral-chat") and provider_for(capture) in _CHAT_PROVIDERS:
            out.append((capture["file"], CORPUS / capture["file"], provider_for(capture), framing_for(capture)))
    return out


STREAMS = _chat_fixtures() + _chat_recordings()


def test_the_chat_streams_are_found() -> None:
    names = [s[0] for s in STREAMS]
    assert "mistral-chat-model-length.sse" in names and "xai-chat-reasoning-tool-call.sse" in names
    assert "openai-completions-legacy-text.sse" in names


@pytest.mark.parametrize(("name", "path", "provider", "framing"), STREAMS, ids=[s[0] for s in STREAMS])
def test_auto_gives_the_named_providers_result(name: str, path: Path, provider: str, framing: str) -> None:
    data = path.read_bytes()
    named = collect(iter_unified([data], provider, framing))  # type: ignore[arg-type]
    auto = collect(iter_unified([data], "auto", framing))  # type: ignore[arg-type]
    assert view(auto) == view(named)


# -- one test per rule -------------------------------------------------------------------------------------------


def test_legacy_completions_chunks_are_text_under_openai_chat_and_auto() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    items = (legacy("Hel"), legacy("lo"), legacy("", "length"), {**legacy(""), "choices": [], "usage": usage}, DONE)
    assert detect_provider(legacy("x")) == "openai-chat"
    events = feed(ChatCompletionsNormalizer(), *items, named=False)
    assert types(events) == ["text_delta", "text_delta", "raw", "usage", "done"]
    for result in both(*items):
        assert (result.text, result.stop_reason, result.raw_stop_reason) == ("Hello", "max_tokens", "length")
        assert result.usage is not None and result.usage.output_tokens == 2


def _wrapper(*fragments: str, name: str = "multi_tool_use.parallel") -> list[dict[str, Any]]:
    first = {"index": 0, "id": "call_W", "type": "function", "function": {"name": name, "arguments": ""}}
    rest = [{"index": 0, "function": {"arguments": f}} for f in fragments]
    return [chunk({"tool_calls": [first]}), *(chunk({"tool_calls": [r]}) for r in rest)]


_USES = json.dumps(
    {
        "tool_uses": [
            {"recipient_name": "functions.get_weather", "parameters": {"city": "Paris"}},
            {"recipient_name": "functions.get_time", "parameters": {"tz": "UTC"}},
        ]
    }
)


def test_multi_tool_use_parallel_is_held_then_unwrapped_into_the_calls_it_holds() -> None:
    items = (*_wrapper(_USES[:20], _USES[20:]), chunk({}, "tool_calls"), DONE)
    events = feed(ChatCompletionsNormalizer(), *items, named=False)
    assert types(events[:3]) == ["raw", "raw", "raw"]  # the wrapper's fragments: nothing announced
    calls = [e for e in events if e.type.startswith("tool_call")]
    assert [(e.type, e.tool_call_id, e.tool_name) for e in calls] == [
        ("tool_call_start", "call_W_0", "get_weather"),
        ("tool_call_delta", "call_W_0", "get_weather"),
        ("tool_call_done", "call_W_0", "get_weather"),
        ("tool_call_start", "call_W_1", "get_time"),
        ("tool_call_delta", "call_W_1", "get_time"),
        ("tool_call_done", "call_W_1", "get_time"),
    ]
    for result in both(*items):
        assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
            ("call_W_0", "get_weather", {"city": "Paris"}),
            ("call_W_1", "get_time", {"tz": "UTC"}),
        ]
        assert result.incomplete_tool_calls == [] and result.stop_reason == "tool_use"


def test_a_wrapper_of_another_shape_is_kept_as_one_call_and_a_cut_wrapper_is_incomplete() -> None:
    odd = collect(feed(ChatCompletionsNormalizer(), *_wrapper('{"x": 1}'), chunk({}, "tool_calls"), DONE))
    assert [(c.id, c.name, c.arguments) for c in odd.tool_calls] == [("call_W", "multi_tool_use.parallel", {"x": 1})]
    cut = collect(feed(ChatCompletionsNormalizer(), *_wrapper(_USES[:30])))
    assert cut.tool_calls == [] and cut.incomplete_tool_calls == []  # never announced, so never a call
    assert cut.error is not None and cut.error["type"] == "stream_truncated"
    assert cut.error["incomplete_tool_calls"] == [
        {"id": "call_W", "name": "multi_tool_use.parallel", "arguments_raw": _USES[:30]}
    ]


def test_delta_reasoning_and_reasoning_details_count_once() -> None:
    same = {"reasoning": "a", "reasoning_details": [{"type": "reasoning.text", "text": "a"}]}
    alone = {"reasoning_details": [{"type": "reasoning.summary", "summary": "b"}, {"type": "reasoning.text"}]}
    secret = {"reasoning_details": [{"type": "reasoning.encrypted", "data": "xyz"}]}
    items = (chunk(same), chunk(alone), chunk(secret), chunk({"content": "ok"}), DONE)
    events = feed(ChatCompletionsNormalizer(), *items, named=False)
    assert types(events) == ["reasoning_delta", "reasoning_delta", "raw", "text_delta", "done"]
    assert events[2].raw["choices"][0]["delta"]["reasoning_details"][0]["data"] == "xyz"  # kept in raw
    assert events[2].encrypted_reasoning == "xyz"
    for result in both(*items):
        assert (result.reasoning, result.text) == ("ab", "ok")
        assert result.encrypted_reasoning == ["xyz"]


def test_openrouter_reasoning_signatures_and_encrypted_reasoning_are_kept_for_the_next_turn() -> None:
    """Anthropic's thinking signature and redacted reasoning through OpenRouter ride in ``reasoning_details`` beside
    the plain ``reasoning`` text: the text counts once, the signature and the encrypted data are kept."""
    signed = {"reasoning": "a", "reasoning_details": [{"type": "reasoning.text", "text": "a", "signature": "S1"}]}
    late = {"reasoning": None, "reasoning_details": [{"type": "reasoning.text", "signature": "S2", "index": 0}]}
    secret = {"content": "", "reasoning_details": [{"type": "reasoning.encrypted", "data": "gAAA", "index": 1}]}
    items = (chunk(signed), chunk(late), chunk(secret), chunk({"content": "ok"}), DONE)
    events = feed(ChatCompletionsNormalizer(), *items, named=False)
    assert types(events) == ["reasoning_delta", "raw", "raw", "text_delta", "done"]
    assert [(e.signature, e.encrypted_reasoning) for e in events[:3]] == [("S1", None), ("S2", None), (None, "gAAA")]
    for result in both(*items):
        assert (result.reasoning, result.text) == ("a", "ok")
        assert (result.signatures, result.encrypted_reasoning) == (["S1", "S2"], ["gAAA"])


def test_gemini_thought_signatures_on_tool_calls_and_deltas() -> None:
    signed = {"google": {"thought_signature": "SIG1"}}
    call = {"id": "fc-1", "type": "function", "function": {"name": "f", "arguments": "{}"}, "extra_content": signed}
    items = (
        chunk({"content": "x", "extra_content": {"google": {"thought_signature": "SIG0"}}}),
        chunk({"tool_calls": [call]}),
        chunk({"extra_content": {"google": {"thought_signature": "SIG2"}}}),  # a metadata-only delta
        chunk({}, "stop"),
        DONE,
    )
    events = feed(ChatCompletionsNormalizer(), *items, named=False)
    assert [(e.type, e.signature) for e in events if e.signature] == [
        ("text_delta", "SIG0"),
        ("tool_call_start", "SIG1"),
        ("raw", "SIG2"),
    ]
    for result in both(*items):
        assert result.signatures == ["SIG0", "SIG1", "SIG2"] and result.stop_reason == "tool_use"


def test_calls_without_index_never_merge_and_ids_never_repeat() -> None:
    def whole(call_id: Optional[str], args: str) -> dict[str, Any]:
        fragment: dict[str, Any] = {"type": "function", "function": {"name": "get_weather", "arguments": args}}
        if call_id is not None:
            fragment["id"] = call_id
        return chunk({"tool_calls": [fragment]})

    items = (whole("fc-1", '{"c":"A"}'), whole("fc-2", '{"c":"B"}'), whole(None, '{"c":"C"}'), whole("fc-1", "{}"))
    for result in both(*items, chunk({}, "stop"), DONE):
        calls = result.tool_calls
        assert [c.arguments for c in calls] == [{"c": "A"}, {"c": "B"}, {"c": "C"}, {}]
        assert calls[0].id == "fc-1" and calls[1].id == "fc-2" and len({c.id for c in calls}) == 4


def test_deepseek_prompt_cache_hit_tokens_are_cached_input() -> None:
    raw = {"prompt_tokens": 64, "completion_tokens": 9, "total_tokens": 73}
    raw.update(prompt_cache_hit_tokens=48, prompt_cache_miss_tokens=16)
    usage = Usage.from_raw(raw)
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (64, 48, 9)
    split = Usage.from_raw({"completion_tokens": 1, "prompt_cache_hit_tokens": 2, "prompt_cache_miss_tokens": 3})
    assert (split.input_tokens, split.cached_input_tokens) == (5, 2)
    openai = Usage.from_raw({**raw, "prompt_tokens_details": {"cached_tokens": 7}})
    assert openai.cached_input_tokens == 7


def test_llama_cpp_timings_stay_reachable() -> None:
    timings = {"prompt_n": 6, "predicted_n": 2, "predicted_per_second": 66.5}
    usage = {"prompt_tokens": 6, "completion_tokens": 2, "total_tokens": 8}
    normalizer = ChatCompletionsNormalizer()
    events = feed(normalizer, chunk({"content": "a"}), chunk({}, "stop", usage=usage, timings=timings), DONE)
    assert only(events, "usage")[0].raw["timings"] == timings
    assert normalizer.timings == timings and only(events, "done")[0].raw["timings"] == timings
    plain = feed(ChatCompletionsNormalizer(), chunk({"content": "a"}), DONE)
    assert "timings" not in plain[-1].raw


def test_perplexity_sources_are_cited_once_per_stream() -> None:
    results = [{"title": "T", "url": "https://a.example", "date": "2025-01-01"}]
    cites = ["https://a.example", "https://b.example"]
    more = [*results, {"title": "U", "url": "https://c.example", "date": None}]
    items = (
        chunk({"content": "x"}, citations=cites, search_results=results),
        chunk({"content": "y"}, citations=cites, search_results=results),
        chunk({"content": "z"}, "stop", citations=cites, search_results=more),
        DONE,
    )
    events = feed(ChatCompletionsNormalizer(), *items, named=False)
    assert not any(e.citations for e in events if e.type == "text_delta")
    assert [len(e.citations or ()) for e in events if e.type == "raw"] == [2, 1]
    for result in both(*items):
        assert result.text == "xyz"
        assert result.citations == [
            Citation("search_result", "https://a.example", "T", raw=results[0]),
            Citation("citation", "https://b.example", raw="https://b.example"),
            Citation("search_result", "https://c.example", "U", raw=more[1]),
        ]


def test_url_citation_annotations_of_a_delta_are_cited_in_order_and_others_ignored() -> None:
    first = {"type": "url_citation", "url_citation": {"url": "https://a.example", "title": "A", "start_index": 6,
                                                      "end_index": 9}}  # fmt: skip
    again = {"type": "url_citation", "url_citation": {"url": "https://a.example", "start_index": 10, "end_index": 12}}
    flat = {"type": "url_citation", "url": "https://b.example", "title": "B", "start_index": 0, "end_index": 5}
    ignored = [{"type": "file_citation", "file_id": "f"}, {"type": "url_citation", "url_citation": {"title": "T"}}, 3]
    items = (
        chunk({"role": "assistant", "content": "Paris "}),
        chunk({"content": "is it", "annotations": [flat]}),  # beside text: the fast paths must leave it
        chunk({"annotations": [first, *ignored, again]}),  # OpenAI's last delta of its own
        chunk({}, "stop"),
        DONE,
    )
    events = feed(ChatCompletionsNormalizer(), *items)
    assert [(e.type, e.text) for e in events[:2]] == [("text_delta", "Paris "), ("text_delta", "is it")]
    assert [(e.type, len(e.citations or ())) for e in events[:4]] == [("text_delta", 0)] * 2 + [("raw", 1), ("raw", 2)]
    assert not any(e.citations for e in events[4:])
    for result in both(*items):
        assert result.text == "Paris is it" and result.stop_reason == "end"
        assert result.citations == [
            Citation("url_citation", "https://b.example", "B", None, 0, 5, flat),
            Citation("url_citation", "https://a.example", "A", None, 6, 9, first),
            Citation("url_citation", "https://a.example", None, None, 10, 12, again),
        ]


@pytest.mark.parametrize(
    ("finish", "stop"),
    [("model_length", "max_tokens"), ("error", "failed"), ("insufficient_system_resource", "failed"), ("eos", "end")],
)
def test_one_stop_table_for_every_compatible_server(finish: str, stop: str) -> None:
    for provider in ("openai-chat", "mistral", "auto"):
        done = feed(normalizer_for(provider), chunk({"content": "a"}), chunk({}, finish), DONE)[-1]  # type: ignore[arg-type]
        assert (done.stop_reason, done.raw_stop_reason) == (stop, finish), provider


# -- the fast paths ----------------------------------------------------------------------------------------------

_compiled = pytest.importorskip("ssewire._scan.scanner_c")
_START = json.dumps(chunk({"role": "assistant", "content": ""}))


@pytest.mark.parametrize(
    ("delta", "extra"),
    [
        ({"content": "a", "reasoning_details": [{"type": "reasoning.text", "text": "r"}]}, {}),
        ({"content": "a", "extra_content": {"google": {"thought_signature": "S"}}}, {}),
        ({"content": "a"}, {"citations": ["https://a.example"]}),
        ({"content": "a"}, {"search_results": [{"url": "https://a.example"}]}),
    ],
)
def test_the_fast_paths_leave_the_new_members_to_the_full_decode(delta: dict[str, Any], extra: dict[str, Any]) -> None:
    data = json.dumps(chunk(delta, **extra))
    if chat.CHAT_DELTA_RULE is not None and typed.take_deltas is not None:
        assert typed.take_deltas([_compiled.SSEEvent("message", data)], 0, chat.CHAT_DELTA_RULE, []) == 0
    if typed.chat_chunk is not None:
        assert ChatCompletionsNormalizer().fast_chunk(_compiled.SSEEvent("message", data)) is None
    got = []
    for on in (True, False):
        typed.set_enabled(on)
        try:
            normalizer = ChatCompletionsNormalizer()
            events = normalizer.normalize([_compiled.SSEEvent("message", _START)])
            events += normalizer.normalize([_compiled.SSEEvent("message", data)] * 2)
            got.append([e.to_dict(with_raw=True) for e in events])
        finally:
            typed.set_enabled(True)
    assert got[0] == got[1]


def test_the_fast_paths_read_delta_reasoning_as_reasoning() -> None:
    data = json.dumps(chunk({"content": None, "reasoning": "r"}))
    if chat.CHAT_DELTA_RULE is not None and typed.take_deltas is not None:
        out: list[Any] = []
        assert typed.take_deltas([_compiled.SSEEvent("message", data)], 0, chat.CHAT_DELTA_RULE, out) == 1
        assert [(e.type, e.text) for e in out] == [("reasoning_delta", "r")]
    if typed.chat_chunk is not None:
        fast = ChatCompletionsNormalizer().fast_chunk(_compiled.SSEEvent("message", data))
        assert fast is not None and [(e.type, e.text) for e in fast] == [("reasoning_delta", "r")]
    normalizer = ChatCompletionsNormalizer()
    events = normalizer.normalize([_compiled.SSEEvent("message", _START)] + [_compiled.SSEEvent("message", data)] * 3)
    assert collect(events).reasoning == "rrr"


def test_a_refusal_is_a_refusal_not_an_answer() -> None:
    # delta.refusal (structured outputs' refusals) then a clean finish: the text is the refusal, the stop says so
    def body(*chunks: dict[str, Any]) -> bytes:
        return b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks) + b"data: [DONE]\n\n"

    opening = chunk({"role": "assistant", "refusal": ""})
    refused = body(opening, chunk({"refusal": "I can't help."}), chunk(finish="stop"))
    result = collect(iter_unified([refused], "openai-chat"))
    assert (result.text, result.stop_reason, result.raw_stop_reason) == ("I can't help.", "refusal", "stop")
    assert collect(iter_unified([body(chunk({"content": "ok"}, "stop"))], "openai-chat")).stop_reason == "end"


# -- what the compatible servers send around the answer ------------------------------------------------------------


def test_an_error_chunk_then_done_leaves_the_open_calls_incomplete_and_the_response_unstopped() -> None:
    # vLLM and OpenRouter send [DONE] after their error chunk: it closes no call and says no clean stop
    opened = chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                    "function": {"name": "delete_files", "arguments": '{"path'}}]})  # fmt: skip
    error = {"error": {"message": "boom", "type": "InternalServerError", "code": 500}}
    for result in both(chunk({"content": "a"}), opened, error, DONE):
        assert result.stop_reason is None and result.error is not None and result.error["type"] == "InternalServerError"
        assert result.tool_calls == [] and [call.id for call in result.incomplete_tool_calls] == ["call_a"]
    for result in both(error, DONE):
        assert result.stop_reason is None and result.error is not None
    # a finish reason that came before the error still says how the response had stopped
    for result in both(chunk({"content": "a"}, "length"), error, DONE):
        assert (result.stop_reason, result.raw_stop_reason) == ("max_tokens", "length") and result.error is not None


def test_a_custom_tool_call_keeps_its_name_and_its_input() -> None:
    # openai-node tests/lib/ChatCompletionStream.test.ts: {"type": "custom", "custom": {"name", "input"}}
    opened = {"index": 0, "id": "call_c", "type": "custom", "custom": {"name": "code_exec", "input": ""}}
    items = (
        chunk({"role": "assistant", "tool_calls": [opened]}),
        chunk({"tool_calls": [{"index": 0, "custom": {"input": 'print("hel'}}]}),
        chunk({"tool_calls": [{"index": 0, "custom": {"input": 'lo")'}}]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    for result in both(*items):
        [call] = result.tool_calls
        assert (call.id, call.name, call.arguments_raw, result.stop_reason) == (
            "call_c", "code_exec", 'print("hello")', "tool_use"
        )  # fmt: skip


def test_groq_usage_and_error_in_x_groq() -> None:
    # groq-python ChatCompletionChunk.x_groq: usage at the end (with or without include_usage), an error string
    usage = {"prompt_tokens": 18, "completion_tokens": 4, "total_tokens": 22, "queue_time": 0.01}
    ended = (chunk({"content": "a"}, x_groq={"id": "req_1"}), chunk({}, "stop", x_groq={"id": "req_1", "usage": usage}))
    for result in both(*ended, DONE):
        assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (18, 4)
        assert result.stop_reason == "end"
    stopped = {"id": "c", "choices": [], "x_groq": {"id": "req_1", "error": "over_capacity"}}
    for result in both(chunk({"content": "a"}), stopped, DONE):
        assert result.error is not None and result.error["message"] == "over_capacity"
        assert result.stop_reason is None and result.text == "a"


def test_an_empty_id_or_model_names_nothing() -> None:
    # Azure OpenAI's first chunk (its prompt filter results) has "id": "" and "model": ""
    azure = {"choices": [], "created": 0, "id": "", "model": "", "object": "", "prompt_filter_results": []}
    items = (azure, chunk({"content": "a"}, "stop"), DONE)
    for result in both(*items):
        assert (result.response_id, result.model) == ("chatcmpl-1", "m")
    body = b"".join(b"data: %s\n\n" % (json.dumps(i) if isinstance(i, dict) else i).encode() for i in items)
    result = collect(iter_unified([body], "openai-chat"))
    assert (result.response_id, result.model) == ("chatcmpl-1", "m")


def test_reasoning_tokens_and_a_cost_object_beside_the_counts() -> None:
    # SGLang's UsageInfo.reasoning_tokens and Perplexity's usage: reasoning_tokens and cost.total_cost at the top
    sglang = Usage.from_raw({"prompt_tokens": 5, "completion_tokens": 60, "total_tokens": 65, "reasoning_tokens": 45})
    assert (sglang.output_tokens, sglang.reasoning_tokens) == (60, 45)
    raw = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10, "reasoning_tokens": 30,
           "cost": {"input_tokens_cost": 0.00001, "request_cost": 0.006, "total_cost": 0.00631}}  # fmt: skip
    perplexity = Usage.from_raw(raw)
    assert perplexity.reasoning_tokens == 30 and perplexity.cost == 0.00631
    assert Usage.from_raw({**raw, "cost": {"total_cost": "0.1"}}).cost is None


def _sse(*items: Any) -> bytes:
    return b"".join(b"data: %s\n\n" % (json.dumps(i) if isinstance(i, dict) else i).encode() for i in items)


def test_a_stream_that_ends_after_its_finish_and_usage_is_complete_without_done() -> None:
    # Perplexity never sends [DONE] (perplexityai/api-discussion#209): its last chunk has the finish reason and usage
    usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    body = _sse(chunk({"content": "Why"}, usage=usage), chunk({"content": " dogs"}, "stop", usage=usage))
    for provider in ("openai-chat", "auto"):
        result = collect(iter_unified([body], provider))
        assert (result.text, result.stop_reason, result.error, result.usage_provenance) == (
            "Why dogs", "end", None, "reported"
        ), provider  # fmt: skip
    # the usage OpenAI sends after the finish reason, then the end: nothing is missing either
    after = _sse(chunk({"content": "a"}), chunk({}, "stop"), {"id": "chatcmpl-1", "choices": [], "usage": usage})
    assert collect(iter_unified([after], "openai-chat")).stop_reason == "end"
    # without the usage after the finish reason, or cut inside an event, the stream is cut
    for cut in (_sse(chunk({"content": "a"}, usage=usage), chunk({}, "stop")), body + b'data: {"id"'):
        result = collect(iter_unified([cut], "openai-chat"))
        assert result.stop_reason is None and result.error is not None
        assert result.error["type"] == "stream_truncated"


def test_what_follows_done_is_raw_at_any_chunking() -> None:
    # the SDK stops reading at [DONE]: text or a call after it is no part of the response
    late = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "late", "arguments": "{}"}}
    items = (chunk({"content": "Hi"}), chunk({}, "stop"), DONE, chunk({"content": "!"}), chunk({"tool_calls": [late]}))
    body = _sse(*items, chunk({}, "tool_calls"), DONE)
    for chunks in ([body], [body[i : i + 40] for i in range(0, len(body), 40)]):
        for provider in ("openai-chat", "auto", "openai"):
            result = collect(iter_unified(chunks, provider))  # type: ignore[arg-type]
            assert (result.text, result.stop_reason, result.tool_calls) == ("Hi", "end", []), provider


def test_an_id_reused_while_its_call_is_open_never_breaks_the_stream() -> None:
    """A server that gives a second call an id still open at another index (then moves on): every call still starts
    and ends, the stream reads to its stop (the per-stream containers, made on first use, stay in step)."""
    import json

    from ssewire import collect, iter_unified

    def chunk(calls: list[dict[str, Any]], finish: Any = None) -> bytes:
        choice = {"index": 0, "delta": {"tool_calls": calls}, "finish_reason": finish}
        return b"data: " + json.dumps({"id": "c1", "model": "m", "choices": [choice]}).encode() + b"\n\n"

    def call(index: int, call_id: str, name: str) -> dict[str, Any]:
        return {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}

    body = b"".join(
        [
            chunk([call(0, "a", "f"), call(1, "b", "g")]),
            chunk([call(0, "b", "g")]),
            chunk([call(0, "c", "h")]),
            chunk([call(1, "d", "k")]),
            chunk([], "tool_calls"),
            b"data: [DONE]\n\n",
        ]
    )
    events = list(iter_unified([body], "openai-chat"))
    assert (events[-1].type, events[-1].stop_reason) == ("done", "tool_use")
    assert sorted(e.tool_name or "" for e in events if e.type == "tool_call_done") == ["f", "g", "g", "h", "k"]
    assert collect(events).error is None
