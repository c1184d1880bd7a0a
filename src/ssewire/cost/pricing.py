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
- web searches (Anthropic's ``server_tool_use.web_search_requests``, else the stream's ``web_search`` server calls),
  OpenAI's file searches (its ``file_search`` server calls) and per-request fees where the table prices them;
- a long-context tier by the prompt's whole input (cache included), as providers bill it; the service tier the
  stream names (``service_tier``; ``batch`` as batch processing) picks the table's variant for it.

Equal, to the last digit, to genai-prices' own ``calc_price`` on the same counts (a test holds every model of the
table to it), at a fraction of its time.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Mapping, NamedTuple, Optional, Union

from ..result import StreamResult
from ..usage import Usage, count
from . import table
from .model import COMPONENTS, Cost
from .reported import reported_cost
from .table import Unpriced

__all__ = ["Figures", "amounts", "components", "figures", "price", "search_calls", "served_by", "web_search_calls"]

_PER_MTOK = 1_000_000
_ZERO = Decimal(0)


def _charge(rate: Any, n: int, prompt: int) -> Decimal:
    """``n`` tokens at ``rate`` (per token; tiered per million by the whole ``prompt``, as the table prices it)."""
    if rate is None or not n:
        return _ZERO
    if type(rate) is Decimal:
        return rate * n
    return table.module().types.calc_unit_price(rate, n, prompt, _PER_MTOK)  # type: ignore[no-any-return]


def amounts(
    usage: Usage,
    rates: table.Rates,
    web_searches: int = 0,
    audio: tuple[int, int, int] = (0, 0, 0),
    file_searches: int = 0,
    media: Optional[Mapping[str, tuple[int, int, int]]] = None,
) -> tuple[Decimal, ...]:
    """``usage`` priced at one model's ``rates``: the amounts of :data:`~ssewire.cost.COMPONENTS`, in order;
    ``audio``: the prompt audio tokens, those read from a cache and the generated ones (a provider's rules'
    ``audio``), each part of the input, cache read and output amounts at the audio rates; ``media``: the same by
    modality (``audio``, ``image``, ``video``: a provider's rules' ``media``, its audio in place of ``audio``);
    ``web_searches`` and ``file_searches`` (OpenAI's file search calls) at the table's per-search rates.
    :class:`~ssewire.cost.table.Unpriced` when the counts contradict each other."""
    prompt = usage.input_tokens or 0  # (a recognised usage's counts are ints or None)
    read = usage.cached_input_tokens or 0
    writes = usage.cache_write_tokens or 0
    hour = usage.cache_write_1h_tokens or 0
    output = usage.output_tokens or 0
    reasoning = (usage.reasoning_tokens or 0) if rates.reasoning is not None else 0
    plain = prompt - read - writes
    if plain < 0 or hour > writes or reasoning > output:
        raise Unpriced(f"the usage counts contradict each other: {usage!r}")
    text_in, text_read, text_out = plain, read, output - reasoning
    inputs = reads = outputs = _ZERO
    for name, counts in ((media or {}) if media is not None else {"audio": audio}).items():
        modality = _MODALITY_RATES.get(name)
        if modality is None:
            continue
        heard, heard_cached, spoken = counts
        heard_cached = min(heard_cached, text_read)
        heard = min(max(heard - heard_cached, 0), text_in)  # (the uncached prompt tokens of this modality)
        spoken = min(spoken, text_out)
        if heard or heard_cached or spoken:
            in_rate, read_rate, out_rate = (getattr(rates, key) for key in modality)
            inputs += _charge(in_rate, heard, prompt)
            reads += _charge(read_rate, heard_cached, prompt)
            outputs += _charge(out_rate, spoken, prompt)
            text_in, text_read, text_out = text_in - heard, text_read - heard_cached, text_out - spoken
    other = _ZERO
    if web_searches and rates.web_search is not None:
        other += rates.web_search * web_searches
    if file_searches and rates.file_search is not None:
        other += rates.file_search * file_searches
    if rates.request is not None:
        other += rates.request
    return (
        _charge(rates.input, text_in, prompt) + inputs,
        _charge(rates.cache_read, text_read, prompt) + reads,
        _charge(rates.cache_write_5m, writes - hour, prompt) if writes > hour else _ZERO,
        _charge(rates.cache_write_1h, hour, prompt) if hour else _ZERO,
        _charge(rates.output, text_out, prompt) + outputs,
        _charge(rates.reasoning, reasoning, prompt) if reasoning else _ZERO,
        other,
    )


#: Each modality billed at rates of its own: its input, cache read and output rates (:class:`~.table.Rates`).
_MODALITY_RATES: dict[str, tuple[str, str, str]] = {
    name: (f"{name}_input", f"{name}_cache_read", f"{name}_output") for name in ("audio", "image", "video")
}


def components(usage: Usage, rates: table.Rates, web_searches: int = 0) -> dict[str, Decimal]:
    """:func:`amounts` by component name (see :class:`~ssewire.cost.Cost`)."""
    return dict(zip(COMPONENTS, amounts(usage, rates, web_searches)))


