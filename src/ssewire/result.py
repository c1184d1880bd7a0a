"""The finished result of a stream, built incrementally from unified events.

``Accumulator().add(event)`` for each :class:`~ssewire.Unified` event, then ``.result`` gives a
:class:`StreamResult`. Building is linear in the stream: text parts and argument fragments are joined once.

The response id and model are the normaliser's (:meth:`Accumulator.adopt_meta`: ``collect(iter_unified(...))``, the
tap and the batch rows read them so). Events handed over without their normaliser (a plain list) are read for them
instead, by the provider whose payload the first recognised one is: recognition runs until a provider claims a
payload, then only that provider's ``meta_from`` reads the next ones, until the id and model are known.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Optional

from .citations import Citation
from .usage import Usage

if TYPE_CHECKING:
    from ._decoding_py import Accumulator, collect
    from .cost import Cost

__all__ = ["DELTA_KINDS", "Accumulator", "StreamResult", "ToolCall", "collect"]


#: The events that carry a piece of the answer (what time-to-first-token and the gaps between tokens measure).
DELTA_KINDS = frozenset({"text_delta", "reasoning_delta", "tool_call_start", "tool_call_delta"})


class ToolCall:
    """One tool call: ``arguments`` parsed, ``arguments_raw`` the JSON string they came from (``None`` where the
    provider sent an object), ``server`` True when the provider executed it itself.

    A call whose argument string is not a JSON object has ``arguments`` None and ``arguments_error`` saying why.
    An incomplete call (never closed by the provider) has ``complete`` False, ``arguments`` None and
    ``arguments_raw`` the text that arrived.
    """

    __slots__ = ("_fragments", "arguments", "arguments_error", "arguments_raw", "complete", "id", "name", "server")

    def __init__(
        self,
        id: Optional[str],  # noqa: A002
        name: Optional[str],
        arguments: Optional[dict[str, Any]] = None,
        arguments_raw: Optional[str] = None,
        server: bool = False,
        *,
        arguments_error: Optional[str] = None,
        complete: bool = True,
    ) -> None:
        self.id = id
        self.name = name
        self.arguments = arguments
        self.arguments_raw = arguments_raw
        self.server = server
        self.arguments_error = arguments_error
        self.complete = complete
        self._fragments: list[str] = []

    def _key(self) -> tuple[Any, ...]:
        return (
            self.id,
            self.name,
            self.arguments,
            self.arguments_raw,
            self.server,
            self.arguments_error,
            self.complete,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolCall):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """The call as a JSON-ready dict."""
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "arguments_raw": self.arguments_raw,
            "arguments_error": self.arguments_error,
            "server": self.server,
            "complete": self.complete,
        }

    def __repr__(self) -> str:
        extra = "" if self.arguments_error is None else f", arguments_error={self.arguments_error!r}"
        extra += "" if self.complete else ", complete=False"
        return (
            f"ToolCall(id={self.id!r}, name={self.name!r}, arguments={self.arguments!r}, "
            f"arguments_raw={self.arguments_raw!r}, server={self.server!r}{extra})"
        )


class StreamResult:
    """Everything a stream said, in one object."""

    __slots__ = (
        "citations",
        "encrypted_reasoning",
        "error",
        "incomplete_tool_calls",
        "last_sequence",
        "model",
        "raw_stop_reason",
        "reasoning",
        "response_id",
        "service_tier",
        "signatures",
        "stop_reason",
        "text",
        "tool_calls",
        "usage",
    )

    def __init__(self) -> None:
        self.text = ""
        self.reasoning = ""
        self.tool_calls: list[ToolCall] = []  # closed by the provider (``tool_call_done``), in start order
        self.incomplete_tool_calls: list[ToolCall] = []  # started, never closed: never run these
        self.stop_reason: Optional[str] = None
        self.raw_stop_reason: Optional[str] = None
        self.usage: Optional[Usage] = None
        self.error: Optional[dict[str, Any]] = None
        self.signatures: list[str] = []
        #: each finished reasoning item's encrypted reasoning (the Responses API's ``encrypted_content``), in order:
        #: what a client sends back to continue the reasoning
        self.encrypted_reasoning: list[str] = []
        self.citations: list[Citation] = []  # every provider's citations, in stream order (see ssewire.citations)
        self.response_id: Optional[str] = None
        self.model: Optional[str] = None
        self.last_sequence: Optional[int] = None  # resume cursor: the last sequence_number seen
        self.service_tier: Optional[str] = None  # the tier the provider says served the request (it sets prices)

    @property
    def client_tool_calls(self) -> list[ToolCall]:
        """Closed calls the client must execute (``server`` false); incomplete calls are never among them."""
        return [c for c in self.tool_calls if not c.server]

    @property
    def server_tool_calls(self) -> list[ToolCall]:
        """Calls the provider executed itself."""
        return [c for c in self.tool_calls if c.server]

    @property
    def usage_provenance(self) -> str:
        """``"reported"`` (the provider's final usage), ``"partial"`` (the best seen before the stream was cut) or
        ``"absent"`` (the stream reported none)."""
        return "absent" if self.usage is None else self.usage.provenance

    @property
    def cost(self) -> Optional[float]:
        """The cost the provider reported in the stream's usage (see :attr:`Usage.cost`), else None. The whole
        cost, computed from a price table and checked against this figure, is :meth:`price`'s."""
        return None if self.usage is None else self.usage.cost

    def price(
        self,
        model: Optional[str] = None,
        provider: Optional[str] = None,
        at: Optional[datetime] = None,
        *,
        strict: bool = False,
    ) -> Optional[Cost]:
        """What the stream cost, component by component in exact USD: :func:`ssewire.cost.price` of this result
        (the price table is the extra ``prices``; without it only a provider-reported figure is known). None when
        the stream cannot be priced (``strict=True``: :class:`~ssewire.cost.Unpriced` says why)."""
        from .cost import price

        return price(self, model, provider, at, strict=strict)

    @property
    def last_signature(self) -> Optional[str]:
        """The most recent reasoning signature, or None."""
        return self.signatures[-1] if self.signatures else None

    def to_dict(self, *, with_raw: bool = True) -> dict[str, Any]:
        """The result as a JSON-ready dict: every field, calls and citations as dicts, ``usage`` as
        :meth:`Usage.to_dict` (``raw`` usage and citation objects left out unless ``with_raw``)."""
        usage = None if self.usage is None else self.usage.to_dict()
        if usage is not None and not with_raw:
            del usage["raw"]
        return {
            "text": self.text,
            "reasoning": self.reasoning,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "incomplete_tool_calls": [call.to_dict() for call in self.incomplete_tool_calls],
            "stop_reason": self.stop_reason,
            "raw_stop_reason": self.raw_stop_reason,
            "usage": usage,
            "usage_provenance": self.usage_provenance,
            "cost": self.cost,
            "error": self.error,
            "signatures": list(self.signatures),
            "encrypted_reasoning": list(self.encrypted_reasoning),
            "citations": [citation.to_dict(with_raw=with_raw) for citation in self.citations],
            "response_id": self.response_id,
            "model": self.model,
            "last_sequence": self.last_sequence,
            "service_tier": self.service_tier,
        }

    def __repr__(self) -> str:
        return (
            f"StreamResult(text={self.text!r}, reasoning={self.reasoning!r}, tool_calls={self.tool_calls!r}, "
            f"stop_reason={self.stop_reason!r}, raw_stop_reason={self.raw_stop_reason!r}, usage={self.usage!r}, "
            f"error={self.error!r})"
        )


def __getattr__(name: str) -> Any:
    """:class:`Accumulator` and :func:`collect`, the per-stream machinery's (:mod:`ssewire._decoding`, compiled where
    it is built): imported on first use, as its twins import this module's classes."""
    if name in ("Accumulator", "collect"):
        from . import _decoding

        return getattr(_decoding, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
