"""What every provider normaliser shares: JSON decoding of framed events, the end-of-stream check, error shape.

A normaliser is a callable ``SSEEvent -> list[Unified]`` holding one stream's state (one instance per stream).
After the last event, ``finish()`` returns what the stream still owes: a stream that never delivered its terminal
event gets an ``error`` event of type ``stream_truncated``, listing the tool calls it left open in
``error["incomplete_tool_calls"]`` (those never get ``tool_call_done``: see :mod:`.tool_calls`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

from .._json import loads_first, loads_retry
from ..events import SSEEvent, Unified, new_event

__all__ = ["DelegatingNormalizer", "Normalizer", "error_payload", "str_or", "truncated_event", "with_incomplete"]


_NOT_JSON = object()


def _retry_loads(data: str) -> Any:
    """The second step of :func:`ssewire._json.loads` after ``loads_first`` rejected ``data``: the decoded value,
    or ``_NOT_JSON``."""
    if loads_retry is None:
        return _NOT_JSON
    try:
        return loads_retry(data)
    except ValueError:
        return _NOT_JSON


def str_or(value: Any, current: Optional[str]) -> Optional[str]:
    """``value`` when it is a string (a provider's optional id/model/status field), else ``current``."""
    return value if type(value) is str else current


def error_payload(inner: Any, default_type: str = "error") -> dict[str, Any]:
    """A unified ``error`` dict from a provider's error object: its fields kept, plus ``type`` and ``message``.

    ``type`` is the provider's error type, else its code or status; ``message`` is always a string.
    """
    if not isinstance(inner, dict):
        return {"type": default_type, "message": "" if inner is None else str(inner)}
    out = dict(inner)
    kind = inner.get("type") or inner.get("status") or inner.get("code") or default_type
    out["type"] = kind if isinstance(kind, str) else str(kind)
    message = inner.get("message")
    out["message"] = message if isinstance(message, str) else ("" if message is None else str(message))
    return out


def truncated_event(
    provider: str,
    expected: str,
    usage: Optional[dict[str, Any]] = None,
    incomplete: Optional[list[dict[str, Any]]] = None,
    detail: str = "",
) -> Unified:
    """The ``error`` event for a stream that ended before its terminal event (``expected`` names it; ``detail``,
    when given, says how it ended). ``incomplete_tool_calls`` lists the calls left open (always present)."""
    message = f"{provider} stream ended before its terminal event ({expected})"
    return Unified(
        "error",
        usage=usage,
        error={
            "type": "stream_truncated",
            "message": f"{message}: {detail}" if detail else message,
            "incomplete_tool_calls": incomplete or [],
        },
    )


def with_incomplete(error: dict[str, Any], incomplete: list[dict[str, Any]]) -> dict[str, Any]:
    """``error`` with ``incomplete_tool_calls`` added when calls were left open by it (unchanged otherwise)."""
    if incomplete:
        error["incomplete_tool_calls"] = incomplete
    return error


class Normalizer:
    """Base class: decodes each event's JSON and hands dicts to :meth:`payload`.

    Non-JSON data becomes ``raw`` (never an exception); ``[DONE]`` goes to :meth:`sentinel`. Subclasses set
    ``self.done = True`` when the terminal event (or an in-stream error) arrives and keep ``self.usage`` as the
    best usage object seen so far, which the truncation error carries.
    """

    provider: ClassVar[str] = ""
    #: Human name of the terminal event, for the truncation message.
    terminal: ClassVar[str] = "terminal event"

    def __init__(self) -> None:
        self.done = False
        self.usage: Optional[dict[str, Any]] = None

    def __call__(self, ev: SSEEvent) -> list[Unified]:
        """The events of one framed event (the per-event hot path: JSON decode, then :meth:`payload`)."""
        data = ev.data
        if data == "[DONE]":
            return self.sentinel(ev)
        try:
            obj = loads_first(data)
        except (ValueError, RecursionError):
            obj = _retry_loads(data)
            if obj is _NOT_JSON:
                return [new_event("raw", {"event": ev.event, "data": data})]
        if type(obj) is not dict:
            return [new_event("raw", {"event": ev.event, "data": obj})]
        return self.payload(obj, ev.event)

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one decoded payload (``event`` is the SSE event name, when the framing had one)."""
        raise NotImplementedError

    def sentinel(self, ev: SSEEvent) -> list[Unified]:
        """The ``[DONE]`` sentinel: swallowed unless a subclass gives it meaning."""
        return []

    def flush(self) -> list[Unified]:
        """Events still owed at end of stream (none by default; never a ``tool_call_done``). Subclasses override."""
        return []

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls open now (started, never closed by the provider), as ``{"id", "name",
        "arguments_raw"}``. Subclasses that track calls override."""
        return []

    def expected_terminal(self) -> str:
        """What the truncation error names as the missing terminal event."""
        return self.terminal

    def finish(self, detail: str = "") -> list[Unified]:
        """End of stream: :meth:`flush`, then a ``stream_truncated`` error (listing the calls left open) unless the
        terminal event was seen. ``detail`` says how the stream ended, for the error message."""
        out = self.flush()
        if not self.done:
            self.done = True
            out.append(
                truncated_event(
                    self.provider, self.expected_terminal(), self.usage, self.incomplete_tool_calls(), detail
                )
            )
        return out


class DelegatingNormalizer(Normalizer):
    """A normaliser that may hand its stream to another one (``delegate``: xAI per endpoint, Gemini to the
    Interactions normaliser, ``auto`` once detected). Once a delegate is set, ``done`` and ``usage`` are the
    delegate's, so the stream glue and the truncation check see one state."""

    def __init__(self) -> None:
        self.delegate: Optional[Normalizer] = None
        self._done = False
        self._usage: Optional[dict[str, Any]] = None
        super().__init__()

    @property
    def done(self) -> bool:
        """True once the terminal event (or an in-stream error) was seen (the delegate's, when there is one)."""
        return self._done if self.delegate is None else self.delegate.done

    @done.setter
    def done(self, value: bool) -> None:
        if self.delegate is None:
            self._done = value
        else:
            self.delegate.done = value

    @property
    def usage(self) -> Optional[dict[str, Any]]:
        """The best usage object seen so far (the delegate's, when there is one)."""
        return self._usage if self.delegate is None else self.delegate.usage

    @usage.setter
    def usage(self, value: Optional[dict[str, Any]]) -> None:
        if self.delegate is None:
            self._usage = value
        else:
            self.delegate.usage = value

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The delegate's open calls."""
        return [] if self.delegate is None else self.delegate.incomplete_tool_calls()

    def expected_terminal(self) -> str:
        """The delegate's terminal event, once there is a delegate."""
        return self.terminal if self.delegate is None else self.delegate.expected_terminal()
