"""Event data is decoded exactly as ``bytes.decode("utf-8", "replace")`` would, on every scanner code path.

The compiled scanner has its own UTF-8 decoder: it sizes the ``str`` from byte statistics (taken while it looks
for line ends in CR-framed streams and while it walks JSON-array elements, or in a pass of their own otherwise),
then writes the code points in vector blocks. These tests pin it to CPython's decoder: same code points, same
``str`` kind and layout (so ``isascii()`` and ``sys.getsizeof`` agree too), for valid and invalid input, at
lengths around the 16/32/64-byte block sizes, on the ``scanner`` fixture's implementations.
"""

from __future__ import annotations

import platform
import sys
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples

PIECES = ["a", "é", "ÿ", "\u0100", "—", "東", "\uffff", "🙂", "\U0010ffff", " ", "\t", "\x00", "\x7f", "\x80"]
# the CRLF stream's first line is found by memchr; the data line after it by the one-pass CR-or-LF scan
FRAMINGS = {
    "lf": lambda payload: b"data: " + payload + b"\n\n",
    "crlf": lambda payload: b": c\r\ndata: " + payload + b"\r\n\r\n",
    "cr": lambda payload: b": c\rdata: " + payload + b"\r\r",
    "two-lines": lambda payload: b"data: " + payload + b"\r\ndata: " + payload + b"\r\n\r\n",
}


CPYTHON = platform.python_implementation() == "CPython"


def same_str(got: str, expected: str) -> None:
    assert got == expected
    assert got.isascii() == expected.isascii()
    if CPYTHON:  # PyPy has no object sizes
        assert sys.getsizeof(got) == sys.getsizeof(expected)  # same kind, same compact layout


def sse_data(scanner: ModuleType, stream: bytes) -> str:
    parser = scanner.SSEParser()
    events = parser.feed(stream) + parser.close()
    assert len(events) == 1
    return str(events[0].data)


def element_text(scanner: ModuleType, element: bytes) -> str:
    parser = scanner.JSONArrayStreamParser()
    events = parser.feed(b"[" + element + b"]") + parser.close()
    assert len(events) == 1
    return str(events[0].data)


def decodes_as_cpython(scanner: ModuleType, payload: bytes, framing: str) -> None:
    """``payload`` as event data (framed as ``framing``) and inside a JSON-array element decodes as CPython does."""
    expected = payload.decode("utf-8", "replace")
    if framing == "two-lines":
        expected = expected + "\n" + expected
    same_str(sse_data(scanner, FRAMINGS[framing](payload)), expected)
    element = b'{"k": "' + payload + b'"}'
    same_str(element_text(scanner, element), element.decode("utf-8", "replace"))


def texts() -> list[str]:
    out = []
    for piece in PIECES:
        for n in (1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100):
            out.append("x" * n + piece)
            out.append(piece * n)
            out.append(piece + "y" * n)
    out.append("".join(PIECES) * 9)
    return out


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
def test_valid_text_on_every_framing(scanner: ModuleType, framing: str) -> None:
    frame = FRAMINGS[framing]
    for text in texts():
        payload = text.encode()
        expected = text if framing != "two-lines" else text + "\n" + text
        same_str(sse_data(scanner, frame(payload)), expected)


def test_valid_text_in_json_array_elements(scanner: ModuleType) -> None:
    for text in texts():
        element = '{"k": "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"}'
        same_str(element_text(scanner, element.encode()), element)


INVALID = [
    b"\x80",  # a continuation byte without a lead
    b"\xbf\xbf",
    b"\xc0\xaf",  # overlong
    b"\xc1\xbf",
    b"\xe0\x80\xaf",  # overlong three-byte
    b"\xed\xa0\x80",  # a surrogate
    b"\xf0\x80\x80\xaf",  # overlong four-byte
    b"\xf4\x90\x80\x80",  # above U+10FFFF
    b"\xf5\x80\x80\x80",
    b"\xff",
    b"\xc3",  # truncated
    b"\xe6\x9d",
    b"\xf0\x9f\x99",
    b"\xc3\xc3\xa9",
    b"\xe6\x9d\xb1\x80",  # one continuation too many
]


@pytest.mark.parametrize("bad", INVALID, ids=lambda b: b.hex())
@pytest.mark.parametrize("framing", sorted(FRAMINGS))
def test_invalid_bytes_become_replacement_characters(scanner: ModuleType, bad: bytes, framing: str) -> None:
    for prefix in (b"", b"a" * 20, "é".encode() * 20, "🙂".encode() * 9):
        for suffix in (b"", b"b" * 40, "東".encode() * 12):
            decodes_as_cpython(scanner, prefix + bad + suffix, framing)


_fragments = st.sampled_from(
    [
        b"a",
        b"bcdefghijklmnop",
        b" ",
        b"\xc3\xa9",
        b"\xe6\x9d\xb1",
        b"\xf0\x9f\x99\x82",
        b"\xc4\x80",
        b"\xef\xbf\xbf",
        *INVALID,
    ]
)


@settings(max_examples=examples(400), deadline=None)
@given(payload=st.lists(_fragments, max_size=80).map(b"".join), framing=st.sampled_from(sorted(FRAMINGS)))
def test_any_bytes_decode_as_cpython_does(scanner: ModuleType, payload: bytes, framing: str) -> None:
    decodes_as_cpython(scanner, payload, framing)


@pytest.mark.parametrize("piece", ["é", "東", "🙂", "a", "ÿé"])
def test_long_lines_count_every_byte(scanner: ModuleType, piece: str) -> None:
    # lines far longer than the vector counters' span (they are summed every few KiB)
    text = "x" + piece * 20_000
    for framing in ("lf", "crlf", "cr"):
        same_str(sse_data(scanner, FRAMINGS[framing](text.encode())), text)
    element = '{"k": "' + text + '"}'
    same_str(element_text(scanner, element.encode()), element)
