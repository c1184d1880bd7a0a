"""The parts of the normaliser contract a provider declares instead of writing: the ``stops`` table and
``stop_for``, the ``delta_rule`` and its notes, the recognition ``rules``, the registry name, ``CallTable`` and the
fast paths a ``DelegatingNormalizer`` follows."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers.events import feed
from ssewire.events import SSEEvent, Unified
from ssewire.normalizers import anthropic, bedrock, chat
from ssewire.normalizers._fast import typed
from ssewire.normalizers.contract import DelegatingNormalizer, Normalizer, Recognition
from ssewire.normalizers.providers import ENTRIES
from ssewire.normalizers.registry import PROVIDERS, normalizer_for
from ssewire.normalizers.tool_calls import CallTable, OpenCall
from ssewire.normalizers.xai import XAINormalizer

CLASSES = sorted({entry.cls for entry in ENTRIES}, key=lambda cls: cls.provider)
WITH_STOPS = [cls for cls in CLASSES if cls.stops]


def test_every_provider_with_stop_reasons_declares_them_as_a_table() -> None:
    names = {cls.provider for cls in WITH_STOPS}
    assert names >= {"anthropic", "bedrock-converse", "cohere", "gemini", "ollama", "openai", "openai-chat"}
    assert chat.ChatCompletionsNormalizer.stops is chat.CHAT_STOP  # Mistral and auto-detection read one table


@pytest.mark.parametrize("cls", WITH_STOPS, ids=lambda cls: cls.provider)
def test_stop_for_maps_by_the_table_with_the_one_client_call_rule(cls: type[Normalizer]) -> None:
    normalizer = cls()
    assert normalizer.stop_for(None, False) == "end"  # the provider named no reason
    assert normalizer.stop_for(None, True) == "tool_use"  # ... after client calls it waits for their results
    assert normalizer.stop_for("no such reason", False) == normalizer.stop_for("no such reason", True) == "other"
    for raw, unified in cls.stops.items():
        assert normalizer.stop_for(raw, False) == unified
        assert normalizer.stop_for(raw, True) == ("tool_use" if unified == "end" else unified), raw


def test_each_normaliser_takes_its_own_copy_of_its_class_delta_rule() -> None:
    for cls in CLASSES:
        one, two = cls(), cls()
        if cls.delta_rule is None or typed.take_deltas is None:
            continue
        assert one._delta_rule is not None and one._delta_rule is not cls.delta_rule
        assert one._delta_rule is not two._delta_rule and one._delta_rule.learns, cls.provider


def test_the_notes_list_has_two_items_per_note_of_the_rule() -> None:
    for cls in CLASSES:
        notes = cls()._notes
        assert (notes is None) == (cls.delta_notes == 0), cls.provider
        assert notes is None or notes == [None, None] * cls.delta_notes


def test_with_typed_decoding_off_no_normaliser_reads_by_the_delta_reader() -> None:
    was = typed.enabled()
    try:
        typed.set_enabled(False)
        assert all(cls()._take is None for cls in CLASSES)
    finally:
        typed.set_enabled(was)


def test_registry_names_are_the_classes_own() -> None:
    assert [entry.name for entry in ENTRIES] == [entry.cls.provider for entry in ENTRIES]
    assert len({entry.name for entry in ENTRIES}) == len(ENTRIES)
    assert all(PROVIDERS[name].provider == name for name in PROVIDERS)


def test_recognition_rules_are_apart_and_the_normaliser_answers_by_them() -> None:
    for cls in CLASSES:
        rules = cls.rules
        assert issubclass(rules, Recognition) and not issubclass(rules, Normalizer)
        if rules is not Recognition:  # a provider without rules of its own recognises nothing
            assert rules.provider == cls.provider, cls
        for name in ("claims", "claims_error", "usage_from", "meta_from"):  # none of them on the normaliser
            assert not hasattr(cls, name), (cls, name)
    start = {"type": "message_start", "message": {"id": "msg_1", "model": "claude"}}
    assert anthropic.AnthropicRules.claims(start) and anthropic.AnthropicRules.meta_from(start) == ("msg_1", "claude")


def test_bedrock_anthropic_recognises_chunks_without_switching_anthropics_rules_off() -> None:
    """Its rules are its own class: Anthropic's bare error and usage shapes stay Anthropic's."""
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    usage = {"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 1}
    rules = bedrock.BedrockAnthropicNormalizer.rules
    assert not issubclass(rules, anthropic.AnthropicRules)
    assert not rules.claims_error(error) and rules.usage_from(usage) is None
    assert anthropic.AnthropicRules.claims_error(error)
    read = anthropic.AnthropicRules.usage_from(usage)
    assert read is not None and read.input_tokens == 4 and read.source == "anthropic"
    start = {"type": "message_start", "message": {"id": "msg_2", "model": "claude"}}
    import base64

    chunk = {"bytes": base64.b64encode(json.dumps(start).encode()).decode()}
    assert rules.claims(chunk, "chunk") and not rules.claims(chunk, None) and not rules.claims(start, None)
    assert rules.meta_from(chunk) == ("msg_2", "claude")


def _call(call_id: str) -> OpenCall:
    return OpenCall(call_id, "f")


def test_call_table_opens_closes_at_an_occupied_key_and_reports_the_rest() -> None:
    table = CallTable()
    assert not table and table.close_at(0, {}) == [] and table.incomplete() == []
    start = table.start(0, _call("a"), {"n": 1})
    assert (start.type, start.tool_call_id) == ("tool_call_start", "a") and len(table) == 1
    table.get(0).parts.append('{"x":')  # type: ignore[union-attr]
    closed = table.close_at(0, {"n": 2})  # a new call comes at 0: "a" is closed, never merged
    assert [(e.type, e.tool_call_id, e.arguments_raw) for e in closed] == [("tool_call_done", "a", '{"x":')]
    assert closed[0].arguments is None and closed[0].arguments_error  # its text was not a complete object
    table.start(0, _call("b"), {})
    table.start("k", _call("c"), {})
    assert [call.id for call in table] == ["b", "c"]
    assert table.incomplete() == [
        {"id": "b", "name": "f", "arguments_raw": ""},
        {"id": "c", "name": "f", "arguments_raw": ""},
    ]
    assert table.pop("k").id == "c" and table.pop("k") is None  # type: ignore[union-attr]
    assert [e.tool_call_id for e in table.close_all({})] == ["b"] and not table and table.open == {}


def test_done_events_leave_calls_a_cut_off_response_left_open_incomplete() -> None:
    normalizer = anthropic.AnthropicNormalizer()
    table = CallTable()
    table.start(1, _call("a"), {})
    done = normalizer.done_events({}, "max_tokens", "max_tokens", table)
    assert [e.type for e in done] == ["done"] and table.incomplete()[0]["id"] == "a"
    done = normalizer.done_events({}, "tool_use", "tool_use", table)
    assert [e.type for e in done] == ["tool_call_done", "done"] and not table


def _chunk(**delta: Any) -> str:
    return json.dumps(
        {"id": "c1", "model": "m", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
    )


def test_a_delegating_normaliser_follows_its_delegates_fast_path_only_while_it_is_the_delegate() -> None:
    xai = XAINormalizer()
    assert isinstance(xai, DelegatingNormalizer) and xai.delegate is None
    text = SSEEvent("message", _chunk(content="hi"))
    fast = xai.fast
    assert fast is not None and fast(text) is None  # no delegate yet: routed by payload()
    assert [e.type for e in xai.normalize([text])] == ["text_delta"] and xai.delegate is xai.chat
    if typed.chat_chunk is not None:
        made = fast(text)
        assert made is not None and [(e.type, e.text) for e in made] == [("text_delta", "hi")]
    created = SSEEvent("response.created", json.dumps({"type": "response.created", "response": {"id": "r"}}))
    xai.normalize([created])
    assert xai.delegate is xai.responses and fast(text) is None  # another delegate now: its own rules route
    xai.normalize([text, created, text])  # the delegate changes twice within one batch: each event is routed
    assert xai.delegate is xai.chat


def test_a_delegate_that_never_changes_is_followed_for_the_whole_batch() -> None:
    openai = normalizer_for("openai")
    assert isinstance(openai, DelegatingNormalizer) and not openai.delegate_changes
    # before any chat chunk: its own fast path, for large terminal events (with msgspec), else none
    assert openai.fast == (None if typed.responses_terminal is None else openai.fast_terminal)  # type: ignore[attr-defined]
    openai.normalize([SSEEvent("message", _chunk(content="a"))])
    chat_delegate = openai.delegate
    assert isinstance(chat_delegate, chat.ChatCompletionsNormalizer)
    if typed.chat_chunk is not None:
        assert openai.fast == chat_delegate.fast  # the chat normaliser's own fast path, no per-event check


def test_a_delegating_normaliser_gives_what_decoding_each_event_gives() -> None:
    """The fast paths it follows change nothing: a chat stream through xAI and OpenAI equals chunk-by-chunk
    decoding, and equals the chat normaliser's own events."""
    chunks = [_chunk(role="assistant"), *(_chunk(content=c) for c in "abc"), _chunk(reasoning_content="r"), "[DONE]"]
    events = [SSEEvent("message", data) for data in chunks]
    want = [e.to_dict(with_raw=True) for e in feed(chat.ChatCompletionsNormalizer(), *chunks, event="message")]
    for provider in ("xai", "openai"):
        one_by_one: list[Any] = []
        normalizer = normalizer_for(provider)  # type: ignore[arg-type]
        for ev in events:
            one_by_one += normalizer.decoded(ev)
        one_by_one += normalizer.finish()
        batched = normalizer_for(provider)  # type: ignore[arg-type]
        got = batched.normalize(events[:2]) + batched.normalize(events[2:]) + batched.finish()
        assert [e.to_dict(with_raw=True) for e in got] == [e.to_dict(with_raw=True) for e in one_by_one] == want


