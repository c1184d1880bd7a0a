"""OpenAI Responses API events (also xAI ``/v1/responses``) -> Unified.

Contract (one instance per stream; every event made from a payload carries ``raw`` and ``sequence`` =
``sequence_number`` when present; ``last_sequence``, ``response_id`` and ``model`` are kept for resume):

- ``response.output_text.delta`` / ``response.refusal.delta`` -> ``text_delta`` (a ``refusal`` part makes a completed
  response's stop ``refusal``);
  ``response.reasoning_summary_text.delta`` / ``response.reasoning_text.delta`` -> ``reasoning_delta``. Only
  non-empty string deltas become deltas; everything else is ``raw``.
- Tool calls are output items whose type ends in ``_call``, plus ``mcp_list_tools`` and ``mcp_approval_request``.
  Who runs each (``server``; only client calls make the stop ``tool_use``), from what the payload says:

  - client calls (id = ``call_id``): ``function_call``, ``computer_call``, ``local_shell_call``,
    ``apply_patch_call``; a ``custom_tool_call`` of a custom tool the request declared (``response.tools`` of
    ``response.created`` names them: a ``custom_tool_call`` of any other name is one of the provider's own
    tools -- xAI streams its X search that way -- and, without a ``response.created``, the type decides); a
    ``shell_call`` unless its ``environment`` is a container
    (``container_reference``: hosted shell, run by OpenAI; ``local`` or none: the client's runtime --
    openai-python ``ResponseFunctionShellToolCall.environment``); a ``tool_search_call`` with ``execution:
    "client"``; an ``mcp_approval_request`` (id = the item id: the client answers it with an
    ``mcp_approval_response`` naming it before the MCP tool runs, so the response waits on the client);
  - server calls (id = the item ``id``): every other call item -- ``web_search_call``, ``file_search_call``,
    ``code_interpreter_call``, ``image_generation_call``, ``mcp_call``, ``mcp_list_tools``, a ``tool_search_call``
    with ``execution: "server"``, a ``shell_call`` in a container, and types yet unknown;
  - on top: a call whose result the provider streams as an output item of the same response (an ``*_output`` item
    with its ``call_id``: ``shell_call_output``, ``function_call_output`` ...) was run by the provider. Still
    open, its one ``tool_call_done`` says ``server``; already closed as a client call, it gets a second
    ``tool_call_done`` with ``server=True`` (same arguments, ``raw`` the output item) that re-marks it
    (``collect()`` ORs ``server``). Either way it no longer makes the stop ``tool_use``.

  Calls are keyed by ``item_id`` (``output_index`` as fallback), so parallel calls never merge.
  ``output_item.added`` -> ``tool_call_start``; ``function_call_arguments.delta`` / ``custom_tool_call_input.delta``
  / ``mcp_call_arguments.delta`` -> ``tool_call_delta``; the first of ``*.done`` (``arguments``/``input``,
  authoritative) or ``output_item.done`` (item ``arguments``/``input`` text, else its ``arguments`` object --
  ``tool_search_call`` -- else the fragments, else the item's ``action`` / ``code`` / ``queries`` object) -> the one
  ``tool_call_done``. A call seen only in a done event, or only in the terminal event's ``response.output``,
  still gets start and done (read from its item). Events after the terminal event are ``raw``. Calls open at a
  ``response.completed`` are closed before ``done`` (arguments from ``response.output`` when it has them); calls
  open at an incomplete, failed or cancelled response, at an ``error`` or when the stream is cut are incomplete: no
  ``tool_call_done``, listed in the error.
- Events with no unified meaning stay ``raw`` and leave the calls as they are: ``response.shell_call_command.*``
  (a hosted or local shell call's commands, which arrive whole in its finished item's ``action``),
  ``response.shell_call_output_content.*``, ``response.code_interpreter_call_code.*``, ``response.compaction.*`` and
  ``compaction`` items, ``*_output`` items, progress events (``*.in_progress``, ``*.searching`` ...);
  ``response.queued`` (like ``created`` / ``in_progress``) gives the response id and model.
- Citations: a ``url_citation``, ``file_citation`` or ``container_file_citation`` annotation becomes a
  :class:`~ssewire.Citation` (``url``, ``title`` -- a file's ``filename`` --, ``start`` / ``end`` = ``start_index`` /
  ``end_index`` in the content part's text, ``cited_text`` None) on the ``raw`` event of the
  ``response.output_text.annotation.added`` that brought it; annotations a stream never announced that way are
  taken from the finished part (``response.content_part.done``) or else the finished ``message`` item, each
  annotation once (by its ``annotation_index`` within its item's content part). ``file_path`` annotations cite
  nothing.
- Terminal ``response.completed/incomplete/failed/cancelled`` -> [``error``] [``usage``] ``done`` (exactly one):
  ``raw_stop_reason`` = ``response.status``; completed -> end (tool_use when client calls were made), incomplete ->
  max_tokens / refusal / incomplete by ``incomplete_details.reason``, failed, cancelled. ``response.failed`` adds an
  ``error`` from ``response.error`` unless an ``error`` event came first.
- ``error`` events (nested ``{"error": {...}}`` or flat ``{"type": "error", "code", "message"}``) -> ``error``; they end
  the stream (``self.done``) but a later terminal event still yields its ``done``.
- Chat Completions chunks (``object == "chat.completion.chunk"`` or ``choices`` / ``error`` without ``type``) hand
  the stream to a :class:`~ssewire.normalizers.chat.ChatCompletionsNormalizer` delegate (the contract's one
  delegation), so one instance handles either OpenAI API.
- Another provider's Responses API reuses this class with its own ``client_items`` (the call item types its client
  runs): xAI's (:class:`~ssewire.normalizers.xai.XAIResponsesNormalizer`) has only ``function_call``.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Optional

from .._json import loads
from ..citations import Citation
from ..events import LazyPayload, SSEEvent, Unified, new_done, new_event, new_usage
from ..names import UnifiedType
from ..usage import Usage, count, detail, usage_counts
from ._fast import typed
from ._fast.utf8 import LARGE, decodable, held
from .chat import ChatCompletionsNormalizer, ChatRules
from .common import error_object, error_payload, id_and_model, key_of, str_or, with_incomplete
from .contract import DelegatingNormalizer, Recognition, not_a_payload
from .tool_calls import CallTable, OpenCall, closes_calls, decode_arguments

__all__ = [
    "CLIENT_CALL_ITEMS",
    "INCOMPLETE_STOP",
    "RAW_ONLY",
    "RESPONSES_STOP",
    "OpenAINormalizer",
    "ResponsesRules",
    "citation_of",
]

#: Output item types the client executes (``mcp_approval_request``: the client answers it); every other call item
#: is run by the provider. ``shell_call`` and ``tool_search_call`` say so in the item itself (see ``_runs_on_server``).
CLIENT_CALL_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "mcp_approval_request",
    }
)
#: Call items whose type does not end in ``_call``.
_OTHER_CALL_ITEMS = frozenset({"mcp_list_tools", "mcp_approval_request"})
#: The annotation types that cite a source (``file_path`` annotations only point at a file and are no citation).
_CITATION_KINDS = frozenset({"url_citation", "file_citation", "container_file_citation"})
#: ``response.status`` -> unified stop reason (anything else maps to ``other``).
RESPONSES_STOP: dict[str, str] = {
    "completed": "end",
    "failed": "failed",
    "cancelled": "cancelled",
    "incomplete": "incomplete",
}
#: An incomplete response's ``incomplete_details.reason`` -> unified stop reason (anything else: ``incomplete``).
INCOMPLETE_STOP = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}
_NAMED_ITEMS = frozenset({"function_call", "custom_tool_call", "mcp_call", "mcp_approval_request"})  # the tool's name
_EMPTY: dict[str, Any] = {}
#: Delta event type -> the event a non-empty string ``delta`` makes (anything else is ``raw``).
_DELTAS: dict[str, UnifiedType] = {
    "response.output_text.delta": "text_delta",
    "response.refusal.delta": "text_delta",
    "response.reasoning_summary_text.delta": "reasoning_delta",
    "response.reasoning_text.delta": "reasoning_delta",
}

#: The tool argument delta events (a fragment of an open call's arguments).
_ARGUMENT_DELTAS = (
    "response.function_call_arguments.delta",
    "response.custom_tool_call_input.delta",
    "response.mcp_call_arguments.delta",
)

#: Events with no unified meaning that change nothing but the cursor: each is one ``raw`` event (see the module
#: docstring; the handled events, such as ``response.content_part.done``, are not among them).
RAW_ONLY = (
    "response.content_part.added",
    "response.output_text.done",
    "response.refusal.done",
    "response.reasoning_text.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done",
    "response.code_interpreter_call_code.delta",
    "response.code_interpreter_call_code.done",
    "response.web_search_call.in_progress",
    "response.web_search_call.searching",
    "response.web_search_call.completed",
    # the image generation tool's progress: a partial image is its base64, read without building it
    "response.image_generation_call.in_progress",
    "response.image_generation_call.generating",
    "response.image_generation_call.partial_image",
    "response.image_generation_call.completed",
)
#: The events read without a decode: ``type`` equal to the SSE event name, a non-empty string ``delta``, an integer
#: (or absent) ``sequence_number`` (noted: the last one is the cursor); an argument delta's ``item_id`` must name an
#: open call; and the events of :data:`RAW_ONLY` (no ``object``: a payload that says it is a chat chunk is not one).
_DELTA_RULE = typed.delta_rule(
    (("type",), ("delta",), ("sequence_number",), ("item_id",), ("object",)),
    {
        **{name: (name, ((None, ((1, kind),)),)) for name, kind in _DELTAS.items()},
        **{name: (name, ((None, ((1, "tool_call_delta"),)),)) for name in _ARGUMENT_DELTAS},
        **{name: (name, ((None, ()),)) for name in RAW_ONLY},
    },
    type_path=0,
    seq_path=2,
    key_path=3,
    nulls=(4,),
    notes=((2, "int"),),
    by_type=True,  # servers that name no SSE events (xAI): the payload's type names the case
)

#: What a large payload held as UTF-8 is decoded without (see :meth:`OpenAINormalizer.held_skip`): a terminal
#: event's output, and the text a done event repeats (by its type: an event named as another type may lose that
#: member from what payload() reads, never from its raw payload), which no handler reads (a message item's one part,
#: a content part, whose annotations are read; the RAW_ONLY events).
_OUTPUT = typed.member_path(("response", "output"))
_TEXT_OF = {
    "response.output_text.done": typed.member_path(("text",), string=True),
    "response.reasoning_text.done": typed.member_path(("text",), string=True),
    "response.reasoning_summary_text.done": typed.member_path(("text",), string=True),
    "response.refusal.done": typed.member_path(("refusal",), string=True),
    "response.content_part.done": typed.member_path(("part", "text"), string=True),
    "response.reasoning_summary_part.done": typed.member_path(("part", "text"), string=True),
    "response.output_item.done": (
        typed.member_path(("item", "content", 0, "text"), string=True),
        typed.member_path(("item", "result"), string=True),  # an image generation call's image
    ),
}

Handler = Callable[["OpenAINormalizer", dict[str, Any], Optional[int]], list[Unified]]


def _item_arguments(item: dict[str, Any]) -> Optional[dict[str, Any]]:
    """Arguments an item carries as an object (computer/shell ``action``, code interpreter ``code`` ...)."""
    action = dict.get(item, "action")
    if type(action) is dict:
        return action
    out = {key: item[key] for key in ("code", "queries", "operation") if dict.get(item, key) is not None}
    return out or None


def _index(value: Any) -> Optional[int]:
    return value if type(value) is int else None


def citation_of(annotation: Any) -> Optional[Citation]:
    """The :class:`~ssewire.Citation` of one output-text annotation (``url_citation``: ``url``, ``title`` and the
    ``start_index`` / ``end_index`` span of the content part's text; ``file_citation`` / ``container_file_citation``:
    ``filename`` as the title); ``None`` for any other annotation. The provider gives no cited text."""
    if type(annotation) is not dict:
        return None
    kind = dict.get(annotation, "type")
    if type(kind) is not str or kind not in _CITATION_KINDS:
        return None
    title = str_or(dict.get(annotation, "title"), None) or str_or(dict.get(annotation, "filename"), None)
    start, end = _index(dict.get(annotation, "start_index")), _index(dict.get(annotation, "end_index"))
    return Citation(kind, str_or(dict.get(annotation, "url"), None), title, None, start, end, annotation)


#: What a closed client call keeps for re-marking (see ``OpenAINormalizer._client_done``): its name, argument text,
#: and the arguments and their error only where that text does not decode back to them (a call sent whole).
_ClosedCall = tuple[Optional[str], Optional[str], Any, Optional[str]]


def _closed_call(done: Unified) -> _ClosedCall:
    """What :func:`_remarked` needs of a closed client call's ``tool_call_done``: not its payload, nor arguments
    its argument text gives again (a stream's closed calls are kept to its end: each costs its text, no more)."""
    text, arguments, error = done.arguments_raw, done.arguments, done.arguments_error
    if text is not None and error is None:
        return done.tool_name, text, None, None
    return done.tool_name, text, arguments, error


def _remarked(call_id: str, closed: _ClosedCall, raw: Any, sequence: Optional[int]) -> Unified:
    """The ``tool_call_done`` of closed client call ``call_id`` again, now ``server`` (a call the provider turned
    out to run), carried by ``raw``: the same name, argument text and arguments."""
    name, text, arguments, error = closed
    if arguments is None and text is not None:
        arguments, error = decode_arguments(text)
    return Unified(
        "tool_call_done",
        tool_call_id=call_id,
        tool_name=name,
        arguments=arguments,
        sequence=sequence,
        raw=raw,
        server=True,
        arguments_raw=text,
        arguments_error=error,
    )


class ResponsesRules(Recognition):
    """How the registry recognises OpenAI Responses API payloads, usage objects and metadata."""

    provider = "openai"

    @classmethod
    def audio(cls, raw: dict[str, Any]) -> tuple[int, int, int]:
        """The Realtime API's usage (which these rules read): ``input_token_details.audio_tokens`` (cached:
        ``cached_tokens_details.audio_tokens``) and ``output_token_details.audio_tokens``."""
        return cls.media(raw)["audio"]

    @classmethod
    def media(cls, raw: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
        """The Realtime API's audio (see :meth:`audio`) and images (``input_token_details.image_tokens``, cached:
        ``cached_tokens_details.image_tokens``)."""
        given = raw.get("input_token_details")
        given = given if type(given) is dict else {}
        return {
            name: (
                count(given.get(f"{name}_tokens")),
                detail(given, "cached_tokens_details", f"{name}_tokens"),
                detail(raw, "output_token_details", f"{name}_tokens"),
            )
            for name in ("audio", "image")
        }

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Responses API events: a ``type`` starting with ``response.`` (or, for data without a ``type``, such an
        SSE event name)."""
        kind = obj.get("type")
        if type(kind) is not str:
            kind = event
        return kind is not None and kind.startswith("response.")

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """The flat ``{"type": "error", "code", "message"}`` event (numbered, or with a code)."""
        return obj.get("type") == "error" and ("sequence_number" in obj or "code" in obj)

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``input_tokens`` (cached inside) and ``output_tokens`` (reasoning inside), with their details and a
        ``total_tokens`` (Anthropic's object has the same two names, without a total or details). The Realtime
        API's object spells the details ``input_token_details`` / ``output_token_details``."""
        if "input_tokens" not in raw and "output_tokens" not in raw:
            return None
        if "cache_read_input_tokens" in raw or "cache_creation_input_tokens" in raw:
            return None
        if "total_tokens" not in raw and "input_tokens_details" not in raw and "output_tokens_details" not in raw:
            return None
        inputs = "input_token_details" if "input_token_details" in raw else "input_tokens_details"
        outputs = "output_token_details" if "output_token_details" in raw else "output_tokens_details"
        return usage_counts(
            count(raw.get("input_tokens")),
            count(raw.get("output_tokens")),
            detail(raw, inputs, "cached_tokens"),
            detail(raw, inputs, "cache_write_tokens"),
            detail(raw, outputs, "reasoning_tokens"),
            raw,
            partial,
            cls.provider,
        )

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """``response``'s ``id`` and ``model`` (``response.created`` and the terminal events carry it)."""
        return id_and_model(obj.get("response"))


class OpenAINormalizer(DelegatingNormalizer):
    """Responses API events -> Unified (see the module docstring for the full contract)."""

    provider = "openai"
    terminal = "response.completed"
    rules = ResponsesRules
    stops = RESPONSES_STOP
    delta_rule = _DELTA_RULE  # text, reasoning and open calls' argument deltas, named by their SSE event
    delta_notes = 1  # the last sequence_number the reader saw (see _DELTA_RULE)
    reading_can_stop = stops_reading_at_done = True  # at the terminal event: what follows it is raw
    #: Once the stream turned out to be Chat Completions, its text chunks take the chat delegate's fast paths.
    fast_delegates = (ChatCompletionsNormalizer,)
    #: The call item types the client runs (a subclass for another provider's Responses API sets its own).
    client_items: ClassVar[frozenset[str]] = CLIENT_CALL_ITEMS

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    #: The final ``response.status`` once the terminal event arrived.
    status: Optional[str] = None
    #: The Chat Completions delegate, created when the first chat chunk arrives.
    chat: Optional[ChatCompletionsNormalizer] = None
    _error_sent = False  # an error event was emitted: a failed terminal event adds no second one
    #: The names of the custom tools the request declared (``response.tools`` of ``response.created``), None
    #: until a response names its tools: a ``custom_tool_call`` of any other name is a provider's own tool.
    _declared: Optional[frozenset[str]] = None
    _event_kind: Optional[str] = None

    def __init__(self) -> None:
        super().__init__()
        self._calls = CallTable()  # open calls by item key
        self._closed: set[str] = set()  # item keys whose tool_call_done was emitted
        self._keys: dict[int, str] = {}  # output_index -> item key
        self._client_open: dict[str, OpenCall] = {}  # client calls still open, by call id
        self._client_done: dict[str, _ClosedCall] = {}  # closed client calls by call id (re-marking)
        self._cited: dict[tuple[Any, Any], set[int]] = {}  # (item id, content index) -> annotation indexes taken
        self._reader_calls = self._calls.open
        self._terminal_decode = typed.responses_terminal  # None: the terminal event takes the full decode

    # -- dispatch ---------------------------------------------------------------------------------------------

    def absorb(self) -> None:
        """The last ``sequence_number`` the reader noted is the cursor."""
        notes = self._notes
        if notes is not None and notes[0] is not None:
            self._last_sequence = notes[0]
            notes[0] = None

    def held_skip(self, event: Optional[str] = None) -> Any:
        """A large payload's bulk: a done event's text, which it repeats and nothing here reads (see
        :data:`_TEXT_OF`, by the SSE event name); else its ``response.output`` (a terminal event's: the whole response
        again), which only closing calls left open reads; a chat stream's is the chat delegate's."""
        if self.chat is not None:
            return self.chat.held_skip(event)
        text = _TEXT_OF.get(event)  # type: ignore[arg-type]  # (None: no name)
        if text is not None:
            return text
        return None if self._calls else _OUTPUT

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one Responses event (or, via the delegate, one chat chunk)."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        kind = dict.get(obj, "type")
        if type(kind) is not str:
            if ChatRules.claims(obj) or "error" in obj:
                return self._to_chat(obj, event)
            kind = self._event_kind = event  # data without "type": the SSE event name decides
        seq = dict.get(obj, "sequence_number")
        if type(seq) is int:
            self._last_sequence = seq
        else:
            seq = None
        if self._finished and self.delegate is None:  # after the terminal event: no part of the response (the
            return [new_event("raw", obj, "", seq)]  # SDK's final response is the terminal event's)
        if kind is None:
            handler = None
        elif kind in _DELTAS:  # the bulk of a stream: text and reasoning deltas, without a handler call
            delta = dict.get(obj, "delta")
            if type(delta) is str and delta:
                return [new_event(_DELTAS[kind], obj, delta, seq)]
            return [new_event("raw", obj, "", seq)]
        else:
            handler = _HANDLERS.get(kind)
        if handler is None:
            if dict.get(obj, "object") == "chat.completion.chunk":
                return self._to_chat(obj, event)
            return [new_event("raw", obj, "", seq)]
        return handler(self, obj, seq)

    def _to_chat(self, obj: dict[str, Any], event: Optional[str]) -> list[Unified]:
        chat = self.chat
        if chat is None:
            chat = self.chat = ChatCompletionsNormalizer()
            self.delegate = chat  # from now on the stream's state is the chat normaliser's (its chunks: see fast)
        return chat.payload(obj, event)

    def sentinel(self, ev: SSEEvent) -> list[Unified]:
        """``[DONE]`` ends a chat stream; after Responses events it means nothing and is swallowed."""
        chat = self.chat
        return [] if chat is None else chat.sentinel(ev)

    # -- tool calls -------------------------------------------------------------------------------------------

    def _item_key(self, item_id: Any, output_index: Any) -> str:
        """The key of the item an event refers to: its id; the output index only for events or items without one
        (an id never resolves to another item's call, so items that share an output index still never merge)."""
        if type(item_id) is str and item_id:
            if item_id not in self._calls.open and item_id not in self._closed and type(output_index) is int:
                known = self._keys.get(output_index)
                if known is not None and known[0] == "#":  # that call was opened without an id
                    return known
            return item_id
        if type(output_index) is int:
            known = self._keys.get(output_index)
            return known if known is not None else f"#{output_index}"
        return "#"

    def _runs_on_server(self, kind: str, item: dict[str, Any]) -> bool:
        """Whether the provider runs the call ``item`` (of type ``kind``): what the item says (a ``shell_call``'s
        ``environment`` of a ``container*`` type, a ``tool_search_call``'s ``execution``), else its type."""
        if kind == "shell_call":
            environment = dict.get(item, "environment")
            where = dict.get(environment, "type") if type(environment) is dict else None
            return type(where) is str and where.startswith("container")
        if kind == "tool_search_call":
            return dict.get(item, "execution") != "client"
        if kind == "custom_tool_call" and self._declared is not None:
            name = dict.get(item, "name")
            return type(name) is not str or name not in self._declared  # not the request's: a provider's own tool
        return kind not in self.client_items

    def _open(self, key: str, kind: str, item: dict[str, Any], output_index: Any = None) -> OpenCall:
        server = self._runs_on_server(kind, item)
        item_id = dict.get(item, "id")
        call_id = dict.get(item, "call_id")
        if server:
            given = item_id if type(item_id) is str and item_id else call_id
        else:
            given = call_id if type(call_id) is str and call_id else item_id
        provided = type(given) is str and bool(given)
        ident = str(given) if provided else f"{self.response_id or 'resp'}-{key}"
        name = dict.get(item, "name")
        if type(name) is not str or not name:
            # "web_search_call" -> "web_search"; "mcp_list_tools" keeps its type
            name = None if kind in _NAMED_ITEMS else kind[:-5] if kind.endswith("_call") else kind
        call = OpenCall(ident, name, server, provided)
        self._calls.open[key] = call
        if type(output_index) is int:
            self._keys[output_index] = key
        if not server:
            self._client_open[ident] = call
        return call

    def _close(self, key: str, call: OpenCall, done: Unified) -> Unified:
        """Record that ``call`` (keyed ``key``) was closed by ``done``, and return ``done``."""
        self._closed.add(key)
        if self._client_open.pop(call.id, None) is not None and not call.server:
            self._client_done[call.id] = _closed_call(done)
        return done

    def _call_item(self, obj: dict[str, Any]) -> Optional[tuple[dict[str, Any], str, str]]:
        """``(item, item type, call key)`` when an ``output_item.*`` event carries a call item, else None."""
        item = dict.get(obj, "item")
        if type(item) is not dict:
            return None
        kind = dict.get(item, "type")
        if type(kind) is not str or not (kind.endswith("_call") or kind in _OTHER_CALL_ITEMS):
            return None
        return item, kind, self._item_key(dict.get(item, "id"), dict.get(obj, "output_index"))

    def _other_item(self, obj: dict[str, Any], seq: Optional[int], done: bool) -> list[Unified]:
        """An output item that is no call: a provider-made ``*_output`` of a call reported as a client call
        re-marks that call as the provider's (see :meth:`_provider_output`); a finished ``message`` brings the
        citations of its parts not taken yet (and makes the response's stop a refusal when a part is one), a
        finished ``reasoning`` item its ``encrypted_content`` (as ``encrypted_reasoning``); anything else is
        ``raw``."""
        item = dict.get(obj, "item")
        kind = dict.get(item, "type") if type(item) is dict else None
        if type(item) is dict and type(kind) is str:
            if kind.endswith("_output"):
                remarked = self._provider_output(item, obj, seq)
                if remarked is not None:
                    return [remarked]
            elif done and kind == "message":
                content = dict.get(item, "content")
                if type(content) is list and any(type(p) is dict and dict.get(p, "type") == "refusal" for p in content):
                    self._refused = True
                event = new_event("raw", obj, "", seq)
                event.citations = self._message_citations(item)
                return [event]
            elif done and kind == "reasoning" and type(dict.get(item, "encrypted_content")) is str:
                event = new_event("raw", obj, "", seq)
                event.encrypted_reasoning = item["encrypted_content"]
                return [event]
        return [new_event("raw", obj, "", seq)]

    def _provider_output(self, item: dict[str, Any], obj: dict[str, Any], seq: Optional[int]) -> Optional[Unified]:
        """The provider streamed the result of call ``item["call_id"]`` itself, so it ran that call: an open call
        becomes a server call (its ``tool_call_done`` will say so); a closed one gets a second ``tool_call_done``
        with ``server`` set (``collect()`` ORs it in). Either way it no longer makes the stop ``tool_use``."""
        call_id = dict.get(item, "call_id")
        if type(call_id) is not str:
            return None
        call = self._client_open.pop(call_id, None)
        if call is not None:
            call.server = True
            return None
        done = self._client_done.pop(call_id, None)
        return None if done is None else _remarked(call_id, done, obj, seq)

    def _item_added(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        found = self._call_item(obj)
        if found is None:
            return self._other_item(obj, seq, False)
        item, kind, key = found
        if key in self._calls.open or key in self._closed:
            return [new_event("raw", obj, "", seq)]  # a repeated announcement
        return [self._open(key, kind, item, dict.get(obj, "output_index")).start(obj, seq)]

    def _implicit(self, key: str, obj: dict[str, Any], seq: Optional[int], out: list[Unified]) -> OpenCall:
        """A call whose ``output_item.added`` never came (e.g. a resumed stream): open it now."""
        kind = dict.get(obj, "type")
        item_kind = "mcp_call" if type(kind) is str and kind.startswith("response.mcp_call") else "function_call"
        if type(kind) is str and kind.startswith("response.custom_tool_call"):
            item_kind = "custom_tool_call"
        item_id = dict.get(obj, "item_id")
        item = {"id": item_id, "name": dict.get(obj, "name")}
        call = self._open(key, item_kind, item, dict.get(obj, "output_index"))
        out.append(call.start(obj, seq))
        return call

    def _args_delta(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        key = self._item_key(dict.get(obj, "item_id"), dict.get(obj, "output_index"))
        out: list[Unified] = []
        call = self._calls.get(key)
        if call is None:
            if key in self._closed:
                return [new_event("raw", obj, "", seq)]
            call = self._implicit(key, obj, seq, out)
        delta = dict.get(obj, "delta")
        if type(delta) is str and delta:
            out.append(call.delta(delta, obj, seq))
        return out or [new_event("raw", obj, "", seq)]

    def _args_done(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        key = self._item_key(dict.get(obj, "item_id"), dict.get(obj, "output_index"))
        out: list[Unified] = []
        call = self._calls.pop(key)
        if call is None:
            if key in self._closed:
                return [new_event("raw", obj, "", seq)]
            call = self._implicit(key, obj, seq, out)
            self._calls.pop(key)
        if call.name is None:
            name = dict.get(obj, "name")
            if type(name) is str and name:
                call.name = name
        final = dict.get(obj, "arguments")
        if type(final) is not str:
            final = dict.get(obj, "input")
        out.append(self._close(key, call, call.done(obj, final if type(final) is str else None, seq)))
        return out

    def _finish_item(self, call: OpenCall, item: dict[str, Any], raw: Any, seq: Optional[int]) -> Unified:
        """``call``'s ``tool_call_done`` from its finished ``item``: its ``arguments`` / ``input`` text, else its
        ``arguments`` object (``tool_search_call``), else the fragments, else its ``action`` / ``code`` ... object."""
        final = dict.get(item, "arguments")
        if type(final) is not str:
            final = dict.get(item, "input")
        if type(final) is str:
            return call.done(raw, final, seq)
        if not call.parts:
            whole = dict.get(item, "arguments")
            if type(whole) is not dict:
                whole = _item_arguments(item)
            if whole is not None:
                return call.done_object(whole, raw, seq)
        return call.done(raw, None, seq)

    def _item_done(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        found = self._call_item(obj)
        if found is None:
            return self._other_item(obj, seq, True)
        item, kind, key = found
        out: list[Unified] = []
        call = self._calls.pop(key)
        if call is None:
            if key in self._closed:
                return [new_event("raw", obj, "", seq)]  # already closed by the *.done event
            call = self._open(key, kind, item, dict.get(obj, "output_index"))
            self._calls.pop(key)
            out.append(call.start(obj, seq))
        elif not call.server and self._runs_on_server(kind, item):
            call.server = True  # the finished item says where it ran (e.g. a shell_call's environment)
        out.append(self._close(key, call, self._finish_item(call, item, obj, seq)))
        return out

    def _close_open(self, obj: dict[str, Any], seq: Optional[int], output: Any) -> list[Unified]:
        """Close the calls still open at the terminal event, taking arguments from ``response.output`` if there."""
        items: dict[str, dict[str, Any]] = {}
        if type(output) is list:
            for item in output:
                if type(item) is dict and type(dict.get(item, "id")) is str:
                    items[item["id"]] = item
        out = []
        for key, call in self._calls.open.items():
            item = items.get(key)
            done = self._finish_item(call, item, obj, seq) if item is not None else call.done(obj, None, seq)
            out.append(self._close(key, call, done))
        self._calls.clear()
        return out

    # -- citations --------------------------------------------------------------------------------------------

    def _annotation(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        """``response.output_text.annotation.added``: ``raw``, with the annotation's citation (remembered by its
        ``annotation_index``, so the finished part and item do not bring it again)."""
        event = new_event("raw", obj, "", seq)
        taken = self._cited.setdefault(
            (key_of(dict.get(obj, "item_id")), key_of(dict.get(obj, "content_index"))), set()
        )
        index = dict.get(obj, "annotation_index")
        taken.add(index if type(index) is int else len(taken))
        citation = citation_of(dict.get(obj, "annotation"))
        if citation is not None:
            event.citations = [citation]
        return [event]

    def _part_citations(self, item_id: Any, content_index: Any, part: Any) -> Optional[list[Citation]]:
        """The citations of a finished content part's ``annotations`` not taken yet (by their index)."""
        annotations = dict.get(part, "annotations") if type(part) is dict else None
        if type(annotations) is not list or not annotations:
            return None
        taken = self._cited.setdefault((key_of(item_id), key_of(content_index)), set())
        out = []
        for index, annotation in enumerate(annotations):
            if index not in taken:
                taken.add(index)
                citation = citation_of(annotation)
                if citation is not None:
                    out.append(citation)
        return out or None

    def _part_done(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        """``response.content_part.done``: ``raw``, with the citations of its part not taken yet (a ``refusal`` part
        makes the response's stop a refusal)."""
        part = dict.get(obj, "part")
        if type(part) is dict and dict.get(part, "type") == "refusal":
            self._refused = True
        event = new_event("raw", obj, "", seq)
        event.citations = self._part_citations(
            dict.get(obj, "item_id"), dict.get(obj, "content_index"), dict.get(obj, "part")
        )
        return [event]

    def _message_citations(self, item: dict[str, Any]) -> Optional[list[Citation]]:
        """The citations of a finished ``message`` item's parts not taken yet."""
        content = dict.get(item, "content")
        if type(content) is not list:
            return None
        out: list[Citation] = []
        for index, part in enumerate(content):
            out += self._part_citations(dict.get(item, "id"), index, part) or ()
        return out or None

    # -- lifecycle --------------------------------------------------------------------------------------------

    def _meta(self, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj["response"]`` (or an empty dict), keeping its id and model."""
        response = dict.get(obj, "response")
        if type(response) is not dict:
            return _EMPTY
        self._keep_meta(dict.get(response, "id"), dict.get(response, "model"))
        return response

    def _keep_meta(self, response_id: Any, model: Any) -> None:
        if type(response_id) is str:
            self._response_id = response_id
        if type(model) is str:
            self._model = model

    def _created(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        tools = self._meta(obj).get("tools")
        if type(tools) is list and self._declared is None:
            self._declared = frozenset(
                tool["name"]
                for tool in tools
                if type(tool) is dict and dict.get(tool, "type") == "custom" and type(dict.get(tool, "name")) is str
            )
        return [new_event("raw", obj, "", seq)]

    #: Whether a message part was a refusal (``response.content_part.done``): a completed response is then a refusal.
    _refused = False

    def _terminal(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        if self._finished:
            return [new_event("raw", obj, "", seq)]  # a repeated terminal event
        return self._ending(obj, self._meta(obj), dict.get(obj, "type"), seq)

    def reads_deltas(self) -> bool:
        """Until the terminal event (a chat delegate's: while it reads them)."""
        delegate = self.delegate
        return not self._finished if delegate is None else delegate.reads_deltas()

    def fast_terminal(self, ev: SSEEvent) -> Optional[list[Unified]]:
        """The events of a large terminal event (the whole response again: every output item) decoded with only
        the members they read (``raw`` stays lazy), so its output is never built; None for any other event, for a
        repeated terminal event and while calls are open (closing them reads ``response.output``): those take the
        full decode. The events equal the full decode's."""
        data = held(ev)
        decode = self._terminal_decode
        if decode is None or len(data) < LARGE or self._calls or self._finished:
            return None
        try:
            obj = decode(decodable(data))
        except typed.DECODE_ERRORS:
            return None
        kind = obj.type
        if type(kind) is not str or _HANDLERS.get(kind) is not OpenAINormalizer._terminal:
            return None
        seq = obj.sequence_number
        if type(seq) is int:
            self._last_sequence = seq
        else:
            seq = None
        got = obj.response
        response: dict[str, Any] = _EMPTY
        if got is not None:
            if got.output and any(self._unseen_call(head.type, head.id) for head in got.output):
                whole = loads(decodable(data))  # (a call only the final response has: read from its item)
                return self.payload(whole, ev.event) if type(whole) is dict else None
            self._keep_meta(got.id, got.model)
            response = {
                "status": got.status,
                "incomplete_details": got.incomplete_details,
                "error": got.error,
                "usage": got.usage,
            }
        return self._ending(LazyPayload(data), response, kind, seq)

    def _unseen_call(self, kind: Any, item_id: Any) -> bool:
        """Whether an output item of type ``kind`` and id ``item_id`` is a call the stream never announced."""
        if type(kind) is not str or not (kind.endswith("_call") or kind in _OTHER_CALL_ITEMS):
            return False
        return type(item_id) is not str or (item_id not in self._calls.open and item_id not in self._closed)

    def _unannounced(self, output: list[Any], obj: Any, seq: Optional[int]) -> list[Unified]:
        """The events of the calls only the final response has (no ``output_item`` event announced them): each
        read as its ``output_item.done`` would be."""
        out: list[Unified] = []
        for index, item in enumerate(output):
            if type(item) is dict and self._unseen_call(dict.get(item, "type"), dict.get(item, "id")):
                out += self._item_done({"type": "response.output_item.done", "output_index": index, "item": item}, seq)
        return out

    def _ending(self, obj: Any, response: dict[str, Any], kind: Any, seq: Optional[int]) -> list[Unified]:
        """A terminal event's [the calls only its ``output`` has] [``error``] [``usage``] ``done`` (``obj`` their
        ``raw``; ``kind`` its ``type``)."""
        output = dict.get(response, "output")
        unannounced = self._unannounced(output, obj, seq) if type(output) is list and output else []
        status = dict.get(response, "status")
        if type(status) is not str:
            if type(kind) is not str:
                kind = self._event_kind or "response.completed"
            status = kind[9:]  # "response.completed" -> "completed"
        stop = self.stop_for(status, bool(self._client_open or self._client_done))
        if stop == "end" and self._refused:  # (its text is the refusal: not an answer)
            stop = "refusal"
        if stop == "incomplete":
            details = dict.get(response, "incomplete_details")
            reason = dict.get(details, "reason") if type(details) is dict else None
            if type(reason) is str:
                stop = INCOMPLETE_STOP.get(reason, "incomplete")
        out = self._close_open(obj, seq, output) if self._calls and closes_calls(stop) else []
        if unannounced:
            out = unannounced + out
        if status == "failed" and not self._error_sent:
            error = dict.get(response, "error")
            if error is not None:
                self._error_sent = True
                payload = with_incomplete(error_payload(error), self.incomplete_for_error())
                out.append(Unified("error", error=payload, sequence=seq, raw=obj))
        usage = dict.get(response, "usage")
        if type(usage) is dict:
            self._usage = usage
            out.append(new_usage(usage, obj, seq))
        self.status = status
        self._finished = self._done = True
        out.append(new_done(stop, status, obj, seq))
        return out

    def _error(self, obj: dict[str, Any], seq: Optional[int]) -> list[Unified]:
        inner = error_object(obj, ("type", "sequence_number", "error"))  # nested, or flat with code and message
        self._error_sent = True
        self._done = True
        payload = with_incomplete(error_payload(inner), self.incomplete_for_error())
        return [Unified("error", error=payload, usage=self._usage, sequence=seq, raw=obj)]

    @property
    def fast(self) -> Optional[Callable[[SSEEvent], Optional[list[Unified]]]]:
        """The chat delegate's typed fast path once the stream is Chat Completions; before, :meth:`fast_terminal`
        when typed decoding is on with msgspec."""
        if self.delegate is not None:
            return super().fast
        return None if self._terminal_decode is None else self.fast_terminal

    # -- end of stream ----------------------------------------------------------------------------------------

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The calls still open (Responses items, or the chat delegate's)."""
        if self.delegate is not None:
            return self.delegate.incomplete_tool_calls()
        return self._calls.incomplete()


#: Event type -> handler (the dispatch of :meth:`OpenAINormalizer.payload`).
_HANDLERS: dict[str, Handler] = {
    "response.output_item.added": OpenAINormalizer._item_added,
    "response.output_item.done": OpenAINormalizer._item_done,
    **dict.fromkeys(_ARGUMENT_DELTAS, OpenAINormalizer._args_delta),
    "response.function_call_arguments.done": OpenAINormalizer._args_done,
    "response.custom_tool_call_input.done": OpenAINormalizer._args_done,
    "response.mcp_call_arguments.done": OpenAINormalizer._args_done,
    "response.output_text.annotation.added": OpenAINormalizer._annotation,
    "response.content_part.done": OpenAINormalizer._part_done,
    "response.created": OpenAINormalizer._created,
    "response.in_progress": OpenAINormalizer._created,
    "response.queued": OpenAINormalizer._created,
    "response.completed": OpenAINormalizer._terminal,
    "response.incomplete": OpenAINormalizer._terminal,
    "response.failed": OpenAINormalizer._terminal,
    "response.cancelled": OpenAINormalizer._terminal,
    "error": OpenAINormalizer._error,
}
