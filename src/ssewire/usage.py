"""One usage model for every provider: :class:`Usage`, built from the provider's own usage object.

Whatever the provider counts, the fields mean the same thing:

- ``input_tokens``: every prompt token, cached ones included (Gemini's tool-use prompt tokens too);
- ``cached_input_tokens``: prompt tokens read from a cache; ``cache_write_tokens``: prompt tokens written to one,
  and where the provider says for how long (Anthropic), ``cache_write_5m_tokens`` / ``cache_write_1h_tokens`` the
  shares written for five minutes and for an hour (``None`` where it does not say: they are billed differently);
- ``output_tokens``: every generated token, reasoning included; ``reasoning_tokens``: the reasoning share
  (``None`` where the provider does not report it, e.g. Ollama);
- ``total_tokens`` = ``input_tokens + output_tokens``, always; ``raw`` is the provider's object, untouched;
- ``partial``: True when the stream ended early, so the counts are the best seen, not final; ``provenance`` says
  the same as ``"reported"`` (the provider's final figure) or ``"partial"``, and a result without usage says
  ``"absent"`` (:attr:`~ssewire.StreamResult.usage_provenance`);
- ``cost``: a cost the provider put in its usage object, in USD: an OpenAI-compatible router's ``usage.cost``
  (OpenRouter), xAI's ``cost_in_usd_ticks`` (1 tick = 1e-10 USD); else None.

Each provider's module says how its usage object maps onto these fields (its rules' ``Recognition.usage_from``);
:meth:`Usage.from_raw` asks them in the registry's order (``ssewire.normalizers.providers``, looked up the first
time a usage object is read: this module names no provider, and nothing registers itself by being imported).
``source`` names the provider whose shape it was; an object no provider recognises keeps ``raw``, has ``source``
``None`` and every count ``None``, never zeros that look like a real answer.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

__all__ = ["Usage", "count", "detail", "usage_counts"]

UsageReader = Callable[[dict[str, Any], bool], Optional["Usage"]]

#: Who reads usage objects: the provider registry's ``usage_from``, looked up on first use (see :func:`_reader`).
_READER: Optional[UsageReader] = None


def _reader() -> UsageReader:
    """The function that turns a provider's usage object into a :class:`Usage` (``reader(raw, partial)``, None for
    a shape no provider has): the registry's ``usage_from``, imported the first time it is needed (the registry
    imports this module, so not at import)."""
    global _READER
    if _READER is None:
        from .normalizers.providers import usage_from

        _READER = usage_from
    return _READER


#: The largest count read (2**53, the largest integer a JSON number holds exactly in JavaScript): beyond it, or
#: below 0, a count is malformed (a 5,000-digit integer summed into a total would not even print).
MAX_COUNT = 2**53


def count(value: Any) -> int:
    """A token count field: the value when it is an int from 0 to :data:`MAX_COUNT`, else 0 (a missing or malformed
    count)."""
    return value if type(value) is int and 0 <= value <= MAX_COUNT else 0


def detail(raw: dict[str, Any], group: str, key: str) -> int:
    """``raw[group][key]`` as a count (0 when either is missing)."""
    details = raw.get(group)
    return count(details.get(key)) if isinstance(details, dict) else 0


class Usage:
    """Token counts with one meaning across providers (see the module docstring)."""

    input_tokens: Optional[int]
    output_tokens: Optional[int]
    cached_input_tokens: Optional[int]
    cache_write_tokens: Optional[int]
    cache_write_5m_tokens: Optional[int]
    cache_write_1h_tokens: Optional[int]
    reasoning_tokens: Optional[int]
    total_tokens: Optional[int]
    raw: Optional[dict[str, Any]]
    partial: bool
    source: Optional[str]

    __slots__ = (
        "cache_write_1h_tokens",
        "cache_write_5m_tokens",
        "cache_write_tokens",
        "cached_input_tokens",
        "input_tokens",
        "output_tokens",
        "partial",
        "raw",
        "reasoning_tokens",
        "source",
        "total_tokens",
    )

    def __init__(
        self,
        input_tokens: Optional[int] = 0,
        output_tokens: Optional[int] = 0,
        *,
        cached_input_tokens: Optional[int] = 0,
        cache_write_tokens: Optional[int] = 0,
        reasoning_tokens: Optional[int] = 0,
        raw: Optional[dict[str, Any]] = None,
        partial: bool = False,
        source: Optional[str] = None,
        cache_write_5m_tokens: Optional[int] = None,
        cache_write_1h_tokens: Optional[int] = None,
    ) -> None:
        _fill(
            self,
            input_tokens,
            output_tokens,
            cached_input_tokens,
            cache_write_tokens,
            reasoning_tokens,
            raw,
            partial,
            source,
            cache_write_5m_tokens,
            cache_write_1h_tokens,
        )

    @classmethod
    def from_raw(cls, raw: dict[str, Any], *, partial: bool = False) -> Usage:
        """The :class:`Usage` a provider's usage object describes: the first provider (in the registry's order)
        that recognises its shape builds it. An unrecognised object keeps ``raw`` with ``source`` None and
        every count None."""
        if isinstance(raw, dict):
            usage = _reader()(raw, partial)
            if usage is not None:
                return usage
        return cls(
            None,
            None,
            cached_input_tokens=None,
            cache_write_tokens=None,
            reasoning_tokens=None,
            raw=raw,
            partial=partial,
        )

    @property
    def provenance(self) -> str:
        """``"reported"``: the provider's final figure; ``"partial"``: the best seen before the stream was cut."""
        return "partial" if self.partial else "reported"

    @property
    def cost(self) -> Optional[float]:
        """The cost the provider reported in its usage object, in USD: ``cost`` (OpenRouter and other
        OpenAI-compatible routers; its BYOK upstream cost added), else xAI's ``cost_in_usd_ticks`` / 1e10; None when
        it reported none. Exact, as a Decimal: :func:`ssewire.cost.reported_cost`."""
        from .cost.reported import reported_cost

        cost = reported_cost(self.raw)
        return None if cost is None else float(cost)

    @property
    def recognised(self) -> bool:
        """True when a provider recognised the usage object (``source`` is set)."""
        return self.source is not None

    def to_dict(self) -> dict[str, Any]:
        """The counts as a dict (``raw`` included)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Usage):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Usage(input_tokens={self.input_tokens}, output_tokens={self.output_tokens}, "
            f"cached_input_tokens={self.cached_input_tokens}, cache_write_tokens={self.cache_write_tokens}, "
            f"cache_write_5m_tokens={self.cache_write_5m_tokens}, cache_write_1h_tokens={self.cache_write_1h_tokens}, "
            f"reasoning_tokens={self.reasoning_tokens}, total_tokens={self.total_tokens}, partial={self.partial}, "
            f"source={self.source!r})"
        )


def _fill(
    usage: Usage,
    input_tokens: Optional[int],
    output_tokens: Optional[int],
    cached_input_tokens: Optional[int],
    cache_write_tokens: Optional[int],
    reasoning_tokens: Optional[int],
    raw: Optional[dict[str, Any]],
    partial: bool,
    source: Optional[str],
    cache_write_5m_tokens: Optional[int],
    cache_write_1h_tokens: Optional[int],
) -> None:
    """Every slot of ``usage`` (the one home of what :class:`Usage` holds; ``total_tokens`` their sum)."""
    usage.input_tokens = input_tokens
    usage.cached_input_tokens = cached_input_tokens
    usage.cache_write_tokens = cache_write_tokens
    usage.cache_write_5m_tokens = cache_write_5m_tokens
    usage.cache_write_1h_tokens = cache_write_1h_tokens
    usage.output_tokens = output_tokens
    usage.reasoning_tokens = reasoning_tokens
    known = input_tokens is not None and output_tokens is not None
    usage.total_tokens = input_tokens + output_tokens if known else None  # type: ignore[operator]
    usage.raw = raw
    usage.partial = partial
    usage.source = source


_new = object.__new__


def usage_counts(
    prompt: Optional[int],
    output: Optional[int],
    cached: Optional[int],
    written: Optional[int],
    reasoning: Optional[int],
    raw: Optional[dict[str, Any]],
    partial: bool,
    source: Optional[str],
    written_5m: Optional[int] = None,
    written_1h: Optional[int] = None,
) -> Usage:
    """``Usage(prompt, output, cached_input_tokens=cached, cache_write_tokens=written, reasoning_tokens=reasoning,
    raw=raw, partial=partial, source=source, cache_write_5m_tokens=written_5m, cache_write_1h_tokens=written_1h)``
    built from positional arguments, without the constructor's keyword parsing (about half its cost): what the
    providers' usage readers make once per usage object. The same object, slot for slot."""
    usage: Usage = _new(Usage)
    _fill(usage, prompt, output, cached, written, reasoning, raw, partial, source, written_5m, written_1h)
    return usage
