"""The provider's own figure: read exactly, preferred, checked against the computed one; and what is left when
the price table is not installed (Python 3.9 and 3.10, or without the extra ``prices``)."""

from __future__ import annotations

import sys
from decimal import Decimal
from typing import Any

import pytest

from helpers.streams import all_streams
from ssewire import StreamResult, collect, iter_unified
from ssewire.cost import Unpriced, price, reported_cost, table
from ssewire.usage import Usage, count

RECORDINGS = [s for s in all_streams() if not s[0].startswith("generated-")]


def _result(data: bytes, provider: Any, framing: Any) -> StreamResult:
    return collect(iter_unified([data], provider, framing=framing))


@pytest.mark.parametrize(
    ("raw", "figure"),
    [
        ({"cost": 0.00045}, Decimal("0.00045")),  # the float's shortest repr, not its binary expansion
        ({"cost": 0}, Decimal(0)),
        ({"cost": 0.001, "is_byok": True, "cost_details": {"upstream_inference_cost": 0.02}}, Decimal("0.021")),
        ({"cost": 0.001, "is_byok": False, "cost_details": {"upstream_inference_cost": 0.02}}, Decimal("0.001")),
        ({"cost_in_usd_ticks": 1654500}, Decimal("0.00016545")),
        ({"cost": True}, None),
        ({"cost": -1.0}, None),
        ({"cost": "0.1"}, None),
        ({"cost_in_usd_ticks": 1.5}, None),
        ({"prompt_tokens": 3}, None),
        ([], None),
    ],
)
def test_reported_cost(raw: Any, figure: Any) -> None:
    assert reported_cost(raw) == figure
    if isinstance(raw, dict) and "prompt_tokens" not in raw:
        usage = Usage.from_raw(dict(raw, prompt_tokens=1, completion_tokens=1))
        assert usage.cost == (None if figure is None else float(figure))


PRICED_BY_PROVIDER = [s for s in RECORDINGS if reported_cost(getattr(_result(*s[1:]).usage, "raw", None)) is not None]


@pytest.mark.skipif(not PRICED_BY_PROVIDER, reason="no recording with a provider-reported cost (no shared corpus)")
def test_recordings_reported_cost_is_preferred_and_the_computed_one_within_one_percent() -> None:
    pytest.importorskip("genai_prices", reason="the price table needs Python 3.11+ (extra prices)")
    checked = []
    for name, data, provider, framing in PRICED_BY_PROVIDER:
        result = _result(data, provider, framing)
        cost = result.price()
        assert cost is not None and cost.source == "reported", name
        assert cost.total == reported_cost(result.usage.raw), name  # type: ignore[union-attr]
        if cost.computed is None:  # OpenRouter's ":free" variants are not in the table: the reason says so
            assert cost.reason and "no price for model" in cost.reason, name
            continue
        assert cost.difference is not None, name
        if count(result.usage.raw.get("num_server_side_tools_used")):  # type: ignore[union-attr]
            # xAI bills its server-side tools per call; the table has no rate for them: the computed figure is
            # the tokens alone, below the bill
            assert cost.difference > 0, name
        else:
            assert abs(cost.difference) <= cost.reported * Decimal("0.01"), name  # type: ignore[operator]
        checked.append(name)
    assert len(checked) >= 1


def test_recordings_service_tier() -> None:
    tiers = {name: _result(data, provider, framing).service_tier for name, data, provider, framing in RECORDINGS}
    named = {tier for tier in tiers.values() if tier is not None}
    if any(name.startswith(("openai/", "anthropic/")) for name in tiers):  # the shared corpus is there
        assert {"default", "standard"} <= named  # OpenAI chunks' service_tier, Anthropic usage's
    assert all(type(tier) is str for tier in named)


@pytest.fixture
def no_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if genai-prices were not installed."""
    monkeypatch.setitem(sys.modules, "genai_prices", None)
    monkeypatch.setattr(table, "_MODULE", None)
    monkeypatch.setattr(table, "_FOUND", {})
    monkeypatch.setattr(table, "_RATES", {})


@pytest.mark.usefixtures("no_table")
def test_without_the_table_only_the_reported_figure() -> None:
    reported = Usage.from_raw({"prompt_tokens": 432, "completion_tokens": 68, "cost_in_usd_ticks": 1654500})
    cost = price(reported, "grok-4-fast-reasoning")
    assert cost is not None and cost.total == Decimal("0.00016545") and cost.computed is None
    assert cost.reason is not None and "pip install 'ssewire[prices]'" in cost.reason
    plain = Usage.from_raw({"prompt_tokens": 432, "completion_tokens": 68})
    assert price(plain, "gpt-4o") is None
    with pytest.raises(Unpriced, match="not installed"):
        price(plain, "gpt-4o", strict=True)
