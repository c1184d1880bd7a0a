"""Vertex AI streamed function-call arguments (``streamFunctionCallArguments``): the argument object is built from
``partialArgs`` fragments (a JSON path plus a string, number, bool or null value; string values at one path
concatenate across fragments, ``willContinue`` says more follow). Linear in the fragments: long strings are
joined once, when the call closes.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Union

from .tool_calls import compact_json

__all__ = ["Segment", "StreamedCall", "parse_json_path"]

#: Largest gap a ``partialArgs`` array index may open (filled with nulls); bigger indices are ignored.
_MAX_INDEX_GAP = 1024

Segment = Union[str, int]

#: A string as its JSON literal (quotes and escapes, non-ASCII kept): what :func:`compact_json` makes of a str,
#: without the encoder's call.
_quote = json.encoder.encode_basestring
#: The steps of the paths read so far (a call's paths repeat: its string arguments come in many fragments), each
#: path's list shared by every call that reads it (never changed); emptied when it reaches :data:`_PATHS_KEPT`.
_PATHS: dict[str, Optional[list[Segment]]] = {}
_PATHS_KEPT = 512


#: One step of a JSON path after the root: ``.name`` (up to the next ``.`` or ``[``), ``['name']`` / ``["name"]``
#: (to the first closing quote and bracket; a backslash before the quote escapes it), or ``[digits]``.
_STEP = re.compile(r"""\.([^.\[]+)|\[(?:'(.*?)'|"(.*?)"|([0-9]+))\]""", re.DOTALL)


def parse_json_path(path: str) -> Optional[list[Segment]]:
    """``$.a.b[0]['c d']`` -> ``["a", "b", 0, "c d"]`` (the leading ``$`` is optional); None when malformed."""
    if path.startswith("$"):
        path = path[1:]
        if path and path[0] != "." and path[0] != "[":
            return None
    else:
        path = "." + path
    if "[" not in path:  # (most paths: $.name, $.a.b)
        names: list[Segment] = path[1:].split(".") if path else []  # type: ignore[assignment]  # (str: a Segment)
        return None if "" in names else names
    if "'" not in path and '"' not in path:  # (the rest but a few: $.a[0].b)
        return _plain_steps(path)
    return _quoted_steps(path)


def _steps(path: str) -> Optional[list[Segment]]:
    """:func:`parse_json_path` of ``path``, remembered (see :data:`_PATHS`): the list is shared, never to be
    changed."""
    segs = _PATHS.get(path)
    if segs is None and path not in _PATHS:
        segs = parse_json_path(path)
        if len(_PATHS) >= _PATHS_KEPT:
            _PATHS.clear()
        _PATHS[path] = segs
    return segs


def _plain_steps(path: str) -> Optional[list[Segment]]:
    """The steps of a path after the root (it starts with ``.`` or ``[``) that quotes no name: ``.name`` and
    ``[digits]``, as :func:`_quoted_steps` reads them, without a regular expression."""
    segments: list[Segment] = []
    for at, piece in enumerate(path.split(".")):
        bracket = piece.find("[")
        name = piece if bracket < 0 else piece[:bracket]
        if at:
            if not name:
                return None
            segments.append(name)
        if bracket >= 0:
            if piece[-1] != "]":
                return None
            for digits in piece[bracket + 1 : -1].split("]["):
                if not (digits.isdigit() and digits.isascii()):
                    return None
                segments.append(int(digits))
    return segments


def _quoted_steps(path: str) -> Optional[list[Segment]]:
    """The steps of a path after the root (it starts with ``.`` or ``[``), read step by step by :data:`_STEP`."""
    segments: list[Segment] = []
    at, n, step = 0, len(path), _STEP.match
    while at < n:
        found = step(path, at)
        if found is None:
            return None
        name, single, double, digits = found.groups()
        if name is not None:
            segments.append(name)
        elif digits is not None:
            segments.append(int(digits))
        elif single is not None:
            segments.append(single.replace("\\'", "'"))
        else:
            segments.append(double.replace('\\"', '"'))
        at = found.end()
    return segments


class _Str:
    """A string argument value still arriving in fragments (joined once, when the call closes)."""

    __slots__ = ("parts",)

    def __init__(self, first: str) -> None:
        self.parts = [first]


class _Frame:
    """An open container in the argument JSON text: its key in the parent, kind, children written, keys used."""

    __slots__ = ("count", "is_array", "keys", "seg")

    def __init__(self, seg: Optional[Segment], is_array: bool) -> None:
        self.seg = seg
        self.is_array = is_array
        self.count = 0
        self.keys: set[str] = set()


def _partial_value(arg: dict[str, Any]) -> tuple[bool, Any]:
    """``(found, value)`` of one ``partialArgs`` entry's typed value."""
    value = dict.get(arg, "stringValue")
    if type(value) is str:
        return True, value
    value = dict.get(arg, "numberValue")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True, value
    value = dict.get(arg, "boolValue")
    if isinstance(value, bool):
        return True, value
    if "nullValue" in arg:
        return True, None
    for key in ("listValue", "structValue"):
        value = arg.get(key)
        if isinstance(value, (list, dict)):
            return True, value
    return False, None


class StreamedCall:
    """One Vertex streamed function call: builds the argument object from ``partialArgs`` and, alongside, the
    JSON text of that object (emitted as ``tool_call_delta`` fragments) while paths arrive in document order.

    Linear in the input: string fragments are joined once at :meth:`close`. When a path goes back into a part of
    the text already written, the text stops (``in_sync`` false) and only the object stays authoritative.
    """

    __slots__ = (
        "_last_path",
        "_last_str",
        "emitted",
        "id",
        "in_sync",
        "last_leaf",
        "name",
        "root",
        "stack",
        "str_open",
        "strings",
    )

    def __init__(self, call_id: str, name: Optional[str], args: Any) -> None:
        self.id = call_id
        self.name = name
        self.root: dict[str, Any] = dict(args) if isinstance(args, dict) else {}
        self.strings: list[tuple[Union[dict[str, Any], list[Any]], Segment, _Str]] = []
        self.stack: list[_Frame] = []
        self.last_leaf: Optional[list[Segment]] = None
        self.str_open = False
        self.in_sync = True
        self.emitted: list[str] = []  # the JSON text handed out so far (what an incomplete call reports)
        #: The ``jsonPath`` of the last entry when it stored a string, and that string (the next entry at the same
        #: path continues it: the bulk of a long string argument, read without walking its path again).
        self._last_path: Optional[str] = None
        self._last_str: Optional[_Str] = None

    def opening_text(self) -> str:
        """JSON text for arguments sent whole on the opening part (``args``), else ""."""
        if not self.root:
            return ""
        frame = _Frame(None, False)
        frame.keys.update(self.root)
        frame.count = len(self.root)
        self.stack.append(frame)
        text = compact_json(self.root)[:-1]
        self.emitted.append(text)
        return text

    def add(self, partial_args: list[Any]) -> str:
        """Apply ``partialArgs`` entries; returns the JSON text they add ("" when none or out of sync)."""
        out: list[str] = []
        for arg in partial_args:
            if not isinstance(arg, dict):
                continue
            path = dict.get(arg, "jsonPath")
            value = dict.get(arg, "stringValue")
            holder = self._last_str
            if holder is not None and type(value) is str and path == self._last_path:  # the string goes on
                holder.parts.append(value)
                if self.in_sync:  # (its text is open: the last text written was this string's)
                    out.append(_quote(value)[1:-1])
                continue
            self._last_path = self._last_str = None
            segs = _steps(path) if type(path) is str else None
            if not segs:
                continue
            found, value = _partial_value(arg)
            if not found:
                continue
            appended = self._set(segs, value)  # (a string's holder is _last_str now)
            if appended is None:
                self._last_str = None
                continue
            if type(value) is str:
                self._last_path = path
            else:
                self._last_str = None
            if self.in_sync:
                self._text(segs, value, appended, out)
        text = "".join(out)
        if text:
            self.emitted.append(text)
        return text

    def _set(self, segs: list[Segment], value: Any) -> Optional[bool]:
        """Store ``value`` at ``segs``; True when it extended a string, None when the path is unusable (then
        nothing changes: missing containers are built detached and attached only once the whole path fits)."""
        node: Any = self.root
        last = len(segs) - 1
        k = 0
        while k < last:
            child = _get(node, segs[k])
            if not (isinstance(child, list) if isinstance(segs[k + 1], int) else isinstance(child, dict)):
                break
            node = child
            k += 1
        if k == last:
            return self._leaf(node, segs[last], value)
        top: Any = [] if isinstance(segs[k + 1], int) else {}
        parent = top
        for j in range(k + 1, last):
            child = [] if isinstance(segs[j + 1], int) else {}
            if not _put(parent, segs[j], child):
                return None
            parent = child
        appended = self._leaf(parent, segs[last], value)
        if appended is None or not _put(node, segs[k], top):
            return None
        return appended

    def _leaf(self, parent: Any, key: Segment, value: Any) -> Optional[bool]:
        """Store a leaf value in ``parent`` (string fragments at one path concatenate); as :meth:`_set`."""
        if type(value) is str:
            current = _get(parent, key)
            if isinstance(current, _Str):
                current.parts.append(value)
                self._last_str = current
                return True
            holder = _Str(value)
            if not _put(parent, key, holder):
                return None
            self.strings.append((parent, key, holder))
            self._last_str = holder
            return False
        return False if _put(parent, key, value) else None

    def _text(self, segs: list[Segment], value: Any, appended: bool, out: list[str]) -> None:
        """Append to ``out`` the JSON text that writes ``value`` at ``segs`` after what was written so far."""
        if appended:
            if self.str_open and segs == self.last_leaf:
                out.append(_quote(value)[1:-1])
            else:  # a string continued after other output: only the object stays exact from here on
                self.in_sync = False
            return
        if self.str_open:
            out.append('"')
            self.str_open = False
        stack = self.stack
        if not stack:
            out.append("{")
            stack.append(_Frame(None, False))
        last = len(segs) - 1
        depth = 1
        while depth < len(stack) and depth - 1 < last and stack[depth].seg == segs[depth - 1]:
            depth += 1
        while len(stack) > depth:
            out.append("]" if stack.pop().is_array else "}")
        for k in range(depth - 1, last):
            if not self._claim(stack[-1], segs[k], out):
                return
            is_array = isinstance(segs[k + 1], int)
            out.append("[" if is_array else "{")
            stack.append(_Frame(segs[k], is_array))
        if not self._claim(stack[-1], segs[last], out):
            return
        if type(value) is str:
            out.append(_quote(value)[:-1])
            self.str_open = True
        else:
            out.append(compact_json(value))
        self.last_leaf = segs

    def _claim(self, frame: _Frame, seg: Segment, out: list[str]) -> bool:
        """Write the separator and key for a new child ``seg`` of ``frame``; False (out of sync) if impossible."""
        if frame.is_array:
            if not isinstance(seg, int) or seg < frame.count:
                self.in_sync = False
                return False
            if frame.count:
                out.append(",")
            out.append("null," * (seg - frame.count))
            frame.count = seg + 1
            return True
        if not isinstance(seg, str) or seg in frame.keys:
            self.in_sync = False
            return False
        if frame.count:
            out.append(",")
        out.append(_quote(seg) + ":")
        frame.keys.add(seg)
        frame.count += 1
        return True

    def close(self) -> tuple[dict[str, Any], str]:
        """The finished arguments and the JSON text that closes what was emitted ("" when out of sync)."""
        for node, key, holder in self.strings:
            if _get(node, key) is holder:
                _put(node, key, "".join(holder.parts))
        self.strings = []
        if not self.in_sync:
            return self.root, ""
        if not self.stack:
            return self.root, "{}"
        out = ['"'] if self.str_open else []
        while self.stack:
            out.append("]" if self.stack.pop().is_array else "}")
        self.str_open = False
        return self.root, "".join(out)


def _get(node: Any, seg: Segment) -> Any:
    """``node[seg]`` when ``node`` is the right container and has it, else None."""
    if isinstance(seg, int):
        return node[seg] if isinstance(node, list) and seg < len(node) else None
    return node.get(seg) if isinstance(node, dict) else None


def _put(node: Any, seg: Segment, value: Any) -> bool:
    """Set ``node[seg]`` (a list grows with nulls, by at most ``_MAX_INDEX_GAP``); False when it cannot."""
    if isinstance(seg, int):
        if not isinstance(node, list) or seg - len(node) > _MAX_INDEX_GAP:
            return False
        if seg >= len(node):
            node.extend([None] * (seg + 1 - len(node)))
        node[seg] = value
        return True
    if not isinstance(node, dict):
        return False
    node[seg] = value
    return True
