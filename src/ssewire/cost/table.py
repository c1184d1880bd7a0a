"""The price table: genai-prices' bundled data (pydantic's maintained table; extra ``prices``), read locally.

Nothing is fetched at run time: the table is the one the installed ``genai-prices`` ships (its opt-in auto-update
once replaced a right price with a stale one), so a figure is reproducible from ``price_version``. ``genai-prices``
needs Python 3.11+; without it every lookup raises :class:`Unpriced` saying so.

Lookup (:func:`find`): the model name as the stream or the caller gave it, at the provider the caller named (a
genai-prices provider id such as ``openrouter`` or an ssewire provider name), else at the provider the stream's
shape implies (:data:`PROVIDER_IDS`) and then at whichever provider's models match the name (an OpenAI-compatible
stream is served by many: ``deepseek-chat``, ``grok-4``, ``llama-3.3-70b-versatile`` find their own; a
``vendor/model`` name is OpenRouter's when no provider claims it). A name with
a ``models/`` prefix, or a reasoning-effort suffix (``-minimal``, ``-low``, ``-medium``, ``-high``, ``-xhigh``:
xAI's ``grok-3-mini-high`` is ``grok-3-mini`` run with more effort, billed by its tokens) is retried without it,
Vertex's ``@date`` as ``-date``; a Bedrock model id (``us.anthropic.claude-...-v1:0``) is also looked up at
Bedrock's. A Chat Completions stream whose usage object names its host (Groq's timings) is looked up at that host
first.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Optional, Union

from ..errors import SSEwireError

__all__ = [
    "HOSTS",
    "LOCAL_PROVIDERS",
    "PROVIDER_IDS",
    "Match",
    "Rates",
    "Unpriced",
    "find",
    "lookup",
    "module",
    "price_context",
    "rates_at",
    "version",
]

#: genai-prices' provider id for each ssewire provider whose streams come from one provider (None: the shape is
#: served by many, so the model name decides).
PROVIDER_IDS: dict[str, Optional[str]] = {
    "openai": "openai",
    "openai-realtime": "openai",
    "openai-chat": None,
    "anthropic": "anthropic",
    "xai": "x-ai",
    "gemini": "google",
    "gemini-live": "google",
    "bedrock-converse": "aws",
    "bedrock-anthropic": "aws",
    "cohere": "cohere",
    "mistral": "mistral",
    "vercel-ui": None,
}

#: Providers that run models on the caller's own machine: nothing to price unless the caller names a provider.
LOCAL_PROVIDERS = frozenset({"ollama"})

_EFFORT_SUFFIX = re.compile(r"-(?:minimal|low|medium|high|xhigh)$")
_AT_DATE = re.compile(r"@(\d{8})$")
#: A Bedrock model id (``anthropic.claude-sonnet-4-5-20250929-v1:0``, with a region's ``us.`` prefix): also looked
#: up at Bedrock's prices (``aws``), whatever the stream's shape says.
_BEDROCK_ID = re.compile(r"^(?:[a-z]{2,7}\.)?[a-z0-9-]+\.[A-Za-z0-9.-]+-v\d+(?::\d+)?$")
#: The genai-prices provider of an OpenAI-compatible stream whose usage object names its host (see
#: ``cost.pricing.served_by``): a stream provider name that is no ssewire provider.
HOSTS: dict[str, str] = {"groq": "groq"}


class Unpriced(SSEwireError, LookupError):
    """No price could be computed: ``reason`` says why (no usage, an unknown model, the table not installed...)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_MODULE: Any = None  # the module once imported; False once its import failed (not tried again)
_MISSING = "the price table is not installed: pip install 'ssewire[prices]' (genai-prices, Python 3.11+)"


def module() -> Any:
    """The ``genai_prices`` module, imported on first use; :class:`Unpriced` when it is not installed."""
    global _MODULE
    if _MODULE is None:
        try:
            import genai_prices
        except ImportError:
            _MODULE = False
        else:
            _MODULE = genai_prices
    if _MODULE is False:
        raise Unpriced(_MISSING)
    return _MODULE


_VERSION: Optional[str] = None  # (annotated before the function that rebinds it: PyPy's rule)


