"""Anthropic Messages API events (also xAI's Anthropic-compatible ``/v1/messages``) -> Unified.

Contract (one instance per stream; every event made from a payload carries ``raw``; ``message_id``, ``model`` and
``stop_reason`` are kept):

- ``text_delta`` -> ``text_delta``; ``thinking_delta`` -> ``reasoning_delta`` (non-empty strings only, otherwise
  ``raw``); ``signature_delta`` -> ``raw`` with ``signature``; ``ping``, ``message_start`` and unknown events ->
  ``raw``. Blocks and deltas with no unified event stay ``raw``: ``redacted_thinking`` (its ``data`` is opaque, to be
  sent back as the whole block: never a ``signature``), ``compaction`` blocks and ``compaction_delta``,
  ``container_upload``, tool result blocks.
- Citations (:class:`~ssewire.citations.Citation`, on the ``raw`` event of the payload that carried them, never on a
  ``text_delta``): each ``citations_delta``'s ``citation``, and the ``citations`` a text block brings whole (its
  ``content_block_start``, or a text block of ``message_start.message.content``). ``kind`` = the citation's ``type``;
  ``cited_text`` = the quoted words of the source; ``url`` = ``url`` (``web_search_result_location``) or ``source``
  (``search_result_location``); ``title`` = ``title`` or ``document_title``; ``start`` / ``end`` = the cited span
  *of the source* as Anthropic counts it (``char_location``: characters, ``page_location``: pages,
  ``content_block_location`` / ``search_result_location``: content blocks; end exclusive), ``None`` for web results.
- Who runs a call: ``tool_use`` blocks are client calls (``server=False``), also when ``caller`` says Claude's
  code execution called them (programmatic tool calling: the client runs the tool and its result goes back to the
  container); ``server_tool_use`` and ``mcp_tool_use`` blocks are server calls. A ``*_tool_result`` block with a
  ``tool_use_id`` (``web_search_tool_result``, ``code_execution_tool_result``, ``mcp_tool_result`` ...) is the
  provider's own result: the call it names is a server call. So a client call's ``tool_call_done`` waits after its
  ``content_block_stop`` until a block that is neither a tool call nor a tool result starts, or the message ends
  (``message_delta``, ``message_stop``, ``error``, ``message_start``): a result naming it in between makes it
  ``server=True`` on that done (a result after its done was emitted still keeps it out of the ``tool_use`` stop).
  A stream cut in that wait reports it incomplete.
- Tool blocks are keyed by block ``index``: ``content_block_start`` -> ``tool_call_start``, each non-empty
  ``input_json_delta`` -> ``tool_call_delta``, then ``tool_call_done`` (above) with ``arguments_raw`` = the
  concatenated ``partial_json`` ("" when none; ``None`` when the arguments came whole in the block's ``input`` and
  no delta did). A block started at an index whose tool call is still open closes that call first (never merged).
  Calls still open at ``message_stop`` are closed by it unless the message was cut off (``max_tokens``,
  ``refusal``, ``pause_turn``, ``compaction``): then they stay incomplete (no ``tool_call_done``), as they are when
  the stream is cut.
- ``message_start.message.content`` may already hold whole blocks (programmatic tool-calling continuations): text
  -> ``text_delta`` (+ its citations), thinking -> ``reasoning_delta`` (+ ``raw`` with its ``signature``), tool
  blocks -> ``tool_call_start`` + ``tool_call_done`` from the whole ``input`` (``arguments_raw`` None), server per
  the rules above (a result block in that content counts); each made after the ``raw`` of ``message_start``.
- A second ``message_start`` while a block of the first message is open: the open calls stay incomplete (never
  ``tool_call_done``) and an ``error`` of type ``protocol_error`` lists them (``incomplete_tool_calls``); it ends
  the stream, and what follows is read as the new message.
- xAI quirks: a delta or stop without ``index`` applies to the block started last; a thinking and a text block may
  share index 0.
- Usage: ``message_start.message.usage`` updated key by key with each ``message_delta.usage``; every
  ``message_delta`` with usage -> a ``usage`` event carrying a fresh dict. ``self.usage`` is the merge so far.
  :meth:`AnthropicRules.usage_from` gives the billed counts: with ``usage.iterations`` (compaction, advisor,
  server-tool sampling loops; the top-level counts leave compaction out) each count is the sum over the
  iterations, else the top-level one; ``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``
  -> ``cache_write_5m_tokens`` / ``cache_write_1h_tokens`` (None without a ``cache_creation`` object);
  ``output_tokens_details.thinking_tokens`` -> ``reasoning_tokens`` (None where it is not sent).
- ``message_stop`` -> ``done`` (exactly one, after closing calls left open): ``raw_stop_reason`` = ``stop_reason``;
  end_turn -> end (tool_use when client calls were made), max_tokens and model_context_window_exceeded ->
  max_tokens, tool_use, stop_sequence, refusal, pause_turn and compaction -> incomplete, none -> end, unknown ->
  other.
- ``error`` (``{"type": "error", "error": {"type": "overloaded_error", ...}}``) -> ``error`` carrying the usage
  merged so far; it ends the stream (no truncation error follows).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, ClassVar, Mapping, Optional, Union

from ..citations import Citation
from ..events import Unified, new_event, new_usage
from ..usage import Usage, count
from ._fast import typed
from .common import id_and_model, str_or, with_incomplete
from .contract import Normalizer, Recognition, not_a_payload
from .tool_calls import CallIds, CallTable, OpenCall, done_event

__all__ = ["ANTHROPIC_STOP", "MESSAGE_EVENTS", "AnthropicNormalizer", "AnthropicRules", "citation_from"]

#: Anthropic ``stop_reason`` -> unified stop reason (anything else maps to ``other``).
ANTHROPIC_STOP: dict[str, str] = {
    "end_turn": "end",
    "max_tokens": "max_tokens",
    "tool_use": "tool_use",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "incomplete",
    "compaction": "incomplete",  # pause_after_compaction: the client sends the request again to go on
    "model_context_window_exceeded": "max_tokens",
}
#: The event types of the Messages stream.
MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)
_TOOL_BLOCKS = {"tool_use": False, "server_tool_use": True, "mcp_tool_use": True}  # block type -> server
#: The source span keys of each document citation kind (``start``, ``end``; end exclusive).
_SPANS = (
    ("start_char_index", "end_char_index"),
    ("start_page_number", "end_page_number"),
    ("start_block_index", "end_block_index"),
)
_NO_INDEX = object()
#: The events read without a decode: ``content_block_delta`` events whose ``delta`` is a ``text_delta`` with a
#: non-empty string ``text``, a ``thinking_delta`` with a non-empty string ``thinking``, or an ``input_json_delta``
#: with a non-empty string ``partial_json`` for the open tool call at the event's ``index``; and ``ping`` (raw).
_DELTA_RULE = typed.delta_rule(
    (("type",), ("delta", "type"), ("delta", "text"), ("delta", "thinking"), ("delta", "partial_json"), ("index",)),
    {
        "content_block_delta": (
            "content_block_delta",
            (
                ("text_delta", ((2, "text_delta"),)),
                ("thinking_delta", ((3, "reasoning_delta"),)),
                ("input_json_delta", ((4, "tool_call_delta"),)),
            ),
        ),
        "ping": ("ping", ((None, ()),)),
    },
    type_path=0,
    tag_path=1,
    key_path=5,
    by_type=True,  # servers that name no SSE events: the payload's type names the case
)

Handler = Callable[["AnthropicNormalizer", dict[str, Any]], list[Unified]]


def _index(obj: dict[str, Any]) -> Any:
    """The block index of an event (an int or str), or ``_NO_INDEX``."""
    index = dict.get(obj, "index")
    return index if type(index) is int or type(index) is str else _NO_INDEX


def _result_for(block: dict[str, Any]) -> Optional[str]:
    """The ``tool_use_id`` a provider's tool result block (``*_tool_result``) names, else None."""
    kind, target = dict.get(block, "type"), dict.get(block, "tool_use_id")
    if type(kind) is str and kind.endswith("_tool_result") and type(target) is str:
        return target
    return None


