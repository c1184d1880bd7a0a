"""Amazon Bedrock streams (AWS event-stream framing) -> Unified: ConverseStream (``bedrock-converse``) and
InvokeModelWithResponseStream for Anthropic models (``bedrock-anthropic``).

Both read the event-stream messages the ``aws-eventstream`` scanner frames (the event name is the
``:event-type`` header, the payload JSON) and the event dicts boto3 hands out, fed one by one with ``frame()`` or
as the items of ``iter_unified(response["stream"], ...)``: ``{"contentBlockDelta": {...}}``,
``{"chunk": {"bytes": b"..."}}``.

Both:

- An exception message (``:message-type: exception``, e.g. ``throttlingException``, ``modelStreamErrorException``,
  ``validationException``; an event dict keyed ``...Exception``) or an error message (``:message-type: error``,
  ``:error-code`` / ``:error-message`` headers) -> ``error`` whose ``type`` is the exception type or error code
  and ``message`` its message, carrying the usage so far and the calls it left open; it ends the stream.

``bedrock-converse`` (ConverseStream; also the Converse-shaped ``chunk`` events of InvokeModel for Amazon Nova,
and the chunks of InvokeModel's other text models, :func:`model_text`: Meta Llama, Amazon Titan, Cohere Command,
Mistral, DeepSeek, AI21 Jamba, OpenAI's open models: each chunk's text -> ``text_delta``; its stop (``stop`` ->
end, ``length`` -> max_tokens, filters -> refusal, :data:`MODEL_TEXT_STOP`) -> ``usage`` from the invocation
metrics, then ``done``; their tool calls are not read):

- ``contentBlockDelta``: ``delta.text`` -> ``text_delta``; ``delta.reasoningContent.text`` ->
  ``reasoning_delta``; ``reasoningContent.signature`` -> ``raw`` with ``signature``; ``redactedContent``,
  and anything else -> ``raw``; ``delta.citation`` -> ``raw`` carrying one :class:`~ssewire.citations.Citation`
  (:func:`converse_citation`: ``kind`` the location's key, ``web`` ``url``, ``title``, ``sourceContent`` texts as
  ``cited_text``, no span). ``contentBlockStart`` with ``start.toolUse`` (``toolUseId``, ``name``) ->
  ``tool_call_start`` keyed by ``contentBlockIndex``; each non-empty ``delta.toolUse.input`` -> ``tool_call_delta``;
  ``contentBlockStop`` -> ``tool_call_done``. A ``toolUse`` whose ``type`` is ``server_tool_use`` (Amazon Nova's
  system tools: ``nova_grounding``, ``nova_code_interpreter``) is run by the service: ``server=True``, never a client
  call; its ``toolResult`` block (``start.toolResult``, ``delta.toolResult``) -> ``raw``.
- ``messageStop.stopReason`` decides the stop (``additionalModelResponseFields`` in its ``raw``); ``metadata``
  (``usage`` with cache read/write counts, ``metrics.latencyMs``, ``trace``) -> ``usage``. The one ``done`` comes
  with the later of the two, whichever order they arrive in (documented: ``metadata`` last), so ``usage`` always
  precedes it: end_turn -> end (tool_use when client calls were made), tool_use, max_tokens and
  model_context_window_exceeded -> max_tokens, stop_sequence, guardrail_intervened and content_filtered ->
  refusal, anything else -> other. A stream that lacks either ends with ``stream_truncated`` naming the missing
  one.
- ``amazon-bedrock-invocationMetrics`` (InvokeModel) is kept in ``invocation_metrics``.

``bedrock-anthropic``: each ``chunk`` event's ``bytes`` (base64 of an Anthropic Messages event; raw bytes from
boto3) is normalised exactly as :mod:`.anthropic` does; the ``amazon-bedrock-invocationMetrics`` of its
``message_stop`` is kept in ``invocation_metrics`` (and in that ``done``'s ``raw``).
"""

from __future__ import annotations

import binascii
from typing import Any, Callable, Optional, Sequence, Union

