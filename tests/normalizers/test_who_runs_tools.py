"""Who runs each tool call, over every fixture and recording: no call is a client call when the stream carries the
provider's own result for it (a client loop would run, locally, what the provider already ran)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from helpers.corpus import framing_for, provider_for
from ssewire import Unified, collect, iter_unified

FIXTURE_STREAMS = sorted(p for p in FIXTURES.iterdir() if p.is_file() and not p.name.endswith(".expected.json"))
CAPTURES = load_manifest()

#: The keys a provider's own result object names its call by.
_CALL_REFS = ("call_id", "tool_use_id", "toolUseId", "tool_call_id")


def provider_results(value: Any) -> Iterator[str]:
    """The call ids that provider-made result objects inside ``value`` answer: OpenAI ``*_output`` items (shell,
    local shell, computer ...), Anthropic ``*_tool_result`` blocks, Bedrock ``toolResult`` blocks, Interactions
    ``*_result`` steps. Found by their shape, from the payload alone."""
    if isinstance(value, dict):
        kind = value.get("type")
        is_result = isinstance(kind, str) and kind.endswith(("_output", "_result"))
        for key, inner in value.items():
            if key == "toolResult" and isinstance(inner, dict):
                ref = inner.get("toolUseId")
                if isinstance(ref, str):
                    yield ref
            yield from provider_results(inner)
        if is_result:
            for ref_key in _CALL_REFS:
                ref = value.get(ref_key)
                if isinstance(ref, str):
                    yield ref
    elif isinstance(value, list):
        for inner in value:
            yield from provider_results(inner)


def _made_by_provider(raw: Any) -> bool:
    """False for the Realtime API's echo of an item the client created (``conversation.item.created`` holding the
    client's own ``function_call_output``): a result the client sent, not one the provider made."""
    kind = raw.get("type") if isinstance(raw, dict) else None
    return not (isinstance(kind, str) and kind.startswith("conversation.item."))


def _check(events: list[Unified]) -> set[str]:
    """The result ids the stream carries; asserts none of them is a client call's."""
    answered: set[str] = set()
    for event in events:
        if _made_by_provider(event.raw):
            answered.update(provider_results(event.raw))
    result = collect(events)
    client = {call.id for call in result.client_tool_calls}
    assert not client & answered, f"calls the provider answered are reported as client calls: {client & answered}"
    if answered and not result.client_tool_calls:
        assert result.stop_reason != "tool_use", "a response whose every call the provider ran waits for no client"
    return answered


def _fixture(path: Path) -> tuple[str, str]:
    expected = json.loads(path.with_name(path.name + ".expected.json").read_text(encoding="utf-8"))
    return expected["provider"], expected["framing"]


@pytest.mark.parametrize("path", FIXTURE_STREAMS, ids=[p.name for p in FIXTURE_STREAMS])
def test_no_fixture_call_the_provider_answered_is_a_client_call(path: Path) -> None:
    provider, framing = _fixture(path)
    _check(list(iter_unified([path.read_bytes()], provider, framing)))  # type: ignore[arg-type]


@pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")
@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_no_recorded_call_the_provider_answered_is_a_client_call(capture: dict[str, Any]) -> None:
    data = (CORPUS / capture["file"]).read_bytes()
    _check(list(iter_unified([data], provider_for(capture), framing_for(capture))))


def test_the_streams_carry_provider_results_for_every_kind_of_call() -> None:
    """The check above is not vacuous: fixtures of every provider that runs tools carry results it must see."""
    answered_in = set()
    for path in FIXTURE_STREAMS:
        provider, framing = _fixture(path)
        if _check(list(iter_unified([path.read_bytes()], provider, framing))):  # type: ignore[arg-type]
            answered_in.add(provider)
    for capture in CAPTURES:
        data = (CORPUS / capture["file"]).read_bytes()
        if _check(list(iter_unified([data], provider_for(capture), framing_for(capture)))):
            answered_in.add(provider_for(capture))
    assert {"openai", "anthropic", "gemini"} <= answered_in, answered_in


def test_provider_results_reads_each_shape() -> None:
    shapes = [
        {"type": "response.output_item.done", "item": {"type": "shell_call_output", "call_id": "c1"}},
        {"type": "content_block_start", "content_block": {"type": "web_search_tool_result", "tool_use_id": "s1"}},
        {"contentBlockStart": {"start": {"toolResult": {"toolUseId": "b1"}}}},
        {"type": "function_call", "call_id": "not-a-result"},
    ]
    assert [ref for shape in shapes for ref in provider_results(shape)] == ["c1", "s1", "b1"]
