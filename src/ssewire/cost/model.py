""":class:`Cost`: what one stream cost, in exact USD, component by component."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Optional, Union

__all__ = ["COMPONENTS", "Cost"]

#: The components of a computed cost, in the order a bill lists them.
COMPONENTS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning", "other")
_NAMES = frozenset(COMPONENTS)


class Cost:
    """What a stream cost in USD (:class:`~decimal.Decimal`, exact: no float rounding anywhere).

    Components (each None when the cost was not computed, only reported):

    - ``input``: prompt tokens read neither from nor into a cache, at the input rate;
    - ``cache_read``: prompt tokens read from a cache; ``cache_write_5m`` / ``cache_write_1h``: prompt tokens
      written to one for five minutes / an hour (a write whose duration the provider does not say is a 5-minute
      one, the default everywhere);
    - ``output``: generated tokens, reasoning included unless the model bills reasoning apart, then ``reasoning``
      holds that share;
    - ``other``: what the table prices besides tokens (per-request fees, web searches) and any rate this module
      does not split out, so the components always add up to ``computed``.

    Figures: ``computed`` (the components' sum, from the price table), ``reported`` (the provider's own figure in
    the stream: OpenRouter's ``usage.cost``, xAI's ``cost_in_usd_ticks``), ``total`` (``reported`` when there is
    one, else ``computed``), ``source`` (``"reported"`` or ``"computed"``) and ``difference`` (``reported -
    computed`` when both exist: what an audit looks for).

    Context: ``partial`` (the usage was the best seen before the stream was cut: a lower bound, not a bill),
    ``model`` / ``provider`` (the table's ids of what was matched), ``model_ref`` (the name looked up),
    ``service_tier`` (the tier the prices were chosen for, when the stream named one), ``price_version`` (the
    table: ``genai-prices <version>``) and ``reason`` (why there is no computed figure, when there is none).
    """

    __slots__ = (*COMPONENTS, "computed", "model", "model_ref", "partial", "price_version", "provider", "reason",
                 "reported", "service_tier")  # fmt: skip

    def __init__(
        self,
        *,
        components: Union[dict[str, Decimal], tuple[Decimal, ...], None] = None,
        reported: Optional[Decimal] = None,
        partial: bool = False,
        model: Optional[str] = None,
        provider: Optional[str] = None,
        model_ref: Optional[str] = None,
        service_tier: Optional[str] = None,
        price_version: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> None:
        if components is None and reported is None:
            raise ValueError("a Cost needs computed components or a reported figure")
        values: tuple[Optional[Decimal], ...] = (None,) * len(COMPONENTS)
        computed: Optional[Decimal] = None
        if isinstance(components, tuple) and len(components) == len(COMPONENTS):  # the amounts, in order
            values = components
            computed = sum(components, Decimal(0))
        elif isinstance(components, dict) and len(components) == len(COMPONENTS) and components.keys() <= _NAMES:
            values = tuple(components[name] for name in COMPONENTS)
            computed = sum(components.values(), Decimal(0))
        elif components is not None:
            raise ValueError(f"a Cost's components are {COMPONENTS} (a dict by name or a tuple in order)")
        (
            self.input,
            self.cache_read,
            self.cache_write_5m,
            self.cache_write_1h,
            self.output,
            self.reasoning,
            self.other,
        ) = values
        self.computed = computed
        self.reported = reported
        self.partial = partial
        self.model = model
        self.provider = provider
        self.model_ref = model_ref
        self.service_tier = service_tier
        self.price_version = price_version
        self.reason = reason

    @property
    def total(self) -> Decimal:
        """``reported`` when the provider reported a figure, else ``computed``."""
        return self.reported if self.reported is not None else self.computed  # type: ignore[return-value]

    @property
    def source(self) -> str:
        """``"reported"`` (the provider's own figure) or ``"computed"`` (from the price table)."""
        return "reported" if self.reported is not None else "computed"

    @property
    def difference(self) -> Optional[Decimal]:
        """``reported - computed`` when both exist, else None."""
        if self.reported is None or self.computed is None:
            return None
        return self.reported - self.computed

    def to_dict(self) -> dict[str, Any]:
        """Every figure and field, Decimals as strings (exact in JSON)."""
        out: dict[str, Any] = {}
        for name in (*COMPONENTS, "computed", "reported", "total", "difference"):
            value = getattr(self, name)
            out[name] = None if value is None else str(value)
        out["source"] = self.source
        for name in ("partial", "model", "provider", "model_ref", "service_tier", "price_version", "reason"):
            out[name] = getattr(self, name)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cost):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [f"total={self.total}", f"source={self.source!r}"]
        if self.computed is not None:
            parts += [f"{name}={getattr(self, name)}" for name in COMPONENTS if getattr(self, name)]
        if self.reported is not None and self.computed is not None:
            parts.append(f"difference={self.difference}")
        parts.append(f"model={self.model or self.model_ref!r}")
        if self.partial:
            parts.append("partial=True")
        return f"Cost({', '.join(parts)})"