def version() -> str:
    """The table's version: ``genai-prices <version>``."""
    global _VERSION
    if _VERSION is None:
        _VERSION = f"genai-prices {module().__version__}"
    return _VERSION


class Match:
    """What a lookup found: genai-prices' ``provider`` and ``model`` objects and whether the model is the
    provider's own (a fallback provider's model takes no provider-specific price variants)."""

    __slots__ = ("model", "own", "provider")

    def __init__(self, provider: Any, model: Any) -> None:
        self.provider = provider
        self.model = model
        self.own = any(m is model for m in provider.models)


def _refs(model_ref: str) -> list[str]:
    """``model_ref`` and the names to retry it as (see the module docstring)."""
    refs = [model_ref]
    bare = model_ref[len("models/") :] if model_ref.startswith("models/") else model_ref
    dated = _AT_DATE.sub(r"-\1", bare)  # Vertex's ``claude-opus-4@20250514``: the provider's ``-20250514``
    if dated != bare:
        bare = dated
    if bare != model_ref:
        refs.append(bare)
    plain = _EFFORT_SUFFIX.sub("", bare)
    if plain != bare:
        refs.append(plain)
    return refs


#: Lookups already made (a gateway prices a few models all day), found or not (the reason), bounded: emptied when
#: it reaches _CACHE_SIZE.
_FOUND: dict[tuple[Optional[str], Optional[str], Optional[str]], Union[Match, str]] = {}
_RATES: dict[tuple[int, Optional[str], Any], Rates] = {}
_CACHE_SIZE = 4096


def find(model_ref: Optional[str], provider: Optional[str], stream_provider: Optional[str]) -> Match:
    """The table's entry for ``model_ref``: at ``provider`` when given (a genai-prices id, or an ssewire provider
    name that names one: ``anthropic``, ``xai``; ``openai-chat`` names none and counts as the stream's), else at the
    one ``stream_provider`` implies and then by the model name alone. :class:`Unpriced` when there is none."""
    found = lookup(model_ref, provider, stream_provider)
    if type(found) is str:
        raise Unpriced(found)
    return found  # type: ignore[return-value]


def lookup(model_ref: Optional[str], provider: Optional[str], stream_provider: Optional[str]) -> Union[Match, str]:
    """:func:`find`'s answer, or the reason there is none (no exception: a batch meets unknown models all day)."""
    key = (model_ref, provider, stream_provider)
    found = _FOUND.get(key)
    if found is None:
        try:
            found = _find(model_ref, provider, stream_provider)
        except Unpriced as exc:
            if exc.reason == _MISSING:  # (not remembered: the table may be installed later)
                return _MISSING
            found = exc.reason
        if len(_FOUND) >= _CACHE_SIZE:
            _FOUND.clear()
        _FOUND[key] = found
    return found


def _find(model_ref: Optional[str], provider: Optional[str], stream_provider: Optional[str]) -> Match:
    if not model_ref:
        raise Unpriced("the stream names no model: pass model=")
    snapshot = module().data_snapshot.get_snapshot()
    if provider in LOCAL_PROVIDERS or (provider in PROVIDER_IDS and PROVIDER_IDS[provider] is None):
        provider, stream_provider = None, provider  # an ssewire name that names no one provider: as the stream's
    elif provider in PROVIDER_IDS:
        provider = PROVIDER_IDS[provider]
    if provider is not None:
        providers: list[Optional[str]] = [provider]
    elif stream_provider in LOCAL_PROVIDERS:
        raise Unpriced(f"{stream_provider} runs models locally: pass provider= to price it as a hosted model")
    else:
        hint = PROVIDER_IDS.get(stream_provider or "") or HOSTS.get(stream_provider or "")
        providers = [hint, None] if hint is not None else [None]
        if "/" in model_ref:  # ``vendor/model``: OpenRouter's naming
            providers.append("openrouter")
        if "aws" not in providers and _BEDROCK_ID.match(model_ref):
            providers.append("aws")
    for ref in _refs(model_ref):
        for provider_id in providers:
            try:
                found_provider, found_model = snapshot.find_provider_model(ref, None, provider_id, None)
            except LookupError:
                continue
            return Match(found_provider, found_model)
    where = f" at provider {providers[0]!r}" if providers[0] is not None else ""
    raise Unpriced(f"no price for model {model_ref!r}{where} in {version()}")


