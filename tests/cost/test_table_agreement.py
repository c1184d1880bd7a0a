"""Every model of the price table, priced by ssewire.cost and by genai-prices' own ``calc_price`` on the same
counts: equal to the last digit (ssewire prices from the rates itself, for speed)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from ssewire.cost.pricing import components
from ssewire.cost.table import Match, rates_at
from ssewire.usage import Usage

genai_prices = pytest.importorskip("genai_prices", reason="the price table needs Python 3.11+ (extra prices)")

AT = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def _models() -> list[tuple[Any, Any]]:
    snapshot = genai_prices.data_snapshot.get_snapshot()
    return [(provider, model) for provider in snapshot.providers for model in provider.models]


MODELS = _models()


def _table_total(usage: Usage, provider: Any, model: Any, web_searches: int) -> Any:
    """genai-prices' own total for ``usage`` (ssewire's counts: input with cache inside, output with reasoning)."""
    writes, hour = usage.cache_write_tokens or 0, usage.cache_write_1h_tokens or 0
    counts = {
        "input_tokens": usage.input_tokens,
        "cache_read_tokens": usage.cached_input_tokens,
        "cache_write_tokens": writes,
        "cache_write_5m_tokens": writes - hour,
        "cache_write_1h_tokens": hour,
        "output_tokens": usage.output_tokens,
        "output_reasoning_tokens": usage.reasoning_tokens,
        "web_searches": web_searches,
    }
    table_usage = genai_prices.Usage(**{k: v for k, v in counts.items() if v})
    return model.calc_price(table_usage, provider, genai_request_timestamp=AT).total_price


def _ours(usage: Usage, provider: Any, model: Any, web_searches: int) -> Any:
    return sum(components(usage, rates_at(Match(provider, model), AT, None), web_searches).values())


def test_the_table_is_not_empty() -> None:
    assert len(MODELS) > 500


@pytest.mark.parametrize(
    "counts",
    [
        {"input_tokens": 1_000, "output_tokens": 200},
        {"input_tokens": 12_000, "output_tokens": 900, "cached_input_tokens": 8_000, "reasoning_tokens": 400},
        {  # past every long-context tier
            "input_tokens": 260_000,
            "output_tokens": 3_000,
            "cached_input_tokens": 1_000,
            "cache_write_tokens": 50_000,
            "cache_write_1h_tokens": 20_000,
            "reasoning_tokens": 2_000,
        },
    ],
    ids=["plain", "cached-reasoning", "long-context-cache-writes"],
)
def test_every_model_agrees_with_the_table(counts: dict[str, int]) -> None:
    options: dict[str, Any] = dict(counts)
    usage = Usage(options.pop("input_tokens"), options.pop("output_tokens"), source="test", **options)
    for web_searches in (0, 3):
        disagreements = [
            (provider.id, model.id, ours, theirs)
            for provider, model in MODELS
            if (ours := _ours(usage, provider, model, web_searches))
            != (theirs := _table_total(usage, provider, model, web_searches))
        ]
        assert disagreements == []


@given(
    model_index=st.integers(0, len(MODELS) - 1),
    cached=st.integers(0, 300_000),
    written=st.integers(0, 300_000),
    hour_share=st.floats(0, 1),
    plain=st.integers(0, 300_000),
    output=st.integers(0, 100_000),
    reasoning_share=st.floats(0, 1),
    web_searches=st.integers(0, 20),
)
@settings(max_examples=examples(400))
def test_any_counts_agree_with_the_table(
    model_index: int,
    cached: int,
    written: int,
    hour_share: float,
    plain: int,
    output: int,
    reasoning_share: float,
    web_searches: int,
) -> None:
    provider, model = MODELS[model_index]
    usage = Usage(
        plain + cached + written,
        output,
        cached_input_tokens=cached,
        cache_write_tokens=written,
        cache_write_1h_tokens=int(written * hour_share),
        reasoning_tokens=int(output * reasoning_share),
        source="test",
    )
    assert _ours(usage, provider, model, web_searches) == _table_total(usage, provider, model, web_searches)


def test_every_model_agrees_with_the_table_on_media_tokens_and_file_searches() -> None:
    """Audio, image and video tokens (prompt, cached, generated) at their own rates where a model has them, and
    file searches per search: as genai-prices' ``calc_price`` prices the same counts (a generated image's tokens
    cost ten times text's and more)."""
    from ssewire.cost.pricing import amounts

    usage = Usage(20_000, 4_000, cached_input_tokens=5_000, reasoning_tokens=500, source="test")
    media = {"audio": (2_000, 500, 300), "image": (3_000, 1_000, 1_290), "video": (1_000, 0, 0)}
    counts = {
        "input_tokens": 20_000,
        "cache_read_tokens": 5_000,
        "output_tokens": 4_000,
        "output_reasoning_tokens": 500,
        "input_audio_tokens": 2_000,
        "cache_audio_read_tokens": 500,
        "output_audio_tokens": 300,
        "input_image_tokens": 3_000,
        "cache_image_read_tokens": 1_000,
        "output_image_tokens": 1_290,
        "input_video_tokens": 1_000,
        "storage_searches": 2,
    }
    disagreements = []
    for provider, model in MODELS:
        rates = rates_at(Match(provider, model), AT, None)
        ours = sum(amounts(usage, rates, file_searches=2, media=media))
        table_usage = genai_prices.Usage(**counts)
        theirs = model.calc_price(table_usage, provider, genai_request_timestamp=AT).total_price
        if ours != theirs:
            disagreements.append((provider.id, model.id, ours, theirs))
    assert disagreements == []
