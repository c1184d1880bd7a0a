"""A large payload's text in the form msgspec decodes with the least memory.

msgspec reads a ``str`` through its UTF-8 form, which CPython encodes into a buffer of 4 bytes per character when
the text holds a character beyond U+FFFF (one emoji is enough): a transient several times the payload, on top of
the text itself. :func:`decodable` encodes such a text piece by piece instead, so the extra memory is about the
payload's UTF-8 size.
"""

from __future__ import annotations

from typing import Any, Union

from ...events import Utf8Event

__all__ = ["LARGE", "decodable", "held"]

#: Texts shorter than this (in characters) are decoded as they are: the transient is small.
LARGE = 32 * 1024
_PIECE = 8 * 1024


def held(event: Any) -> Union[str, bytes]:
    """An event's payload as a decoder reads it with the least memory: the UTF-8 of a
    :class:`~ssewire.events.Utf8Event` whose text was not built, else its ``data``."""
    if type(event) is Utf8Event:
        utf8: Union[bytes, None] = event.utf8
        if utf8 is not None:
            return utf8
    return event.data  # type: ignore[no-any-return]


def decodable(data: Union[str, bytes]) -> Union[str, bytes, bytearray]:
    """``data`` itself when it is short, ASCII or UTF-8 already (read in place), else its UTF-8 bytes, encoded
    ``_PIECE`` characters at a time. UnicodeEncodeError (a ValueError) for a lone surrogate, which no decoder
    accepts."""
    if len(data) < LARGE or type(data) is bytes or data.isascii():
        return data
    assert type(data) is str
    out = bytearray()
    for at in range(0, len(data), _PIECE):
        out += data[at : at + _PIECE].encode("utf-8")
    return out
