"""Unified events -> an Anthropic Messages stream.

Contract (see :mod:`.base` for what every encoder does):

- ``message_start`` first (the message's id and model, ``usage`` as far as known), then one content block at a time
  for text and thinking: ``content_block_start`` (``index`` counting the blocks from 0), its deltas,
  ``content_block_stop`` when another block begins or the message ends.
- ``text_delta`` -> a ``text`` block's ``text_delta``; a citation -> ``citations_delta`` on the text block (the
  Messages API's own citation objects as sent, another provider's with a URL as a ``web_search_result_location``,
  the rest dropped); ``reasoning_delta`` -> a ``thinking`` block's
  ``thinking_delta``; a signature -> ``signature_delta`` on the open thinking block (a signature with no thinking
  block open gets a thinking block of its own, empty but for the signature, so a client can replay it).
- A client call -> a ``tool_use`` block (``id``, ``name``, ``input: {}``), its fragments as ``input_json_delta``,
  ``content_block_stop`` when the source closed it with a JSON object (other argument text, which a client's parser
  would fail on, is written only as far as it is a JSON document's start, and its call is never closed: the
  stream ends with the error for calls never finished, ``dropped["arguments"]`` counts it); a call the provider
  ran itself -> a ``server_tool_use`` block
  the same way when it is one of the tools the Messages API runs (:data:`SERVER_TOOLS`), else dropped. A call
  never closed gets no ``content_block_stop``.
- ``done`` -> ``message_delta`` (``stop_reason``: end ``end_turn``, max_tokens, tool_use, stop_sequence, refusal as
  named, incomplete ``pause_turn``, failed and cancelled the error below, the rest ``end_turn`` counted as dropped;
  ``usage`` with every count: the Messages API counts ``input_tokens`` without the cache reads and writes, which
  have their own members), then ``message_stop``. Anthropic has no reasoning token count: a non-zero one is counted
  as dropped.
- ``error`` -> the usage so far on a ``message_delta`` without a stop reason, then ``event: error`` with ``{"type":
  "error", "error": {"type", "message"}}`` (what the ``anthropic`` SDK raises); ``message_delta`` and
  ``message_stop`` only when the source still stopped after it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping, Optional, Union

from .._json import dumps_utf8
from ..events import Unified
from ..normalizers.anthropic import ANTHROPIC_STOP
from .base import LONG_TEXT, Call, Encoder, TextRun, Writer, dumps, error_parts, quote, quote_long, quote_text, utf8

__all__ = ["CITATION_TYPES", "SERVER_TOOLS", "AnthropicEncoder", "AnthropicWriter", "citation_object", "messages_usage"]


def messages_usage(usage: Any) -> dict[str, Any]:
    """A :class:`~ssewire.Usage` as the Messages API's ``usage`` object (``input_tokens`` without the cache counts)."""
    read, written = usage.cached_input_tokens or 0, usage.cache_write_tokens or 0
    out: dict[str, Any] = {
        "input_tokens": max((usage.input_tokens or 0) - read - written, 0),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
        "output_tokens": usage.output_tokens or 0,
    }
    if usage.cache_write_5m_tokens is not None or usage.cache_write_1h_tokens is not None:
        out["cache_creation"] = {
            "ephemeral_5m_input_tokens": usage.cache_write_5m_tokens or 0,
            "ephemeral_1h_input_tokens": usage.cache_write_1h_tokens or 0,
        }
    return out


#: The tools the Messages API runs itself: the names a ``server_tool_use`` block may have (another provider's
#: server call has no Messages shape: dropped).
SERVER_TOOLS = frozenset(
    {
        "web_search",
        "web_fetch",
        "code_execution",
        "bash_code_execution",
        "text_editor_code_execution",
        "tool_search_tool_regex",
        "tool_search_tool_bm25",
    }
)

#: The Messages API's own citation types: a citation of one of them is written as the provider sent it.
CITATION_TYPES = frozenset(
    {
        "char_location",
        "page_location",
        "content_block_location",
        "web_search_result_location",
        "search_result_location",
    }
)


def citation_object(citation: Any) -> Optional[dict[str, Any]]:
    """A :class:`~ssewire.Citation` as a Messages citation object: its own object when it is one of
    :data:`CITATION_TYPES`, else a ``web_search_result_location`` for one with a URL, else None (dropped)."""
    raw = citation.raw
    if citation.kind in CITATION_TYPES and isinstance(raw, dict):
        return raw
    if citation.url is None:
        return None
    return {
        "type": "web_search_result_location",
        "url": citation.url,
        "title": citation.title,
        "cited_text": citation.cited_text or "",
        "encrypted_index": "",
    }


