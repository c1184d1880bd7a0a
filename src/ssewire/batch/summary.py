"""Result rows in, a batch's totals out: streams, errors by type, bytes, and per provider and model the streams,
errors, summed tokens (a None count adds nothing), the summed cost in USD and how many streams it prices (the rest
had no usage or a model the price table lacks: their cost is unknown, not 0). :meth:`Summary.to_dict` is the
``--summary-json`` document's core, :meth:`Summary.text` what ``ssewire batch`` prints."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Optional

from . import COLUMNS

__all__ = ["TOKENS", "Summary"]

#: The token counts summed per provider and model.
TOKENS = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens")

_AT = {name: index for index, (name, _) in enumerate(COLUMNS)}
_PROVIDER, _MODEL, _ERROR, _BYTES = _AT["provider"], _AT["model"], _AT["error_type"], _AT["bytes"]
_COST = _AT["cost_usd"]
_TOKEN_AT = [_AT[name] for name in TOKENS]
_HEADER = ("provider", "model", "streams", "errors", "input", "output", "cached", "reasoning", "priced", "cost_usd")
_FIELDS = ("streams", "errors", *TOKENS, "priced_streams", "cost_usd")


class Summary:
    """Totals over the rows given to :meth:`add` (rows: the values of ``COLUMNS``, in order)."""

    def __init__(self) -> None:
        self.streams = 0
        self.bytes = 0
        self.errors: Counter[str] = Counter()
        # (provider, model) -> [streams, errors, *TOKENS sums, priced streams, cost in USD]
        self.groups: dict[tuple[Optional[str], Optional[str]], list[Any]] = {}

    def add(self, rows: Iterable[tuple[Any, ...]]) -> None:
        for row in rows:
            self.streams += 1
            self.bytes += row[_BYTES] or 0
            error = row[_ERROR]
            key = (row[_PROVIDER], row[_MODEL])
            sums = self.groups.get(key)
            if sums is None:
                sums = self.groups[key] = [0] * (2 + len(TOKENS)) + [0, 0.0]
            sums[0] += 1
            if error is not None:
                self.errors[error] += 1
                sums[1] += 1
            for slot, at in enumerate(_TOKEN_AT, 2):
                sums[slot] += row[at] or 0
            cost = row[_COST]
            if cost is not None:
                sums[-2] += 1
                sums[-1] += cost

    def to_dict(self, seconds: float) -> dict[str, Any]:
        """The totals as JSON-ready values; rates are per second of ``seconds`` (MB: 10**6 bytes)."""
        return {
            "streams": self.streams,
            "errors": sum(self.errors.values()),
            "errors_by_type": dict(self.errors.most_common()),
            "bytes": self.bytes,
            "seconds": round(seconds, 3),
            "streams_per_s": round(self.streams / seconds, 1) if seconds > 0 else None,
            "mb_per_s": round(self.bytes / seconds / 1e6, 2) if seconds > 0 else None,
            "by_provider_model": [
                {"provider": provider, "model": model, **dict(zip(_FIELDS, sums))}
                for (provider, model), sums in self._sorted_groups()
            ],
        }

    def text(self, seconds: float) -> str:
        """A few lines for people: the totals and rates, the errors by type, a table per provider and model."""
        rate = f"{self.streams / seconds:,.0f} streams/s, {self.bytes / seconds / 1e6:,.1f} MB/s" if seconds > 0 else ""
        lines = [f"{self.streams:,} streams, {self.bytes / 1e6:,.1f} MB in {seconds:.1f} s ({rate})"]
        errors = ", ".join(f"{kind} {count:,}" for kind, count in self.errors.most_common())
        lines.append(f"{sum(self.errors.values()):,} errors" + (f": {errors}" if errors else ""))
        table = [_HEADER] + [
            (provider or "-", model or "-", *(f"{count:,}" for count in sums[:-1]), f"{sums[-1]:,.6f}")
            for (provider, model), sums in self._sorted_groups()
        ]
        widths = [max(len(cells[column]) for cells in table) for column in range(len(_HEADER))]
        for cells in table if len(table) > 1 else ():
            left = [cell.ljust(width) for cell, width in zip(cells[:2], widths)]
            right = [cell.rjust(width) for cell, width in zip(cells[2:], widths[2:])]
            lines.append("  ".join(left + right).rstrip())
        return "\n".join(lines)

    def _sorted_groups(self) -> list[tuple[tuple[Optional[str], Optional[str]], list[Any]]]:
        """Most streams first, then by provider and model (None last)."""
        return sorted(self.groups.items(), key=_most_streams_first)


def _most_streams_first(item: tuple[tuple[Optional[str], Optional[str]], list[Any]]) -> tuple[int, str, str]:
    (provider, model), sums = item
    return -sums[0], provider or "\uffff", model or "\uffff"
