"""Ollama ``/api/chat`` and ``/api/generate`` streams (NDJSON: one JSON object per line) -> Unified.

Contract (one instance per stream; every event made from a line carries ``raw``; ``model`` is kept, Ollama sends no
response id):

- ``message.thinking`` (``/api/chat``) or ``thinking`` (``/api/generate``) -> ``reasoning_delta``, then
  ``message.content`` or ``response`` -> ``text_delta`` (non-empty strings only); a line with neither -> ``raw``.
- ``message.tool_calls``: Ollama sends each call whole (``{"function": {"name", "arguments": {...}}, "id"?}``) ->
  ``tool_call_start``, one ``tool_call_delta`` with the arguments' compact JSON, ``tool_call_done`` with the
  arguments object (``arguments_raw`` None: the provider sent an object). A call without an ``id`` gets ``call_N``.
- The ``done: true`` line ends the stream: a ``usage`` event carrying the count and timing fields it has
  (``prompt_eval_count``, ``eval_count``, the durations), then ``done``: ``raw_stop_reason`` = ``done_reason``;
  stop -> end (tool_use when calls were made), length -> max_tokens, anything else (load, unload ...) -> other, none
  -> end.
- ``{"error": "..."}`` -> ``error`` (the message, and the usage seen so far); it ends the stream.
- Usage: ``prompt_eval_count`` is every prompt token (Ollama reports no cached or reasoning count), ``eval_count``
  every generated one, thinking included.
"""

from __future__ import annotations

from typing import Any, Optional

from ..events import Unified, new_done, new_event, new_tool_event, new_usage
from ..usage import Usage
from ._fast import typed
from .common import error_payload, str_or
from .contract import Normalizer, Recognition, not_a_payload
from .tool_calls import CallIds, compact_json, done_event

__all__ = ["OLLAMA_STOP", "USAGE_FIELDS", "OllamaNormalizer", "OllamaRules"]

#: Ollama ``done_reason`` -> unified stop reason (anything else maps to ``other``; none to ``end``).
OLLAMA_STOP: dict[str, str] = {"stop": "end", "length": "max_tokens"}
#: The count and timing fields of the ``done: true`` line: the usage object.
USAGE_FIELDS = (
    "prompt_eval_count",
    "prompt_eval_duration",
    "eval_count",
    "eval_duration",
    "total_duration",
    "load_duration",
)


#: The lines read without a decode, once the stream showed which endpoint it is: a ``/api/chat`` line whose
#: ``message`` has a non-empty ``thinking`` or ``content`` (not both), and a ``/api/generate`` line with a non-empty
#: ``thinking`` or ``response`` (not both); ``done`` not true, no ``error``, no ``tool_calls``. ``model`` is noted.
_CHAT_RULE = typed.delta_rule(
    (
        ("message", "thinking"),
        ("message", "content"),
        ("done",),
        ("error",),
        ("message", "tool_calls"),
        ("model",),
        ("response",),
        ("thinking",),
    ),
    {None: (None, ((None, ((0, "reasoning_delta"), (1, "text_delta"))),))},
    nulls=(3, 4),
    absent=(6, 7),
    notes=((5, "string"),),
    not_true=(2,),
)
_GENERATE_RULE = typed.delta_rule(
    (("thinking",), ("response",), ("done",), ("error",), ("tool_calls",), ("model",), ("message",)),
    {None: (None, ((None, ((0, "reasoning_delta"), (1, "text_delta"))),))},
    nulls=(3, 4),
    absent=(6,),
    notes=((5, "string"),),
    not_true=(2,),
)


class OllamaRules(Recognition):
    """How the registry recognises Ollama payloads, usage objects and metadata."""

    provider = "ollama"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """A boolean ``done`` beside a ``message`` object or a ``response`` string (what every line has)."""
        return type(obj.get("done")) is bool and (type(obj.get("message")) is dict or type(obj.get("response")) is str)

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """``{"error": "..."}``: Ollama's error is a bare string."""
        return type(obj.get("error")) is str

    @classmethod
    def streams_on(cls, obj: dict[str, Any]) -> bool:
        """A line with ``"done": false``: a stream's chunk (a whole response says ``"done": true``)."""
        return obj.get("done") is False and cls.claims(obj)

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """The count fields of the ``done`` line (no cached or reasoning counts: ``None``)."""
        if "prompt_eval_count" not in raw and "eval_count" not in raw:
            return None
        prompt, generated = raw.get("prompt_eval_count"), raw.get("eval_count")
        return cls.counted(
            raw, partial, prompt if type(prompt) is int else None, generated if type(generated) is int else None
        )

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """No response id; the ``model``."""
        return None, str_or(obj.get("model"), None)


