"""The mistakes gateways make when pricing streams, each priced right: every expected figure is built from the
table's own rates for the model (never a hard-coded price), from usage objects in each provider's own shape."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import pytest

from ssewire.cost import Cost, Unpriced, price
from ssewire.usage import Usage

genai_prices = pytest.importorskip("genai_prices", reason="the price table needs Python 3.11+ (extra prices)")

AT = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)  # after the service-tier variants start (2026-10-12)
M = Decimal(1_000_000)


def table_prices(model: str, provider: str, context: Any = None) -> Any:
    """The table's ``ModelPrice`` for ``model`` at ``provider`` at :data:`AT`."""
    _, info = genai_prices.data_snapshot.get_snapshot().find_provider_model(model, None, provider, None)
    return info.get_prices(AT, context)


def base(rate: Any) -> Any:
    return rate.base if isinstance(rate, genai_prices.types.TieredPrices) else rate


def tier(rate: Any) -> Any:
    assert isinstance(rate, genai_prices.types.TieredPrices), "the model should have a long-context tier"
    return rate.tiers[-1].price


def priced(raw: dict[str, Any], model: str, **options: Any) -> Cost:
    cost = price(Usage.from_raw(raw), model, at=AT, strict=True, **options)
    assert cost is not None
    return cost


def test_openai_cached_input_is_inside_input_tokens() -> None:
    rates = table_prices("gpt-4o", "openai")
    raw = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100,
           "prompt_tokens_details": {"cached_tokens": 800}}  # fmt: skip
    cost = priced(raw, "gpt-4o")
    assert cost.input == 200 * rates.input_mtok / M  # the cached 800 are not input again
    assert cost.cache_read == 800 * rates.cache_read_mtok / M
    assert cost.output == 100 * rates.output_mtok / M
    assert cost.computed == cost.input + cost.cache_read + cost.output
    assert (cost.source, cost.model, cost.provider, cost.partial) == ("computed", "gpt-4o", "openai", False)


def test_anthropic_cache_counts_are_outside_input_tokens_and_1h_writes_cost_more() -> None:
    rates = table_prices("claude-opus-4-1", "anthropic")
    raw = {"input_tokens": 100, "cache_read_input_tokens": 5000, "cache_creation_input_tokens": 2000,
           "cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 1500},
           "output_tokens": 300}  # fmt: skip
    cost = priced(raw, "claude-opus-4-1")
    assert cost.input == 100 * rates.input_mtok / M  # Anthropic's input_tokens already leaves the cache out
    assert cost.cache_read == 5000 * rates.cache_read_mtok / M
    assert cost.cache_write_5m == 500 * rates.cache_write_mtok / M
    assert cost.cache_write_1h == 1500 * rates.cache_write_1h_mtok / M
    assert rates.cache_write_1h_mtok > rates.cache_write_mtok  # priced as 5-minute writes it would be under
    assert cost.output == 300 * rates.output_mtok / M


def test_anthropic_writes_without_a_duration_are_five_minute_writes() -> None:
    rates = table_prices("claude-opus-4-1", "anthropic")
    cost = priced({"input_tokens": 10, "cache_creation_input_tokens": 1000, "output_tokens": 1}, "claude-opus-4-1")
    assert cost.cache_write_5m == 1000 * rates.cache_write_mtok / M and cost.cache_write_1h == 0


def test_anthropic_iterations_are_all_billed() -> None:
    rates = table_prices("claude-opus-4-1", "anthropic")
    raw = {
        "input_tokens": 50,
        "output_tokens": 20,  # the top level leaves the compaction iteration out
        "iterations": [{"input_tokens": 5000, "output_tokens": 400}, {"input_tokens": 50, "output_tokens": 20}],
    }
    cost = priced(raw, "claude-opus-4-1")
    assert cost.input == 5050 * rates.input_mtok / M
    assert cost.output == 420 * rates.output_mtok / M