def _int_or_none(value: Any) -> Optional[int]:
    return value if type(value) is int else None


def citation_from(obj: Any) -> Optional[Citation]:
    """The :class:`~ssewire.citations.Citation` of one Anthropic citation object (see the module docstring), or
    None when ``obj`` is not a citation object."""
    if type(obj) is not dict or type(dict.get(obj, "type")) is not str:
        return None
    start = end = None
    for start_key, end_key in _SPANS:
        if start_key in obj or end_key in obj:
            start, end = _int_or_none(dict.get(obj, start_key)), _int_or_none(dict.get(obj, end_key))
            break
    return Citation(
        obj["type"],
        url=str_or(dict.get(obj, "url"), str_or(dict.get(obj, "source"), None)),
        title=str_or(dict.get(obj, "title"), str_or(dict.get(obj, "document_title"), None)),
        cited_text=str_or(dict.get(obj, "cited_text"), None),
        start=start,
        end=end,
        raw=obj,
    )


def _block_content(obj: dict[str, Any], block: dict[str, Any], kind: str, out: list[Unified]) -> None:
    """Append the events of a ``text`` or ``thinking`` block's own content (whole in ``message_start``'s
    ``content``; in ``content_block_start`` empty from Anthropic): its text, citations and signature."""
    if kind == "text":
        text = dict.get(block, "text")
        if type(text) is str and text:
            out.append(new_event("text_delta", obj, text))
        out += _cited(obj, dict.get(block, "citations"))
        return
    text, signature = dict.get(block, "thinking"), dict.get(block, "signature")
    if type(text) is str and text:
        out.append(new_event("reasoning_delta", obj, text))
    if type(signature) is str and signature:
        out.append(new_event("raw", obj, "", None, signature))