from .._json import loads
from .._scan import SSEEvent as _Event
from ..citations import Citation
from ..events import SSEEvent, Unified, new_event, new_usage
from ..usage import Usage, count
from ._fast import typed
from ._fast.bedrock_chunks import type_of, unwrap_chunks
from ._fast.bedrock_chunks_py import CHUNK_PREFIX as _CHUNK_PREFIX
from ._fast.bedrock_chunks_py import FAILED as _FAILED
from ._fast.bedrock_chunks_py import METRICS as _METRICS
from .anthropic import AnthropicNormalizer, AnthropicRules
from .common import error_payload, key_of, with_incomplete
from .contract import Normalizer, Recognition, not_a_payload
from .tool_calls import CallIds, CallTable, OpenCall

__all__ = [
    "CONVERSE_EVENTS",
    "CONVERSE_STOP",
    "MODEL_TEXT_STOP",
    "SERVER_TOOL_USE",
    "BedrockAnthropicNormalizer",
    "BedrockAnthropicRules",
    "BedrockConverseNormalizer",
    "ConverseRules",
    "converse_citation",
    "model_text",
]

#: Converse ``stopReason`` -> unified stop reason (anything else maps to ``other``).
CONVERSE_STOP: dict[str, str] = {
    "end_turn": "end",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "refusal",
    "content_filtered": "refusal",
    # output the model wrote wrong: failed, so that a call still open is incomplete, never run
    "malformed_tool_use": "failed",
    "malformed_model_output": "failed",
}
#: The event types of ConverseStream.
CONVERSE_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)
#: ``toolUse.type`` of a call the service runs itself (Amazon Nova's system tools: ``nova_grounding``,
#: ``nova_code_interpreter``); its ``toolResult`` block follows in the same stream.
SERVER_TOOL_USE = "server_tool_use"

#: The events read without a decode: ``contentBlockDelta`` whose ``delta`` holds one non-empty string among
#: ``text``, ``reasoningContent.text`` and ``toolUse.input`` (for the open call at ``contentBlockIndex``), and no
#: signature, redacted reasoning or citation.
_DELTA_RULE = typed.delta_rule(
    (
        ("delta", "text"),
        ("delta", "reasoningContent", "text"),
        ("delta", "toolUse", "input"),
        ("contentBlockIndex",),
        ("delta", "reasoningContent", "signature"),
        ("delta", "reasoningContent", "redactedContent"),
        ("delta", "citation"),
    ),
    {
        "contentBlockDelta": (
            None,
            ((None, ((0, "text_delta"), (1, "reasoning_delta"), (2, "tool_call_delta"))),),
        )
    },
    key_path=3,
    nulls=(4, 5, 6),
)


def converse_citation(citation: dict[str, Any]) -> Citation:
    """A ``contentBlockDelta`` ``citation`` (``CitationsDelta``: ``title``, ``source``, ``sourceContent``,
    ``location``) as a :class:`~ssewire.citations.Citation`: ``kind`` the location's one key (``web``,
    ``documentChar``, ``documentPage``, ``documentChunk``, ``searchResultLocation``; ``citation`` without one),
    ``url`` the web location's ``url``, ``title`` the ``title``, ``cited_text`` the ``sourceContent`` texts joined
    (the source's words). No span: Bedrock's locations count in the source, not in the answer."""
    location = citation.get("location")
    kind, where = "citation", None
    if type(location) is dict and len(location) == 1:
        kind, where = next(iter(location.items()))
    url = where.get("url") if type(where) is dict else None
    title = citation.get("title")
    content = citation.get("sourceContent")
    texts = (
        [c["text"] for c in content if type(c) is dict and type(c.get("text")) is str] if type(content) is list else []
    )
    return Citation(
        kind,
        url if type(url) is str else None,
        title if type(title) is str else None,
        "".join(texts) if texts else None,
        raw=citation,
    )


def _failed(ev: SSEEvent) -> bool:
    """An exception or error message of the event-stream framing."""
    return getattr(ev, "message_type", None) in _FAILED


