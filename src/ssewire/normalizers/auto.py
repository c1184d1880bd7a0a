"""``provider="auto"``: the provider and API are recognised from the first payloads, then one normaliser runs.

Recognised shapes: Gemini Interactions (``event_type``), Gemini generateContent (``candidates``,
``usageMetadata``, ``promptFeedback``), OpenAI/xAI Responses (``type`` ``response.*``), Anthropic Messages
(Anthropic event types), Chat Completions chunks (``object: chat.completion.chunk`` or ``choices``). An error
payload that could be any provider's is held (at most a few) until a recognisable payload arrives, then replayed
to that provider's normaliser; if none arrives its ``error`` events are emitted at the end. An AWS event-stream
exception or error message (only Bedrock sends that framing) is Bedrock's, whatever comes first. A JSON payload that
matches no provider raises :class:`~ssewire.errors.DetectionError`: detection never guesses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from ..errors import DetectionError
from ..events import SSEEvent, Unified, new_event
from ._fast.bedrock_chunks_py import FAILED as _FAILED
from .common import truncated_event
from .contract import DelegatingNormalizer, Normalizer, not_a_payload
from .providers import ENTRIES, detect_provider, error_provider

if TYPE_CHECKING:
    from ..result import Accumulator

__all__ = ["AutoNormalizer", "detect_provider"]

_MAX_HELD = 8
_CLASSES = {entry.name: entry.cls for entry in ENTRIES}


class AutoNormalizer(DelegatingNormalizer):
    """Detects the provider from the first recognisable payload and hands every event to its normaliser."""

    provider = "auto"
    terminal = "terminal event"

    def __init__(self) -> None:
        super().__init__()
        self._held: list[tuple[dict[str, Any], Optional[str]]] = []  # error payloads seen before detection

    @property
    def detected(self) -> Optional[str]:
        """The provider recognised so far (None before the first recognisable payload)."""
        return None if self.delegate is None else self.delegate.provider

    def settled(self) -> Optional[Normalizer]:
        """The recognised provider's normaliser (every later event is its own); None before."""
        return self.delegate

    def normalize(self, events: Sequence[SSEEvent]) -> list[Unified]:
        """Decode events until the provider is recognised, then hand the rest to its normaliser."""
        inner = self.delegate
        if inner is not None:
            return inner.normalize(events)
        out: list[Unified] = []
        for index, ev in enumerate(events):
            if getattr(ev, "message_type", None) in _FAILED:  # an event-stream exception first: only Bedrock frames so
                out += self._adopt("bedrock-converse")  # (which reads it as bedrock-anthropic does)
                return out + self.delegate.normalize(events[index:])  # type: ignore[union-attr]  # (just set)
            out += self.decoded(ev)  # decode, then payload()
            inner = self.delegate
            if inner is not None:
                rest = events[index + 1 :]
                if rest:
                    out += inner.normalize(rest)
                break
        return out

    def normalize_into(self, events: Sequence[SSEEvent], accumulator: Accumulator) -> None:
        """Once the provider is recognised, its normaliser's :meth:`normalize_into`."""
        inner = self.delegate
        if inner is None:
            super().normalize_into(events, accumulator)
        else:
            inner.normalize_into(events, accumulator)

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Before detection: find the provider (holding bare errors), then replay what was held to it."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        inner = self.delegate
        if inner is not None:
            return inner.payload(obj, event)
        if not obj:  # a keep-alive (``event: ping`` + ``data: {}``): nothing to tell the provider by, nothing to hold
            return [new_event("raw", obj)]
        name = detect_provider(obj, event)
        if name is None:
            if len(self._held) >= _MAX_HELD:
                raise DetectionError("only error payloads so far: cannot tell which provider sent the stream")
            self._held.append((obj, event))
            return []
        return self._adopt(name) + self.delegate.payload(obj, event)  # type: ignore[union-attr]  # (just set)

    def frame(self, message: Union[str, bytes, bytearray, dict[str, Any]]) -> list[Unified]:
        """One message framed by the caller: the recognised provider's own ``frame`` (boto3's dicts are keyed by
        their event names: Bedrock's reads them), recognised from it when it is the first decoded object."""
        inner = self.delegate
        if inner is None and isinstance(message, dict) and message:
            name = detect_provider(message)
            if name is not None:
                return self._adopt(name) + self.delegate.frame(message)  # type: ignore[union-attr]  # (just set)
        return super().frame(message) if inner is None else inner.frame(message)

    def _adopt(self, name: str) -> list[Unified]:
        """Hand the stream to provider ``name``'s normaliser: the events of the payloads held until then."""
        inner = self.delegate = _CLASSES[name]()
        out: list[Unified] = []
        for held, held_event in self._held:
            out += inner.payload(held, held_event)
        self._held = []
        return out

    def flush(self) -> list[Unified]:
        if self.delegate is not None:
            return self.delegate.flush()
        if not self._held:
            return []
        # only errors came: read them as the provider whose error shape they have
        inner = _CLASSES[error_provider(self._held[0][0])]()
        out: list[Unified] = []
        for held, held_event in self._held:
            out += inner.payload(held, held_event)
        self._held = []
        self._done = True
        return out

    def finish(self, detail: str = "") -> list[Unified]:
        if self.delegate is not None:
            return self.delegate.finish(detail)
        out = self.flush()
        if not self._done:
            self._done = True
            out.append(truncated_event("auto", "any payload", detail=detail))
        return out