_EMPTY_USAGE = {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0}
_EMPTY_USAGE_JSON = dumps(_EMPTY_USAGE)
#: A text and a thinking block: the block as started (JSON text), and its deltas' ``delta`` member up to the text.
_BLOCKS = {
    "text": ('{"type":"text","text":""}', '"delta":{"type":"text_delta","text":'),
    "thinking": ('{"type":"thinking","thinking":"","signature":""}', '"delta":{"type":"thinking_delta","thinking":'),
}


class AnthropicWriter(Writer):
    """:class:`AnthropicEncoder`'s code (its state typed where compiled: ``anthropic.pxd``)."""

    to = "anthropic"
    id_prefix = "msg_"
    stops: ClassVar[Mapping[str, str]] = {
        "end": "end_turn",
        "max_tokens": "max_tokens",
        "tool_use": "tool_use",
        "stop_sequence": "stop_sequence",
        "refusal": "refusal",
        "incomplete": "pause_turn",
        "other": "end_turn",
    }
    reads_stop = ANTHROPIC_STOP
    carries_reasoning_tokens = False
    carries_server_calls = True

    def _init_state(self) -> None:
        self.writes_raw = True  # (a Messages source's redacted thinking and server tool results: see on_raw)
        # the stream's state (one stream, one encoder, made for each)
        self._blocks = 0  # blocks started
        self._open: Optional[str] = None  # the kind of the open text or thinking block
        self._head = ""  # the open block's delta event, up to its text
        #: Each call's input while its start is held (a str), or whether that start was a JSON object's
        self._starts: Optional[dict[str, Union[str, bool]]] = None

    def on_start(self) -> str:
        # (raw events are looked at unless the source never reads a Messages stream: see on_raw; none comes before
        # the opening)
        self.writes_raw = getattr(self.source, "provider", None) not in _NO_MESSAGES
        usage = _EMPTY_USAGE_JSON if self.usage is None else dumps(messages_usage(self.usage))
        return (
            'event: message_start\ndata: {"type":"message_start","message":'
            f'{{"id":{quote(self.response_id or "")},"type":"message","role":"assistant",'
            f'"model":{quote(self.model or "")},"content":[],"stop_reason":null,"stop_sequence":null,'
            f'"usage":{usage}}}}}\n\n'
        )

    def _begin(self, block: str) -> tuple[int, str]:
        """Close the open text or thinking block, start ``block`` (its JSON text): its index and the text written."""
        index, head = self._block_head()
        return index, f"{head}{block}}}\n\n"

    def _block_head(self) -> tuple[int, str]:
        """Close the open text or thinking block, and start a block: its index, and the text written up to the
        block's JSON."""
        out = self._close_open()
        index = self._blocks
        self._blocks += 1
        return (
            index,
            f'{out}event: content_block_start\ndata: {{"type":"content_block_start","index":{index},"content_block":',
        )

    def _close_open(self) -> str:
        if self._open is None:
            return ""
        self._open = None
        return _stop(self._blocks - 1)

    def on_text(self, text: str) -> str:
        out = self._open_block("text")
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f"{out}{self._head}{quoted}}}}}\n\n" if text else out

    def _open_block(self, kind: str) -> str:
        """Make the open block a ``kind`` block (``text`` or ``thinking``; the open one stopped first): the text
        written."""
        if self._open == kind:
            return ""
        block, delta = _BLOCKS[kind]
        index, out = self._begin(block)
        self._open = kind
        self._head = f'event: content_block_delta\ndata: {{"type":"content_block_delta","index":{index},{delta}'
        return out

    def on_citations(self, citations: list[Any]) -> str:
        """Each citation -> ``citations_delta`` on the open text block (one is opened when none is)."""
        objects = [obj for obj in map(citation_object, citations) if obj is not None]
        if len(objects) < len(citations):  # (counted only then: most streams drop nothing, and make no count)
            self.dropped["citation"] += len(citations) - len(objects)
        if not objects:
            return ""
        out = self._open_block("text")
        head = f'event: content_block_delta\ndata: {{"type":"content_block_delta","index":{self._blocks - 1},'
        for obj in objects:
            out += f'{head}"delta":{{"type":"citations_delta","citation":{dumps(obj)}}}}}\n\n'
        return out

    def on_reasoning(self, text: str) -> str:
        out = self._open_block("thinking")
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f"{out}{self._head}{quoted}}}}}\n\n"

    def text_run(self, kind: str) -> Optional[TextRun]:
        """A delta of the open text or thinking block, as :meth:`on_text` / :meth:`on_reasoning` write it."""
        if self._open != ("text" if kind == "text_delta" else "thinking"):
            return None
        return self._head, "}}\n\n", None, None, ""

    def open_run(self, kind: str) -> str:
        """The text or thinking block a ``kind`` delta goes to, started (the open one stopped first)."""
        return self._open_block("text" if kind == "text_delta" else "thinking")

    def on_signature(self, signature: str) -> str:
        """The signature of the thinking just written, on its block, which it ends: more reasoning (or another
        signature) opens a new thinking block (a block has one signature, covering its whole text)."""
        out = self._open_block("thinking")
        signed = {"type": "signature_delta", "signature": signature}
        delta = {"type": "content_block_delta", "index": self._blocks - 1, "delta": signed}
        self._open = "signed"  # (still open on the wire until the next block, but never written to again)
        return out + "event: content_block_delta\ndata: " + dumps(delta) + "\n\n"

    def _call_block(self, call: Call, kind: str) -> str:
        index, out = self._begin(dumps({"type": kind, "id": call.id, "name": call.name or "", "input": {}}))
        call.index = index
        return out

    def on_call_start(self, call: Call) -> str:
        return self._call_block(call, "tool_use")

    def on_raw(self, event: Unified) -> str:
        """A Messages source's ``redacted_thinking`` block (opaque, replayed as it came) and the result block of a
        server call written here (``web_search_tool_result`` ..., which a ``pause_turn`` continuation sends back),
        as their own blocks; a result of a call not written is counted as ``server_tool_result``."""
        block = _passed_block(event)
        if block is None:
            return ""
        if block.get("type") != "redacted_thinking":
            call = self.calls.get(block.get("tool_use_id"))
            if call is None or not call.server or call.index < 0 or not call.opened:
                self.dropped["server_tool_result"] += 1
                return ""
        index, head = self._block_head()  # (the block written as UTF-8 and held: a tool result is kilobytes)
        return self.hold([utf8(head), dumps_utf8(block), utf8("}\n\n" + _stop(index))])

    def on_server_call(self, call: Call) -> str:
        if call.name not in SERVER_TOOLS:
            call.index = -1
            return Writer.on_server_call(self, call)
        return self._call_block(call, "server_tool_use")

    def on_server_arguments(self, call: Call, text: str) -> str:
        return "" if call.index < 0 else self.on_call_arguments(call, text)

    def on_server_done(self, call: Call, event: Unified) -> str:
        return "" if call.index < 0 else self._held_input(call) + _stop(call.index)

    def on_call_arguments(self, call: Call, text: str) -> str:
        """A fragment of the call's ``input``, once what came starts as a JSON object does (``{"`` or ``{}``,
        whitespace aside; held until that is known): a client's parser reads the input as it comes and fails on
        any other (the call then fails at its done: see :meth:`on_call_done`)."""
        starts = self._starts
        if starts is None:
            starts = self._starts = {}
        held = starts.get(call.id, "")
        if held is True:
            return _input_delta(call.index, text)
        if held is False:
            return ""
        start = f"{held}{text}"
        ok = _opens_an_object(start)
        if ok is None:  # (too little to tell: held)
            starts[call.id] = start
            return ""
        starts[call.id] = ok
        return _input_delta(call.index, start) if ok else ""

    def on_call_done(self, call: Call, event: Unified) -> str:
        """The call's block stopped, where its arguments are a JSON object (a block's ``input`` must be one); else
        (text that is no JSON, or cut short) the block is never stopped and the call counts as never finished: the
        stream ends with the error for such calls, never as a call a client runs (``dropped["arguments"]``)."""
        if type(event.arguments) is not dict and (event.arguments_raw or "").strip():
            call.closed = False
            self.dropped["arguments"] += 1
            return ""
        return self._held_input(call) + _stop(call.index)

    def _held_input(self, call: Call) -> str:
        """The input ``call`` held while its start was too short to tell (its whole arguments, at its done)."""
        held = None if self._starts is None else self._starts.pop(call.id, None)  # (whitespace alone: no input
        return _input_delta(call.index, held) if type(held) is str and held.strip(_JSON_SPACE) else ""  # but {})

    def on_done(self, stop: str, native: str) -> str:
        out = self._close_open()
        usage = _EMPTY_USAGE_JSON if self.usage is None else dumps(messages_usage(self.usage))
        return (
            f'{out}event: message_delta\ndata: {{"type":"message_delta","delta":{{"stop_reason":{quote(native)},'
            f'"stop_sequence":null}},"usage":{usage}}}\n\nevent: message_stop\ndata: {{"type":"message_stop"}}\n\n'
        )

    def body(self, result: Any, native: str) -> dict[str, Any]:
        """A ``message``: a thinking block (the reasoning, signed with the last signature), the text block, the
        ``tool_use`` and ``server_tool_use`` blocks, ``stop_reason`` and ``usage``. Only one signature fits."""
        content: list[dict[str, Any]] = []
        signatures = result.signatures
        if result.reasoning or signatures:
            content.append(
                {"type": "thinking", "thinking": result.reasoning, "signature": signatures[-1] if signatures else ""}
            )
            self.dropped["signature"] += max(len(signatures) - 1, 0)
        cited = [obj for obj in map(citation_object, result.citations) if obj is not None]
        self.dropped["citation"] += len(result.citations) - len(cited)
        if result.text or cited:
            block: dict[str, Any] = {"type": "text", "text": result.text}
            if cited:
                block["citations"] = cited
            content.append(block)
        for call in result.tool_calls:
            if call.server and call.name not in SERVER_TOOLS:
                self.dropped["server_tool_call"] += 1
                continue
            kind = "server_tool_use" if call.server else "tool_use"
            if call.arguments is None and call.arguments_raw:  # not a JSON object: a block's input must be one
                self.dropped["arguments"] += 1
            content.append({"type": kind, "id": call.id, "name": call.name or "", "input": call.arguments or {}})
        return {
            "id": self.response_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": native,
            "stop_sequence": None,
            "usage": _EMPTY_USAGE if self.usage is None else messages_usage(self.usage),
        }

    def error_body(self, error: Mapping[str, Any]) -> dict[str, Any]:
        """The Messages API's error body, ``{"type": "error", "error": {"type", "message"}}``."""
        kind, message = error_parts(error)
        return {"type": "error", "error": {"type": kind, "message": message}}

    def on_error(self, error: Mapping[str, Any]) -> str:
        out = ""
        if self.usage is not None:  # the usage so far, on a message_delta without a stop reason
            delta = {"type": "message_delta", "delta": {"stop_reason": None, "stop_sequence": None}}
            delta["usage"] = messages_usage(self.usage)
            out = "event: message_delta\ndata: " + dumps(delta) + "\n\n"
        return out + "event: error\ndata: " + dumps(self.error_body(error)) + "\n\n"