class Rates:
    """One model's rates in force for one request, per token type: a Decimal per token (or per search, per
    request), tiered prices as the table holds them (per million tokens, tiered by the whole prompt), or None where
    the model has no rate of its own (the fallbacks are the table's decomposition's)."""

    __slots__ = ("audio_cache_read", "audio_input", "audio_output", "cache_read", "cache_write_1h", "cache_write_5m",
                 "file_search", "image_cache_read", "image_input", "image_output", "input", "output", "reasoning",
                 "request", "video_cache_read", "video_input", "video_output", "web_search")  # fmt: skip

    def __init__(self, prices: Any) -> None:
        def rate(*keys: str, per: int = 1_000_000) -> Any:
            for key in keys:
                value = getattr(prices, key, None)
                if value is not None:
                    if isinstance(value, Decimal):
                        return value / per
                    return value if per == 1_000_000 else value.base / per  # (tiers are by prompt tokens)
            return None

        self.input = rate("input_mtok")
        self.cache_read = rate("cache_read_mtok", "input_mtok")
        self.cache_write_5m = rate("cache_write_5m_mtok", "cache_write_mtok", "input_mtok")
        self.cache_write_1h = rate("cache_write_1h_mtok", "cache_write_mtok", "input_mtok")
        self.output = rate("output_mtok")
        self.reasoning = rate("output_reasoning_mtok")  # None: reasoning is billed as output
        # audio at its own rates, else as text
        self.audio_input = rate("input_audio_mtok", "input_mtok")
        # (a model that prices a modality and cache reads prices their join: without a cache-read rate, a cached
        # token of a modality is one of its prompt tokens)
        self.audio_cache_read = rate("cache_audio_read_mtok", "cache_read_mtok", "input_audio_mtok", "input_mtok")
        self.audio_output = rate("output_audio_mtok", "output_mtok")
        # images and video likewise (a generated image's tokens: ten times text's and more)
        self.image_input = rate("input_image_mtok", "input_mtok")
        self.image_cache_read = rate("cache_image_read_mtok", "cache_read_mtok", "input_image_mtok", "input_mtok")
        self.image_output = rate("output_image_mtok", "output_mtok")
        self.video_input = rate("input_video_mtok", "input_mtok")
        self.video_cache_read = rate("cache_video_read_mtok", "cache_read_mtok", "input_video_mtok", "input_mtok")
        self.video_output = rate("output_video_mtok", "output_mtok")
        self.web_search = rate("web_searches_kcount", per=1000)
        self.file_search = rate("storage_searches_kcount", per=1000)
        self.request = rate("requests_kcount", per=1000)


def price_context(service_tier: Optional[str]) -> Optional[dict[str, str]]:
    """The table's request context for a stream's ``service_tier``: ``batch`` is batch processing, any other
    tier is itself (the table has variants for OpenAI's ``priority``/``flex``, Google's ...)."""
    if not service_tier:
        return None
    if service_tier == "batch":
        return {"processing": "batch"}
    return {"service_tier": service_tier}


def rates_at(match: Match, at: Optional[datetime], service_tier: Optional[str]) -> Rates:
    """The model's :class:`Rates` in force at ``at`` (now when None; a naive time is UTC) for a request served at
    ``service_tier`` (:func:`price_context`; applied only to the provider's own models, as the table does). Cached
    by model, tier and minute (the table's finest constraint is a time of day)."""
    tier = service_tier if match.own else None
    minute = int(time.time()) // 60 if at is None else at.replace(second=0, microsecond=0)
    key = (id(match.model), tier, minute)
    rates = _RATES.get(key)
    if rates is None:
        when = datetime.now(timezone.utc) if at is None else at
        rates = Rates(match.model.get_prices(when, price_context(tier)))
        if len(_RATES) >= _CACHE_SIZE:
            _RATES.clear()
        _RATES[key] = rates
    return rates