def _chunk_bytes(value: Any) -> Optional[str]:
    """The Anthropic/Nova event inside a ``chunk`` payload: its ``bytes`` (base64 text from the wire, raw bytes
    from boto3) as text; None when it is neither."""
    data = value.get("bytes") if type(value) is dict else None
    try:
        if type(data) is str:
            return binascii.a2b_base64(data).decode("utf-8", "replace")
        if isinstance(data, (bytes, bytearray)):
            return bytes(data).decode("utf-8", "replace")
    except ValueError:  # binascii.Error, or a str that is not ASCII
        return None
    return None


def _chunk_text(data: str) -> Optional[str]:
    """The event inside a ``chunk`` message's payload text (``{"bytes":"<base64>", "p": ...}``), or None."""
    if data.startswith(_CHUNK_PREFIX):  # the shape Bedrock sends: no decode of the wrapper
        end = data.find('"', len(_CHUNK_PREFIX))
        if end > 0 and data[end + 1 : end + 2] in (",", "}") and data.find("\\", len(_CHUNK_PREFIX), end) < 0:
            try:
                return binascii.a2b_base64(data[len(_CHUNK_PREFIX) : end]).decode("utf-8", "replace")
            except ValueError:  # binascii.Error, or a str that is not ASCII
                return None
    try:
        obj = loads(data)
    except ValueError:
        return None
    return _chunk_bytes(obj)


#: An InvokeModel text model's own stop value (Llama ``stop_reason``, Titan ``completionReason``, Cohere and Mistral
#: ``finish_reason`` / ``stop_reason``, chat-shaped ``finish_reason``) -> unified stop reason (any other ``other``).
MODEL_TEXT_STOP: dict[str, str] = {
    "stop": "end",
    "end_turn": "end",
    "eos": "end",
    "FINISH": "end",
    "COMPLETE": "end",
    "STOP_SEQUENCE": "stop_sequence",
    "stop_sequence": "stop_sequence",
    "length": "max_tokens",
    "LENGTH": "max_tokens",
    "MAX_TOKENS": "max_tokens",
    "max_tokens": "max_tokens",
    "CONTENT_FILTERED": "refusal",
    "content_filter": "refusal",
    "ERROR_TOXIC": "refusal",
    "ERROR_LIMIT": "failed",
    "ERROR": "failed",
}


def model_text(obj: dict[str, Any]) -> Optional[tuple[Any, Any]]:
    """``(text, stop)`` of an InvokeModel chunk of a text model that is neither Anthropic's nor Converse-shaped:
    Meta Llama (``generation``, ``stop_reason``), Amazon Titan Text (``outputText``, ``completionReason``), Cohere
    Command (``text``, ``finish_reason`` once ``is_finished``), Mistral (``outputs[0]``: ``text``, ``stop_reason``)
    and the chat-shaped ones (``choices[0]``: ``text``, ``delta.content`` or ``message.content``; ``stop_reason``
    or ``finish_reason``: DeepSeek, AI21 Jamba, Mistral Large, OpenAI's open models); None for any other."""
    if "generation" in obj:
        return obj.get("generation"), obj.get("stop_reason")
    if "outputText" in obj:
        return obj.get("outputText"), obj.get("completionReason")
    if "is_finished" in obj:
        return obj.get("text"), obj.get("finish_reason") if obj.get("is_finished") is True else None
    for key in ("outputs", "choices"):
        items = obj.get(key)
        if type(items) is list and items and type(items[0]) is dict:
            item = items[0]
            text = item.get("text")
            if text is None:
                for holder in (item.get("delta"), item.get("message")):
                    if type(holder) is dict:
                        text = holder.get("content")
                        break
            stop = item.get("stop_reason")
            return text, item.get("finish_reason") if stop is None else stop
    return None


def _keyed_inner(obj: Any) -> Optional[dict[str, Any]]:
    """The decoded event inside a ``chunk`` payload object, when it is a JSON object."""
    text = _chunk_bytes(obj)
    if text is None:
        return None
    try:
        inner = loads(text)
    except ValueError:
        return None
    return inner if type(inner) is dict else None


