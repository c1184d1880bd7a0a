"""Feeding normalisers and looking at what they give, shared by the normaliser tests."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Optional, TypeVar

from ssewire import Normalizer, Unified
from ssewire.events import SSEEvent
from ssewire.normalizers._fast import typed

T = TypeVar("T")


def feed(
    norm: Normalizer,
    *items: Any,
    finish: bool = True,
    named: bool = True,
    event: Optional[str] = None,
    decoded: bool = False,
) -> list[Unified]:
    """The events ``norm`` makes from ``items``, then from ``finish()`` (unless ``finish`` is false).

    A ``str`` item is an event's data as is (``[DONE]``, broken JSON); a dict is a payload: JSON-encoded and
    framed (or, with ``decoded``, handed to ``payload()`` as is, so events keep that very object). Its SSE event
    name is ``event`` when given, else (with ``named``) its ``type`` or ``event_type``, else ``"message"``.
    """
    out: list[Unified] = []
    for item in items:
        if isinstance(item, str):
            out += norm(SSEEvent(event or "message", item))
            continue
        name = event
        if name is None and named:
            name = item.get("type") or item.get("event_type")
            name = name if isinstance(name, str) else None
        if decoded:
            out += norm.payload(item, name)
        else:
            out += norm(SSEEvent(name or "message", json.dumps(item)))
    if finish:
        out += norm.finish()
    return out


def types(events: list[Unified]) -> list[str]:
    """The event types, in order."""
    return [e.type for e in events]


def only(events: list[Unified], kind: str) -> list[Unified]:
    """The events of one type, in order."""
    return [e for e in events if e.type == kind]


def dicts(events: Iterable[Unified]) -> list[dict[str, Any]]:
    """``events`` as dicts, ``raw`` included (decoded now): what two ways of reading a stream are compared by."""
    return [event.to_dict(with_raw=True) for event in events]


def decoded_whole(read: Callable[[], T]) -> T:
    """What ``read()`` gives with typed decoding off (no compiled delta reader, no msgspec structs: every payload
    decoded whole, the events a fast path must give), typed decoding on again after."""
    typed.set_enabled(False)
    try:
        return read()
    finally:
        typed.set_enabled(True)