def test_long_context_tier_applies_to_every_token_and_counts_cache_reads() -> None:
    rates = table_prices("claude-sonnet-4-5", "anthropic")
    short = priced({"input_tokens": 150_000, "output_tokens": 1000}, "claude-sonnet-4-5")
    assert short.input == 150_000 * base(rates.input_mtok) / M
    # 1,000 new tokens and 210,000 read from the cache: a 211,000-token prompt, past the 200K tier
    raw = {"input_tokens": 1000, "cache_read_input_tokens": 210_000, "output_tokens": 1000}
    long = priced(raw, "claude-sonnet-4-5")
    assert long.input == 1000 * tier(rates.input_mtok) / M
    assert long.cache_read == 210_000 * tier(rates.cache_read_mtok) / M
    assert long.output == 1000 * tier(rates.output_mtok) / M
    assert tier(rates.output_mtok) > base(rates.output_mtok)


def test_gemini_thoughts_are_output_and_tool_use_prompt_tokens_are_input() -> None:
    rates = table_prices("gemini-2.5-flash", "google")
    raw = {"promptTokenCount": 100, "toolUsePromptTokenCount": 50, "candidatesTokenCount": 20,
           "thoughtsTokenCount": 300, "cachedContentTokenCount": 40, "totalTokenCount": 470}  # fmt: skip
    cost = priced(raw, "gemini-2.5-flash")
    assert cost.input == (150 - 40) * rates.input_mtok / M
    assert cost.cache_read == 40 * rates.cache_read_mtok / M
    assert cost.output == 320 * rates.output_mtok / M  # thoughts billed at the output rate
    assert cost.reasoning == 0  # the model does not price reasoning apart


def test_xai_reasoning_outside_completion_tokens_is_billed() -> None:
    rates = table_prices("grok-4-fast-reasoning", "x-ai")
    raw = {
        "prompt_tokens": 432,
        "completion_tokens": 68,
        "total_tokens": 636,
        "prompt_tokens_details": {"cached_tokens": 153},
        "completion_tokens_details": {"reasoning_tokens": 136},
    }
    cost = priced(raw, "grok-4-fast-reasoning")
    assert cost.output == (68 + 136) * rates.output_mtok / M
    assert cost.provider == "x-ai"


def test_deepseek_cache_hits_and_misses() -> None:
    rates = table_prices("deepseek-chat", "deepseek")
    raw = {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
           "prompt_cache_hit_tokens": 800, "prompt_cache_miss_tokens": 200}  # fmt: skip
    cost = priced(raw, "deepseek-chat")
    assert (cost.input, cost.cache_read) == (200 * rates.input_mtok / M, 800 * rates.cache_read_mtok / M)
    assert cost.provider == "deepseek"  # an OpenAI-compatible shape: the model name finds its provider


@pytest.mark.parametrize("tier_name", ["priority", "flex"])
def test_service_tier_picks_the_tables_variant(tier_name: str) -> None:
    raw = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    standard = priced(raw, "gpt-5")
    tiered = priced(raw, "gpt-5", service_tier=tier_name)
    rates = table_prices("gpt-5", "openai", {"service_tier": tier_name})
    assert tiered.input == 1000 * rates.input_mtok / M and tiered.service_tier == tier_name
    assert tiered.computed is not None and standard.computed is not None
    assert (tiered.computed > standard.computed) if tier_name == "priority" else (tiered.computed < standard.computed)


def test_batch_tier_is_batch_processing() -> None:
    raw = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    rates = table_prices("gpt-5", "openai", {"processing": "batch"})
    assert priced(raw, "gpt-5", service_tier="batch").input == 1000 * rates.input_mtok / M


def test_anthropic_web_searches_are_billed_per_search() -> None:
    rates = table_prices("claude-opus-4-1", "anthropic")
    raw = {"input_tokens": 10, "output_tokens": 10, "server_tool_use": {"web_search_requests": 7}}
    assert priced(raw, "claude-opus-4-1").other == 7 * rates.web_searches_kcount / 1000


