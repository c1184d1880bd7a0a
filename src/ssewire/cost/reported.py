"""The cost a provider put in its own usage object, as an exact :class:`~decimal.Decimal` in USD.

- OpenRouter (and OpenAI-compatible routers that copy it): ``usage.cost``, in USD; for a request made with the
  caller's own provider key (``is_byok``) that is only the router's fee, and ``cost_details.upstream_inference_cost``
  (what the upstream provider charged) is added to it, so the figure is always what the request cost in all.
- Perplexity: ``usage.cost``, an object of the parts of the figure, its ``total_cost`` in USD.
- xAI: ``usage.cost_in_usd_ticks``, an integer of 1e-10 USD ticks.

A number the JSON decoder read as a float is taken by its shortest repr (``0.00045`` stays ``0.00045``, not the
binary expansion); a bool, a negative or a non-finite value is no figure.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Optional

__all__ = ["TICKS_PER_USD", "reported_cost"]

#: xAI: 1 tick = 1e-10 USD.
TICKS_PER_USD = 10_000_000_000


def _amount(value: Any) -> Optional[Decimal]:
    """``value`` as a finite, non-negative Decimal, else None."""
    if type(value) is int:
        amount = Decimal(value)
    elif type(value) is float:
        amount = Decimal(repr(value))
    else:
        return None
    return amount if amount.is_finite() and amount >= 0 else None


def reported_cost(raw: Any) -> Optional[Decimal]:
    """The USD figure a provider's usage object ``raw`` reports (see the module docstring), or None when it
    reports none."""
    if not isinstance(raw, dict):
        return None
    cost = raw.get("cost")
    if type(cost) is dict:  # Perplexity: the parts and their total
        return _amount(cost.get("total_cost"))
    if cost is not None:
        cost = _amount(cost)
    if cost is not None:
        details = raw.get("cost_details")
        if raw.get("is_byok") is True and isinstance(details, dict):
            upstream = _amount(details.get("upstream_inference_cost"))
            if upstream is not None:
                cost += upstream
        return cost
    ticks = raw.get("cost_in_usd_ticks")
    if type(ticks) is int and ticks >= 0:
        return Decimal(ticks) / TICKS_PER_USD
    return None