class _TextReader(Normalizer):
    """Records, for each payload, its ``type`` and the text ``_data`` held while ``payload`` ran."""

    reads_text = True

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Any, Any]] = []

    def payload(self, obj: dict[str, Any], event: Any = None) -> list[Any]:
        data = self._data
        self.seen.append((obj.get("type"), data.decode() if isinstance(data, bytes) else data))
        return []


@pytest.mark.parametrize("pad", ["x" * 10, "x" * 300_000, "é" * 2_000], ids=["small", "large", "held-as-utf8"])
def test_a_class_that_reads_text_has_each_payloads_text_while_payload_runs(pad: str) -> None:
    """``reads_text``: the full decode (the compiled loop's common path, and ``decoded`` for a large payload or one
    held as UTF-8, whose ``_data`` is then that UTF-8) sets ``_data`` to the payload's text around each ``payload``
    call, and back to None after; a class that does not ask never has it."""
    from ssewire import iter_unified

    texts = [json.dumps({"type": f"t{i}", "pad": pad}, separators=(",", ":"), ensure_ascii=False) for i in range(3)]
    body = "".join(f"data: {text}\n\n" for text in texts).encode()
    reader = _TextReader()
    list(iter_unified([body], reader, "sse"))
    assert reader.seen == [(f"t{i}", text) for i, text in enumerate(texts)]
    assert reader._data is None
    assert Normalizer.reads_text is False and chat.ChatCompletionsNormalizer.reads_text is False


