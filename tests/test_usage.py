"""One usage model: the same meaning for every provider's usage object."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import CORPUS, load_manifest
from ssewire import collect, iter_unified
from ssewire.usage import Usage

CAPTURES = [c for c in load_manifest() if c["expected"]["usage"] is not None]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (  # OpenAI Responses: input includes cached, output includes reasoning
            {
                "input_tokens": 100,
                "input_tokens_details": {"cached_tokens": 80},
                "output_tokens": 50,
                "output_tokens_details": {"reasoning_tokens": 30},
                "total_tokens": 150,
            },
            (100, 80, 0, 50, 30, 150),
        ),
        (  # Anthropic: input_tokens excludes both cache counts
            {"input_tokens": 10, "cache_read_input_tokens": 200, "cache_creation_input_tokens": 40, "output_tokens": 7},
            (250, 200, 40, 7, None, 257),
        ),
        (  # OpenAI chat: completion includes reasoning
            {
                "prompt_tokens": 176,
                "completion_tokens": 228,
                "total_tokens": 404,
                "prompt_tokens_details": {"cached_tokens": 100},
                "completion_tokens_details": {"reasoning_tokens": 192},
            },
            (176, 100, 0, 228, 192, 404),
        ),
        (  # xAI chat: completion excludes reasoning (total adds it)
            {
                "prompt_tokens": 12,
                "completion_tokens": 2,
                "total_tokens": 354,
                "prompt_tokens_details": {"cached_tokens": 11},
                "completion_tokens_details": {"reasoning_tokens": 340},
            },
            (12, 11, 0, 342, 340, 354),
        ),
        (  # Gemini: thoughts are outside candidates, tool-use prompt is prompt
            {
                "promptTokenCount": 17,
                "toolUsePromptTokenCount": 102,
                "candidatesTokenCount": 241,
                "thoughtsTokenCount": 412,
                "cachedContentTokenCount": 5,
                "totalTokenCount": 772,
            },
            (119, 5, 0, 653, 412, 772),
        ),
        (  # Gemini Interactions
            {
                "total_tokens": 133,
                "total_input_tokens": 53,
                "total_cached_tokens": 3,
                "total_output_tokens": 15,
                "total_tool_use_tokens": 0,
                "total_thought_tokens": 65,
            },
            (53, 3, 0, 80, 65, 133),
        ),
    ],
)
def test_mapping(raw: dict[str, Any], expected: tuple[Any, ...]) -> None:
    u = Usage.from_raw(raw)
    got = (
        u.input_tokens,
        u.cached_input_tokens,
        u.cache_write_tokens,
        u.output_tokens,
        u.reasoning_tokens,
        u.total_tokens,
    )
    assert got == expected
    assert u.raw is raw
    assert not u.partial


def test_malformed_values_count_zero() -> None:
    u = Usage.from_raw({"prompt_tokens": "12", "completion_tokens": None, "prompt_tokens_details": []})
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (0, 0, 0)


@pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")
@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_corpus_totals_add_up(capture: dict[str, Any]) -> None:
    raw = capture["expected"]["usage"]
    if not raw:
        pytest.skip("the stream reports no counts (an error ended it; xAI's Realtime sends {})")
    u = Usage.from_raw(raw)
    assert u.input_tokens is not None and u.output_tokens is not None
    assert u.input_tokens + u.output_tokens == u.total_tokens
    provider_total = raw.get("total_tokens", raw.get("totalTokenCount"))
    if provider_total is not None:  # Anthropic reports no total
        assert u.total_tokens == provider_total
    # None: the provider reports no such count (Ollama reports no cached tokens), never a guessed zero
    assert (u.cached_input_tokens is None) == (u.source == "ollama")
    assert u.cached_input_tokens is None or u.input_tokens >= u.cached_input_tokens
    reported = raw.get("completion_tokens_details", {}).get("reasoning_tokens", 0)
    if reported <= raw.get("completion_tokens", reported):  # OpenRouter once reported more reasoning than output
        assert u.reasoning_tokens is None or u.output_tokens >= u.reasoning_tokens


def test_xai_cost_in_usd_ticks_is_the_streams_cost_in_usd() -> None:
    """1 tick = 1e-10 USD; every xAI chat recording that reports ticks gives them as ``result.cost``."""
    checked = 0
    for path in sorted((CORPUS / "xai").glob("chat-*.sse")):
        result = collect(iter_unified([path.read_bytes()], "xai"))
        raw = result.usage.raw if result.usage is not None else None
        ticks = raw.get("cost_in_usd_ticks") if raw is not None else None
        if isinstance(ticks, int):
            cost = result.cost
            assert cost is not None and cost == pytest.approx(ticks / 1e10) and 0 < cost < 1
            checked += 1
    if CORPUS.is_dir():
        assert checked >= 3
    assert Usage.from_raw({"prompt_tokens": 1, "completion_tokens": 2, "cost_in_usd_ticks": 25}).cost == 25e-10
    assert Usage.from_raw({"prompt_tokens": 1, "completion_tokens": 2, "cost": 0.5}).cost == 0.5  # OpenRouter
    assert Usage.from_raw({"prompt_tokens": 1, "completion_tokens": 2}).cost is None


def test_usage_objects_are_read_by_the_registry_without_a_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Usage.from_raw`` finds the provider registry itself the first time it reads an object: nothing has to
    register by being imported (the registry is looked up once, then kept)."""
    import ssewire.usage as usage_module
    from ssewire.normalizers.providers import usage_from

    monkeypatch.setattr(usage_module, "_READER", None)
    usage = Usage.from_raw({"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46})
    assert (usage.source, usage.input_tokens, usage.output_tokens) == ("openai-chat", 12, 34)
    assert usage_module._READER is usage_from
    assert Usage.from_raw({"hello": 1}).source is None


def test_anthropic_thinking_tokens_are_the_reasoning_share_where_they_are_sent() -> None:
    cache = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}  # (in every Anthropic usage object)
    raw = {"input_tokens": 10, **cache, "output_tokens": 943, "output_tokens_details": {"thinking_tokens": 261}}
    assert Usage.from_raw(raw).reasoning_tokens == 261
    unsaid = Usage.from_raw({"input_tokens": 10, **cache, "output_tokens": 943})
    assert unsaid.source == "anthropic" and unsaid.reasoning_tokens is None  # not sent: unknown, not 0
    steps = [
        {"type": "compaction", "input_tokens": 5, "output_tokens": 50, "output_tokens_details": {"thinking_tokens": 7}},
        {"type": "message", "input_tokens": 6, "output_tokens": 60, "output_tokens_details": {"thinking_tokens": 9}},
    ]
    assert Usage.from_raw({**raw, "iterations": steps}).reasoning_tokens == 16  # summed as the output is
    body = (CORPUS / "anthropic" / "pause-turn-web-search.sse").read_bytes()
    usage = collect(iter_unified([body], "anthropic")).usage
    assert usage is not None and usage.reasoning_tokens == 261 and usage.output_tokens == 943


@pytest.mark.parametrize(
    "counts",
    [
        (3, 4, 1, 0, 2, {"x": 1}, False, "openai", None, None),
        (None, None, None, None, None, None, True, None, None, None),
        (10, 0, 0, 6, None, {}, True, "anthropic", 2, 4),
        (5, None, 0, 0, 0, None, False, "gemini", None, None),  # (an unknown count: no total)
    ],
)
def test_usage_counts_makes_what_the_constructor_makes(counts: tuple[Any, ...]) -> None:
    """``usage_counts`` (the readers' positional factory) builds the same object as ``Usage(...)``, every slot, the
    total included (None where a count is unknown)."""
    from ssewire.usage import usage_counts

    inputs, outputs, cached, written, reasoning, raw, partial, source, five, hour = counts
    made = usage_counts(*counts)
    built = Usage(
        inputs,
        outputs,
        cached_input_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=reasoning,
        raw=raw,
        partial=partial,
        source=source,
        cache_write_5m_tokens=five,
        cache_write_1h_tokens=hour,
    )
    assert type(made) is Usage
    assert {name: getattr(made, name) for name in Usage.__slots__} == {
        name: getattr(built, name) for name in Usage.__slots__
    }
    assert made.total_tokens == (None if inputs is None or outputs is None else inputs + outputs)
    assert made.raw is raw
