""":func:`price`: a stream's (or a usage object's) cost, from the provider's own figure and the price table.

The counts are ssewire's :class:`~ssewire.usage.Usage`, which already gives every count one meaning: input with
cached and cache-written tokens inside (Anthropic's ``input_tokens`` leaves them out: its reader adds them back),
output with reasoning inside (xAI's ``completion_tokens`` leaves it out: the reader adds it), Gemini's thoughts as
output and its tool-use prompt tokens as input, DeepSeek's cache hits as cached input, Anthropic's
``usage.iterations`` summed. So each token is priced once, at its own rate:

- uncached input at the input rate; cache reads at the cache-read rate; cache writes at the 5-minute or 1-hour
  write rate (a write the provider does not time is a 5-minute one); a rate the model lacks falls back as the
  table's decomposition does (a cache read without its own rate is input);
- output at the output rate, the reasoning share apart only where the model prices it apart;
- web searches (Anthropic's ``server_tool_use.web_search_requests``, else the stream's ``web_search`` server calls)
  and per-request fees where the table prices them;
- a long-context tier by the prompt's whole input (cache included), as providers bill it; the service tier the
  stream names (``service_tier``; ``batch`` as batch processing) picks the table's variant for it.

Equal, to the last digit, to genai-prices' own ``calc_price`` on the same counts (a test holds every model of the
table to it), at a fraction of its time.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Optional, Union

from ..result import StreamResult
from ..usage import Usage, count
from . import table
from .model import Cost
from .reported import reported_cost
from .table import Unpriced

__all__ = ["components", "price", "price_context"]

_PER_MTOK = 1_000_000
_PER_K = 1_000
_ZERO = Decimal(0)


def price_context(service_tier: Optional[str]) -> Optional[dict[str, str]]:
    """The table's request context for a stream's ``service_tier``: ``batch`` is batch processing, any other
    tier is itself (the table has variants for OpenAI's ``priority``/``flex``, Google's ...)."""
    if not service_tier:
        return None
    if service_tier == "batch":
        return {"processing": "batch"}
    return {"service_tier": service_tier}


def components(usage: Usage, rates: table.Rates, web_searches: int = 0) -> dict[str, Decimal]:
    """``usage`` priced at one model's ``rates``, component by component (see :class:`~ssewire.cost.Cost`).
    :class:`~ssewire.cost.table.Unpriced` when the counts contradict each other."""
    charge = table.module().types.calc_unit_price
    total_input = count(usage.input_tokens)
    read = count(usage.cached_input_tokens)
    writes = count(usage.cache_write_tokens)
    hour = count(usage.cache_write_1h_tokens)
    output = count(usage.output_tokens)
    reasoning = count(usage.reasoning_tokens) if rates.reasoning is not None else 0
    plain = total_input - read - writes
    if plain < 0 or hour > writes or reasoning > output:
        raise Unpriced(f"the usage counts contradict each other: {usage!r}")

    def tokens(rate: Any, n: int) -> Decimal:
        return _ZERO if rate is None or not n else charge(rate, n, total_input, _PER_MTOK)

    other = _ZERO
    if rates.web_search is not None and web_searches:
        other += charge(rates.web_search, web_searches, total_input, _PER_K)
    if rates.request is not None:
        other += charge(rates.request, 1, total_input, _PER_K)
    return {
        "input": tokens(rates.input, plain),
        "cache_read": tokens(rates.cache_read, read),
        "cache_write_5m": tokens(rates.cache_write_5m, writes - hour),
        "cache_write_1h": tokens(rates.cache_write_1h, hour),
        "output": tokens(rates.output, output - reasoning),
        "reasoning": tokens(rates.reasoning, reasoning),
        "other": other,
    }


def _web_searches(usage: Usage, result: Optional[StreamResult]) -> int:
    """Web searches billed per call: Anthropic's usage counts them, else the result's ``web_search`` server
    calls (OpenAI Responses' ``web_search_call`` items)."""
    raw = usage.raw
    tools = raw.get("server_tool_use") if isinstance(raw, dict) else None
    if isinstance(tools, dict) and "web_search_requests" in tools:
        return count(tools.get("web_search_requests"))
    if result is None:
        return 0
    return sum(1 for call in result.tool_calls if call.server and call.name == "web_search")


def _priced(
    usage: Optional[Usage],
    result: Optional[StreamResult],
    model: Optional[str],
    provider: Optional[str],
    at: Optional[datetime],
    service_tier: Optional[str],
) -> Cost:
    if usage is None:
        raise Unpriced("the stream reported no usage")
    reported = reported_cost(usage.raw)
    try:
        if not usage.recognised:
            raise Unpriced("no provider recognises the usage object's shape")
        match = table.find(model, provider, usage.source)
        rates = table.rates_at(match, at, price_context(service_tier))
        parts = components(usage, rates, _web_searches(usage, result))
    except Unpriced as exc:
        if reported is None:
            raise
        return Cost(reported=reported, partial=usage.partial, model_ref=model, service_tier=service_tier,
                    reason=exc.reason)  # fmt: skip
    return Cost(
        components=parts,
        reported=reported,
        partial=usage.partial,
        model=match.model.id,
        provider=match.provider.id,
        model_ref=model,
        service_tier=service_tier,
        price_version=table.version(),
    )


def price(
    result_or_usage: Union[StreamResult, Usage, None],
    model: Optional[str] = None,
    provider: Optional[str] = None,
    at: Optional[datetime] = None,
    *,
    service_tier: Optional[str] = None,
    strict: bool = False,
) -> Optional[Cost]:
    """What a stream cost: a :class:`~ssewire.StreamResult` (its usage, model and service tier) or a
    :class:`~ssewire.usage.Usage` (then name the ``model``).

    ``model`` / ``service_tier`` override the stream's; ``provider`` names who served it (a genai-prices id such
    as ``openrouter`` or ``azure``, or an ssewire provider name; default: what the stream's shape implies, then the
    model name); ``at`` is when the request was made (prices change: default now). The provider's own figure,
    when the stream has one, is the total and the computed one is kept beside it (:class:`Cost`). A partial usage
    (a cut stream) is priced and marked ``partial``.

    None when neither figure exists (no usage, an unknown model, the table not installed), never a 0 that looks
    like a price; ``strict=True`` raises :class:`~ssewire.cost.Unpriced` with the ``reason`` instead.
    """
    if isinstance(result_or_usage, StreamResult):
        result: Optional[StreamResult] = result_or_usage
        usage = result_or_usage.usage
        model = model or result_or_usage.model
        service_tier = service_tier or result_or_usage.service_tier
    elif isinstance(result_or_usage, Usage) or result_or_usage is None:
        result, usage = None, result_or_usage
    else:
        raise TypeError(f"price() takes a StreamResult or a Usage, not {type(result_or_usage).__name__}")
    try:
        return _priced(usage, result, model, provider, at, service_tier)
    except Unpriced:
        if strict:
            raise
        return None
