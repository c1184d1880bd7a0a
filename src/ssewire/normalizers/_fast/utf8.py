"""A large payload's text in the form msgspec decodes with the least memory.

msgspec reads a ``str`` through its UTF-8 form, which CPython encodes into a buffer of 4 bytes per character when
the text holds a character beyond U+FFFF (one emoji is enough): a transient several times the payload, on top of
the text itself. :func:`decodable` encodes such a text piece by piece instead, so the extra memory is about the
payload's UTF-8 size.
"""

from __future__ import annotations

from typing import Union

__all__ = ["LARGE", "decodable"]

#: Texts shorter than this (in characters) are decoded as they are: the transient is small.
LARGE = 32 * 1024
_PIECE = 8 * 1024


def decodable(data: str) -> Union[str, bytearray]:
    """``data`` itself when it is short or ASCII (read in place), else its UTF-8 bytes, encoded ``_PIECE``
    characters at a time. UnicodeEncodeError (a ValueError) for a lone surrogate, which no decoder accepts."""
    if len(data) < LARGE or data.isascii():
        return data
    out = bytearray()
    for at in range(0, len(data), _PIECE):
        out += data[at : at + _PIECE].encode("utf-8")
    return out
