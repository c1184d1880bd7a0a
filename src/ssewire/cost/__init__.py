"""What a stream cost: :func:`price` turns a :class:`~ssewire.StreamResult` (or a :class:`~ssewire.usage.Usage`)
into a :class:`Cost` in exact USD.

Extra ``prices`` (``pip install 'ssewire[prices]'``: genai-prices, pydantic's maintained price table, bundled with
the package and never fetched at run time; Python 3.11+). The provider's own figure, where the stream carries one
(OpenRouter's ``usage.cost``, xAI's ``cost_in_usd_ticks``), needs no table: it is read on every Python.

- :func:`price` -> :class:`Cost` or None (``strict=True``: :class:`Unpriced` with the ``reason``);
- :func:`reported_cost`: the provider's figure from its usage object;
- :mod:`ssewire.cost.table`: the lookup (which provider and model a name matches) and the table's version.
"""

from __future__ import annotations

from .model import COMPONENTS, Cost
from .pricing import price
from .reported import reported_cost
from .table import Unpriced

__all__ = ["COMPONENTS", "Cost", "Unpriced", "price", "reported_cost"]