#: The providers whose streams are never a Messages stream (xAI's can be one; a normaliser of its own may read one).
_NO_MESSAGES = frozenset(
    {
        "openai",
        "openai-chat",
        "openai-realtime",
        "gemini",
        "gemini-live",
        "bedrock-converse",
        "cohere",
        "mistral",
        "ollama",
        "vercel-ui",
    }
)


def _passed_block(event: Unified) -> Optional[dict[str, Any]]:
    """The content block a ``content_block_start`` of a Messages stream starts, where it is one that
    :meth:`AnthropicEncoder.on_raw` passes on (redacted thinking, a tool result); None for any other event (a
    payload the reader kept as text is none: a Messages stream's block starts are decoded)."""
    raw = event._raw  # (not .raw: a payload kept as text, a delta or a stop the reader took, is never a block)
    if type(raw) is not dict or raw.get("type") != "content_block_start":
        return None
    block = raw.get("content_block")
    if type(block) is not dict:
        return None
    kind = block.get("type")
    if kind == "redacted_thinking" or (type(kind) is str and kind.endswith("_tool_result")):
        return block
    return None


_JSON_SPACE = " \t\n\r"


def _opens_an_object(text: str) -> Optional[bool]:
    """Whether ``text`` starts as a JSON object does (``{`` then ``"`` or ``}``, whitespace aside); None while it
    is too short to tell."""
    text = text.lstrip(_JSON_SPACE)
    if not text:
        return None
    if text[0] != "{":
        return False
    rest = text[1:].lstrip(_JSON_SPACE)
    return None if not rest else rest[0] in '"}'


def _input_delta(index: int, text: str) -> str:
    return (
        f'event: content_block_delta\ndata: {{"type":"content_block_delta","index":{index},'
        f'"delta":{{"type":"input_json_delta","partial_json":{quote_text(text)}}}}}\n\n'
    )


def _stop(index: int) -> str:
    return f'event: content_block_stop\ndata: {{"type":"content_block_stop","index":{index}}}\n\n'


class AnthropicEncoder(AnthropicWriter, Encoder):
    """Unified events -> Messages stream events (see the module docstring)."""

    __slots__ = ()