def web_search_calls(result: Optional[StreamResult]) -> int:
    """The ``web_search`` server calls of ``result`` (OpenAI Responses' ``web_search_call`` items): the searches
    billed per call where the usage object does not count them."""
    return search_calls(result)[0]


def search_calls(result: Optional[StreamResult]) -> tuple[int, int]:
    """``(web, file)``: the ``web_search`` and ``file_search`` server calls of ``result`` (OpenAI Responses'
    ``web_search_call`` / ``file_search_call`` items), billed per call."""
    if result is None or not result.tool_calls:
        return 0, 0
    web = files = 0
    for call in result.tool_calls:
        if call.server:
            if call.name == "web_search":
                web += 1
            elif call.name == "file_search":
                files += 1
    return web, files


def served_by(usage: Usage) -> Optional[str]:
    """Who served a usage's stream, for the price lookup: the provider whose rules read it, but a Chat
    Completions usage (an API many serve) whose members name its host: Groq's timings (``queue_time`` ...)."""
    source = usage.source
    raw = usage.raw
    if source == "openai-chat" and type(raw) is dict and "queue_time" in raw and "prompt_time" in raw:
        return "groq"
    return source


def _web_searches(usage: Usage, calls: int) -> int:
    """Web searches billed per call: Anthropic's usage counts them, else the stream's ``calls``."""
    raw = usage.raw
    tools = raw.get("server_tool_use") if isinstance(raw, dict) else None
    if isinstance(tools, dict) and "web_search_requests" in tools:
        return count(tools.get("web_search_requests"))
    return calls


class Figures(NamedTuple):
    """A stream's figures without the :class:`Cost` around them (what a batch row keeps): ``computed`` (the sum of
    the table's amounts) and ``reported`` (the provider's), at least one of them set; ``price_version`` with
    ``computed``."""

    computed: Optional[Decimal]
    reported: Optional[Decimal]
    price_version: Optional[str]


def _figures(
    usage: Optional[Usage],
    calls: tuple[int, int],
    model: Optional[str],
    provider: Optional[str],
    at: Optional[datetime],
    service_tier: Optional[str],
) -> tuple[Optional[tuple[Decimal, ...]], Optional[Decimal], Union[table.Match, str]]:
    """The amounts (None when not computed), the provider's figure and the table's match (or the reason there is
    no computed figure): the one path :func:`price` and :func:`figures` share. ``calls``: the stream's web and
    file search server calls (:func:`search_calls`)."""
    if usage is None:
        return None, None, "the stream reported no usage"
    reported = reported_cost(usage.raw)
    if not usage.recognised:
        return None, reported, "no provider recognises the usage object's shape"
    found = table.lookup(model, provider, served_by(usage))
    if type(found) is str:
        return None, reported, found
    from ..normalizers.providers import billed_usage, media_counts  # (the registry: once a usage is priced)

    try:
        rates = table.rates_at(found, at, service_tier)  # type: ignore[arg-type]
        searches = 0 if rates.web_search is None else _web_searches(usage, calls[0])
        counts = media_counts(usage)
        return amounts(billed_usage(usage), rates, searches, file_searches=calls[1], media=counts), reported, found
    except Unpriced as exc:  # counts that contradict each other
        return None, reported, exc.reason


def figures(
    usage: Usage,
    model: Optional[str],
    at: Optional[datetime] = None,
    *,
    service_tier: Optional[str] = None,
    web_search_calls: int = 0,
    file_search_calls: int = 0,
) -> Optional[Figures]:
    """:func:`price`'s figures for a stream's ``usage`` (``model`` and ``service_tier`` its own, the provider its
    shape implies; ``web_search_calls`` / ``file_search_calls`` as :func:`search_calls` counts them), without
    building a :class:`Cost`: what a batch row needs, at a fraction of the cost. None when neither figure exists."""
    parts, reported, _ = _figures(usage, (web_search_calls, file_search_calls), model, None, at, service_tier)
    if parts is None:
        return None if reported is None else Figures(None, reported, None)
    return Figures(sum(parts, _ZERO), reported, table.version())


def _priced(
    usage: Optional[Usage],
    result: Optional[StreamResult],
    model: Optional[str],
    provider: Optional[str],
    at: Optional[datetime],
    service_tier: Optional[str],
) -> Union[Cost, str]:
    """The cost, or the reason there is none (returned, not raised: unpriced streams are common in a batch)."""
    parts, reported, found = _figures(usage, search_calls(result), model, provider, at, service_tier)
    partial = usage is not None and usage.partial
    if parts is None:  # no computed figure: the provider's alone, or none
        if reported is None:
            return found  # type: ignore[return-value]
        return Cost(reported=reported, partial=partial, model_ref=model, service_tier=service_tier,
                    reason=found)  # type: ignore[arg-type]  # fmt: skip
    match: table.Match = found  # type: ignore[assignment]
    return Cost(
        components=parts,
        reported=reported,
        partial=partial,
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
    cost = _priced(usage, result, model, provider, at, service_tier)
    if type(cost) is str:
        if strict:
            raise Unpriced(cost)
        return None
    return cost  # type: ignore[return-value]