class OllamaNormalizer(Normalizer):
    """``/api/chat`` and ``/api/generate`` lines -> Unified (see the module docstring for the full contract)."""

    provider = "ollama"
    terminal = "a line with done: true"
    rules = OllamaRules
    stops = OLLAMA_STOP
    delta_notes = 1  # the model the reader saw; the rule is the endpoint's, chosen by the first line
    names_response_id = False

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    _client_calls = False

    def __init__(self) -> None:
        super().__init__()
        self._ids = CallIds()

    def absorb(self) -> None:
        """The model the reader noted."""
        notes = self._notes
        if notes is not None and notes[0] is not None:
            self.model = notes[0]
            notes[0] = None

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one line."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        error = dict.get(obj, "error")
        if error is not None:
            return self._error(obj, error)
        self.model = str_or(dict.get(obj, "model"), self.model)
        message = dict.get(obj, "message")
        if self._delta_rule is None:  # the endpoint's rule, once a line showed it (this stream's own)
            self._delta_rule = typed.own_rule(_CHAT_RULE if type(message) is dict else _GENERATE_RULE)
        holder = message if type(message) is dict else obj
        out: list[Unified] = []
        thinking = dict.get(holder, "thinking")
        if type(thinking) is str and thinking:
            out.append(new_event("reasoning_delta", obj, thinking))
        text = dict.get(holder, "content") if holder is message else dict.get(obj, "response")
        if type(text) is str and text:
            out.append(new_event("text_delta", obj, text))
        calls = dict.get(holder, "tool_calls")
        if type(calls) is list:
            for call in calls:
                self._whole_call(call, obj, out)
        if dict.get(obj, "done") is True:
            self._done_line(obj, out)
        if not out:
            out.append(new_event("raw", obj))
        return out

    def _whole_call(self, call: Any, obj: dict[str, Any], out: list[Unified]) -> None:
        """A call Ollama sent whole: start, one delta with its arguments' compact JSON, done."""
        function = dict.get(call, "function") if type(call) is dict else None
        if type(function) is not dict:
            out.append(new_event("raw", obj))
            return
        name = dict.get(function, "name")
        name = name if type(name) is str else None
        call_id = self._ids.take(dict.get(call, "id"))
        arguments = dict.get(function, "arguments")
        self._client_calls = True
        out.append(new_tool_event("tool_call_start", call_id, name, obj))
        if type(arguments) is str:  # a client that forwards the arguments as a JSON string
            out.append(new_tool_event("tool_call_delta", call_id, name, obj, arguments))
            out.append(done_event(call_id, name, obj, text=arguments))
            return
        out.append(
            new_tool_event("tool_call_delta", call_id, name, obj, compact_json({} if arguments is None else arguments))
        )
        out.append(done_event(call_id, name, obj, value=arguments))

    def _done_line(self, obj: dict[str, Any], out: list[Unified]) -> None:
        if self.finished:
            return
        usage = {key: obj[key] for key in USAGE_FIELDS if key in obj}
        if usage:
            self.usage = usage
            out.append(new_usage(dict(usage), obj))
        reason = dict.get(obj, "done_reason")
        raw_stop = reason if type(reason) is str else None
        stop = self.stop_for(raw_stop, self._client_calls)
        self.finished = self.done = True
        out.append(new_done(stop, raw_stop, obj))

    def _error(self, obj: dict[str, Any], error: Any) -> list[Unified]:
        self.done = True
        usage = dict(self.usage) if self.usage else None
        payload = error_payload(error if type(error) is dict else {"message": str(error)})
        return [Unified("error", error=payload, usage=usage, raw=obj)]
