"""Chat Completions chunks (OpenAI ``/v1/chat/completions``, xAI and other OpenAI-compatible servers) -> Unified.

Contract (one instance per stream):

- ``choices[].delta.reasoning_content`` (else ``delta.reasoning``) -> ``reasoning_delta``; ``delta.content`` and
  ``delta.refusal`` -> ``text_delta``. A ``content`` that is a list of typed chunks (Mistral) gives, in order, a
  ``text_delta`` per ``text`` chunk, a ``reasoning_delta`` per inner text of a ``thinking`` chunk, ``raw`` for
  others. Only non-empty strings become deltas; a chunk that yields nothing (role-only, empty content,
  ``finish_reason`` with no open call) is one ``raw`` event.
- ``delta.tool_calls[]`` are keyed by (choice index, ``tool_calls[].index``; the position in the list when there is
  no index). The first fragment of a key opens the call (``tool_call_start``), each non-empty ``arguments`` fragment is
  a ``tool_call_delta``. A fragment carrying a *different* non-empty id at a key whose open call has an id closes that
  call and opens a new one, so calls never merge (all-``index: 0`` servers); an id already open under another key
  continues that call (now at this key), so ids never repeat. Open calls of a choice are closed (``tool_call_done``)
  by its ``finish_reason``, else by ``[DONE]``, unless that finish reason cut the response off (``length``,
  ``content_filter``): then, like calls open when the stream is cut, they are incomplete (no ``tool_call_done``;
  listed by the truncation or error event). xAI sends each call whole in one chunk: it takes the same
  start -> delta -> done path.
- Every chunk with a non-null ``usage`` -> ``usage`` (verbatim; OpenAI puts it in a final ``choices: []`` chunk,
  Grok sometimes earlier); ``self.usage`` keeps the last one.
- ``data: [DONE]`` -> ``done`` (exactly one): ``raw_stop_reason`` is the last ``finish_reason`` seen, ``stop_reason``
  its unified value (``stop`` -> end, ``length`` -> max_tokens, ``tool_calls``/``function_call`` -> tool_use,
  ``content_filter`` -> refusal, none -> end, other -> other; end becomes tool_use when client calls were made).
- A chunk ``{"error": ...}`` (OpenAI-compatible servers report late failures this way) -> ``error`` carrying the
  chunk's own usage, else the last usage seen; it ends the stream (``self.done``), so no truncation error follows.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Optional, Sequence

from ..events import LazyPayload, SSEEvent, Unified, new_event
from ..names import UnifiedType
from ..usage import Usage, count, detail
from . import typed
from .common import client_stop, error_object, error_payload, str_or, with_incomplete
from .contract import Normalizer
from .tool_calls import OpenCall, closes_calls

__all__ = ["CHAT_STOP", "ChatCompletionsNormalizer", "unified_chat_stop"]

#: Chat ``finish_reason`` -> unified stop reason (anything else maps to ``other``).
CHAT_STOP: dict[str, str] = {
    "stop": "end",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}

_EMPTY: dict[str, Any] = {}
_TEXTS: tuple[tuple[int, UnifiedType], ...] = ((4, "text_delta"), (5, "reasoning_delta"), (6, "reasoning_delta"))
#: The chunks read without a decode: one choice whose delta is text (``content``) or reasoning
#: (``reasoning_content``, else ``reasoning``), never both, with no ``type``, usage, error, finish reason, role,
#: refusal or tool call (each absent or null). Used once the stream's id and model are known: such a chunk sets
#: nothing else.
CHAT_DELTA_RULE = typed.delta_rule(
    (
        ("type",),
        ("usage",),
        ("error",),
        ("choices", 0, "finish_reason"),
        ("choices", 0, "delta", "content"),
        ("choices", 0, "delta", "reasoning_content"),
        ("choices", 0, "delta", "reasoning"),
        ("choices", 0, "delta", "refusal"),
        ("choices", 0, "delta", "tool_calls"),
        ("choices", 0, "delta", "function_call"),
        ("choices", 0, "delta", "role"),
    ),
    {"message": (None, ((None, _TEXTS),)), None: (None, ((None, _TEXTS),))},
    type_path=0,
    nulls=(1, 2, 3, 7, 8, 9, 10),
)
#: The one key of a delta that is a single text or reasoning fragment -> the event it makes.
_SINGLE_KEY: dict[Optional[str], UnifiedType] = {
    "content": "text_delta",
    "refusal": "text_delta",
    "reasoning_content": "reasoning_delta",
    "reasoning": "reasoning_delta",
}


def _choice_index(choice: dict[str, Any]) -> int:
    """A choice's ``index`` (0 when missing or not an int)."""
    index = choice.get("index")
    return index if type(index) is int else 0


