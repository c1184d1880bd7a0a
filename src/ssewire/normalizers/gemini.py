"""Gemini ``streamGenerateContent`` chunks (``?alt=sse`` or the streamed JSON array) -> :class:`Unified` events.

One :class:`GeminiNormalizer` handles one stream. Contract (per chunk, in order):

- ``candidates[0].content.parts[]``: ``{text, thought: true}`` -> ``reasoning_delta``; non-empty ``text`` ->
  ``text_delta``; empty ``text`` (the Gemini 3 signature carrier) -> ``raw``; ``functionCall`` ->
  ``tool_call_start`` / ``tool_call_delta`` (compact JSON of ``args``) / ``tool_call_done`` (``arguments`` = the
  object, ``arguments_raw`` None); anything else (``inlineData``, ``executableCode``, ...) -> ``raw``. A part's
  ``thoughtSignature`` rides on the first event made from that part and becomes ``last_signature``.
- Vertex ``streamFunctionCallArguments``: ``{name, willContinue: true}`` opens a call, ``{partialArgs: [...]}``
  parts fill it (``jsonPath`` + typed value; string fragments at one path concatenate) and emit the equivalent JSON
  text as ``tool_call_delta``; a part without ``willContinue`` (e.g. ``functionCall: {}``) closes it. A call left
  open is closed by ``finishReason`` or :meth:`flush`.
- ``usageMetadata`` is cumulative: the last one is kept (``self.usage``) and sent once as ``usage`` right before
  ``done``, then again whenever a later chunk changes it. ``finishReason`` (or ``promptFeedback.blockReason``
  without candidates) -> ``usage`` + exactly one ``done``; ``{"error": {...}}`` -> ``error`` (carrying the best
  usage so far, like the truncation error).
- Interactions API payloads (``event_type`` or an Interactions SSE event name) go to a
  :class:`~ssewire.normalizers.gemini_interactions.GeminiInteractionsNormalizer`; from then on ``done``, ``usage``,
  ``flush()`` and ``finish()`` are the delegate's.

Unknown or malformed shapes become ``raw`` (never an exception); every event made from a payload has ``raw=obj``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Optional, Union

from ..events import Unified, new_event
from ..partial_json import parse_arguments
from ._base import DelegatingNormalizer, error_payload
from .gemini_interactions import GeminiInteractionsNormalizer

__all__ = ["GeminiNormalizer", "gemini_stop_reason"]

_REFUSAL = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "LANGUAGE",
    }
)

#: SSE event names that only the Interactions API sends (payloads with ``event_type`` are recognised anyway).
_INTERACTION_EVENTS = frozenset(
    {
        "step.start",
        "step.delta",
        "step.stop",
        "content.start",
        "content.delta",
        "content.stop",
        "error",
        "done",
    }
)

#: Largest gap a ``partialArgs`` array index may open (filled with nulls); bigger indices are ignored.
_MAX_INDEX_GAP = 1024

Segment = Union[str, int]


def gemini_stop_reason(finish_reason: str, client_calls: bool) -> str:
    """The unified stop reason for a Gemini ``finishReason`` (``STOP`` is ``tool_use`` after client calls)."""
    if finish_reason == "STOP":
        return "tool_use" if client_calls else "end"
    if finish_reason == "MAX_TOKENS":
        return "max_tokens"
    if finish_reason in _REFUSAL:
        return "refusal"
    return "other"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse_json_path(path: str) -> Optional[list[Segment]]:
    """``$.a.b[0]['c d']`` -> ``["a", "b", 0, "c d"]`` (the leading ``$`` is optional); None when malformed."""
    segments: list[Segment] = []
    n = len(path)
    i = 1 if path.startswith("$") else 0
    if i == 0:
        path = "." + path
        n += 1
    while i < n:
        c = path[i]
        if c == ".":
            j = i + 1
            while j < n and path[j] != "." and path[j] != "[":
                j += 1
            if j == i + 1:
                return None
            segments.append(path[i + 1 : j])
            i = j
        elif c == "[":
            if i + 1 < n and path[i + 1] in "'\"":
                quote = path[i + 1]
                j = path.find(quote + "]", i + 2)
                if j < 0:
                    return None
                segments.append(path[i + 2 : j].replace("\\" + quote, quote))
                i = j + 2
            else:
                j = path.find("]", i + 1)
                digits = path[i + 1 : j] if j > 0 else ""
                if not (digits.isascii() and digits.isdigit()):
                    return None
                segments.append(int(digits))
                i = j + 1
        else:
            return None
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
    value = arg.get("stringValue")
    if type(value) is str:
        return True, value
    value = arg.get("numberValue")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True, value
    value = arg.get("boolValue")
    if isinstance(value, bool):
        return True, value
    if "nullValue" in arg:
        return True, None
    for key in ("listValue", "structValue"):
        value = arg.get(key)
        if isinstance(value, (list, dict)):
            return True, value
    return False, None


class _StreamedCall:
    """One Vertex streamed function call: builds the argument object from ``partialArgs`` and, alongside, the
    JSON text of that object (emitted as ``tool_call_delta`` fragments) while paths arrive in document order.

    Linear in the input: string fragments are joined once at :meth:`close`. When a path goes back into a part of
    the text already written, the text stops (``in_sync`` false) and only the object stays authoritative.
    """

    __slots__ = ("id", "in_sync", "last_leaf", "name", "root", "stack", "str_open", "strings")

    def __init__(self, call_id: str, name: Optional[str], args: Any) -> None:
        self.id = call_id
        self.name = name
        self.root: dict[str, Any] = dict(args) if isinstance(args, dict) else {}
        self.strings: list[tuple[Union[dict[str, Any], list[Any]], Segment, _Str]] = []
        self.stack: list[_Frame] = []
        self.last_leaf: Optional[list[Segment]] = None
        self.str_open = False
        self.in_sync = True

    def opening_text(self) -> str:
        """JSON text for arguments sent whole on the opening part (``args``), else ""."""
        if not self.root:
            return ""
        frame = _Frame(None, False)
        frame.keys.update(self.root)
        frame.count = len(self.root)
        self.stack.append(frame)
        return _dumps(self.root)[:-1]

    def add(self, partial_args: list[Any]) -> str:
        """Apply ``partialArgs`` entries; returns the JSON text they add ("" when none or out of sync)."""
        out: list[str] = []
        for arg in partial_args:
            if not isinstance(arg, dict):
                continue
            path = arg.get("jsonPath")
            segs = parse_json_path(path) if isinstance(path, str) else None
            if not segs:
                continue
            found, value = _partial_value(arg)
            if not found:
                continue
            appended = self._set(segs, value)
            if appended is None:
                continue
            if self.in_sync:
                self._text(segs, value, appended, out)
        return "".join(out)

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
                return True
            holder = _Str(value)
            if not _put(parent, key, holder):
                return None
            self.strings.append((parent, key, holder))
            return False
        return False if _put(parent, key, value) else None

    def _text(self, segs: list[Segment], value: Any, appended: bool, out: list[str]) -> None:
        """Append to ``out`` the JSON text that writes ``value`` at ``segs`` after what was written so far."""
        if appended:
            if self.str_open and segs == self.last_leaf:
                out.append(_dumps(value)[1:-1])
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
            out.append(_dumps(value)[:-1])
            self.str_open = True
        else:
            out.append(_dumps(value))
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
        out.append(_dumps(seg) + ":")
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


class GeminiNormalizer(DelegatingNormalizer):
    """Gemini generateContent stream (SSE or JSON array) -> unified events; Interactions payloads are delegated.

    Attributes: ``response_id``, ``model_version``, ``last_signature`` (the latest ``thoughtSignature``),
    ``interaction_id`` / ``last_event_index`` / ``last_event_id`` (Interactions, for resume), ``usage`` (the last
    ``usageMetadata``) and ``done``.
    """

    provider: ClassVar[str] = "gemini"
    terminal: ClassVar[str] = "a chunk with finishReason"

    def __init__(self) -> None:
        super().__init__()
        self._interactions: Optional[GeminiInteractionsNormalizer] = None  # the delegate, typed
        self._response_id: Optional[str] = None
        self._model_version: Optional[str] = None
        self._last_signature: Optional[str] = None
        self.finish_reason: Optional[str] = None
        self._done_sent = False
        self._sent_usage: Optional[dict[str, Any]] = None
        self._client_calls = False
        self._counter = 0
        self._ids: set[str] = set()
        self._open: Optional[_StreamedCall] = None

    # -- state shared with the Interactions delegate ------------------------------------------------------------

    @property
    def response_id(self) -> Optional[str]:
        """``responseId`` of the chunks (the interaction id for Interactions streams)."""
        return self._response_id if self._interactions is None else self._interactions.response_id

    @property
    def model_version(self) -> Optional[str]:
        """``modelVersion`` of the chunks (the interaction's ``model`` for Interactions streams)."""
        return self._model_version if self._interactions is None else self._interactions.model_version

    @property
    def last_signature(self) -> Optional[str]:
        """The most recent thought signature (echo it back verbatim in multi-turn)."""
        if self._interactions is not None and self._interactions.last_signature is not None:
            return self._interactions.last_signature
        return self._last_signature

    @property
    def interaction_id(self) -> Optional[str]:
        """Interactions: the interaction id, else None."""
        return None if self._interactions is None else self._interactions.interaction_id

    @property
    def last_event_index(self) -> Optional[int]:
        """Interactions: the last step index seen, else None."""
        return None if self._interactions is None else self._interactions.last_event_index

    @property
    def last_event_id(self) -> Optional[str]:
        """Interactions: the last ``event_id`` seen (the resume cursor), else None."""
        return None if self._interactions is None else self._interactions.last_event_id

    # -- dispatch -----------------------------------------------------------------------------------------------

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one generateContent chunk, or hand an Interactions payload to the delegate."""
        delegate = self._interactions
        if delegate is None and (
            "event_type" in obj
            or (
                event is not None
                and event != "message"  # the SSE default, the name of every generateContent chunk
                and (event in _INTERACTION_EVENTS or event.startswith("interaction."))
            )
        ):
            delegate = self._interactions = GeminiInteractionsNormalizer()
            delegate.done = self._done
            self.delegate = delegate
        if delegate is not None:
            return delegate.payload(obj, event)
        return self._chunk(obj)

    def flush(self) -> list[Unified]:
        """Close a streamed call left open (the delegate's open calls for Interactions streams)."""
        out = self._close_open(None)
        if self._interactions is not None:
            out += self._interactions.flush()
        return out

    def finish(self) -> list[Unified]:
        """End of stream: :meth:`flush`, then ``stream_truncated`` unless the terminal event was seen."""
        if self._interactions is None:
            return super().finish()
        return self._close_open(None) + self._interactions.finish()

    # -- generateContent ----------------------------------------------------------------------------------------

    def _chunk(self, obj: dict[str, Any]) -> list[Unified]:
        """One generateContent chunk: error, parts in order, then close / usage / done on ``finishReason``."""
        out: list[Unified] = []
        if obj.get("error") is not None:
            out += self._close_open(obj)
            self._done = True
            usage = None if self._usage is None else dict(self._usage)  # best usage so far, as on truncation
            out.append(Unified("error", error=error_payload(obj["error"]), usage=usage, raw=obj))
            return out
        usage = obj.get("usageMetadata")
        if isinstance(usage, dict):
            self._usage = usage
        value = obj.get("responseId")
        if type(value) is str:
            self._response_id = value
        value = obj.get("modelVersion")
        if type(value) is str:
            self._model_version = value

        candidates = obj.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        finish: Optional[str] = None
        if isinstance(candidate, dict):
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            if isinstance(parts, list):
                for part in parts:
                    text = part.get("text") if type(part) is dict and len(part) == 1 else None
                    if type(text) is str and text:  # the bulk of a stream: a part that is just {"text": ...}
                        out.append(new_event("text_delta", obj, text))
                    else:
                        self._part(part, obj, out)
            value = candidate.get("finishReason")
            if type(value) is str and value:
                finish = value
        elif not candidates:
            feedback = obj.get("promptFeedback")
            block = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if type(block) is str and block and not self._done_sent:
                self._terminate(obj, block, "refusal", out)
                return out

        if finish is not None and not self._done_sent:
            out += self._close_open(obj)
            self._terminate(obj, finish, gemini_stop_reason(finish, self._client_calls), out)
        elif self._done_sent and self._usage is not None and self._usage != self._sent_usage:
            self._sent_usage = self._usage
            out.append(Unified("usage", usage=dict(self._usage), raw=obj))
        if not out:
            out.append(new_event("raw", obj))
        return out

    def _terminate(self, obj: dict[str, Any], raw_stop: str, stop: str, out: list[Unified]) -> None:
        """Append ``usage`` (when any was seen) and the stream's one ``done``."""
        self.finish_reason = raw_stop
        if self._usage is not None:
            self._sent_usage = self._usage
            out.append(Unified("usage", usage=dict(self._usage), raw=obj))
        out.append(Unified("done", stop_reason=stop, raw_stop_reason=raw_stop, raw=obj))
        self._done_sent = True
        self._done = True

    def _part(self, part: Any, obj: dict[str, Any], out: list[Unified]) -> None:
        """Append the events of one content part; its signature goes on the first of them."""
        if not isinstance(part, dict):
            out.append(Unified("raw", raw=obj))
            return
        signature = part.get("thoughtSignature")
        if type(signature) is not str or not signature:
            signature = None
        else:
            self._last_signature = signature
        if "functionCall" in part:
            self._function_call(part["functionCall"], obj, signature, out)
            return
        text = part.get("text")
        if type(text) is str and text:
            kind = "reasoning_delta" if part.get("thought") is True else "text_delta"
            out.append(new_event(kind, obj, text, None, signature))
        else:
            out.append(new_event("raw", obj, "", None, signature))

    def _new_id(self, given: Any) -> str:
        """The provider's call id, else a synthetic one never used before in this stream."""
        if type(given) is str and given:
            if given.startswith("call_"):  # only ids shaped like ours can collide: remember just those
                self._ids.add(given)
            return given
        while True:  # the counter never repeats, so only provider ids need checking
            candidate = f"call_{self._counter}"
            self._counter += 1
            if candidate not in self._ids:
                return candidate

    def _function_call(self, fc: Any, obj: dict[str, Any], signature: Optional[str], out: list[Unified]) -> None:
        """Append the events of one ``functionCall`` part (always at least one; ``signature`` on the first event
        of this call: its ``tool_call_start``, or the delta / done a continuation part makes)."""
        if not isinstance(fc, dict):
            out.append(Unified("raw", raw=obj, signature=signature))
            return
        name = fc.get("name")
        partial = fc.get("partialArgs")
        if not isinstance(partial, list):
            partial = None
        continues = fc.get("willContinue") is True or (
            partial is not None and any(isinstance(a, dict) and a.get("willContinue") is True for a in partial)
        )
        if type(name) is str and name:
            out += self._close_open(obj)
            self._client_calls = True
            call_id = self._new_id(fc.get("id"))
            if continues or partial is not None:
                call = self._open = _StreamedCall(call_id, name, fc.get("args"))
                out.append(
                    Unified("tool_call_start", tool_call_id=call_id, tool_name=name, raw=obj, signature=signature)
                )
                text = call.opening_text()
                if partial is not None:
                    text += call.add(partial)
                if text:
                    out.append(
                        Unified("tool_call_delta", tool_call_id=call_id, tool_name=name, arguments_delta=text, raw=obj)
                    )
                if not continues:
                    out += self._close_open(obj)
                return
            self._whole_call(call_id, name, fc.get("args"), obj, signature, out)
            return
        current = self._open
        if current is None:
            out.append(Unified("raw", raw=obj, signature=signature))
            return
        first = len(out)
        text = current.add(partial) if partial is not None else ""
        if text or continues:
            out.append(
                Unified(
                    "tool_call_delta", tool_call_id=current.id, tool_name=current.name, arguments_delta=text, raw=obj
                )
            )
        if not continues:
            out += self._close_open(obj)
        out[first].signature = signature

    def _whole_call(
        self, call_id: str, name: str, args: Any, obj: dict[str, Any], signature: Optional[str], out: list[Unified]
    ) -> None:
        """A call delivered in one part: start (with the part's signature), one delta with the whole JSON, done."""
        raw_args: Optional[str] = None
        if args is None:
            arguments: dict[str, Any] = {}
        elif isinstance(args, dict):
            arguments = args
        elif type(args) is str:  # a proxy that forwards the arguments as a JSON string
            raw_args, arguments = args, parse_arguments(args)
        else:
            arguments = {"_value": args}
        text = raw_args if raw_args is not None else _dumps(arguments)
        out.append(Unified("tool_call_start", tool_call_id=call_id, tool_name=name, raw=obj, signature=signature))
        out.append(Unified("tool_call_delta", tool_call_id=call_id, tool_name=name, arguments_delta=text, raw=obj))
        out.append(
            Unified(
                "tool_call_done",
                tool_call_id=call_id,
                tool_name=name,
                arguments=arguments,
                arguments_raw=raw_args,
                raw=obj,
            )
        )

    def _close_open(self, obj: Optional[dict[str, Any]]) -> list[Unified]:
        """Events that finish the open streamed call (none when no call is open)."""
        call = self._open
        if call is None:
            return []
        self._open = None
        arguments, text = call.close()
        out: list[Unified] = []
        if text:
            out.append(
                Unified("tool_call_delta", tool_call_id=call.id, tool_name=call.name, arguments_delta=text, raw=obj)
            )
        out.append(Unified("tool_call_done", tool_call_id=call.id, tool_name=call.name, arguments=arguments, raw=obj))
        return out
