"""Events whose data is held as its UTF-8 bytes until the text is read: a large event's memory is its wire size.

CPython stores a ``str`` at 1, 2 or 4 bytes a character, by its widest character: the data of a large event that
holds one emoji costs 4 bytes a character as a ``str`` (four times its UTF-8 when it is mostly ASCII). So a scanner
dispatches an event whose data is at least :data:`LARGE_DATA` bytes of valid UTF-8, not all ASCII, as an
:func:`utf8_event_type` event: ``utf8`` holds the bytes, and ``data`` is decoded from them the first time it is read
(then ``utf8`` is dropped). Readers that decode JSON from UTF-8 (msgspec, the normalisers' fast paths) take
``utf8`` and never build the text. Everything else sees an ordinary event: ``data`` is the same ``str``, and
equality, hashing, ``repr`` and ``json()`` are the event type's own (a pickle is of the plain event).
"""

from __future__ import annotations

import codecs
from typing import Any, Optional, Union

__all__ = ["LARGE_DATA", "held_utf8", "utf8_event_type"]

#: The smallest event data (bytes) held as UTF-8.
LARGE_DATA = 1024
_PIECE = 4 * 1024  # (a piece's text: at most 16 KiB, whatever its characters)


def held_utf8(data: Union[bytes, bytearray]) -> bool:
    """Whether a pure-Python scanner holds ``data`` as UTF-8: at least :data:`LARGE_DATA` bytes, not all ASCII,
    and valid UTF-8 (checked a piece at a time: no text the size of the whole is built)."""
    if len(data) < LARGE_DATA or data.isascii():
        return False
    decode = codecs.getincrementaldecoder("utf-8")("strict").decode
    view = memoryview(data)
    try:
        for at in range(0, len(data), _PIECE):
            decode(view[at : at + _PIECE])
        decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def utf8_event_type(base: Any) -> Any:
    """The held-UTF-8 subclass of a scanner implementation's event type ``base`` (see the module docstring):
    ``Utf8Event(event, utf8, id, retry)``."""
    slot = base.__dict__["data"]  # the base's member descriptor: where the decoded text is kept
    get_data, set_data = slot.__get__, slot.__set__

    class Utf8Event(base):  # type: ignore[misc]
        """An event whose ``data`` is held as its UTF-8 bytes (``utf8``) until it is first read."""

        __slots__ = ("utf8",)

        def __init__(self, event: Any, utf8: bytes, id: Any = None, retry: Any = None) -> None:  # noqa: A002
            base.__init__(self, event, None, id, retry)
            self.utf8: Optional[bytes] = utf8

        @property
        def data(self) -> str:
            """The data as text: decoded from ``utf8`` when first read (which is then dropped)."""
            text = get_data(self)
            if text is None and self.utf8 is not None:
                text = self.utf8.decode("utf-8")  # valid UTF-8: the scanner checked
                set_data(self, text)
                self.utf8 = None
            return text  # type: ignore[no-any-return]

        @data.setter
        def data(self, value: str) -> None:
            set_data(self, value)
            self.utf8 = None

        def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # pickled as the plain event it reads as
            return base, (self.event, self.data, self.id, self.retry)

    Utf8Event.__module__ = base.__module__
    Utf8Event.__qualname__ = "Utf8Event"
    return Utf8Event