class _Bedrock(Normalizer):
    """What both Bedrock normalisers share: exception and error messages, and the invocation metrics."""

    first_event_alone = False  # (the rest of a first chunk is read alike either way)

    invocation_metrics: Optional[dict[str, Any]] = None

    def _exception(self, name: Optional[str], obj: Any, message_type: str, header_message: Any = None) -> list[Unified]:
        """The ``error`` event of an exception or error message named ``name`` with payload ``obj``."""
        inner = dict(obj) if type(obj) is dict else {}
        message = inner.get("message", inner.get("Message", header_message))
        inner["type"] = name or message_type
        inner["message"] = message
        error = error_payload(inner, message_type)
        error["message_type"] = message_type
        self.done = True
        usage = dict(self.usage) if self.usage else None
        return [
            Unified(
                "error",
                error=with_incomplete(error, self.incomplete_for_error()),
                usage=usage,
                raw=obj if type(obj) is dict else {"type": name, "message": message},
            )
        ]

    def _failed_event(self, ev: SSEEvent) -> list[Unified]:
        """An exception or error message of the framing."""
        try:
            obj = loads(ev.data) if ev.data else {}
        except ValueError:
            obj = {"message": ev.data}
        headers = getattr(ev, "headers", {})
        return self._exception(ev.event, obj, getattr(ev, "message_type", "exception"), headers.get(":error-message"))

    def _metrics(self, obj: dict[str, Any]) -> None:
        metrics = obj.get(_METRICS)
        if type(metrics) is dict:
            self.invocation_metrics = metrics