def test_partial_usage_is_priced_and_marked_partial() -> None:
    cost = price(Usage.from_raw({"input_tokens": 1000, "output_tokens": 40}, partial=True), "claude-opus-4-1")
    assert cost is not None and cost.partial and cost.computed is not None and cost.computed > 0


def test_effort_suffix_and_models_prefix_are_retried() -> None:
    raw = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
    effort = priced(raw, "grok-3-mini-high")
    assert (effort.model, effort.model_ref, effort.provider) == ("grok-3-mini", "grok-3-mini-high", "x-ai")
    assert priced({"promptTokenCount": 5, "candidatesTokenCount": 5}, "models/gemini-2.5-flash").model == (
        "gemini-2.5-flash"
    )


def test_provider_named_by_the_caller() -> None:
    raw = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    routed = priced(raw, "anthropic/claude-sonnet-4.5", provider="openrouter")
    assert routed.provider == "openrouter"
    with pytest.raises(Unpriced, match="no price for model 'gpt-4o' at provider 'anthropic'"):
        price(Usage.from_raw(raw), "gpt-4o", provider="anthropic", strict=True)


@pytest.mark.parametrize(
    ("usage", "model", "options", "reason"),
    [
        (None, "gpt-4o", {}, "no usage"),
        (Usage.from_raw({"tokens": 5}), "gpt-4o", {}, "recognises the usage"),
        (Usage.from_raw({"prompt_tokens": 5, "completion_tokens": 1}), None, {}, "names no model"),
        (Usage.from_raw({"prompt_tokens": 5, "completion_tokens": 1}), "no-such-model-xyz", {}, "no price for model"),
        (Usage.from_raw({"prompt_eval_count": 5, "eval_count": 1}), "llama3.2", {}, "locally"),
        (
            Usage.from_raw({"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 9}}),
            "gpt-4o",
            {},
            "contradict",
        ),
    ],
    ids=["no-usage", "unrecognised", "no-model", "unknown-model", "local", "contradictory"],
)
def test_unpriceable_gives_none_and_the_reason(usage: Any, model: Any, options: dict[str, Any], reason: str) -> None:
    assert price(usage, model, **options) is None  # never a 0 that looks like a price
    with pytest.raises(Unpriced, match=reason) as raised:
        price(usage, model, strict=True, **options)
    assert reason in raised.value.reason


def test_price_takes_only_results_and_usages() -> None:
    with pytest.raises(TypeError, match="StreamResult or a Usage"):
        price({"prompt_tokens": 1}, "gpt-4o")  # type: ignore[arg-type]


def test_ssewire_provider_names() -> None:
    raw = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    assert priced(raw, "grok-4-fast-reasoning", provider="xai").provider == "x-ai"
    assert priced(raw, "deepseek-chat", provider="openai-chat").provider == "deepseek"  # many serve that shape
    with pytest.raises(Unpriced, match="locally"):
        price(Usage.from_raw(raw), "llama3.2", provider="ollama", strict=True)


def test_the_streams_own_service_tier_prices_it() -> None:
    from ssewire import collect, iter_unified

    def stream(tier: str) -> bytes:
        head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5", "service_tier": tier}
        text = {**head, "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]}
        counts = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
        usage = {**head, "choices": [], "usage": counts}
        return f"data: {json.dumps(text)}\n\ndata: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()

    costs = {}
    for tier in ("default", "priority"):
        result = collect(iter_unified([stream(tier)], "openai-chat"))
        assert result.service_tier == tier
        cost = result.price(at=AT)
        assert cost is not None and cost.service_tier == tier
        rates = table_prices("gpt-5", "openai", {"service_tier": tier})
        assert cost.input == 1000 * rates.input_mtok / M and cost.output == 100 * rates.output_mtok / M
        costs[tier] = cost.total
    assert costs["priority"] > costs["default"]


def test_bedrock_converse_one_hour_cache_writes_are_priced_at_the_hour_rate() -> None:
    # TokenUsage.cacheDetails says for how long each write is kept (AWS: ttl "5m" | "1h")
    model = "global.anthropic.claude-sonnet-4-5-20250929-v1:0"
    rates = table_prices(model, "aws")
    raw = {"inputTokens": 12, "outputTokens": 8, "cacheReadInputTokens": 0, "cacheWriteInputTokens": 10_000,
           "cacheDetails": [{"ttl": "1h", "inputTokens": 6_000}, {"ttl": "5m", "inputTokens": 4_000}]}  # fmt: skip
    usage = Usage.from_raw(raw)
    assert (usage.cache_write_tokens, usage.cache_write_5m_tokens, usage.cache_write_1h_tokens) == (
        10_000,
        4_000,
        6_000,
    )
    cost = priced(raw, model, provider="bedrock-converse")
    assert cost.cache_write_1h == 6_000 * rates.cache_write_1h_mtok / M
    assert cost.cache_write_5m == 4_000 * rates.cache_write_mtok / M
    without = Usage.from_raw({key: value for key, value in raw.items() if key != "cacheDetails"})
    assert (without.cache_write_5m_tokens, without.cache_write_1h_tokens) == (None, None)  # not said: not guessed


def test_cohere_is_priced_from_its_billed_units() -> None:
    # Cohere's `tokens` also count what it adds to the prompt and the tool plan: `billed_units` is what it bills
    rates = table_prices("command-r-08-2024", "cohere")
    raw = {"billed_units": {"input_tokens": 8, "output_tokens": 50},
           "tokens": {"input_tokens": 1394, "output_tokens": 54}, "cached_tokens": 1360}  # fmt: skip
    usage = Usage.from_raw(raw)
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (1394, 54, 1360)  # what was used
    cost = priced(raw, "command-r-08-2024", provider="cohere")
    assert (cost.input, cost.output) == (8 * rates.input_mtok / M, 50 * rates.output_mtok / M)
    assert cost.cache_read == 0
    unbilled = {key: value for key, value in raw.items() if key != "billed_units"}  # no billed units: what was used
    assert priced(unbilled, "command-r-08-2024", provider="cohere").output == 54 * rates.output_mtok / M


def test_audio_tokens_are_priced_at_the_audio_rates() -> None:
    # a Realtime recording: 15 of its 24 output tokens are audio (output_token_details), at 4x the text rate
    from helpers import CORPUS
    from ssewire import collect, iter_unified

    body = (CORPUS / "more-providers" / "openai" / "realtime-text-in-audio-out.jsonl").read_bytes()
    result = collect(iter_unified([body], "auto"))
    assert result.model is not None
    rates = table_prices(result.model, "openai")
    cost = price(result, at=AT, strict=True)
    assert cost is not None and rates.output_audio_mtok > rates.output_mtok
    assert cost.output == (9 * rates.output_mtok + 15 * rates.output_audio_mtok) / M
    assert cost.input == 16 * rates.input_mtok / M  # its prompt was text
    # Gemini: the AUDIO entries of promptTokensDetails; Chat Completions' audio models: prompt_tokens_details
    gemini = table_prices("gemini-2.5-flash", "google")
    details = [{"modality": "AUDIO", "tokenCount": 600}, {"modality": "TEXT", "tokenCount": 400}]
    said: dict[str, Any] = {"promptTokenCount": 1000, "candidatesTokenCount": 10, "totalTokenCount": 1010}
    said["promptTokensDetails"] = details
    cost = priced(said, "gemini-2.5-flash", provider="google")
    assert cost.input == (400 * base(gemini.input_mtok) + 600 * base(gemini.input_audio_mtok)) / M
    raw: dict[str, Any] = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150,
                           "prompt_tokens_details": {"audio_tokens": 80, "cached_tokens": 0},
                           "completion_tokens_details": {"audio_tokens": 40, "reasoning_tokens": 0}}  # fmt: skip
    cost = priced(raw, "gpt-realtime", provider="openai")
    assert cost.input == (20 * rates.input_mtok + 80 * rates.input_audio_mtok) / M
    assert cost.output == (10 * rates.output_mtok + 40 * rates.output_audio_mtok) / M
    text_only = table_prices("gpt-4o-audio-preview", "openai")  # a model with no audio rates of its own: as text
    cost = priced(raw, "gpt-4o-audio-preview", provider="openai")
    assert (cost.input, cost.output) == (100 * text_only.input_mtok / M, 50 * text_only.output_mtok / M)


def test_a_generated_images_tokens_are_priced_at_the_image_rate() -> None:
    """Gemini's image models bill a generated image's tokens (``candidatesTokensDetails`` ``IMAGE``) at the image
    output rate, ten times text's and more; an Interactions usage counts modalities in ``*_tokens_by_modality``."""
    rates = table_prices("gemini-2.5-flash-image", "google")
    assert base(rates.output_image_mtok) > 10 * base(rates.output_mtok)
    said: dict[str, Any] = {"promptTokenCount": 20, "candidatesTokenCount": 1290, "totalTokenCount": 1310}
    said["candidatesTokensDetails"] = [{"modality": "IMAGE", "tokenCount": 1290}]
    cost = priced(said, "gemini-2.5-flash-image", provider="google")
    assert cost.output == 1290 * base(rates.output_image_mtok) / M
    flash = table_prices("gemini-2.5-flash", "google")
    interaction: dict[str, Any] = {"total_input_tokens": 1000, "total_output_tokens": 10}
    interaction["input_tokens_by_modality"] = [
        {"modality": "audio", "tokens": 600},
        {"modality": "text", "tokens": 400},
    ]
    cost = priced(interaction, "gemini-2.5-flash", provider="google")
    assert cost.input == (400 * base(flash.input_mtok) + 600 * base(flash.input_audio_mtok)) / M


def test_a_groq_stream_is_priced_at_groqs_rates() -> None:
    """Groq's usage object carries its timings: the stream is Groq's (a ``vendor/model`` name is otherwise
    OpenRouter's, and a plain one found at no provider)."""
    usage: dict[str, Any] = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    usage.update(queue_time=0.01, prompt_time=0.002, completion_time=0.05, total_time=0.06)
    for model in ("openai/gpt-oss-120b", "llama-3.3-70b-versatile"):
        rates = table_prices(model, "groq")
        cost = priced(usage, model)
        assert cost.provider == "groq"
        assert cost.computed == (1000 * base(rates.input_mtok) + 100 * base(rates.output_mtok)) / M


def test_openai_file_search_calls_are_billed_per_search() -> None:
    from ssewire import StreamResult
    from ssewire.result import ToolCall

    rates = table_prices("gpt-5", "openai")
    result = StreamResult()
    result.model = "gpt-5"
    result.usage = Usage.from_raw({"input_tokens": 100, "output_tokens": 10, "total_tokens": 110})
    result.tool_calls = [
        ToolCall("fs_1", "file_search", {}, server=True),
        ToolCall("fs_2", "file_search", {}, server=True),
    ]
    cost = price(result, at=AT, strict=True)
    assert cost is not None and cost.other == 2 * rates.storage_searches_kcount / 1000


def test_vertex_and_bedrock_model_names_find_their_rows() -> None:
    """Vertex names a Claude model ``claude-opus-4@20250514``; Bedrock ``us.anthropic.claude-...-v1:0``: each is
    found (at Bedrock's own prices for a Bedrock id), as the README's advice to pass ``model=`` says."""
    usage = {"input_tokens": 1000, "output_tokens": 100}
    assert priced(usage, "claude-opus-4@20250514").model == priced(usage, "claude-opus-4-20250514").model
    cost = priced(usage, "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert cost.provider == "aws"
    assert cost == priced(usage, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", provider="bedrock-anthropic")
