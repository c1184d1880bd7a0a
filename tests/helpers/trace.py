"""Running a scanner call by call and recording everything observable: shared by the differential tests and the
fuzz harness, so both implementations are compared the same way everywhere. Also :func:`lines_run`, the work a call
does counted in lines of Python (what the linearity tests compare: the same on any machine)."""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

#: A call in a trace that closes the parser instead of feeding it.
CLOSE = object()


def as_buffer_type(chunk: bytes, kind: int) -> Any:
    """``chunk`` as bytes (0), bytearray (1), a memoryview (2), a non-contiguous memoryview (3) or a memoryview of
    another format (4, even lengths only)."""
    if kind == 1:
        return bytearray(chunk)
    if kind == 2:
        return memoryview(chunk)
    if kind == 3:
        doubled = bytearray(len(chunk) * 2)
        doubled[::2] = chunk
        return memoryview(doubled)[::2]
    if kind == 4 and len(chunk) % 2 == 0:
        return memoryview(chunk).cast("H")
    return chunk


def parser_state(parser: Any) -> tuple[Any, ...]:
    """The public state of any scanner after a call."""
    if hasattr(parser, "last_event_id"):
        return (parser.last_event_id, parser.retry, parser.events_parsed, parser.bytes_fed)
    if hasattr(parser, "finished"):
        return (parser.finished, parser.events_parsed, parser.bytes_fed)
    return (parser.events_parsed, parser.bytes_fed)


def event_key(event: Any) -> tuple[Any, ...]:
    """An event's fields; for an event-stream message also its headers (with their types: a bool header must not
    pass for an int), payload, message type and content type."""
    key = (event.event, event.data, event.id, event.retry)
    if hasattr(event, "payload"):
        headers = tuple((name, type(value).__name__, value) for name, value in event.headers.items())
        return (*key, headers, event.payload, event.message_type, event.content_type)
    return key


def run_calls(parser: Any, calls: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Each call's outcome: ``("ok", events, state)`` or ``("raised", exception type, message, state)``. A call
    is :data:`CLOSE` or ``(chunk, buffer kind)``."""
    out: list[tuple[Any, ...]] = []
    for call in calls:
        try:
            if call is CLOSE:
                events = parser.close()
            else:
                chunk, kind = call
                events = parser.feed(as_buffer_type(chunk, kind))
            out.append(("ok", [event_key(e) for e in events], parser_state(parser)))
        except Exception as exc:
            out.append(("raised", type(exc), str(exc), parser_state(parser)))
    return out


def lines_run(run: Callable[[], Any]) -> tuple[int, Any]:
    """How many lines of Python ``run()`` runs (its callees included; compiled code counts nothing), and what it
    returned: a count of the work that does not depend on the machine's speed."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        returned = run()
    finally:
        sys.settrace(None)
    return count, returned
