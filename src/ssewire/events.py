"""Event types: :class:`Unified` (one normalised event) and :class:`SSEEvent` (one framed event).

Both use ``__slots__``: one of each is created per event on the hot path. :data:`SSEEvent` is the class of the
events the active scanner yields -- the compiled one where it is built, else the pure-Python twin's (the two have
the same attributes, equality, repr and ``json()``) -- so ``isinstance(event, ssewire.events.SSEEvent)`` holds for
every event ``ssewire`` frames, and ``ssewire.SSEEvent`` is this same class.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from ._json import loads
from ._scan import (
    SSEEvent,  # the active implementation's class (see the module docstring)
    Utf8Event,  # its events whose data is held as UTF-8 until read (see _scan.utf8_event)
)
from .names import UnifiedType, literal_values

__all__ = [
    "LazyPayload",
    "SSEEvent",
    "Unified",
    "UNIFIED_TYPES",
    "UnifiedType",
    "Utf8Event",
    "new_done",
    "new_event",
    "new_tool_event",
    "new_usage",
]

#: Every value ``Unified.type`` can take (the values of :data:`~ssewire.names.UnifiedType`).
UNIFIED_TYPES = frozenset(literal_values(UnifiedType))


_UNIFIED_DEFAULTS: dict[str, Any] = {
    "text": "",
    "tool_call_id": None,
    "tool_name": None,
    "arguments_delta": "",
    "arguments": None,
    "usage": None,
    "stop_reason": None,
    "error": None,
    "sequence": None,
    "raw": None,
    "raw_stop_reason": None,
    "server": False,
    "signature": None,
    "arguments_raw": None,
    "arguments_error": None,
    "citations": None,
    "encrypted_reasoning": None,
}


class Unified:
    """One provider-neutral stream event.

    ``type`` is one of :data:`UNIFIED_TYPES`. Fields that do not apply to a type keep their defaults.

    - ``text``: the text of a ``text_delta`` / ``reasoning_delta``.
    - ``tool_call_id``, ``tool_name``: identify the call on every ``tool_call_*`` event (parallel calls never share
      an id); ``server`` is ``True`` for calls the provider executes itself (web search, code execution, MCP ...).
    - ``arguments_delta``: a fragment of the argument JSON string (``tool_call_delta``).
    - ``arguments``: the parsed arguments on ``tool_call_done`` (``{}`` for an empty argument string) and
      ``arguments_raw`` the argument string they were parsed from (``None`` where the provider sent an object).
      When that string is not a JSON object, ``arguments`` is ``None`` and ``arguments_error`` says why.
      ``tool_call_done`` comes only for calls the provider closed: a call cut off by the end of the stream is
      listed in the ``stream_truncated`` error's ``incomplete_tool_calls`` instead.
    - ``usage``: the provider's usage object (cumulative, merged where the provider splits it) on ``usage``;
      ``error``: ``{"type", "message", ...}`` on ``error``.
    - ``stop_reason``: the unified stop reason on ``done`` (``end``, ``max_tokens``, ``tool_use``,
      ``stop_sequence``, ``refusal``, ``incomplete``, ``failed``, ``cancelled``, ``other``) and
      ``raw_stop_reason`` the provider's own value.
    - ``sequence``: the provider's ordering cursor (OpenAI ``sequence_number``) when it has one.
    - ``signature``: an opaque reasoning signature carried by this event (Gemini ``thoughtSignature``, Anthropic
      ``signature_delta``, Interactions ``thought_signature``); these must be echoed back verbatim.
    - ``citations``: the :class:`~ssewire.citations.Citation` objects this event brought (a list), else ``None``;
      they ride on the provider event that carried them (mostly ``raw``), never on a ``text_delta``.
    - ``encrypted_reasoning``: a finished reasoning item's encrypted reasoning (the Responses API's
      ``encrypted_content``, OpenAI's and xAI's), on the ``raw`` event of that item: sent back verbatim on the
      next turn, as a signature is (it is no signature: it holds the reasoning itself).
    - ``raw``: the provider's decoded payload this event came from.
    """

    __slots__ = ("type", *(name if name != "raw" else "_raw" for name in _UNIFIED_DEFAULTS))

    type: UnifiedType

    def __init__(
        self,
        type: UnifiedType,  # noqa: A002 - public name kept from the reference
        text: str = "",
        tool_call_id: Optional[str] = None,
        tool_name: Optional[str] = None,
        arguments_delta: str = "",
        arguments: Optional[dict[str, Any]] = None,
        usage: Optional[dict[str, Any]] = None,
        stop_reason: Optional[str] = None,
        error: Optional[dict[str, Any]] = None,
        sequence: Optional[int] = None,
        raw: Optional[Any] = None,
        *,
        raw_stop_reason: Optional[str] = None,
        server: bool = False,
        signature: Optional[str] = None,
        arguments_raw: Optional[str] = None,
        arguments_error: Optional[str] = None,
        citations: Optional[list[Any]] = None,
        encrypted_reasoning: Optional[str] = None,
    ) -> None:
        self.type = type
        self.text = text
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.arguments_delta = arguments_delta
        self.arguments = arguments
        self.usage = usage
        self.stop_reason = stop_reason
        self.error = error
        self.sequence = sequence
        self._raw = raw
        self.raw_stop_reason = raw_stop_reason
        self.server = server
        self.signature = signature
        self.arguments_raw = arguments_raw
        self.arguments_error = arguments_error
        self.citations = citations
        self.encrypted_reasoning = encrypted_reasoning

    def to_dict(self, *, with_raw: bool = False) -> dict[str, Any]:
        """The event as a JSON-ready dict: ``type`` plus every field that differs from its default.

        ``raw`` is left out unless ``with_raw`` is true.
        """
        out: dict[str, Any] = {"type": self.type}
        for name, default in _UNIFIED_DEFAULTS.items():
            if name == "raw" and not with_raw:
                continue
            value = getattr(self, name)
            if value != default:
                out[name] = [c.to_dict(with_raw=with_raw) for c in value] if name == "citations" else value
        return out

    @property
    def raw(self) -> Any:
        """The provider's payload this event came from, decoded on first access when the normaliser read only
        the fields it needed (every event of one payload shares the one decoded object)."""
        raw = self._raw
        if type(raw) is LazyPayload:
            raw = self._raw = raw.value()
        return raw

    @raw.setter
    def raw(self, value: Any) -> None:
        self._raw = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Unified):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable payloads

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "type")
        return f"Unified({self.type!r}{', ' if fields else ''}{fields})"


#: Every field of :class:`Unified`, ``type`` first.
_FIELDS = ("type", *_UNIFIED_DEFAULTS)


def unified_defaults() -> tuple[Any, ...]:
    """The value each of ``Unified.__slots__`` starts with, in slot order (``type``: None): what the compiled delta
    reader fills an event with before it sets the event's own fields."""
    return (None, *_UNIFIED_DEFAULTS.values())