def _cited(obj: Any, citations: Any) -> list[Unified]:
    """A ``raw`` event of payload ``obj`` carrying the citations of a list of citation objects (none when none)."""
    if type(citations) is not list:
        return []
    found = [c for c in map(citation_from, citations) if c is not None]
    if not found:
        return []
    event = new_event("raw", obj)
    event.citations = found
    return [event]


def _thinking(holders: list[dict[str, Any]]) -> Optional[int]:
    """The thinking tokens the usage objects ``holders`` count (``output_tokens_details.thinking_tokens``, summed);
    None when none of them says."""
    found: list[int] = []
    for holder in holders:
        details = holder.get("output_tokens_details")
        thinking = details.get("thinking_tokens") if type(details) is dict else None
        if type(thinking) is int:
            found.append(thinking)
    return sum(found) if found else None


class AnthropicRules(Recognition):
    """How the registry recognises Messages API payloads, usage objects and metadata."""

    provider = "anthropic"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Messages API events: a ``type`` that is one of :data:`MESSAGE_EVENTS` (or, for data without a
        ``type``, such an SSE event name)."""
        kind = obj.get("type")
        return (kind if type(kind) is str else event) in MESSAGE_EVENTS

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """``{"type": "error", "error": {...}}`` (OpenAI's flat error has a sequence number or a code; the UI
        stream's has an ``errorText``, no ``error`` object)."""
        return (
            obj.get("type") == "error"
            and type(obj.get("error")) is dict
            and "sequence_number" not in obj
            and "code" not in obj
        )

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """The billed counts: ``input_tokens`` excludes both cache counts, so every prompt token is their sum;
        with ``iterations`` each count is summed over them (the top-level counts leave compaction out); the
        5-minute / 1-hour cache writes from ``cache_creation``; the reasoning share of the output from
        ``output_tokens_details.thinking_tokens`` where it is sent (else None). ``raw`` is kept untouched."""
        if not (
            "cache_read_input_tokens" in raw
            or "cache_creation_input_tokens" in raw
            or ("input_tokens" in raw and "total_tokens" not in raw and "input_tokens_details" not in raw)
        ):
            return None
        given = raw.get("iterations")
        steps = [it for it in given if type(it) is dict] if type(given) is list else []
        if not steps:  # the usual object: its own counts
            read, written = count(raw.get("cache_read_input_tokens")), count(raw.get("cache_creation_input_tokens"))
            usage = cls.counted(
                raw,
                partial,
                count(raw.get("input_tokens")) + read + written,
                count(raw.get("output_tokens")),
                read,
                written,
            )
            ttl = raw.get("cache_creation")
            if type(ttl) is dict:
                usage.cache_write_5m_tokens = count(ttl.get("ephemeral_5m_input_tokens"))
                usage.cache_write_1h_tokens = count(ttl.get("ephemeral_1h_input_tokens"))
            usage.reasoning_tokens = _thinking([raw])
            return usage

        def billed(key: str) -> int:
            if any(key in step for step in steps):
                return sum(count(step.get(key)) for step in steps)
            return count(raw.get(key))

        read, written = billed("cache_read_input_tokens"), billed("cache_creation_input_tokens")
        usage = cls.counted(
            raw, partial, billed("input_tokens") + read + written, billed("output_tokens"), read, written
        )
        holders = steps if any(type(step.get("cache_creation")) is dict for step in steps) else [raw]
        ttl_objects = [step["cache_creation"] for step in holders if type(step.get("cache_creation")) is dict]
        if ttl_objects:
            usage.cache_write_5m_tokens = sum(count(t.get("ephemeral_5m_input_tokens")) for t in ttl_objects)
            usage.cache_write_1h_tokens = sum(count(t.get("ephemeral_1h_input_tokens")) for t in ttl_objects)
        usage.reasoning_tokens = _thinking(steps if any("output_tokens_details" in step for step in steps) else [raw])
        return usage

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """``message_start.message``'s ``id`` and ``model``."""
        return id_and_model(obj.get("message"))


class AnthropicNormalizer(Normalizer):
    """Messages API events -> Unified (see the module docstring for the full contract)."""

    provider = "anthropic"
    terminal = "message_stop"
    rules: ClassVar[type[Recognition]] = AnthropicRules  # bedrock-anthropic reads its events with its own rules
    stops = ANTHROPIC_STOP
    delta_rule = _DELTA_RULE  # text, thinking and tool argument deltas and pings, named by their SSE event
    first_event_alone = False  # (the rest of a first chunk is read alike either way)

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    #: The provider's ``stop_reason`` from the last ``message_delta``.
    stop_reason: Optional[str] = None
    _current: Any = None  # index of the block started last
    _started = False  # a message_start was seen

    def __init__(self) -> None:
        super().__init__()
        self._calls = CallTable()  # open tool calls by block index
        self._reader_calls = self._calls.open

    # The stream's calls and blocks, each empty (and immutable) until the stream first has one: most streams have
    # no call, and a container made for each stream costs more than its first use.
    #: client calls whose block stopped, done not yet given
    _waiting: Union[list[tuple[OpenCall, Any]], tuple[()]] = ()
    _open: Union[set[Any], frozenset[Any]] = frozenset()  # indexes of the blocks started and not stopped
    _client_calls: Union[set[str], frozenset[str]] = frozenset()  # the client calls made (none named by a result)
    _server_ids: Union[set[str], frozenset[str]] = frozenset()  # ids named by a provider's result block
    #: every call of the stream by id (a result block names one)
    _by_id: Mapping[str, OpenCall] = MappingProxyType({})
    _ids: Optional[CallIds] = None

    @property
    def message_id(self) -> Optional[str]:
        """The message id (the contract's ``response_id``; kept under its old name)."""
        return self.response_id

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one event."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        kind = dict.get(obj, "type")
        if kind == "content_block_delta":  # the bulk of a stream: text deltas here, the rest in _block_delta
            delta = dict.get(obj, "delta")
            if type(delta) is dict and dict.get(delta, "type") == "text_delta":
                text = dict.get(delta, "text")
                if type(text) is str and text:
                    return [new_event("text_delta", obj, text)]
            return self._block_delta(obj)
        if type(kind) is not str:
            kind = event
        handler = _HANDLERS.get(kind) if kind is not None else None
        if handler is None:
            return [new_event("raw", obj)]
        return handler(self, obj)

    # -- who runs a call ------------------------------------------------------------------------------------------

    def _release(self) -> list[Unified]:
        """The ``tool_call_done`` of every client call whose block stopped (server where a result named it)."""
        if not self._waiting:
            return []
        out = [call.close(raw) for call, raw in self._waiting]
        self._waiting = ()
        return out

    def _server_result(self, call_id: str) -> None:
        """A provider's result block names ``call_id``: that call is the provider's own, never the client's."""
        if not self._server_ids:
            self._server_ids = set()
        self._server_ids.add(call_id)  # type: ignore[union-attr]  # (a set now)
        if self._client_calls:
            self._client_calls.discard(call_id)  # type: ignore[union-attr]  # (a non-empty one is a set)
        call = self._by_id.get(call_id)  # (open, or waiting for its done: looked up, not searched for)
        if call is not None:
            call.server = True

    def _new_call(self, block: dict[str, Any], server: bool) -> OpenCall:
        """The call of a tool block (its id, else a synthetic one); a client call is counted as made."""
        given_id = dict.get(block, "id")
        if type(given_id) is str and given_id in self._by_id:  # an id the stream already gave a call: never merged,
            given_id = None  # the second call takes a synthetic one (as Chat's calls do)
        provided = type(given_id) is str and bool(given_id)
        ids = self._ids
        if ids is None:
            ids = self._ids = CallIds()
        call_id = ids.take(given_id)
        server = server or call_id in self._server_ids
        name = dict.get(block, "name")
        if not server:
            if not self._client_calls:
                self._client_calls = set()
            self._client_calls.add(call_id)  # type: ignore[union-attr]  # (a set now)
        if not self._by_id:
            self._by_id = {}
        call = OpenCall(call_id, name if type(name) is str else None, server, provided)
        self._by_id[call_id] = call  # type: ignore[index]  # (a dict now)
        return call

    # -- handlers -------------------------------------------------------------------------------------------------

    def _message_start(self, obj: dict[str, Any]) -> list[Unified]:
        out = self._release() if self._waiting else []
        if self._started and not self.finished and (self._open or self._calls.open):
            out.append(self._second_message(obj))
        self._started = True
        message = dict.get(obj, "message")
        out.append(new_event("raw", obj))
        if type(message) is dict:
            if self.response_id is None:  # the stream is named by its first message (a second one is an error)
                self.response_id = str_or(dict.get(message, "id"), None)
            self.model = str_or(dict.get(message, "model"), self.model)
            usage = dict.get(message, "usage")
            if type(usage) is dict:
                self.usage = dict(usage)
            content = dict.get(message, "content")
            if type(content) is list and content:
                out += self._whole_blocks(obj, [block for block in content if type(block) is dict])
        return out

    def _second_message(self, obj: dict[str, Any]) -> Unified:
        """The ``protocol_error`` of a ``message_start`` that came while blocks of the message were open."""
        incomplete = self.incomplete_tool_calls()
        blocks = sorted(str(index) for index in self._open | set(self._calls.open))
        self._calls.clear()
        self._open = frozenset()
        self._current = None
        self.done = True
        error = {
            "type": "protocol_error",
            "message": f"{self.provider} stream started a new message (message_start) while content block(s) "
            f"{', '.join(blocks)} of the message were still open",
        }
        usage = dict(self.usage) if self.usage else None
        return Unified("error", error=with_incomplete(error, incomplete), usage=usage, raw=obj)

    def _whole_blocks(self, obj: dict[str, Any], blocks: list[dict[str, Any]]) -> list[Unified]:
        """The events of the whole blocks ``message_start`` brought (``obj``: that payload)."""
        for block in blocks:
            target = _result_for(block)
            if target is not None:
                self._server_result(target)
        out: list[Unified] = []
        for block in blocks:
            kind = dict.get(block, "type")
            if kind == "text" or kind == "thinking":
                _block_content(obj, block, kind, out)
            elif type(kind) is str and kind in _TOOL_BLOCKS:
                call = self._new_call(block, _TOOL_BLOCKS[kind])
                out.append(call.start(obj))
                out.append(done_event(call.id, call.name, obj, value=dict.get(block, "input"), server=call.server))
        return out

    def _block_start(self, obj: dict[str, Any]) -> list[Unified]:
        index = _index(obj)
        if index is _NO_INDEX:
            index = self._current if self._current is not None else 0
        block = dict.get(obj, "content_block")
        kind = dict.get(block, "type") if type(block) is dict else None
        server = _TOOL_BLOCKS.get(kind) if type(kind) is str else None
        target = _result_for(block) if type(block) is dict else None
        if target is not None:
            self._server_result(target)
        out = self._release() if server is None and target is None else []
        out += self._calls.close_at(index, obj)  # a new block at an index whose call is still open
        self._current = index
        if not self._open:
            self._open = set()
        self._open.add(index)  # type: ignore[union-attr]  # (a set now)
        if type(block) is not dict or server is None:
            out.append(new_event("raw", obj))
            if (kind == "text" or kind == "thinking") and type(block) is dict:
                _block_content(obj, block, kind, out)  # (sent empty by Anthropic; not by every compatible server)
            return out
        call = self._new_call(block, server)
        given = dict.get(block, "input")
        if type(given) is dict and given:
            call.fallback = given
        out.append(self._calls.start(index, call, obj))
        return out

    def _block_delta(self, obj: dict[str, Any]) -> list[Unified]:
        delta = dict.get(obj, "delta")
        if type(delta) is not dict:
            return [new_event("raw", obj)]
        kind = dict.get(delta, "type")
        if kind == "text_delta":
            text = dict.get(delta, "text")
            if type(text) is str and text:
                return [new_event("text_delta", obj, text)]
        elif kind == "thinking_delta":
            text = dict.get(delta, "thinking")
            if type(text) is str and text:
                return [new_event("reasoning_delta", obj, text)]
        elif kind == "input_json_delta":
            fragment = dict.get(delta, "partial_json")
            if type(fragment) is str and fragment:
                index = _index(obj)
                call = self._calls.get(self._current if index is _NO_INDEX else index)
                if call is not None:
                    return [call.delta(fragment, obj)]
        elif kind == "signature_delta":
            signature = dict.get(delta, "signature")
            if type(signature) is str and signature:
                return [new_event("raw", obj, "", None, signature)]
        elif kind == "citations_delta":
            return _cited(obj, [dict.get(delta, "citation")]) or [new_event("raw", obj)]
        return [new_event("raw", obj)]

    def _block_stop(self, obj: dict[str, Any]) -> list[Unified]:
        index = _index(obj)
        key = self._current if index is _NO_INDEX else index
        if self._open:
            self._open.discard(key)  # type: ignore[union-attr]  # (a non-empty one is a set)
        call = self._calls.pop(key)
        if call is None:
            return [new_event("raw", obj)]
        if call.server:
            return [call.close(obj)]
        if not self._waiting:
            self._waiting = []
        self._waiting.append((call, obj))  # its done waits: a result block may name it
        return [new_event("raw", obj)]

    def _message_delta(self, obj: dict[str, Any]) -> list[Unified]:
        out = self._release() if self._waiting else []
        delta = dict.get(obj, "delta")
        if type(delta) is dict:
            stop = dict.get(delta, "stop_reason")
            if type(stop) is str:
                self.stop_reason = stop
        usage = dict.get(obj, "usage")
        if type(usage) is not dict:
            out.append(new_event("raw", obj))
            return out
        if self.usage is None:
            self.usage = {}
        for key, value in usage.items():  # our own copy (message_start's was copied), updated key by key
            if value is not None:  # (a null count says nothing: message_start's stands, as the SDK keeps it)
                self.usage[key] = value
        out.append(new_usage(dict(self.usage), obj))
        return out

    def _message_stop(self, obj: dict[str, Any]) -> list[Unified]:
        if self.finished:
            return [new_event("raw", obj)]
        out = self._release() if self._waiting else []
        self._open = frozenset()
        raw_stop = self.stop_reason
        return out + self.done_events(obj, self.stop_for(raw_stop, bool(self._client_calls)), raw_stop, self._calls)

    def _error(self, obj: dict[str, Any]) -> list[Unified]:
        return self._release() + self.error_events(obj)

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls without a ``tool_call_done``: blocks still open, and client calls whose done waited."""
        return self._calls.incomplete() + [call.incomplete() for call, _ in self._waiting]


#: Event type -> handler (the dispatch of :meth:`AnthropicNormalizer.payload`).
_HANDLERS: dict[str, Handler] = {
    "message_start": AnthropicNormalizer._message_start,
    "content_block_start": AnthropicNormalizer._block_start,
    "content_block_delta": AnthropicNormalizer._block_delta,
    "content_block_stop": AnthropicNormalizer._block_stop,
    "message_delta": AnthropicNormalizer._message_delta,
    "message_stop": AnthropicNormalizer._message_stop,
    "error": AnthropicNormalizer._error,
}
