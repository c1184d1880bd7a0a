"""Tool-call state shared by every normaliser: one open call, its events, and the rules for closing it.

A call is *closed* only when the provider said so: its own stop event, a whole call in one part, or the finish
reason / terminal event of a response that was not cut off (:func:`closes_calls`). Only then is ``tool_call_done``
emitted. A call still open when the stream is cut, errors, or stops on a limit, filter or failure is *incomplete*:
it never gets ``tool_call_done`` and is reported as ``{"id", "name", "arguments_raw"}`` instead (see
:func:`incomplete_entry`), so nothing ever runs a tool with half its arguments.

``tool_call_done`` carries ``arguments`` (the parsed object; ``{}`` when the provider sent no arguments),
``arguments_raw`` (the argument text, ``None`` where the provider sent an object) and, when that text is not a
JSON object, ``arguments=None`` with ``arguments_error`` saying why.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Optional

from .._json import loads_exact
from ..events import Unified, new_tool_event

__all__ = [
    "CUT_OFF_STOPS",
    "CallIds",
    "CallTable",
    "OpenCall",
    "compact_json",
    "decode_arguments",
    "done_event",
    "closes_calls",
    "incomplete_entry",
]

#: Unified stop reasons that cut the response off: calls still open then are incomplete, not closed.
CUT_OFF_STOPS = frozenset({"max_tokens", "refusal", "failed", "cancelled", "incomplete"})


def closes_calls(stop: str) -> bool:
    """Whether a response that stopped with unified ``stop`` closes the calls still open (``end``, ``tool_use``,
    ``stop_sequence`` and unknown reasons do; limits, filters, failures and cancellations do not)."""
    return stop not in CUT_OFF_STOPS


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # built once: json.dumps builds one per call


def compact_json(value: Any) -> str:
    """``value`` as compact JSON text (no spaces, non-ASCII kept): ``json.dumps(value, ensure_ascii=False,
    separators=(",", ":"))``."""
    return _COMPACT.encode(value)


def decode_arguments(text: Optional[str]) -> tuple[Optional[dict[str, Any]], Optional[str]]:
    """``(arguments, error)`` for a complete argument string: ``({}, None)`` when it is empty, ``(object, None)``
    when it is a JSON object (integers exact), else ``(None, why)``. Never raises."""
    if not text or text.isspace():
        return {}, None
    try:
        value = loads_exact(text)
    except ValueError as exc:
        return None, f"arguments are not valid JSON: {exc}"
    if type(value) is dict:
        return value, None
    return None, f"arguments are a JSON {_json_kind(value)}, not an object"


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def done_event(
    call_id: Optional[str],
    name: Optional[str],
    raw: Any,
    *,
    text: Optional[str] = None,
    value: Any = None,
    sequence: Optional[int] = None,
    server: bool = False,
    signature: Optional[str] = None,
) -> Unified:
    """The ``tool_call_done`` event of a call the provider closed: from its argument ``text`` (decoded here), else
    from the ``value`` it sent whole (a dict; ``None`` means no arguments, ``{}``; anything else is an error)."""
    event = new_tool_event("tool_call_done", call_id, name, raw, "", sequence, server)
    event.signature = signature
    if text is not None:
        event.arguments_raw = text
        event.arguments, event.arguments_error = decode_arguments(text)
    elif value is None or type(value) is dict:
        event.arguments = {} if value is None else value
    else:
        event.arguments_raw = compact_json(value)
        event.arguments_error = f"arguments are a JSON {_json_kind(value)}, not an object"
    return event


def incomplete_entry(call_id: Optional[str], name: Optional[str], arguments_raw: str) -> dict[str, Any]:
    """How an incomplete call is reported (in ``error["incomplete_tool_calls"]``)."""
    return {"id": call_id, "name": name, "arguments_raw": arguments_raw}


class OpenCall:
    """One tool call between its start and its close.

    ``parts`` holds the argument fragments (joined once, at the end); ``fallback`` an argument object the provider
    sent whole (Anthropic ``input``), used when no fragment arrived; ``provider_id`` whether the id came from the
    provider (False when synthesised).
    """

    __slots__ = ("fallback", "id", "name", "parts", "provider_id", "server")

    def __init__(self, call_id: str, name: Optional[str], server: bool = False, provider_id: bool = True) -> None:
        self.id = call_id
        self.name = name
        self.server = server
        self.parts: list[str] = []
        self.fallback: Optional[dict[str, Any]] = None
        self.provider_id = provider_id

    def start(self, raw: Any, sequence: Optional[int] = None) -> Unified:
        """The ``tool_call_start`` event."""
        return new_tool_event("tool_call_start", self.id, self.name, raw, "", sequence, self.server)

    def delta(self, fragment: str, raw: Any, sequence: Optional[int] = None) -> Unified:
        """Record ``fragment`` and return its ``tool_call_delta`` event."""
        self.parts.append(fragment)
        return new_tool_event("tool_call_delta", self.id, self.name, raw, fragment, sequence, self.server)

    def done(self, raw: Any, final: Optional[str] = None, sequence: Optional[int] = None) -> Unified:
        """The ``tool_call_done`` event: ``final`` (the provider's authoritative string) or the joined fragments."""
        text = final if final is not None else "".join(self.parts)
        return done_event(self.id, self.name, raw, text=text, sequence=sequence, server=self.server)

    def done_object(self, arguments: dict[str, Any], raw: Any, sequence: Optional[int] = None) -> Unified:
        """The ``tool_call_done`` event for arguments the provider sent as an object (``arguments_raw`` None)."""
        return done_event(self.id, self.name, raw, value=arguments, sequence=sequence, server=self.server)

    def close(self, raw: Any, sequence: Optional[int] = None) -> Unified:
        """``tool_call_done`` from what arrived: the fragments, else the whole ``fallback`` object, else ``{}``."""
        if not self.parts and self.fallback:
            return self.done_object(self.fallback, raw, sequence)
        return self.done(raw, None, sequence)

    def incomplete(self) -> dict[str, Any]:
        """This call reported as incomplete (the argument text that arrived)."""
        return incomplete_entry(self.id, self.name, "".join(self.parts))


class CallIds:
    """Call ids for one stream: the provider's id when it gives one, else a synthetic ``call_N`` never used before
    in the stream (only provider ids shaped like ours can collide, so only those are remembered)."""

    __slots__ = ("_count", "_seen")

    def __init__(self) -> None:
        self._count = 0
        self._seen: set[str] = set()

    def take(self, given: Any) -> str:
        """``given`` when it is a non-empty string, else a fresh synthetic id."""
        if type(given) is str and given:
            if given.startswith("call_"):
                self._seen.add(given)
            return given
        while True:  # the counter never repeats, so only provider ids need checking
            candidate = f"call_{self._count}"
            self._count += 1
            if candidate not in self._seen:
                return candidate


class CallTable:
    """The open tool calls of one stream by the provider's key (a block index, an item id ...): opened at a key,
    closed when the provider says (:meth:`close_all` at the end of a response that was not cut off), else reported
    as incomplete. ``open`` is the plain dict the compiled delta reader reads argument deltas into."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open: dict[Any, OpenCall] = {}

    def __len__(self) -> int:
        return len(self.open)

    def __iter__(self) -> Iterator[OpenCall]:
        """The open calls, in the order they were opened."""
        return iter(self.open.values())

    def get(self, key: Any) -> Optional[OpenCall]:
        """The call open at ``key``, if any."""
        return self.open.get(key)

    def pop(self, key: Any) -> Optional[OpenCall]:
        """Remove and return the call open at ``key`` (None when there is none)."""
        return self.open.pop(key, None)

    def start(self, key: Any, call: OpenCall, raw: Any, sequence: Optional[int] = None) -> Unified:
        """Open ``call`` at ``key``; its ``tool_call_start``."""
        self.open[key] = call
        return call.start(raw, sequence)

    def close_at(self, key: Any, raw: Any) -> list[Unified]:
        """A new call comes at ``key``: the ``tool_call_done`` of the call still open there (calls never merge), or
        nothing."""
        previous = self.open.pop(key, None)
        return [] if previous is None else [previous.close(raw)]

    def close_all(self, raw: Any) -> list[Unified]:
        """The ``tool_call_done`` of every open call (the response ended without cutting them off); none is left."""
        out = [call.close(raw) for call in self.open.values()]
        self.open.clear()
        return out

    def clear(self) -> None:
        """Forget every open call (a protocol error ended them: they were reported as incomplete)."""
        self.open.clear()

    def incomplete(self) -> list[dict[str, Any]]:
        """The open calls, reported as incomplete (see :func:`incomplete_entry`)."""
        return [call.incomplete() for call in self.open.values()]
