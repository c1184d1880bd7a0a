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
xAI's ``grok-3-mini-high`` is ``grok-3-mini`` run with more effort, billed by its tokens) is retried without it.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Optional

from ..errors import SSEwireError

__all__ = ["LOCAL_PROVIDERS", "PROVIDER_IDS", "Match", "Rates", "Unpriced", "find", "module", "rates_at", "version"]

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


class Unpriced(SSEwireError, LookupError):
    """No price could be computed: ``reason`` says why (no usage, an unknown model, the table not installed...)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_MODULE: Any = None


def module() -> Any:
    """The ``genai_prices`` module, imported on first use; :class:`Unpriced` when it is not installed."""
    global _MODULE
    if _MODULE is None:
        try:
            import genai_prices
        except ImportError as exc:
            raise Unpriced(
                "the price table is not installed: pip install 'ssewire[prices]' (genai-prices, Python 3.11+)"
            ) from exc
        _MODULE = genai_prices
    return _MODULE


def version() -> str:
    """The table's version: ``genai-prices <version>``."""
    return f"genai-prices {module().__version__}"


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
    if bare != model_ref:
        refs.append(bare)
    plain = _EFFORT_SUFFIX.sub("", bare)
    if plain != bare:
        refs.append(plain)
    return refs


#: Lookups already made (a gateway prices a few models all day), bounded: emptied when it reaches _CACHE_SIZE.
_FOUND: dict[tuple[Optional[str], Optional[str], Optional[str]], Match] = {}
_RATES: dict[tuple[int, Optional[tuple[tuple[str, str], ...]], datetime], Rates] = {}
_CACHE_SIZE = 4096


def find(model_ref: Optional[str], provider: Optional[str], stream_provider: Optional[str]) -> Match:
    """The table's entry for ``model_ref``: at ``provider`` when given (a genai-prices id or an ssewire provider
    name), else at the one ``stream_provider`` implies and then by the model name alone. :class:`Unpriced` when
    there is none."""
    key = (model_ref, provider, stream_provider)
    match = _FOUND.get(key)
    if match is None:
        match = _find(model_ref, provider, stream_provider)
        if len(_FOUND) >= _CACHE_SIZE:
            _FOUND.clear()
        _FOUND[key] = match
    return match


def _find(model_ref: Optional[str], provider: Optional[str], stream_provider: Optional[str]) -> Match:
    if not model_ref:
        raise Unpriced("the stream names no model: pass model=")
    snapshot = module().data_snapshot.get_snapshot()
    if provider is not None:
        providers: list[Optional[str]] = [PROVIDER_IDS.get(provider) or provider]
    elif stream_provider in LOCAL_PROVIDERS:
        raise Unpriced(f"{stream_provider} runs models locally: pass provider= to price it as a hosted model")
    else:
        hint = PROVIDER_IDS.get(stream_provider or "")
        providers = [hint, None] if hint is not None else [None]
        if "/" in model_ref:  # ``vendor/model``: OpenRouter's naming
            providers.append("openrouter")
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
    """One model's rates in force for one request, per token type (each a Decimal per million, tiered prices, or
    None where the model has no rate of its own: the fallbacks are the table's decomposition's); ``web_search``
    and ``request`` per thousand."""

    __slots__ = ("cache_read", "cache_write_1h", "cache_write_5m", "input", "output", "reasoning", "request",
                 "web_search")  # fmt: skip

    def __init__(self, prices: Any) -> None:
        def rate(*keys: str) -> Any:
            for key in keys:
                value = getattr(prices, key, None)
                if value is not None:
                    return value
            return None

        self.input = rate("input_mtok")
        self.cache_read = rate("cache_read_mtok", "input_mtok")
        self.cache_write_5m = rate("cache_write_5m_mtok", "cache_write_mtok", "input_mtok")
        self.cache_write_1h = rate("cache_write_1h_mtok", "cache_write_mtok", "input_mtok")
        self.output = rate("output_mtok")
        self.reasoning = rate("output_reasoning_mtok")  # None: reasoning is billed as output
        self.web_search = rate("web_searches_kcount")
        self.request = rate("requests_kcount")


def rates_at(match: Match, at: Optional[datetime], context: Optional[dict[str, str]]) -> Rates:
    """The model's :class:`Rates` in force at ``at`` (now when None; a naive time is UTC) for the request
    ``context`` (e.g. ``{"service_tier": "priority"}``; applied only to the provider's own models, as the table
    does). Cached by model, context and minute (the table's finest constraint is a time of day)."""
    when = datetime.now(timezone.utc) if at is None else at
    context = context if context and match.own else None
    key = (
        id(match.model),
        None if context is None else tuple(sorted(context.items())),
        when.replace(second=0, microsecond=0),
    )
    rates = _RATES.get(key)
    if rates is None:
        rates = Rates(match.model.get_prices(when, context))
        if len(_RATES) >= _CACHE_SIZE:
            _RATES.clear()
        _RATES[key] = rates
    return rates