class ConverseRules(Recognition):
    """How the registry recognises ConverseStream payloads, usage objects and metadata."""

    provider = "bedrock-converse"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """A ConverseStream event name (or, for a ``chunk``, a Converse-shaped event inside it); without a name, a
        payload keyed by event names (boto3's, a ``chunk`` too) or one with a ``contentBlockIndex`` or a
        ``stopReason``."""
        if event in CONVERSE_EVENTS:
            return True
        if event is None and type(obj.get("chunk")) is dict:  # boto3's InvokeModel dict: its event name as its key
            obj, event = obj["chunk"], "chunk"
        if event == "chunk":
            inner = _keyed_inner(obj)
            return inner is not None and (any(key in CONVERSE_EVENTS for key in inner) or model_text(inner) is not None)
        if event is not None:
            return False
        return "contentBlockIndex" in obj or "stopReason" in obj or any(key in CONVERSE_EVENTS for key in obj)

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``inputTokens`` excludes the cache counts (``cacheReadInputTokens`` / ``cacheWriteInputTokens``;
        ``...Count`` in InvokeModel's Nova shape), so every prompt token is their sum; the 5-minute / 1-hour cache
        writes from ``cacheDetails`` (``[{"ttl": "5m" | "1h", "inputTokens": n}]``, else None); no reasoning count."""
        if "inputTokens" not in raw and "outputTokens" not in raw:
            return None
        read = count(raw.get("cacheReadInputTokens", raw.get("cacheReadInputTokenCount")))
        written = count(raw.get("cacheWriteInputTokens", raw.get("cacheWriteInputTokenCount")))
        usage = cls.counted(
            raw, partial, count(raw.get("inputTokens")) + read + written, count(raw.get("outputTokens")), read, written
        )
        details = raw.get("cacheDetails")
        if type(details) is list:
            by_ttl = {"5m": 0, "1h": 0}
            for detail in details:
                ttl = detail.get("ttl") if type(detail) is dict else None
                if ttl in by_ttl:
                    by_ttl[ttl] += count(detail.get("inputTokens"))
            usage.cache_write_5m_tokens, usage.cache_write_1h_tokens = by_ttl["5m"], by_ttl["1h"]
        return usage


class BedrockConverseNormalizer(_Bedrock):
    """ConverseStream events -> Unified (see the module docstring for the full contract)."""

    provider = "bedrock-converse"
    terminal = "metadata"
    rules = ConverseRules
    stops = CONVERSE_STOP
    delta_rule = _DELTA_RULE  # text, reasoning and tool argument deltas
    names_response_id = False
    names_model = False

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    #: The provider's ``stopReason`` from ``messageStop``.
    stop_reason: Optional[str] = None
    #: ``amazon-bedrock-invocationMetrics`` (InvokeModel streams).
    invocation_metrics: Optional[dict[str, Any]] = None
    _client_calls = False
    _stopped = False  # messageStop seen
    _reported = False  # metadata seen

    def __init__(self) -> None:
        super().__init__()
        self._calls = CallTable()  # open tool calls by content block index
        self._ids = CallIds()
        self._reader_calls = self._calls.open

    def frame(self, message: Union[str, bytes, bytearray, dict[str, Any]]) -> list[Unified]:
        """One event boto3 decoded (``{"contentBlockDelta": {...}}``, ``{"chunk": {"bytes": ...}}``), or one
        Converse event's JSON."""
        if isinstance(message, dict):
            return self._keyed(message)
        return super().frame(message)

    def decoded(self, ev: SSEEvent) -> list[Unified]:
        """Exception and error messages become ``error``; events are decoded: a ``chunk`` message (InvokeModel's
        Converse-shaped events, Amazon Nova's) written as Bedrock writes it (``{"bytes":"<base64>",...``) without
        decoding its wrapper, only the event inside (any other is decoded whole, as :meth:`payload` reads it)."""
        if _failed(ev):
            return self._failed_event(ev)
        if ev.event == "chunk" and type(ev.data) is str:
            text = _chunk_text(ev.data)
            if text is not None:
                try:
                    inner = loads(text)
                except ValueError:
                    inner = None
                if type(inner) is dict:
                    return self._keyed(inner)
        return super().decoded(ev)

    def _keyed(self, obj: dict[str, Any]) -> list[Unified]:
        """An event object keyed by its event name (boto3, and the ``chunk`` bytes of InvokeModel), or the
        ``chunk`` of another text model's InvokeModel (:func:`model_text`)."""
        self._metrics(obj)
        if "contentBlockDelta" not in obj:  # (the bulk of a Converse stream: never another model's chunk)
            read = model_text(obj)
            if read is not None:
                return self._model_chunk(obj, *read)
        out: list[Unified] = []
        for key, value in obj.items():
            if key != _METRICS:
                out += self.payload(value, key) if type(value) is dict else [new_event("raw", {key: value})]
        return out

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one event (``event``: its name)."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        handler = _HANDLERS.get(event) if event is not None else None
        if handler is not None:
            return handler(self, obj)
        if event == "chunk":
            inner = _keyed_inner(obj)
            return [new_event("raw", obj)] if inner is None else self._keyed(inner)
        if event is not None and event.endswith("Exception"):
            return self._exception(event, obj, "exception")
        if event is None and any(key in CONVERSE_EVENTS for key in obj):
            return self._keyed(obj)
        return [new_event("raw", obj)]

    def _model_chunk(self, obj: dict[str, Any], text: Any, stop: Any) -> list[Unified]:
        """A text model's InvokeModel chunk: its text, and at its stop the usage of the invocation metrics (the
        counts Bedrock bills: ``inputTokenCount`` / ``outputTokenCount``) then the stream's one ``done``."""
        out: list[Unified] = []
        if type(text) is str and text and not self.finished:
            out.append(new_event("text_delta", obj, text))
        if type(stop) is str and stop and not self.finished:
            self.stop_reason = stop
            metrics = self.invocation_metrics
            if metrics is not None:
                usage = {"inputTokens": metrics.get("inputTokenCount"), "outputTokens": metrics.get("outputTokenCount")}
                self.usage = usage
                out.append(new_usage(dict(usage), obj))
            out += self.done_events(obj, MODEL_TEXT_STOP.get(stop, "other"), stop, self._calls)
        return out or [new_event("raw", obj)]

    def _block_start(self, obj: dict[str, Any]) -> list[Unified]:
        """A ``toolUse`` block opens a call: a server call when its ``type`` is :data:`SERVER_TOOL_USE`, else a
        client call. Any other block (``toolResult`` of a server call, an image ...) is ``raw``."""
        start = dict.get(obj, "start")
        tool = dict.get(start, "toolUse") if type(start) is dict else None
        if type(tool) is not dict:
            return [new_event("raw", obj)]
        index = key_of(dict.get(obj, "contentBlockIndex"))
        out: list[Unified] = self._calls.close_at(index, obj)  # a new block at an index whose call is still open
        given_id, name = dict.get(tool, "toolUseId"), dict.get(tool, "name")
        provided = type(given_id) is str and bool(given_id)
        call_id = self._ids.take(given_id)
        server = dict.get(tool, "type") == SERVER_TOOL_USE
        call = OpenCall(call_id, name if type(name) is str else None, server, provided)
        self._client_calls = self._client_calls or not server
        out.append(self._calls.start(index, call, obj))
        return out

    def _block_delta(self, obj: dict[str, Any]) -> list[Unified]:
        delta = dict.get(obj, "delta")
        if type(delta) is not dict:
            return [new_event("raw", obj)]
        text = dict.get(delta, "text")
        if type(text) is str and text:
            return [new_event("text_delta", obj, text)]
        reasoning = dict.get(delta, "reasoningContent")
        if type(reasoning) is dict:
            text = dict.get(reasoning, "text")
            if type(text) is str and text:
                return [new_event("reasoning_delta", obj, text)]
            signature = dict.get(reasoning, "signature")
            if type(signature) is str and signature:
                return [new_event("raw", obj, "", None, signature)]
        tool = dict.get(delta, "toolUse")
        if type(tool) is dict:
            fragment = dict.get(tool, "input")
            call = self._calls.get(key_of(dict.get(obj, "contentBlockIndex")))
            if type(fragment) is str and fragment and call is not None:
                return [call.delta(fragment, obj)]
        citation = dict.get(delta, "citation")
        if type(citation) is dict:
            event = new_event("raw", obj)
            event.citations = [converse_citation(citation)]
            return [event]
        return [new_event("raw", obj)]

    def _block_stop(self, obj: dict[str, Any]) -> list[Unified]:
        call = self._calls.pop(key_of(dict.get(obj, "contentBlockIndex")))
        return [new_event("raw", obj)] if call is None else [call.close(obj)]

    def _message_stop(self, obj: dict[str, Any]) -> list[Unified]:
        """``messageStop``: its ``stopReason`` decides the stop; ``done`` now when ``metadata`` came first."""
        stop = dict.get(obj, "stopReason")
        if type(stop) is str and not self.finished:
            self.stop_reason = stop
        self._stopped = True
        return self._finish_message(obj, [])

    def _metadata(self, obj: dict[str, Any]) -> list[Unified]:
        """``metadata``: ``usage``; ``done`` now when ``messageStop`` came first (the documented order)."""
        out: list[Unified] = []
        usage = dict.get(obj, "usage")
        if type(usage) is dict:
            self.usage = dict(usage)
            out.append(new_usage(dict(usage), obj))
        self._reported = True
        return self._finish_message(obj, out)

    def _finish_message(self, obj: dict[str, Any], out: list[Unified]) -> list[Unified]:
        """``out`` and, once both ``messageStop`` and ``metadata`` arrived, the stream's one ``done``."""
        if self.finished or not (self._stopped and self._reported):
            return out or [new_event("raw", obj)]
        raw_stop = self.stop_reason
        return out + self.done_events(obj, self.stop_for(raw_stop, self._client_calls), raw_stop, self._calls)

    def expected_terminal(self) -> str:
        """``metadata`` until it arrived, then ``messageStop`` (the stream needs both)."""
        return "messageStop" if self._reported else self.terminal

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The tool blocks still open (never stopped)."""
        return self._calls.incomplete()


_HANDLERS: dict[str, Callable[[BedrockConverseNormalizer, dict[str, Any]], list[Unified]]] = {
    "contentBlockDelta": BedrockConverseNormalizer._block_delta,
    "contentBlockStart": BedrockConverseNormalizer._block_start,
    "contentBlockStop": BedrockConverseNormalizer._block_stop,
    "messageStop": BedrockConverseNormalizer._message_stop,
    "metadata": BedrockConverseNormalizer._metadata,
}


class BedrockAnthropicRules(Recognition):
    """How the registry recognises InvokeModelWithResponseStream (Anthropic) payloads and metadata (the usage
    objects and bare errors inside are Anthropic's, recognised by :class:`.AnthropicRules`)."""

    provider = "bedrock-anthropic"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """A ``chunk`` whose bytes hold an Anthropic Messages event (boto3's dict: ``{"chunk": {"bytes": ...}}``)."""
        if event is None and type(obj.get("chunk")) is dict:  # (its event name as its key)
            obj, event = obj["chunk"], "chunk"
        if event != "chunk":
            return False
        inner = _keyed_inner(obj)
        return inner is not None and AnthropicRules.claims(inner)

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """The ``message_start`` inside a ``chunk``."""
        inner = _keyed_inner(obj)
        return (None, None) if inner is None else AnthropicRules.meta_from(inner)


class BedrockAnthropicNormalizer(_Bedrock, AnthropicNormalizer):
    """InvokeModelWithResponseStream for Anthropic models -> Unified: :class:`.AnthropicNormalizer` on the events
    inside the ``chunk`` messages (see the module docstring)."""

    provider = "bedrock-anthropic"
    rules = BedrockAnthropicRules

    def __init__(self) -> None:
        super().__init__()
        #: ``amazon-bedrock-invocationMetrics`` of the ``message_stop`` event.
        self.invocation_metrics: Optional[dict[str, Any]] = None

    def frame(self, message: Union[str, bytes, bytearray, dict[str, Any]]) -> list[Unified]:
        """One event boto3 decoded (``{"chunk": {"bytes": b"..."}}``, ``{"throttlingException": {...}}``), or one
        Anthropic event's JSON."""
        if not isinstance(message, dict):
            return super().frame(message)
        out: list[Unified] = []
        for key, value in message.items():
            out += self.payload(value, key) if type(value) is dict else [new_event("raw", {key: value})]
        return out

    def normalize(self, events: Sequence[SSEEvent]) -> list[Unified]:
        """The Anthropic events inside the batch's ``chunk`` messages, through :meth:`AnthropicNormalizer.normalize`
        (and its delta reader), unwrapped a run at a time (in C where it is built); exceptions and other messages
        in their place."""
        batch = events if type(events) is list else list(events)
        unwrap = unwrap_chunks
        out: list[Unified] = []
        index, end = 0, len(batch)
        while index < end:
            inner: list[SSEEvent] = []
            index = unwrap(batch, index, inner, _Event)
            if inner:
                out += AnthropicNormalizer.normalize(self, inner)
            if index >= end:
                break
            out += self._message(batch[index])  # not a plain chunk: metrics, an exception, anything else
            index += 1
            if self._into is not None:  # normalize_into: hand over in order
                self._into.take(out)
                out = []
        return out

    def _message(self, ev: SSEEvent) -> list[Unified]:
        """One message the unwrapping stopped at."""
        text = _chunk_text(ev.data) if ev.event == "chunk" and not _failed(ev) else None
        if text is None:
            return self.decoded(ev)
        if _METRICS in text:
            self._keep_metrics(text)
        return AnthropicNormalizer.normalize(self, [_Event(type_of(text), text)])

    def decoded(self, ev: SSEEvent) -> list[Unified]:
        """Exception and error messages become ``error``; anything else is decoded."""
        if _failed(ev):
            return self._failed_event(ev)
        return super().decoded(ev)

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """A ``chunk`` payload (its event unwrapped), an exception, or an Anthropic event."""
        if event == "chunk":
            inner = _keyed_inner(obj)
            if inner is None:
                return [new_event("raw", obj)]
            self._metrics(inner)
            return super().payload(inner)
        if event is not None and event.endswith("Exception"):
            return self._exception(event, obj, "exception")
        return super().payload(obj, event)

    def _keep_metrics(self, text: str) -> None:
        try:
            obj = loads(text)
        except ValueError:
            return
        if type(obj) is dict:
            self._metrics(obj)
