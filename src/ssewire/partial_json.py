"""Tool-argument JSON that arrives in fragments.

:func:`parse_partial_json` turns a JSON *prefix* into the value it promises so far (one scan, one
``json.loads``); :class:`IncrementalJSON` does the same incrementally, keeping its parse state between pieces so
a preview after each fragment costs time proportional to the fragment; :class:`PartialJSON` accumulates
fragments per tool call, previews them incrementally and gives the authoritative parse at the end.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Union

from ._json import loads_exact as loads  # tool arguments: exact integers of any size

__all__ = ["IncrementalJSON", "PartialJSON", "parse_arguments", "parse_partial_json"]

_STRING_STOP = re.compile(r'["\\]')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CHARS = re.compile(r"[-+0-9.eE]*")
_PARTIAL_UNICODE = re.compile(r"\\u[0-9a-fA-F]{0,3}$")
_LITERALS = ("true", "false", "null")
_WHITESPACE = " \t\n\r"


def _string_end(text: str, start: int) -> int:
    """Offset just past the closing quote of the string opening at ``start``, or -1 when it is unterminated."""
    i = start + 1
    while True:
        m = _STRING_STOP.search(text, i)
        if m is None:
            return -1
        if text[m.start()] == '"':
            return m.end()
        i = m.start() + 2  # skip the escaped character


def _backslashes_before(text: str, end: int) -> int:
    start = end
    while start > 0 and text[start - 1] == "\\":
        start -= 1
    return end - start


def _trim_partial_escape(body: str) -> str:
    """``body`` (an unterminated string) without an escape sequence cut short at its end."""
    m = _PARTIAL_UNICODE.search(body)
    if m is not None and _backslashes_before(body, m.start()) % 2 == 0:
        return body[: m.start()]
    if _backslashes_before(body, len(body)) % 2 == 1:
        return body[:-1]
    return body


#: The open containers, innermost first, as a chain of ``(bracket, outer)`` pairs: a valid cut keeps the chain of
#: its moment in O(1), and its closers are written once, when the cut is taken (a copy per cut is quadratic in
#: the depth of a hostile document).
_Open = Optional[tuple[str, "_Open"]]


def _closers(open_: _Open) -> str:
    out = []
    while open_ is not None:
        out.append("}" if open_[0] == "{" else "]")
        open_ = open_[1]
    return "".join(out)


def _cut(text: str, good: Optional[tuple[int, _Open]]) -> Optional[str]:
    return None if good is None else text[: good[0]] + _closers(good[1])


def _repair(text: str) -> Optional[str]:
    """Return the longest valid JSON document that ``text`` (a truncated document) implies, or None."""
    n = len(text)
    stack: _Open = None  # open containers, "{" or "[", innermost first
    expect: list[str] = []  # per container: key | colon | value | comma
    good: Optional[tuple[int, _Open]] = None  # the last valid cut: (end offset, the containers it closes)
    top_done = False
    i = 0

    def complete_value(end: int) -> tuple[int, _Open]:
        nonlocal top_done
        if not expect:
            top_done = True
            return (end, None)
        expect[-1] = "comma"
        return (end, stack)

    while i < n:
        c = text[i]
        if c in _WHITESPACE:
            i += 1
            continue
        state = expect[-1] if expect else ("end" if top_done else "value")
        if state == "end":
            break
        if c == '"':
            end = _string_end(text, i)
            if end < 0 or end > n:  # unterminated string at the end of the text
                if state != "value":
                    return _cut(text, good)  # a partial key promises nothing
                body = _trim_partial_escape(text[i:])
                return text[:i] + body + '"' + _closers(stack)
            i = end
            if state == "key":
                expect[-1] = "colon"
            elif state == "value":
                good = complete_value(i)
            else:
                return _cut(text, good)
            continue
        if c == "{" or c == "[":
            if state != "value":
                return _cut(text, good)
            stack = (c, stack)
            expect.append("key" if c == "{" else "value")
            i += 1
            good = (i, stack)
            continue
        if c == "}" or c == "]":
            if stack is None or stack[0] != ("{" if c == "}" else "["):
                return _cut(text, good)
            if state not in ("key", "value", "comma"):
                return _cut(text, good)
            stack = stack[1]
            expect.pop()
            i += 1
            good = complete_value(i)
            continue
        if c == ":":
            if state != "colon":
                return _cut(text, good)
            expect[-1] = "value"
            i += 1
            continue
        if c == ",":
            if state != "comma":
                return _cut(text, good)
            expect[-1] = "key" if stack is not None and stack[0] == "{" else "value"
            i += 1
            continue
        if state != "value":
            return _cut(text, good)
        m = _NUMBER.match(text, i)
        run_end = _NUMBER_CHARS.match(text, i).end()  # type: ignore[union-attr]
        if m is not None and m.end() == run_end:
            i = m.end()
            good = complete_value(i)
            continue
        if run_end > i and run_end == n:  # a number cut short ("12.", "-", "1e")
            return (text[:i] + m.group() + _closers(stack)) if m is not None else _cut(text, good)
        for literal in _LITERALS:
            if text.startswith(literal, i):
                i += len(literal)
                good = complete_value(i)
                break
        else:
            return _cut(text, good)  # partial literal or junk: keep what was complete
    return _cut(text, good)


def parse_partial_json(text: str) -> Any:
    """Best-effort value of a JSON prefix: open strings, arrays and objects are closed, a trailing key without
    value, a partial escape or literal, and a dangling comma are dropped. ``None`` when nothing can be made of it.

    Only for previews: the authoritative value is the complete argument string once the call is done.
    """
    if not text or text.isspace():
        return None
    try:
        return loads(text)
    except ValueError:
        pass
    repaired = _repair(text)
    if repaired is None:
        return None
    try:
        return loads(repaired)
    except ValueError:
        return None


def parse_arguments(raw: Optional[str]) -> dict[str, Any]:
    """Parse a complete tool-argument string: ``{}`` when empty, the object when it is one, ``{"_value": v}`` for
    another JSON value and ``{"_raw": raw, "_error": "invalid JSON"}`` when it does not parse (never raises)."""
    if raw is None or not raw or raw.isspace():
        return {}
    try:
        value = loads(raw)
    except ValueError:
        return {"_raw": raw, "_error": "invalid JSON"}
    return value if isinstance(value, dict) else {"_value": value}


_NUMBER_RUN = re.compile(r"[-+0-9.eE]*")
_LETTERS = re.compile(r"[a-z]*")
_SPACES = re.compile(r"[ \t\n\r]*")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERAL_VALUES = {"true": True, "false": False, "null": None}
_ROOT = object()  # the slot of a top-level value


def _number(text: str) -> Optional[Union[int, float]]:
    """A JSON number's value; None for an integer of more digits than Python converts (4,300 by default: what the
    JSON decoders refuse too)."""
    if any(c in text for c in ".eE"):
        return float(text)
    try:
        return int(text)
    except ValueError:
        return None


class IncrementalJSON:
    """A JSON text fed in pieces (``feed``), previewed at any point (``value``) in time proportional to the
    pieces fed since the last call: the parse state (open containers, the string being read) is kept.

    ``value`` follows :func:`parse_partial_json`: open strings and containers show what arrived, a key without a
    value, a partial literal and a partial escape are left out, a partial number shows its valid prefix. The
    returned value is live (later pieces update it in place): copy it to keep a snapshot. Invalid JSON freezes
    the preview at the last valid point (``failed`` becomes True); nothing raises.
    """

    __slots__ = (
        "_buf",
        "_escape",
        "_expect",
        "_high",
        "_provisional",
        "_root",
        "_slot",
        "_stack",
        "_token",
        "failed",
    )

    def __init__(self) -> None:
        self._root: Any = None
        self._stack: list[list[Any]] = []  # [container, pending key] per open container
        self._expect = "value"  # value | key | colon | comma | end
        self._token = ""  # "", "string", "key", "number", "literal"
        self._buf = ""  # the string, key, number or literal being read
        self._slot: Any = None  # where the string being read lives: (container, key/index) or _ROOT
        self._escape = ""  # an escape sequence cut by the end of a piece
        self._high: Optional[int] = None  # a high surrogate waiting for its low half
        self._provisional: Any = None  # slot holding a partial number shown by value()
        self.failed = False

    # -- values ----------------------------------------------------------------------------------------
    def _place(self, value: Any) -> Any:
        """Put a new value where the grammar expects it; return its slot."""
        if not self._stack:
            self._root = value
            self._expect = "end"
            return _ROOT
        frame = self._stack[-1]
        container = frame[0]
        self._expect = "comma"
        if type(container) is dict:
            key = frame[1]
            frame[1] = None
            container[key] = value
            return (container, key)
        container.append(value)
        return (container, len(container) - 1)

    def _store(self, slot: Any, value: Any) -> None:
        if slot is _ROOT:
            self._root = value
        else:
            slot[0][slot[1]] = value

    # -- scanning --------------------------------------------------------------------------------------
    def feed(self, text: str) -> None:
        """Parse ``text``, the next piece of the document."""
        if self.failed:
            return
        i, n = 0, len(text)
        while i < n:
            token = self._token
            if token == "string" or token == "key":
                i = self._string(text, i, n)
                continue
            if token == "number":
                end = _NUMBER_RUN.match(text, i).end()  # type: ignore[union-attr]
                self._buf += text[i:end]
                i = end
                if i < n:
                    self._end_number()
                continue
            if token == "literal":
                end = _LETTERS.match(text, i).end()  # type: ignore[union-attr]
                self._buf += text[i:end]
                i = end
                if i < n or self._buf in _LITERAL_VALUES:  # a literal is complete once spelled out
                    self._end_literal()
                continue
            i = _SPACES.match(text, i).end()  # type: ignore[union-attr]
            if i >= n:
                break
            c = text[i]
            expect = self._expect
            i += 1
            if expect == "value":
                if c == "{" or c == "[":
                    container: Any = {} if c == "{" else []
                    self._place(container)
                    self._stack.append([container, None])
                    self._expect = "key" if c == "{" else "value"
                elif c == '"':
                    self._token = "string"
                    self._buf = ""
                    self._slot = self._place("")
                elif c in "-0123456789":
                    self._token = "number"
                    self._buf = c
                elif c in "tfn":
                    self._token = "literal"
                    self._buf = c
                elif c == "]" and self._stack and type(self._stack[-1][0]) is list and not self._stack[-1][0]:
                    self._close()
                else:
                    self.failed = True
            elif expect == "key":
                if c == '"':
                    self._token = "key"
                    self._buf = ""
                elif c == "}" and not self._stack[-1][0]:
                    self._close()
                else:
                    self.failed = True
            elif expect == "colon":
                if c == ":":
                    self._expect = "value"
                else:
                    self.failed = True
            elif expect == "comma":
                frame = self._stack[-1]
                if c == ",":
                    self._expect = "key" if type(frame[0]) is dict else "value"
                elif c == ("}" if type(frame[0]) is dict else "]"):
                    self._close()
                else:
                    self.failed = True
            else:  # "end": anything but whitespace after the document
                self.failed = True
            if self.failed:
                return

    def _close(self) -> None:
        self._stack.pop()
        self._expect = "comma" if self._stack else "end"

    def _string(self, text: str, i: int, n: int) -> int:
        parts: list[str] = []
        if self._escape:
            # finish an escape sequence cut by the previous piece
            if len(self._escape) == 1:
                self._escape += text[i]
                i += 1
            need = 6 if self._escape[1] == "u" else 2
            take = need - len(self._escape)
            self._escape += text[i : i + take]
            i += take
            if len(self._escape) < need:
                return n
            seq, self._escape = self._escape, ""
            if not self._decode(seq, parts):
                return n
        while i < n:
            m = _STRING_STOP.search(text, i)
            if m is None:
                self._flush_high(parts)
                parts.append(text[i:])
                i = n
                break
            stop = m.start()
            if stop > i:
                self._flush_high(parts)
                parts.append(text[i:stop])
            if text[stop] == '"':
                self._flush_high(parts)
                self._grow(parts)
                self._end_string()
                return stop + 1
            need = 6 if text.startswith("u", stop + 1) else 2
            seq = text[stop : stop + need]
            if len(seq) < need:
                self._escape = seq
                i = n
                break
            if not self._decode(seq, parts):
                return n
            i = stop + need
        self._grow(parts)
        return i

    def _decode(self, seq: str, parts: list[str]) -> bool:
        if seq[1] == "u":
            try:
                code = int(seq[2:], 16)
            except ValueError:
                self.failed = True
                return False
            if 0xD800 <= code < 0xDC00:
                self._flush_high(parts)
                self._high = code
                return True
            if 0xDC00 <= code < 0xE000 and self._high is not None:
                code = 0x10000 + ((self._high - 0xD800) << 10) + (code - 0xDC00)
                self._high = None
            else:
                self._flush_high(parts)
            parts.append(chr(code))
            return True
        char = _ESCAPES.get(seq[1])
        if char is None:
            self.failed = True
            return False
        self._flush_high(parts)
        parts.append(char)
        return True

    def _flush_high(self, parts: list[str]) -> None:
        if self._high is not None:
            parts.append(chr(self._high))
            self._high = None

    def _grow(self, parts: list[str]) -> None:
        if not parts:
            return
        piece = parts[0] if len(parts) == 1 else "".join(parts)
        if self._token == "key":
            self._buf += piece
            return
        slot = self._slot
        self._store(slot, None)  # drop the container's reference so the string grows in place
        buf = self._buf
        self._buf = ""
        buf += piece
        self._buf = buf
        self._store(slot, buf)

    def _end_string(self) -> None:
        if self._token == "key":
            self._stack[-1][1] = self._buf
            self._expect = "colon"
        self._token = ""
        self._buf = ""
        self._slot = None

    def _end_number(self) -> None:
        text, self._buf, self._token = self._buf, "", ""
        m = _NUMBER.fullmatch(text)
        if m is None:
            self.failed = True
            return
        value = _number(text)
        if value is None:
            self.failed = True
            return
        if self._provisional is not None:
            self._store(self._provisional, value)
            self._provisional = None
            self._expect = "comma" if self._stack else "end"
        else:
            self._place(value)

    def _end_literal(self) -> None:
        text, self._buf, self._token = self._buf, "", ""
        if text in _LITERAL_VALUES:
            self._place(_LITERAL_VALUES[text])
        else:
            self.failed = True

    def value(self) -> Any:
        """The preview of everything fed so far (live; see the class docstring)."""
        if self._token == "number" and not self.failed:
            m = _NUMBER.match(self._buf)
            if m is not None:
                text = m.group()
                number = _number(text)
                if number is None:
                    self.failed = True
                    return self._root
                if self._provisional is None:
                    self._provisional = self._place(number)
                    self._expect = "value"  # still reading the number
                else:
                    self._store(self._provisional, number)
        return self._root


class PartialJSON:
    """Per-key (one key per tool call) argument accumulator.

    ``append`` is amortised O(len(fragment)); ``finish`` parses once and forgets the key.
    """

    __slots__ = ("_previews", "buffers")

    def __init__(self) -> None:
        self.buffers: dict[str, str] = {}
        self._previews: dict[str, tuple[IncrementalJSON, int]] = {}  # key -> (parser, characters fed)

    def append(self, key: str, fragment: str) -> str:
        """Add ``fragment`` to ``key``'s buffer and return the accumulated text."""
        buffers = self.buffers
        text = buffers.pop(key, "")
        text += fragment  # sole reference: CPython extends the string in place
        buffers[key] = text
        return text

    def get(self, key: str) -> str:
        """The text accumulated for ``key`` so far ("" when none)."""
        return self.buffers.get(key, "")

    def preview(self, key: str) -> Any:
        """Best-effort value of what ``key`` has accumulated so far (see :class:`IncrementalJSON`): the cost is
        proportional to what arrived since the previous preview of ``key``, not to the whole text. Live value."""
        text = self.buffers.get(key, "")
        parser, fed = self._previews.get(key) or (IncrementalJSON(), 0)
        if len(text) > fed:
            parser.feed(text[fed:])
        self._previews[key] = (parser, len(text))
        return parser.value()

    def finish(self, key: str, final: Optional[str] = None) -> dict[str, Any]:
        """Parse ``final`` (the provider's authoritative string) or else the accumulated text; forget ``key``."""
        self._previews.pop(key, None)
        accumulated = self.buffers.pop(key, "")
        return parse_arguments(final if final is not None else accumulated)