class LazyPayload:
    """A payload kept as its JSON text, decoded the first time an event's ``raw`` is read: a normaliser that
    read only the fields it needed (typed decoding) hands this to the events instead of a decoded dict. The
    value is what the full decode gives (:func:`ssewire._json.loads`), decoded once and shared."""

    __slots__ = ("_value", "text")

    def __init__(self, text: Union[str, bytes]) -> None:
        self.text = text  # the payload's text, or its UTF-8 (a held event's: see Utf8Event)
        self._value: Any = _UNDECODED

    @property
    def decoded(self) -> bool:
        """Whether the payload was decoded already (:meth:`value` costs nothing more)."""
        return self._value is not _UNDECODED

    def value(self) -> Any:
        """The decoded payload (decoded now, if it was not yet). A payload the fast reader took that the full
        decoder cannot (nested deeper than it goes) is kept as ``{"data": text}``, as the full decode keeps any
        payload it cannot decode: never an exception on reading ``raw``."""
        value = self._value
        if value is _UNDECODED:
            try:
                value = loads(self.text)
            except ValueError:
                value = {"data": self.text}
            self._value = value
        return value


_UNDECODED = object()


# -- fast constructors for the per-event hot paths --------------------------------------------------------------
#
# ``Unified(...)`` with keyword arguments costs about twice as much as the event's JSON decode; the normalisers
# build one per event, so they use these positional factories instead. Each sets every slot exactly as
# ``Unified.__init__`` does (tests/test_events.py checks they agree field for field).

_new = object.__new__


def new_event(
    kind: UnifiedType, raw: Any, text: str = "", sequence: Optional[int] = None, signature: Optional[str] = None
) -> Unified:
    """``Unified(kind, text=text, sequence=sequence, raw=raw, signature=signature)``, built without keywords."""
    event: Unified = _new(Unified)
    event.type = kind
    event.text = text
    event.tool_call_id = None
    event.tool_name = None
    event.arguments_delta = ""
    event.arguments = None
    event.usage = None
    event.stop_reason = None
    event.error = None
    event.sequence = sequence
    event._raw = raw
    event.raw_stop_reason = None
    event.server = False
    event.signature = signature
    event.arguments_raw = None
    event.arguments_error = None
    event.citations = None
    event.encrypted_reasoning = None
    return event


def new_tool_event(
    kind: UnifiedType,
    call_id: Optional[str],
    name: Optional[str],
    raw: Any,
    arguments_delta: str = "",
    sequence: Optional[int] = None,
    server: bool = False,
) -> Unified:
    """``Unified(kind, tool_call_id=call_id, tool_name=name, arguments_delta=arguments_delta, sequence=sequence,
    raw=raw, server=server)``, built without keywords (``tool_call_start`` / ``tool_call_delta``)."""
    event = new_event(kind, raw, "", sequence)
    event.tool_call_id = call_id
    event.tool_name = name
    event.arguments_delta = arguments_delta
    event.server = server
    return event


def new_usage(usage: dict[str, Any], raw: Any, sequence: Optional[int] = None) -> Unified:
    """``Unified("usage", usage=usage, sequence=sequence, raw=raw)``, built without keywords."""
    event = new_event("usage", raw, "", sequence)
    event.usage = usage
    return event


def new_done(stop: str, raw_stop: Optional[str], raw: Any, sequence: Optional[int] = None) -> Unified:
    """``Unified("done", stop_reason=stop, raw_stop_reason=raw_stop, sequence=sequence, raw=raw)``, built without
    keywords."""
    event = new_event("done", raw, "", sequence)
    event.stop_reason = stop
    event.raw_stop_reason = raw_stop
    return event


def _compiled_new_event() -> Any:
    """The compiled scanners' ``new_unified`` (:func:`new_event` in C: the same event, at about a third of the cost)
    when they are in use and ``Unified``'s fields are plain slots there; else None."""
    from . import _scan

    if _scan.IMPLEMENTATION != "cython":
        return None
    from ._scan import scanner_c

    return scanner_c.new_unified if scanner_c.use_unified(Unified, Unified.__slots__, unified_defaults()) else None


#: The Python :func:`new_event`, whichever one is in use (tests check the compiled one against it).
python_new_event = new_event
new_event = _compiled_new_event() or python_new_event  # (new_tool_event ... call the one in use)
