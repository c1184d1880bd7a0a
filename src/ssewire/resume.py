"""Resuming a dropped stream: the cursor to reconnect with, and dropping what the new connection replays.

:class:`ResumeCursor` holds what a provider needs to continue a stream: the OpenAI/xAI Responses ``response_id``
and last ``sequence_number`` (for ``starting_after``), the SSE last event ID (``Last-Event-ID``; Gemini
Interactions ``last_event_id``). :class:`ReplayFilter` drops the framed events a resumed connection repeats, so
the consumer sees each event once. :func:`iter_resumable` does the whole loop for a caller that can reopen the
stream. Providers without a cursor (Anthropic, Gemini generateContent) cannot resume: restart the request.
"""

from __future__ import annotations

import hashlib
from typing import Any, Optional

from ._json import loads
from .events import SSEEvent

__all__ = ["ReplayFilter", "ResumeCursor", "is_number_id"]

_RECENT_IDS = 1024  # non-numeric event ids remembered for replay detection


def is_number_id(event_id: str) -> bool:
    """True for an id made of ASCII digits only, short enough to compare as an integer."""
    return event_id.isascii() and event_id.isdigit() and len(event_id) < 19


class ResumeCursor:
    """Where a stream stopped: ``sequence`` (last ``sequence_number`` delivered), ``response_id`` (the response
    or interaction id), ``last_event_id`` (the SSE ``id`` last dispatched) and ``last_id_events`` (how many
    delivered events carried it: the one that set it and those after it that had none of their own; None when
    not known, e.g. a cursor made by hand, and then every replayed event with that id is taken as delivered)."""

    __slots__ = ("last_event_id", "last_id_events", "provider", "response_id", "sequence")

    def __init__(
        self,
        provider: str,
        response_id: Optional[str] = None,
        sequence: Optional[int] = None,
        last_event_id: Optional[str] = None,
        last_id_events: Optional[int] = None,
    ) -> None:
        self.provider = provider
        self.response_id = response_id
        self.sequence = sequence
        self.last_event_id = last_event_id if last_event_id else None  # (an empty id is none: WHATWG)
        self.last_id_events = last_id_events

    @property
    def resumable(self) -> bool:
        """True when the provider can continue from here (a sequence number or an event id is known)."""
        return self.sequence is not None or self.last_event_id is not None

    def query_params(self) -> dict[str, Any]:
        """The query parameters that resume the stream: ``starting_after`` (OpenAI Responses) and/or
        ``last_event_id`` (Gemini Interactions); send ``last_event_id`` as the ``Last-Event-ID`` header for plain
        SSE servers."""
        params: dict[str, Any] = {}
        if self.sequence is not None:
            params["starting_after"] = self.sequence
        if self.last_event_id is not None:
            params["last_event_id"] = self.last_event_id
        return params

    def headers(self) -> dict[str, str]:
        """The request headers that resume a plain SSE stream: ``Last-Event-ID`` when an event id is known."""
        return {} if self.last_event_id is None else {"Last-Event-ID": self.last_event_id}

    def __repr__(self) -> str:
        return (
            f"ResumeCursor(provider={self.provider!r}, response_id={self.response_id!r}, "
            f"sequence={self.sequence!r}, last_event_id={self.last_event_id!r}, "
            f"last_id_events={self.last_id_events!r})"
        )


class ReplayFilter:
    """Decides, event by event, whether a resumed connection is still replaying what was delivered.

    An event is a replay when its payload's ``sequence_number`` is at most the cursor's (an event with one is
    decided by it alone), or when its SSE id is below the cursor's (numeric ids) or was delivered recently (other
    ids), or is the cursor's own id and fewer events with it have been replayed than were delivered
    (``last_id_events``: a server that puts ids on some events only replays the ones after the last id with that id
    too). Replays form a prefix of the new connection: the first event that is not one disarms the filter, and
    everything after it passes unchecked.
    """

    __slots__ = ("_last", "_last_left", "_numeric_id", "_recent", "_sequence", "armed")

    def __init__(self, cursor: ResumeCursor, recent_ids: Optional[list[str]] = None) -> None:
        self._sequence = cursor.sequence
        last = self._last = cursor.last_event_id
        self._last_left = cursor.last_id_events  # replays of the cursor's own id still to come (None: any number)
        self._numeric_id = int(last) if last is not None and is_number_id(last) else None
        self._recent = set(recent_ids or ())  # (each as id_key keeps it)
        if last is not None:
            self._recent.add(id_key(last))
        self.armed = self._sequence is not None or bool(self._recent)

    def is_replay(self, event: SSEEvent) -> bool:
        """True to drop ``event``; once an event is kept the filter disarms."""
        if not self.armed:
            return False
        if self._sequence is not None and '"sequence_number"' in event.data:
            try:
                payload = loads(event.data)
            except (ValueError, RecursionError):
                payload = None
            seq = payload.get("sequence_number") if isinstance(payload, dict) else None
            if type(seq) is int:  # a sequence number decides alone: it is exact, an SSE id may be inherited
                if seq <= self._sequence:
                    return True
                self.armed = False
                return False
        eid = event.id
        if eid is not None and self._recent:
            if eid == self._last:
                left = self._last_left
                if left is None:
                    return True
                if left > 0:
                    self._last_left = left - 1
                    return True
            elif self._numeric_id is not None and is_number_id(eid):
                if int(eid) <= self._numeric_id:
                    return True
            elif id_key(eid) in self._recent:
                return True
        self.armed = False
        return False


#: An id longer than this is remembered by its digest (1,024 ids of up to ``max_buffer`` bytes each would hold a
#: thousand times the one event memory is bounded by).
_ID_KEPT_WHOLE = 256


def id_key(event_id: str) -> str:
    """How a recent non-numeric id is remembered: itself, or a long one by its SHA-256 digest."""
    if len(event_id) <= _ID_KEPT_WHOLE:
        return event_id
    return "sha256:" + hashlib.sha256(event_id.encode("utf-8", "surrogatepass")).hexdigest()


def recent_id_window() -> int:
    """How many non-numeric event ids are remembered for replay detection."""
    return _RECENT_IDS
