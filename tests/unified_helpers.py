"""Small views of a list of unified events, shared by the normaliser tests."""

from __future__ import annotations

from ssewire import Unified


def types(events: list[Unified]) -> list[str]:
    """The event types, in order."""
    return [e.type for e in events]


def only(events: list[Unified], kind: str) -> list[Unified]:
    """The events of one type, in order."""
    return [e for e in events if e.type == kind]
