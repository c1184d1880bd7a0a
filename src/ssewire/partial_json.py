"""Tool-argument JSON that arrives in fragments.

:func:`parse_partial_json` turns a JSON *prefix* into the value it promises so far (for UI previews);
:class:`PartialJSON` accumulates fragments per tool call and gives the authoritative parse at the end.
Both are linear in the text: one scan, one ``json.loads``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from ._json import loads

__all__ = ["PartialJSON", "parse_partial_json", "parse_arguments"]

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CHARS = re.compile(r"[-+0-9.eE]*")
_PARTIAL_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?$")
_LITERALS = ("true", "false", "null")
_WHITESPACE = " \t\n\r"


def _closers(stack: list[str]) -> str:
    return "".join("}" if c == "{" else "]" for c in reversed(stack))


def _repair(text: str) -> Optional[str]:
    """Return the longest valid JSON document that ``text`` (a truncated document) implies, or None."""
    n = len(text)
    stack: list[str] = []  # open containers, "{" or "["
    expect: list[str] = []  # per container: key | colon | value | comma
    good: Optional[str] = None
    top_done = False
    i = 0

    def complete_value(end: int) -> Optional[str]:
        nonlocal top_done
        if not expect:
            top_done = True
            return text[:end]
        expect[-1] = "comma"
        return text[:end] + _closers(stack)

    while i < n:
        c = text[i]
        if c in _WHITESPACE:
            i += 1
            continue
        state = expect[-1] if expect else ("end" if top_done else "value")
        if state == "end":
            break
        if c == '"':
            m = _STRING.match(text, i)
            if m is None:  # unterminated string at the end of the text
                if state != "value":
                    return good  # a partial key promises nothing
                body = _PARTIAL_ESCAPE.sub("", text[i:])
                return text[:i] + body + '"' + _closers(stack)
            i = m.end()
            if state == "key":
                expect[-1] = "colon"
            elif state == "value":
                good = complete_value(i)
            else:
                return good
            continue
        if c == "{" or c == "[":
            if state != "value":
                return good
            stack.append(c)
            expect.append("key" if c == "{" else "value")
            i += 1
            good = text[:i] + _closers(stack)
            continue
        if c == "}" or c == "]":
            if not stack or stack[-1] != ("{" if c == "}" else "["):
                return good
            if state not in ("key", "value", "comma"):
                return good
            stack.pop()
            expect.pop()
            i += 1
            good = complete_value(i)
            continue
        if c == ":":
            if state != "colon":
                return good
            expect[-1] = "value"
            i += 1
            continue
        if c == ",":
            if state != "comma":
                return good
            expect[-1] = "key" if stack[-1] == "{" else "value"
            i += 1
            continue
        if state != "value":
            return good
        m = _NUMBER.match(text, i)
        run_end = _NUMBER_CHARS.match(text, i).end()  # type: ignore[union-attr]
        if m is not None and m.end() == run_end:
            i = m.end()
            good = complete_value(i)
            continue
        if run_end > i and run_end == n:  # a number cut short ("12.", "-", "1e")
            return (text[:i] + m.group() + _closers(stack)) if m is not None else good
        for literal in _LITERALS:
            if text.startswith(literal, i):
                i += len(literal)
                good = complete_value(i)
                break
        else:
            return good  # partial literal or junk: keep what was complete
    return good


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
        return json.loads(repaired)
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


class PartialJSON:
    """Per-key (one key per tool call) argument accumulator.

    ``append`` is amortised O(len(fragment)); ``finish`` parses once and forgets the key.
    """

    __slots__ = ("buffers",)

    def __init__(self) -> None:
        self.buffers: dict[str, str] = {}

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
        """Best-effort parse of what ``key`` has accumulated so far (see :func:`parse_partial_json`)."""
        return parse_partial_json(self.buffers.get(key, ""))

    def finish(self, key: str, final: Optional[str] = None) -> dict[str, Any]:
        """Parse ``final`` (the provider's authoritative string) or else the accumulated text; forget ``key``."""
        accumulated = self.buffers.pop(key, "")
        return parse_arguments(final if final is not None else accumulated)
