"""The scanners' error messages, in one home: the twins (``scanner_py`` and the compiled ``scanner_c``) raise
exactly these, so their errors are the same, type and text.

Each function takes the values the message shows and returns the exception (the caller raises it). They are
called on the error path only: the scanners' loops never call in here.
"""

from __future__ import annotations

from typing import Any

from ..errors import FramingError, ParserBusyError, SSEBufferOverflow, SSEwireError, StreamTruncated

__all__ = [
    "bad_max_buffer",
    "busy",
    "corrupt_length",
    "data_after_the_end",
    "element_not_an_object",
    "fed_after_close",
    "header_twice",
    "header_type_unknown",
    "headers_overrun",
    "headers_too_long",
    "json_array_truncated",
    "message_crc_mismatch",
    "message_truncated",
    "no_separator",
    "not_a_json_array",
    "overflow",
    "payload_too_long",
    "prelude_crc_mismatch",
    "reentered",
    "start_overflow",
]

#: How many bytes of the body a JSON-array framing error shows.
SNIPPET = 40


# --- all scanners -----------------------------------------------------------------------------------------------


def overflow(what: str, limit: int) -> SSEBufferOverflow:
    """``what`` (``"a line"``, ``"the data of one event"`` ...) is longer than ``max_buffer``, ``limit``."""
    return SSEBufferOverflow(f"{what} exceeds max_buffer ({limit} bytes): to accept it, raise max_buffer=...")


def start_overflow(limit: int) -> SSEBufferOverflow:
    """The auto scanner held ``limit`` bytes of the body's start and still cannot tell its framing."""
    return SSEBufferOverflow(f"the start of the body exceeds max_buffer ({limit} bytes)")


def bad_max_buffer(value: Any) -> SSEwireError:
    """``max_buffer=value`` was not a positive int."""
    return SSEwireError(f"max_buffer must be a positive int (bytes), got {value!r}")


def fed_after_close() -> SSEwireError:
    """``feed()`` on a closed parser."""
    return SSEwireError("feed() called after close()")


def reentered(parser: object) -> ParserBusyError:
    """``feed()`` while the same parser is feeding (another thread, or a callback of its own)."""
    return ParserBusyError(f"{type(parser).__name__}.feed() re-entered: a parser belongs to one stream and one thread")


def busy(parser: object, method: str) -> ParserBusyError:
    """``method`` (``"__init__"``, ``"close"``) while the parser is feeding."""
    return ParserBusyError(f"{type(parser).__name__}.{method}() called while the parser is feeding")


# --- JSON array: ``head`` is the body from the offending byte on (its first SNIPPET bytes are shown) ------------


def not_a_json_array(head: bytes) -> FramingError:
    """The body's first non-blank byte is no ``[``."""
    return FramingError(f"body is not a JSON array: starts with {head[:SNIPPET]!r}")


def element_not_an_object(head: bytes) -> FramingError:
    """An element starts with something other than ``{``."""
    return FramingError(f"JSON array element is not an object: {head[:SNIPPET]!r}")


def no_separator(head: bytes) -> FramingError:
    """After an element comes something other than ``,`` or ``]``."""
    return FramingError(f"expected ',' or ']' between elements: {head[:SNIPPET]!r}")


def data_after_the_end(head: bytes) -> FramingError:
    """Something other than whitespace after the closing ``]``."""
    return FramingError(f"data after the closing ']': {head[:SNIPPET]!r}")


def json_array_truncated(inside_element: bool) -> StreamTruncated:
    """The body ended before its closing ``]`` (inside an element, or between elements)."""
    where = "inside an element" if inside_element else "before the closing ']'"
    return StreamTruncated(f"JSON array body ended {where}")


# --- AWS event-stream: ``offset`` is the stream offset of the message at fault -----------------------------------


def prelude_crc_mismatch(offset: int, computed: int, said: int) -> FramingError:
    """The prelude's CRC is ``computed``, the message says ``said``."""
    return FramingError(
        f"event-stream prelude CRC mismatch at offset {offset}: computed 0x{computed:08x}, "
        f"the message says 0x{said:08x}"
    )


def message_crc_mismatch(offset: int, computed: int, said: int) -> FramingError:
    """The whole message's CRC is ``computed``, the message says ``said``."""
    return FramingError(
        f"event-stream message CRC mismatch at offset {offset}: computed 0x{computed:08x}, "
        f"the message says 0x{said:08x}"
    )


def corrupt_length(offset: int, total: int, headers: int) -> FramingError:
    """The prelude's lengths cannot be: ``total`` too short for a message, or ``headers`` not fitting in it."""
    return FramingError(
        f"event-stream message at offset {offset} has a corrupt length: {total} bytes in all, "
        f"{headers} bytes of headers"
    )


def headers_too_long(offset: int, headers: int, limit: int) -> FramingError:
    """``headers`` bytes of headers, more than the format's ``limit``."""
    return FramingError(
        f"event-stream message at offset {offset}: {headers} bytes of headers exceed the limit ({limit} bytes)"
    )


def payload_too_long(offset: int, payload: int, limit: int) -> FramingError:
    """A payload of ``payload`` bytes, more than the format's ``limit``."""
    return FramingError(
        f"event-stream message at offset {offset}: a payload of {payload} bytes exceeds the limit ({limit} bytes)"
    )


def header_type_unknown(offset: int, name: str, kind: int) -> FramingError:
    """Header ``name`` has value type ``kind``, which the format does not define."""
    return FramingError(
        f"event-stream message at offset {offset}: header {name!r} has type {kind}, which does not exist"
    )


def header_twice(offset: int, name: str) -> FramingError:
    """Header ``name`` appears twice in one message."""
    return FramingError(f"event-stream message at offset {offset}: header {name!r} appears twice")


def headers_overrun(offset: int) -> FramingError:
    """A header runs past the end of the header block."""
    return FramingError(f"event-stream message at offset {offset}: its headers run past their length")


def message_truncated(offset: int, have: int, total: int, prelude: int) -> StreamTruncated:
    """The body ended ``have`` bytes into a message: of ``total`` bytes, or (``total`` 0) of its ``prelude``."""
    whole = f"{total} bytes" if total else f"its {prelude}-byte prelude"
    return StreamTruncated(
        f"the body ended inside an event-stream message at offset {offset} ({have} bytes of {whole})"
    )
