"""A large event whose data is not all ASCII is held as its UTF-8 (``Utf8Event``) in both implementations: it reads
as the same text, compares, hashes, prints and pickles as the plain event, and costs its wire size, not the up to
4 bytes a character of its text; small, ASCII and invalid-UTF-8 data stay plain ``str`` events."""

from __future__ import annotations

import pickle
from types import ModuleType

import pytest

from helpers import peak_traced
from ssewire._scan.utf8_event import LARGE_DATA, held_utf8

_WIDE = "Wetter in 東京 🙂 naïve, "  # a character beyond U+FFFF: its text costs 4 bytes a character


def _lines(text: str, lines: int) -> list[str]:
    """``text`` cut into ``lines`` pieces (between characters)."""
    step = -(-len(text) // lines)
    return [text[at : at + step] for at in range(0, len(text), step)]


def _body(data: bytes, lines: int = 1) -> bytes:
    """An SSE event of ``data`` over ``lines`` data lines (cut between characters where it is UTF-8)."""
    try:
        pieces = [line.encode() for line in _lines(data.decode(), lines)]
    except UnicodeDecodeError:
        pieces = [data]
    return b"".join(b"data: " + piece + b"\n" for piece in pieces) + b"\n"


def _text(size: int) -> str:
    return (_WIDE * (size // len(_WIDE.encode()) + 1))[: size // 4 * 2]


@pytest.mark.parametrize("lines", [1, 40])
@pytest.mark.parametrize("size", [LARGE_DATA, 3 * LARGE_DATA])
def test_a_large_event_not_all_ascii_is_held_as_utf8(scanner: ModuleType, size: int, lines: int) -> None:
    text = _text(size)
    while len(text.encode()) < size:
        text += _WIDE
    data = text.encode()
    for chunk in (len(data) + 64, 4096, 7):
        parser = scanner.SSEParser()
        body = _body(data, lines)
        events = [e for at in range(0, len(body), chunk) for e in parser.feed(body[at : at + chunk])]
        (event,) = events + parser.close()
        assert type(event) is scanner.Utf8Event and isinstance(event, scanner.SSEEvent)
        joined = "\n".join(_lines(text, lines))
        assert event.utf8 == joined.encode()
        plain = scanner.SSEEvent("message", joined)
        assert event == plain and hash(event) == hash(plain) and repr(event) == repr(plain)
        assert event.data == plain.data and event.utf8 is None  # read: the text is kept, the bytes dropped
        assert type(pickle.loads(pickle.dumps(event))) is scanner.SSEEvent


@pytest.mark.parametrize(
    "data",
    [
        b"a" * (2 * LARGE_DATA),  # all ASCII: a str costs its size already
        _text(LARGE_DATA // 2).encode(),  # under the threshold
        ("\u00e9" * LARGE_DATA).encode()[:-1] + b"\xff",  # invalid UTF-8: read with its replacement characters
        b"\xed\xa0\x80" * LARGE_DATA,  # an encoded surrogate: invalid too
    ],
    ids=["ascii", "small", "invalid", "surrogate"],
)
def test_other_data_stays_a_plain_event(scanner: ModuleType, data: bytes) -> None:
    (event,) = scanner.SSEParser().feed(_body(data))
    assert type(event) is scanner.SSEEvent
    assert event.data == data.decode("utf-8", "replace")
    assert held_utf8(data) is False


def test_setting_the_data_of_a_held_event_replaces_its_bytes(scanner: ModuleType) -> None:
    (event,) = scanner.SSEParser().feed(_body(_text(2 * LARGE_DATA).encode()))
    event.data = "x"
    assert (event.data, event.utf8, event.json()) == ("x", None, None)


def test_a_held_event_costs_about_its_wire_size(scanner: ModuleType) -> None:
    """Framing a large event of many lines costs its bytes two or three times over (the lines and their join: the
    twin also holds a copy of the chunk's rest), never the 4 bytes a character of its text."""
    data = _text(max(4 * LARGE_DATA, 256 * 1024)).encode()  # (large beside what the parser holds of its own)
    body = _body(data, 50)
    held = peak_traced(lambda: scanner.SSEParser().feed(body))
    assert held < (3.5 if scanner.__name__.endswith("_py") else 2.5) * len(data)  # a str of this text is ~4x
    (event,) = scanner.SSEParser().feed(body)
    assert peak_traced(lambda: event.data) > 3 * len(data)  # (what reading the text costs)