def test_a_delegating_normaliser_that_reads_a_batch_its_own_way_is_read_its_way() -> None:
    """The reading loops read a ``DelegatingNormalizer`` with no delegate as the base class reads (its own
    ``normalize`` would do the same): never one whose class overrides ``normalize``, which reads every event,
    the body whole or in chunks."""
    from ssewire import iter_unified
    from ssewire.normalizers.openai import OpenAINormalizer

    class Counting(OpenAINormalizer):
        def normalize(self, events: Any) -> list[Any]:
            return [Unified("raw", raw={"batch": len(events)}), *super().normalize(events)]

    assert OpenAINormalizer._delegating and not Counting._delegating
    steps: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {"id": "r", "model": "m"}}),
        ("response.output_text.delta", {"item_id": "i", "output_index": 0, "content_index": 0, "delta": "hi"}),
        ("response.completed", {"response": {"id": "r", "model": "m", "status": "completed"}}),
    ]
    body = b"".join(
        b"event: %s\ndata: %s\n\n" % (kind.encode(), json.dumps({"type": kind, **members}).encode())
        for kind, members in steps
    )
    for chunks in ([body], [body[:60], body[60:150], body[150:]]):
        events = list(iter_unified(chunks, Counting()))
        batches = [e.raw["batch"] for e in events if e.type == "raw" and isinstance(e.raw, dict) and "batch" in e.raw]
        assert sum(batches) == 3  # every event went through its normalize()
        assert "".join(e.text for e in events if e.type == "text_delta") == "hi"
        plain = [e.to_dict() for e in iter_unified(chunks, "openai")]
        assert [e.to_dict() for e in events if not (e.type == "raw" and "batch" in (e.raw or {}))] == plain