def _content_chunk(chunk: Any, obj: dict[str, Any], out: list[Unified]) -> None:
    """The events of one typed content chunk: ``{"type": "text", "text"}`` -> ``text_delta``, ``{"type":
    "thinking", "thinking": [{"type": "text", "text"}, ...]}`` -> a ``reasoning_delta`` per inner text; any other
    chunk -> ``raw``."""
    kind = chunk.get("type") if type(chunk) is dict else None
    if kind == "text":
        text = chunk.get("text")
        if type(text) is str and text:
            out.append(new_event("text_delta", obj, text))
    elif kind == "thinking":
        parts = chunk.get("thinking")
        for part in parts if type(parts) is list else ():
            text = part.get("text") if type(part) is dict and part.get("type") == "text" else None
            if type(text) is str and text:
                out.append(new_event("reasoning_delta", obj, text))
    else:
        out.append(new_event("raw", obj))


def unified_chat_stop(finish_reason: Optional[str], client_calls: bool, stops: dict[str, str] = CHAT_STOP) -> str:
    """The unified stop reason for a chat ``finish_reason`` (``None``: the stream ended without one), by ``stops``."""
    return client_stop("end" if finish_reason is None else stops.get(finish_reason, "other"), client_calls)


class ChatCompletionsNormalizer(Normalizer):
    """Chat Completions chunks -> Unified (see the module docstring for the full contract)."""

    provider = "openai-chat"
    #: ``finish_reason`` -> unified stop reason (a server with its own values extends it).
    stops: ClassVar[dict[str, str]] = CHAT_STOP
    terminal = "data: [DONE]"

    def __init__(self) -> None:
        super().__init__()
        self._typed = typed.chat_chunk  # None: every chunk takes the full decode
        self._take = typed.take_deltas  # the compiled delta reader, or None
        #: The last ``finish_reason`` seen (the provider's own value).
        self.finish_reason: Optional[str] = None
        self._calls: dict[tuple[int, int], OpenCall] = {}
        self._count = 0
        self._client_calls = False

    @property
    def chat_id(self) -> Optional[str]:
        """The chunks' ``id`` (the contract's ``response_id``; kept under its old name)."""
        return self.response_id

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Chat Completions chunks: ``object: chat.completion.chunk``, or ``choices``."""
        return obj.get("object") == "chat.completion.chunk" or "choices" in obj

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """``{"error": ...}`` without anything else to go by: the OpenAI-compatible shape."""
        return "error" in obj

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``prompt_tokens`` / ``completion_tokens``; OpenAI counts reasoning inside ``completion_tokens``, xAI
        apart (its ``total_tokens`` adds it separately), and both come out with reasoning in ``output_tokens``."""
        if "prompt_tokens" not in raw and "completion_tokens" not in raw:
            return None
        prompt = count(raw.get("prompt_tokens"))
        completion = count(raw.get("completion_tokens"))
        reasoning = detail(raw, "completion_tokens_details", "reasoning_tokens")
        if reasoning and count(raw.get("total_tokens")) == prompt + completion + reasoning:
            completion += reasoning
        return Usage(
            prompt,
            completion,
            cached_input_tokens=detail(raw, "prompt_tokens_details", "cached_tokens"),
            cache_write_tokens=detail(raw, "prompt_tokens_details", "cache_write_tokens"),
            reasoning_tokens=reasoning,
            raw=raw,
            partial=partial,
            source=cls.provider,
        )

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """The chunk's ``id`` and ``model``."""
        return str_or(obj.get("id"), None), str_or(obj.get("model"), None)

    def reads_deltas(self) -> bool:
        """Whether the compiled delta reader takes this stream's text chunks now: it is there and the stream's id
        and model are known (so a chunk it takes changes nothing but the events)."""
        return (
            self._take is not None
            and CHAT_DELTA_RULE is not None
            and self.response_id is not None
            and self.model is not None
        )

    def normalize(self, events: Sequence[SSEEvent]) -> list[Unified]:
        """Text and reasoning chunks through the compiled delta reader once it can take them (see
        :meth:`reads_deltas`), else the typed fast path; every other chunk through :meth:`decoded`."""
        if not self.reads_deltas():
            return super().normalize(events)
        return self.normalize_reading(events, self._take, CHAT_DELTA_RULE)  # type: ignore[arg-type]

    @property
    def fast(self) -> Optional[Callable[[SSEEvent], Optional[list[Unified]]]]:
        """:meth:`fast_chunk` when typed decoding is on."""
        return None if self._typed is None else self.fast_chunk

    def fast_chunk(self, ev: SSEEvent) -> Optional[list[Unified]]:
        """The events of a chunk that is one text or reasoning delta of one choice and nothing else, decoded with
        only the fields that decide it (``raw`` stays lazy); None for any other chunk (see :mod:`.typed`)."""
        decode = self._typed
        data = ev.data
        if decode is None or data == "[DONE]":
            return None
        try:
            chunk = decode(data)
        except typed.DECODE_ERRORS:
            return None
        choices = chunk.choices
        if choices is None or len(choices) != 1 or chunk.usage is not None or chunk.error is not None:
            return None
        if chunk.type is not None:  # an OpenAI normaliser routes a payload with a "type" by the Responses rules
            return None
        choice = choices[0]
        delta = choice.delta
        if delta is None or choice.finish_reason is not None or delta.tool_calls is not None:
            return None
        if delta.function_call is not None or delta.refusal is not None or delta.role is not None:
            return None
        reasoning = delta.reasoning_content or delta.reasoning  # reasoning_content wins, never both counted
        if delta.content:
            if reasoning:
                return None
            kind: UnifiedType = "text_delta"
            text = delta.content
        elif reasoning:
            kind, text = "reasoning_delta", reasoning
        else:
            return None
        if self.response_id is None and type(chunk.id) is str:
            self.response_id = chunk.id
        if self.model is None and type(chunk.model) is str:
            self.model = chunk.model
        return [new_event(kind, LazyPayload(data), text)]

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one chunk."""
        error = obj.get("error")
        if error and (type(error) is dict or type(error) is str):
            return [self._error(obj)]
        if self.response_id is None:  # constant over a stream: read once
            chat_id = obj.get("id")
            if type(chat_id) is str:
                self.response_id = chat_id
        if self.model is None:
            model = obj.get("model")
            if type(model) is str:
                self.model = model
        out: list[Unified] = []
        choices = obj.get("choices")
        if type(choices) is list:
            for choice in choices:
                if type(choice) is dict:
                    self._choice(choice, obj, out)
        usage = obj.get("usage")
        if type(usage) is dict:
            self.usage = usage
            out.append(Unified("usage", usage=usage, raw=obj))
        if not out:
            out.append(new_event("raw", obj))
        return out

    def _choice(self, choice: dict[str, Any], obj: dict[str, Any], out: list[Unified]) -> None:
        """Append the events of one choice: its delta, then the calls its ``finish_reason`` closes."""
        delta = choice.get("delta")
        if type(delta) is dict and delta:
            # the bulk of a stream is a one-key delta, {"content": "..."} or {"reasoning_content": "..."}
            key = next(iter(delta)) if len(delta) == 1 else None
            kind = _SINGLE_KEY.get(key)
            value = delta[key] if kind is not None else None
            if kind is None or type(value) is not str:  # a list of typed content chunks: the rules of _delta
                self._delta(_choice_index(choice), delta, obj, out)
            elif value:
                out.append(new_event(kind, obj, value))
        finish = choice.get("finish_reason")
        if type(finish) is str and finish:
            self.finish_reason = finish
            if self._calls and closes_calls(self.stops.get(finish, "other")):
                index = _choice_index(choice)
                for key in [k for k in self._calls if k[0] == index]:
                    out.append(self._calls.pop(key).close(obj))

    def _delta(self, index: int, delta: dict[str, Any], obj: dict[str, Any], out: list[Unified]) -> None:
        """Append the events of the delta of choice ``index``: reasoning, content, refusal, tool call fragments."""
        reasoning = delta.get("reasoning_content")
        if type(reasoning) is not str or not reasoning:
            reasoning = delta.get("reasoning")  # vLLM / OpenRouter spelling; never both counted
        if type(reasoning) is str and reasoning:
            out.append(new_event("reasoning_delta", obj, reasoning))
        content = delta.get("content")
        if type(content) is str and content:
            out.append(new_event("text_delta", obj, content))
        elif type(content) is list:  # typed content chunks (Mistral's Magistral models)
            for chunk in content:
                _content_chunk(chunk, obj, out)
        refusal = delta.get("refusal")
        if type(refusal) is str and refusal:
            out.append(new_event("text_delta", obj, refusal))
        tool_calls = delta.get("tool_calls")
        if type(tool_calls) is list:
            for position, fragment in enumerate(tool_calls):
                if type(fragment) is dict:
                    self._tool(index, position, fragment, fragment.get("function"), obj, out)
        legacy = delta.get("function_call")  # the pre-tools ``functions`` API: one call per choice
        if type(legacy) is dict:
            self._tool(index, -1, _EMPTY, legacy, obj, out)

    def _tool(
        self,
        choice: int,
        position: int,
        fragment: dict[str, Any],
        function: Any,
        obj: dict[str, Any],
        out: list[Unified],
    ) -> None:
        index = fragment.get("index")
        key = (choice, index if type(index) is int else position)
        if type(function) is not dict:
            function = _EMPTY
        call_id = fragment.get("id")
        if type(call_id) is not str or not call_id:
            call_id = None
        name = function.get("name")
        if type(name) is not str or not name:
            name = None
        calls = self._calls
        call = calls.get(key)
        if call_id is not None:
            if call is None:  # the same id under another index is the same call, moved here (ids never repeat)
                moved = next((k for k, c in calls.items() if c.id == call_id), None)
                if moved is not None:
                    call = calls[key] = calls.pop(moved)
            elif call.provider_id and call_id != call.id:
                out.append(calls.pop(key).close(obj))  # a new call at an occupied index: never merge
                call = None
        if call is None:
            self._count += 1
            if call_id is None:
                call = OpenCall(f"{self.response_id or 'chatcmpl'}-call-{self._count}", name, provider_id=False)
            else:
                call = OpenCall(call_id, name)
            calls[key] = call
            self._client_calls = True
            out.append(call.start(obj))
        elif call.name is None and name is not None:
            call.name = name
        arguments = function.get("arguments")
        if type(arguments) is str and arguments:
            out.append(call.delta(arguments, obj))

    def _error(self, obj: dict[str, Any]) -> Unified:
        usage = obj.get("usage")
        if type(usage) is dict:  # an error chunk that still reports usage (OpenRouter): the final counts
            self.usage = usage
        self.done = True
        payload = with_incomplete(error_payload(error_object(obj, ("error",))), self.incomplete_tool_calls())
        return Unified("error", error=payload, usage=self.usage, raw=obj)

    def sentinel(self, ev: SSEEvent) -> list[Unified]:
        """``data: [DONE]``: close open calls, then the one ``done`` event."""
        if self.finished:
            return []
        raw = {"event": ev.event, "data": ev.data}
        stop = unified_chat_stop(self.finish_reason, self._client_calls, self.stops)
        out: list[Unified] = []
        if closes_calls(stop):
            out += [call.close(raw) for call in self._calls.values()]
            self._calls.clear()
        self.finished = self.done = True
        out.append(Unified("done", stop_reason=stop, raw=raw, raw_stop_reason=self.finish_reason))
        return out

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The calls still open (never closed by a finish reason or ``[DONE]``)."""
        return [call.incomplete() for call in self._calls.values()]
