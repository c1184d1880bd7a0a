"""Gemini ``streamGenerateContent`` chunks (``?alt=sse`` or the streamed JSON array) -> :class:`Unified` events.

One :class:`GeminiNormalizer` handles one stream. Contract (per chunk, in order):

- ``candidates[0].content.parts[]`` (the candidate whose ``index`` is 0: with ``candidateCount`` > 1 the others'
  chunks are ``raw``): ``{text, thought: true}`` -> ``reasoning_delta``; non-empty ``text`` -> ``text_delta``;
  empty ``text`` (the Gemini 3 signature carrier) -> ``raw``; ``functionCall`` ->
  ``tool_call_start`` / ``tool_call_delta`` (compact JSON of ``args``) / ``tool_call_done`` (``arguments`` = the
  object, ``arguments_raw`` None), a client call; ``executableCode`` (code Gemini's code execution tool runs
  itself, its ``codeExecutionResult`` part following in the same stream) -> the same three events with
  ``server=True``, named ``code_execution``, id the part's ``id`` (else synthetic), ``arguments`` its other fields
  (``language``, ``code``): never a client call; anything else (``codeExecutionResult``, ``inlineData``, ...) ->
  ``raw``. A part's ``thoughtSignature`` rides on the first event made from that part and becomes
  ``last_signature``.
- Google Search / URL context / Maps grounding make no call parts, only metadata: a candidate's
  ``groundingMetadata`` -> a ``raw`` event after the chunk's part events carrying its citations: one
  ``grounding_support`` :class:`~ssewire.citations.Citation` per (support, chunk it names in
  ``groundingChunkIndices``) -- ``url`` / ``title`` the chunk's (``web``, ``retrievedContext``, ``maps``),
  ``cited_text`` the segment's ``text`` (the answer's words), ``start`` / ``end`` its ``startIndex`` / ``endIndex``
  (UTF-8 bytes of the part; a missing ``startIndex`` is 0), ``raw`` the support -- then one ``grounding_chunk``
  (no span, ``raw`` the chunk) per chunk no support names. ``citationMetadata`` (``citationSources``; Vertex
  ``citations``) -> one ``citation_source`` per source (``uri``, ``title``, span). A stream may repeat its metadata
  in later chunks: each citation is given once (the same kind, source, text and span never twice).
  ``urlContextMetadata`` stays in ``raw``.
- Vertex ``streamFunctionCallArguments``: ``{name, willContinue: true}`` opens a call, ``{partialArgs: [...]}``
  parts fill it (``jsonPath`` + typed value; string fragments at one path concatenate) and emit the equivalent JSON
  text as ``tool_call_delta``; a part without ``willContinue`` (e.g. ``functionCall: {}``) closes it. A call left
  open is closed by a ``finishReason`` that did not cut the response off (``STOP``); after ``MAX_TOKENS``, a
  safety stop, an error or a cut stream it is incomplete (no ``tool_call_done``; listed in the error event).
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

from typing import Any, Callable, ClassVar, Optional

from .._json import loads
from ..citations import Citation
from ..events import LazyPayload, SSEEvent, Unified, new_done, new_event, new_tool_event, new_usage
from ..names import UnifiedType
from ..usage import Usage, count
from ._fast import typed
from .common import error_payload, str_or, with_incomplete
from .contract import DelegatingNormalizer, Recognition, not_a_payload
from .gemini_interactions import (
    GeminiInteractionsNormalizer,
    GeminiInteractionsRules,
    is_interaction_event,
    thought_usage,
)
from .tool_calls import CallIds, closes_calls, compact_json, done_event, incomplete_entry
from .vertex_args import StreamedCall, parse_json_path

__all__ = [
    "GEMINI_STOP",
    "GeminiNormalizer",
    "GeminiRules",
    "grounding_citations",
    "parse_json_path",
    "recitation_citations",
]

_CHUNK_KEYS = ("candidates", "usageMetadata", "promptFeedback", "modelVersion", "responseId")
_PART = ("candidates", 0, "content", "parts", 0)
_GENERATE_CONTENT: tuple[None, tuple[typed.Variant, ...]] = (
    None,
    ((True, ((1, "reasoning_delta"),)), (None, ((1, "text_delta"),))),
)
#: The chunks read without a decode: one candidate, not finished, whose content is text parts (a thought when
#: ``thought`` is true) or media parts (``inlineData`` / ``fileData``: a raw event, its data never read, at any
#: size), an event a part (a chunk of several is read part by part: ``each_step``), without a signature, a function
#: call or code to run, with no error, no citations (grounding metadata without ``groundingChunks`` and
#: ``groundingSupports``, citation metadata without ``citationSources`` and ``citations``: a search-grounded stream
#: sends ``"groundingMetadata": {}`` on every chunk before the last), and not an Interactions payload (no
#: ``event_type`` at all).
#: What else they set is reported in notes: the payload whose ``usageMetadata`` is an object (decoded only when
#: the usage is read), ``responseId`` and ``modelVersion`` strings.
_DELTA_RULE = typed.delta_rule(
    (
        ("error",),
        (*_PART, "text"),
        (*_PART, "thought"),
        (*_PART, "thoughtSignature"),
        (*_PART, "functionCall"),
        ("candidates", 0, "finishReason"),
        ("event_type",),
        ("usageMetadata",),
        ("responseId",),
        ("modelVersion",),
        ("candidates", 0, "groundingMetadata", "groundingChunks"),
        ("candidates", 0, "citationMetadata", "citationSources"),
        (*_PART, "executableCode"),
        (*_PART, "inlineData"),
        (*_PART, "fileData"),
        ("candidates", 0, "groundingMetadata", "groundingSupports"),
        ("candidates", 0, "citationMetadata", "citations"),
        ("candidates", 0, "index"),
    ),
    {"message": _GENERATE_CONTENT, None: _GENERATE_CONTENT},
    tag_path=2,
    nulls=(0, 3, 5, 10, 11, 15, 16),
    absent=(4, 6, 12),
    notes=((7, "object"), (8, "string"), (9, "string")),
    media=(13, 14),
    zeros=(17,),  # (another candidate's chunk, when several are asked for: decoded, read as raw)
    each_step=len(_PART) - 1,  # (the parts)
)

_OPEN_BRACE = ord("{")  # (the first byte of a JSON object)
#: Payloads shorter than this are searched for a function call before the typed fast path decodes them (searching a
#: large inline image costs more than the decode it could save).
_LOOKED_AT = 16 * 1024
#: Where the arguments of a chunk's one function call are, read as text by ``typed.compact_member``.
_ARGS_PATH = typed.member_path((*_PART, "functionCall", "args"))

#: ``finishReason`` -> unified stop reason (anything else maps to ``other``).
GEMINI_STOP: dict[str, str] = {
    "STOP": "end",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "refusal",
    "RECITATION": "refusal",
    "BLOCKLIST": "refusal",
    "PROHIBITED_CONTENT": "refusal",
    "SPII": "refusal",
    "IMAGE_SAFETY": "refusal",
    "IMAGE_PROHIBITED_CONTENT": "refusal",
    "IMAGE_RECITATION": "refusal",
    "LANGUAGE": "refusal",
    "MODEL_ARMOR": "refusal",  # (Vertex: blocked by Model Armor)
    "ESCALATION": "refusal",  # (filtered by an escalation rule)
    "PUP_LIMITED_DISABLED": "refusal",  # (the account is limited for Prohibited Use Policy violations)
    # the per-request token limit reached before the answer is complete (continued by a later request)
    "CONTINUATION": "max_tokens",
    # a call the model wrote wrong, or a response that came out malformed: failed, so that a call still open is
    # incomplete, never run
    "MALFORMED_FUNCTION_CALL": "failed",
    "UNEXPECTED_TOOL_CALL": "failed",
    "TOO_MANY_TOOL_CALLS": "failed",
    "MALFORMED_RESPONSE": "failed",
    "MISSING_THOUGHT_SIGNATURE": "failed",
}


#: The name a code-execution call gets: the tool's name in the request (``tools: [{"codeExecution": {}}]``).
CODE_EXECUTION = "code_execution"


def _first_candidate(candidates: list[Any]) -> Any:
    """The candidate a stream is read by: the one whose ``index`` is 0 (absent, or not an integer: 0), the first
    such; None where a chunk carries only others' (``candidateCount`` > 1 streams the candidates' chunks apart)."""
    for candidate in candidates:
        index = dict.get(candidate, "index") if type(candidate) is dict else None
        if type(index) is not int or index == 0:
            return candidate
    return None


def _index(value: Any) -> Optional[int]:
    """An index or count field: ``value`` when it is an int (not a bool), else None."""
    return value if type(value) is int else None


def _span(holder: dict[str, Any]) -> tuple[Optional[int], Optional[int]]:
    """``(startIndex, endIndex)`` of a segment or citation source; proto3 JSON leaves a 0 out, so a missing
    ``startIndex`` beside an ``endIndex`` is 0."""
    start, end = _index(holder.get("startIndex")), _index(holder.get("endIndex"))
    if start is None and end is not None:
        start = 0
    return start, end


def _source(chunk: Any) -> tuple[Optional[str], Optional[str]]:
    """``(uri, title)`` of a grounding chunk: its one source object (``web``, ``retrievedContext``, ``maps`` ...)."""
    if type(chunk) is dict:
        for value in chunk.values():
            if type(value) is dict and ("uri" in value or "title" in value):
                return str_or(value.get("uri"), None), str_or(value.get("title"), None)
    return None, None


def grounding_citations(metadata: Any) -> list[Citation]:
    """The citations of a candidate's ``groundingMetadata``: one ``grounding_support`` per (support, chunk it
    names) -- the chunk's ``uri`` / ``title``, the segment's ``text`` as ``cited_text`` (the answer's words),
    ``startIndex`` / ``endIndex`` as the span (UTF-8 bytes of the part), the support object as ``raw`` -- then one
    ``grounding_chunk`` (no span, the chunk as ``raw``) per chunk no support names."""
    if type(metadata) is not dict:
        return []
    chunks = metadata.get("groundingChunks")
    chunks = chunks if type(chunks) is list else []
    supports = metadata.get("groundingSupports")
    out: list[Citation] = []
    named: set[int] = set()
    for support in supports if type(supports) is list else ():
        if type(support) is not dict:
            continue
        segment = support.get("segment")
        segment = segment if type(segment) is dict else {}
        start, end = _span(segment)
        text = str_or(segment.get("text"), None)
        indices = support.get("groundingChunkIndices")
        for index in indices if type(indices) is list else ():
            if type(index) is int and 0 <= index < len(chunks):
                named.add(index)
                url, title = _source(chunks[index])
                out.append(Citation("grounding_support", url, title, text, start, end, support))
    for index, chunk in enumerate(chunks):
        if index not in named and type(chunk) is dict:
            url, title = _source(chunk)
            out.append(Citation("grounding_chunk", url, title, raw=chunk))
    return out


def recitation_citations(metadata: Any) -> list[Citation]:
    """The citations of a candidate's ``citationMetadata`` (sources the answer recites): one ``citation_source``
    per entry of ``citationSources`` (Gemini API) or ``citations`` (Vertex AI), with its ``uri``, ``title`` and
    span."""
    if type(metadata) is not dict:
        return []
    sources = metadata.get("citationSources", metadata.get("citations"))
    out: list[Citation] = []
    for source in sources if type(sources) is list else ():
        if type(source) is dict:
            start, end = _span(source)
            url, title = str_or(source.get("uri"), None), str_or(source.get("title"), None)
            out.append(Citation("citation_source", url, title, None, start, end, source))
    return out


def _modality_count(details: Any, modality: str) -> int:
    """The tokens of ``modality`` (lower case) in a list of ``{"modality": "AUDIO", "tokenCount": n}`` (Interactions:
    ``{"modality": "audio", "tokens": n}``); 0 when it has none."""
    if type(details) is not list:
        return 0
    total = 0
    for d in details:
        if type(d) is dict:
            name = d.get("modality")
            if type(name) is str and name.lower() == modality:
                total += count(d.get("tokenCount", d.get("tokens")))
    return total


class GeminiRules(Recognition):
    """How the registry recognises Gemini generateContent and Interactions payloads, usage objects and metadata."""

    provider = "gemini"

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Interactions events (``event_type`` or an Interactions SSE event name) and generateContent chunks
        (``candidates``, ``usageMetadata``, ``promptFeedback``, ``modelVersion`` or ``responseId``)."""
        if GeminiInteractionsRules.claims(obj, event):
            return True
        return not obj.keys().isdisjoint(_CHUNK_KEYS)

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """``{"error": {"code", "message", "status"}}``: Google's error shape has a ``status``."""
        inner = obj.get("error")
        return isinstance(inner, dict) and "status" in inner

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``usageMetadata``: tool-use prompt tokens are input, thoughts are output (and reasoning); Live sends
        ``responseTokenCount`` where generateContent sends ``candidatesTokenCount``; Interactions usage is read by
        its own normaliser."""
        if "promptTokenCount" not in raw and "candidatesTokenCount" not in raw and "totalTokenCount" not in raw:
            return GeminiInteractionsRules.usage_from(raw, partial)
        candidates = "candidatesTokenCount" if "candidatesTokenCount" in raw else "responseTokenCount"  # Live
        keys = ("promptTokenCount", "toolUsePromptTokenCount", candidates, "thoughtsTokenCount")
        return thought_usage(raw, partial, cls.provider, *keys, "cachedContentTokenCount")

    @classmethod
    def audio(cls, raw: dict[str, Any]) -> tuple[int, int, int]:
        """The ``AUDIO`` entries of ``promptTokensDetails``, ``cacheTokensDetails`` and ``candidatesTokensDetails``
        (Live: ``responseTokensDetails``)."""
        return cls.media(raw)["audio"]

    @classmethod
    def media(cls, raw: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
        """The ``AUDIO``, ``IMAGE`` and ``VIDEO`` entries of ``promptTokensDetails``, ``cacheTokensDetails`` and
        ``candidatesTokensDetails`` (Live: ``responseTokensDetails``); an Interactions usage's
        ``input_tokens_by_modality``, ``cached_tokens_by_modality`` and ``output_tokens_by_modality``."""
        if "input_tokens_by_modality" in raw or "output_tokens_by_modality" in raw:
            keys = ("input_tokens_by_modality", "cached_tokens_by_modality", "output_tokens_by_modality")
        else:
            outputs = "candidatesTokensDetails" if "candidatesTokensDetails" in raw else "responseTokensDetails"
            keys = ("promptTokensDetails", "cacheTokensDetails", outputs)
        lists = [raw.get(key) for key in keys]
        return {
            name: (
                _modality_count(lists[0], name),
                _modality_count(lists[1], name),
                _modality_count(lists[2], name),
            )
            for name in ("audio", "image", "video")
        }

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """``responseId`` and ``modelVersion`` (an Interactions payload's interaction ``id`` and ``model``)."""
        if GeminiInteractionsRules.claims(obj):
            return GeminiInteractionsRules.meta_from(obj)
        return str_or(obj.get("responseId"), None), str_or(obj.get("modelVersion"), None)


class GeminiNormalizer(DelegatingNormalizer):
    """Gemini generateContent stream (SSE or JSON array) -> unified events; Interactions payloads are delegated.

    Attributes: ``response_id``, ``model_version``, ``last_signature`` (the latest ``thoughtSignature``),
    ``interaction_id`` / ``last_event_index`` / ``last_event_id`` (Interactions, for resume), ``usage`` (the last
    ``usageMetadata``) and ``done``.
    """

    provider: ClassVar[str] = "gemini"
    terminal: ClassVar[str] = "a chunk with finishReason"
    rules = GeminiRules
    stops = GEMINI_STOP
    delta_rule = _DELTA_RULE  # chunks of one text or thought part, while the stream is generateContent
    delta_notes = 3  # what the reader's chunks set: usageMetadata, responseId, modelVersion (see _DELTA_RULE)
    reading_can_stop = True  # a finishReason, or the first Interactions payload
    fast_delegates = (GeminiInteractionsNormalizer,)  # its reader takes an Interactions stream's text deltas
    first_event_alone = False  # (the rest of a first chunk is read alike either way)
    reads_text = True  # a whole call's arguments are written from the payload's text (see _whole_call)
    # The compiled reader takes every chunk the typed path takes but rare ones (several candidates, more than 8
    # parts, JSON that is not strict): a chunk it declines (a call, a signature, the finish, citations) goes
    # straight to the full decode, not first through a typed decode that would decline it too.
    fast_beyond_rule = False

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    _interactions: Optional[GeminiInteractionsNormalizer] = None  # the delegate, typed
    _last_signature: Optional[str] = None
    #: The last ``finishReason`` (the provider's own value).
    finish_reason: Optional[str] = None
    _sent_usage: Optional[dict[str, Any]] = None
    _client_calls = False
    _open: Optional[StreamedCall] = None
    _usage_payload: Optional[str] = None  # a payload whose usageMetadata is the usage, not decoded yet
    _usage_value: Optional[dict[str, Any]] = None

    def __init__(self) -> None:
        super().__init__()
        self._ids = CallIds()
        self._typed = typed.gemini_chunk  # None: every chunk takes the full decode
        self._compact = typed.compact_member  # the compiled compact-JSON writer, or None
        self._cited: set[tuple[Any, ...]] = set()  # the citations given so far (streams repeat their metadata)

    # -- state shared with the Interactions delegate ------------------------------------------------------------

    @property
    def model_version(self) -> Optional[str]:
        """``modelVersion`` of the chunks (the contract's ``model``; the interaction's for Interactions streams)."""
        return self.model

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

    def reads_deltas(self) -> bool:
        """While the stream is generateContent and not finished."""
        return self._interactions is None and not self._finished

    def absorb(self) -> None:
        """What the chunks the reader took set, from its notes: the last ``usageMetadata`` object (kept as the text
        of its payload until the usage is read), ``responseId`` and ``modelVersion`` strings."""
        notes = self._notes
        if notes is None:
            return
        payload, response_id, model = notes[:3]
        if payload is not None:
            self._usage_payload = payload
        if response_id is not None:
            self._response_id = response_id
        if model is not None:
            self._model = model
        notes[0] = notes[1] = notes[2] = None

    @property
    def _usage(self) -> Optional[dict[str, Any]]:
        """The last ``usageMetadata``, decoded from the payload the reader noted it in when that came last."""
        payload = self._usage_payload
        if payload is not None:
            self._usage_payload = None
            usage: dict[str, Any] = loads(payload)["usageMetadata"]
            self._usage_value = usage
        return self._usage_value

    @_usage.setter
    def _usage(self, value: Optional[dict[str, Any]]) -> None:
        self._usage_payload = None
        self._usage_value = value

    @property
    def fast(self) -> Optional[Callable[[SSEEvent], Optional[list[Unified]]]]:
        """:meth:`_fast_event` when typed decoding is on."""
        return None if self._typed is None else self._fast_event

    def _fast_event(self, ev: SSEEvent) -> Optional[list[Unified]]:
        """The typed fast path: the events of a generateContent chunk whose first candidate is text, thought and
        media parts only (``inlineData`` / ``fileData``: a ``raw`` event each, their data never decoded), with no
        citations, not finished, with no error (``raw`` stays lazy); None for any other chunk."""
        if self._interactions is not None or (ev.event is not None and ev.event != "message"):
            return None
        data = ev.data
        # a call, citations, a signature or the finish in a small chunk: not worth a typed decode before the full
        # one (searching a large one costs more than the decode: its structs say)
        if len(data) < _LOOKED_AT and (
            '"functionCall"' in data
            or '"finishReason"' in data
            or '"thoughtSignature"' in data
            or '"groundingMetadata"' in data
            or '"citationMetadata"' in data
        ):
            return None
        try:
            chunk = self._typed(data)  # type: ignore[misc]
        except typed.DECODE_ERRORS:
            return None
        candidates = chunk.candidates
        if not candidates or chunk.error is not None or chunk.event_type is not typed.ABSENT or self._finished:
            return None
        candidate = candidates[0]
        content = candidate.content
        parts = content.parts if content is not None else None
        index = candidate.index
        if (
            (index is not None and index != 0)
            or not parts
            or candidate.finishReason is not None
            or candidate.groundingMetadata is not typed.ABSENT
            or candidate.citationMetadata is not typed.ABSENT
        ):
            return None
        raw = LazyPayload(data)
        out: list[Unified] = []
        for part in parts:
            if (
                part.thoughtSignature is not None
                or part.functionCall is not typed.ABSENT
                or part.executableCode is not typed.ABSENT
            ):
                return None
            text = part.text
            if text:
                out.append(new_event("reasoning_delta" if part.thought is True else "text_delta", raw, text))
            elif text is None and (part.inlineData is not typed.ABSENT or part.fileData is not typed.ABSENT):
                out.append(new_event("raw", raw, ""))  # (what _part makes of a media part)
            else:
                return None
        # usageMetadata is its JSON text: an object is decoded from the payload when the usage is read (as the
        # reader's notes are: absorb()), any other value is no usage (as in _chunk)
        usage = chunk.usageMetadata
        if usage is not typed.ABSENT and memoryview(usage)[0] == _OPEN_BRACE:
            self._usage_payload, self._usage_value = data, None
        if type(chunk.responseId) is str:
            self._response_id = chunk.responseId
        if type(chunk.modelVersion) is str:
            self._model = chunk.modelVersion
        return out

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one generateContent chunk, or hand an Interactions payload to the delegate."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        delegate = self._interactions
        if delegate is None and (
            "event_type" in obj
            or (
                event is not None
                and event != "message"  # the SSE default, the name of every generateContent chunk
                and (is_interaction_event(event) or event in ("error", "done"))
            )
        ):
            delegate = self._interactions = GeminiInteractionsNormalizer()
            delegate.done, delegate.finished = self._done, self._finished
            self.delegate = delegate
        if delegate is not None:
            return delegate.payload(obj, event)
        return self._chunk(obj)

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """A streamed call left open (and the Interactions delegate's open calls)."""
        call = self._open
        out = [] if call is None else [incomplete_entry(call.id, call.name, "".join(call.emitted))]
        if self._interactions is not None:
            out += self._interactions.incomplete_tool_calls()
        return out

    # -- generateContent ----------------------------------------------------------------------------------------

    def _chunk(self, obj: dict[str, Any]) -> list[Unified]:
        """One generateContent chunk: error, parts in order, then close / usage / done on ``finishReason``."""
        out: list[Unified] = []
        if dict.get(obj, "error") is not None:
            self._done = True
            usage = None if self._usage is None else dict(self._usage)  # best usage so far, as on truncation
            payload = with_incomplete(error_payload(obj["error"]), self.incomplete_for_error())
            out.append(Unified("error", error=payload, usage=usage, raw=obj))
            return out
        usage = dict.get(obj, "usageMetadata")
        if isinstance(usage, dict):
            self._usage_payload, self._usage_value = None, usage  # (the _usage setter, inline)
        value = dict.get(obj, "responseId")
        if type(value) is str:
            self._response_id = value
        value = dict.get(obj, "modelVersion")
        if type(value) is str:
            self._model = value

        candidates = dict.get(obj, "candidates")
        candidate = _first_candidate(candidates) if isinstance(candidates, list) and candidates else None
        finish: Optional[str] = None
        if isinstance(candidate, dict):
            content = dict.get(candidate, "content")
            parts = dict.get(content, "parts") if isinstance(content, dict) else None
            if isinstance(parts, list):
                for part in parts:
                    # the bulk of a stream: parts that are just {"text": ...} or {"text": ..., "thought": true}
                    size = len(part) if type(part) is dict else 0
                    text = dict.get(part, "text") if 0 < size <= 2 else None
                    if type(text) is str and text:
                        if size == 1:
                            out.append(new_event("text_delta", obj, text))
                            continue
                        if dict.get(part, "thought") is True:
                            out.append(new_event("reasoning_delta", obj, text))
                            continue
                    self._part(part, obj, out)
            if "groundingMetadata" in candidate or "citationMetadata" in candidate:
                self._citations(candidate, obj, out)
            value = dict.get(candidate, "finishReason")
            if type(value) is str and value:
                finish = value
        elif not candidates:
            feedback = obj.get("promptFeedback")
            block = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if type(block) is str and block and not self._finished:
                self._terminate(obj, block, "refusal", out)
                return out

        if finish is not None and not self._finished:
            stop = self.stop_for(finish, self._client_calls)
            if closes_calls(stop):
                out += self._close_open(obj)
            self._terminate(obj, finish, stop, out)
        elif self._finished and self._usage is not None and self._usage != self._sent_usage:
            self._sent_usage = self._usage
            out.append(new_usage(dict(self._usage), obj))
        if not out:
            out.append(new_event("raw", obj))
        return out

    def _citations(self, candidate: dict[str, Any], obj: dict[str, Any], out: list[Unified]) -> None:
        """Append a ``raw`` event carrying the candidate's grounding and recitation citations not given before
        (a stream may repeat its metadata in later chunks: each citation comes once)."""
        fresh: list[Citation] = []
        for citation in grounding_citations(candidate.get("groundingMetadata")) + recitation_citations(
            candidate.get("citationMetadata")
        ):
            key = (citation.kind, citation.url, citation.title, citation.cited_text, citation.start, citation.end)
            if key not in self._cited:
                self._cited.add(key)
                fresh.append(citation)
        if fresh:
            event = new_event("raw", obj)
            event.citations = fresh
            out.append(event)

    def _terminate(self, obj: dict[str, Any], raw_stop: str, stop: str, out: list[Unified]) -> None:
        """Append ``usage`` (when any was seen) and the stream's one ``done``."""
        self.finish_reason = raw_stop
        if self._usage is not None:
            self._sent_usage = self._usage
            out.append(new_usage(dict(self._usage), obj))
        out.append(new_done(stop, raw_stop, obj))
        self._finished = True
        self._done = True

    def _part(self, part: Any, obj: dict[str, Any], out: list[Unified]) -> None:
        """Append the events of one content part; its signature goes on the first of them."""
        if not isinstance(part, dict):
            out.append(new_event("raw", obj))
            return
        signature = dict.get(part, "thoughtSignature")
        if type(signature) is not str or not signature:
            signature = None
        else:
            self._last_signature = signature
        if "functionCall" in part:
            self._function_call(part["functionCall"], obj, signature, out)
            return
        if type(dict.get(part, "toolCall")) is dict:
            self._server_tool_call(part["toolCall"], obj, signature, out)
            return
        if type(dict.get(part, "executableCode")) is dict:
            self._executable_code(part["executableCode"], obj, signature, out)
            return
        text = dict.get(part, "text")
        if type(text) is str and text:
            kind: UnifiedType = "reasoning_delta" if dict.get(part, "thought") is True else "text_delta"
            out.append(new_event(kind, obj, text, None, signature))
        else:
            out.append(new_event("raw", obj, "", None, signature))

    def _function_call(self, fc: Any, obj: dict[str, Any], signature: Optional[str], out: list[Unified]) -> None:
        """Append the events of one ``functionCall`` part (always at least one; ``signature`` on the first event
        of this call: its ``tool_call_start``, or the delta / done a continuation part makes)."""
        if not isinstance(fc, dict):
            out.append(new_event("raw", obj, "", None, signature))
            return
        name = dict.get(fc, "name")
        partial = dict.get(fc, "partialArgs")
        if not isinstance(partial, list):
            partial = None
        continues = dict.get(fc, "willContinue") is True or (
            partial is not None and any(isinstance(a, dict) and dict.get(a, "willContinue") is True for a in partial)
        )
        if type(name) is str and name:
            out += self._close_open(obj)
            self._client_calls = True
            call_id = self._ids.take(dict.get(fc, "id"))
            if continues or partial is not None:
                call = self._open = StreamedCall(call_id, name, dict.get(fc, "args"))
                start = new_tool_event("tool_call_start", call_id, name, obj)
                start.signature = signature
                out.append(start)
                text = call.opening_text()
                if partial is not None:
                    text += call.add(partial)
                if text:
                    out.append(new_tool_event("tool_call_delta", call_id, name, obj, text))
                if not continues:
                    out += self._close_open(obj)
                return
            self._whole_call(call_id, name, dict.get(fc, "args"), obj, signature, out)
            return
        current = self._open
        if current is None:
            out.append(new_event("raw", obj, "", None, signature))
            return
        first = len(out)
        text = current.add(partial) if partial is not None else ""
        if text or continues:
            out.append(new_tool_event("tool_call_delta", current.id, current.name, obj, text))
        if not continues:
            out += self._close_open(obj)
        out[first].signature = signature

    def _executable_code(
        self, code: dict[str, Any], obj: dict[str, Any], signature: Optional[str], out: list[Unified]
    ) -> None:
        """An ``executableCode`` part: code Gemini's code execution tool runs itself (its ``codeExecutionResult``
        follows in the stream), so a whole server call: start (with the part's signature), delta, done, named
        :data:`CODE_EXECUTION`, its id the part's ``id`` (else synthetic), its arguments the part's other fields."""
        call_id = self._ids.take(code.get("id"))
        arguments = {key: value for key, value in code.items() if key != "id"}
        start = new_tool_event("tool_call_start", call_id, CODE_EXECUTION, obj, "", None, True)
        start.signature = signature
        out.append(start)
        out.append(new_tool_event("tool_call_delta", call_id, CODE_EXECUTION, obj, compact_json(arguments), None, True))
        out.append(done_event(call_id, CODE_EXECUTION, obj, value=arguments, server=True))

    def _server_tool_call(
        self, call: dict[str, Any], obj: dict[str, Any], signature: Optional[str], out: list[Unified]
    ) -> None:
        """A ``toolCall`` part: a tool Gemini runs itself (``toolType``: Google Search, URL context, Maps, file
        search; sent with ``includeServerSideToolInvocations``, its ``toolResponse`` part follows), so a whole
        server call named by its ``toolType`` in lower case, its id the part's ``id`` (else synthetic), its
        arguments ``args`` (start with the part's signature, delta, done)."""
        call_id = self._ids.take(call.get("id"))
        kind = call.get("toolType")
        name = kind.lower() if type(kind) is str and kind else "server_tool"
        args = call.get("args")
        arguments = args if type(args) is dict else {}
        start = new_tool_event("tool_call_start", call_id, name, obj, "", None, True)
        start.signature = signature
        out.append(start)
        out.append(new_tool_event("tool_call_delta", call_id, name, obj, compact_json(arguments), None, True))
        out.append(done_event(call_id, name, obj, value=arguments, server=True))

    def _whole_call(
        self, call_id: str, name: str, args: Any, obj: dict[str, Any], signature: Optional[str], out: list[Unified]
    ) -> None:
        """A call delivered in one part: start (with the part's signature), one delta with the whole JSON, done."""
        if type(args) is str:  # a proxy that forwards the arguments as a JSON string
            done = done_event(call_id, name, obj, text=args)
            text = args
        else:
            done = done_event(call_id, name, obj, value=args)
            written = None
            data = self._data
            if type(args) is dict and type(data) is str and self._compact is not None:  # (not a payload held as UTF-8)
                written = self._compact(data, _ARGS_PATH)  # the same text, from the payload's (when it can)
            text = compact_json({} if args is None else args) if written is None else written
        start = new_tool_event("tool_call_start", call_id, name, obj)
        start.signature = signature
        out.append(start)
        out.append(new_tool_event("tool_call_delta", call_id, name, obj, text))
        out.append(done)

    def _close_open(self, obj: Optional[dict[str, Any]]) -> list[Unified]:
        """Events that finish the open streamed call (none when no call is open)."""
        call = self._open
        if call is None:
            return []
        self._open = None
        arguments, text = call.close()
        out: list[Unified] = []
        if text:
            out.append(new_tool_event("tool_call_delta", call.id, call.name, obj, text))
        out.append(done_event(call.id, call.name, obj, value=arguments))
        return out
