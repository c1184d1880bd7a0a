"""Chat Completions chunks (OpenAI ``/v1/chat/completions``, xAI and other OpenAI-compatible servers) -> Unified.

Contract (one instance per stream):

- ``choices[].delta.reasoning_content`` (else ``delta.reasoning``: vLLM, SGLang, OpenRouter, Groq) ->
  ``reasoning_delta``; ``delta.content`` and ``delta.refusal`` -> ``text_delta`` (a refusal makes a clean stop
  ``refusal``). A ``content`` that is a list of typed chunks (Mistral) gives, in order, a ``text_delta`` per ``text``
  chunk, a ``reasoning_delta`` per inner text of a ``thinking`` chunk, ``raw`` for others. Only non-empty strings
  become deltas; a chunk that yields nothing (role-only, empty content, ``finish_reason`` with no open call) is one
  ``raw`` event.
- OpenRouter ``delta.reasoning_details[]``: ``reasoning.text`` (its ``text``) and ``reasoning.summary`` (its
  ``summary``) -> ``reasoning_delta``, but only when the delta has no ``reasoning`` / ``reasoning_content`` text:
  OpenRouter sends the same reasoning in both forms in one chunk, and it is counted once. What the next turn must
  send back is kept either way: a detail's ``signature`` (Anthropic's thinking signature) -> ``signature`` of the
  delta's first event, else of a ``raw`` event; ``reasoning.encrypted`` (its ``data``) -> a ``raw`` event with
  ``encrypted_reasoning``.
- Legacy Completions chunks (``object: text_completion``; OpenAI ``/v1/completions``, vLLM, llama.cpp): a choice
  without a ``delta`` object gives its ``text`` as a ``text_delta``; ``finish_reason``, usage and ``[DONE]`` as
  below. They take the full decode (the fast paths read chat deltas only).
- One choice is read: the one whose ``index`` is 0 (absent, or not an integer: 0). A request's ``n`` > 1 streams
  the other choices' deltas, calls and finish reasons too, each chunk naming its choice: they are alternatives to
  the first, never more of it, and make no event of their own (a chunk of other choices only is one ``raw`` event;
  every event keeps its chunk in ``raw``), as Gemini's other candidates.
- ``delta.tool_calls[]`` are keyed by (choice index, ``tool_calls[].index``; the position in the list when there is
  no index). The first fragment of a key opens the call (``tool_call_start``), each non-empty ``arguments`` fragment is
  a ``tool_call_delta``. A fragment carrying a *different* non-empty id at a key whose open call has an id closes that
  call and opens a new one, so calls never merge (all-``index: 0`` servers); an id already open under another key
  continues that call (now at this key), so ids never repeat. A fragment *without* ``index`` (Gemini's
  OpenAI-compatible endpoint sends each call whole, one per chunk, with no index) that names a function at a key
  whose open call is named already is a new call too, and a provider id this stream already closed is replaced by a
  synthetic one: parallel calls never merge, ids never repeat. Open calls of a choice are closed
  (``tool_call_done``) by its ``finish_reason``, else by ``[DONE]``, unless that finish reason cut the response off
  (``length``, ``content_filter`` ...): then, like calls open when the stream is cut, they are incomplete (no
  ``tool_call_done``; listed by the truncation or error event). xAI and Mistral send each call whole in one chunk:
  it takes the same start -> delta -> done path.
- ``multi_tool_use.parallel`` (a wrapper call some OpenAI models make, ``{"tool_uses": [{"recipient_name":
  "functions.NAME", "parameters": {...}}, ...]}``): a call opened under that name is held, not announced (its
  fragments make no ``tool_call_*`` event; their chunks are ``raw``). When it closes, each tool use it holds becomes
  one client call with the usual ``tool_call_start`` -> one ``tool_call_delta`` (the compact JSON of
  ``parameters``) -> ``tool_call_done``, id ``<wrapper id>_<n>`` (n from 0), name without the ``functions.``
  prefix; so ``collect()`` lists the calls it holds, never the wrapper. Arguments that are not that shape give
  the wrapper itself as one call (start, its whole text, done) so nothing is lost; a wrapper cut off is listed by
  the truncation (or error) event's ``incomplete_tool_calls`` under its own id and name (never announced, it is
  no call of ``collect()``'s). A wrapper whose name arrives after its start stays one plain call.
- Gemini's ``extra_content.google.thought_signature``: on a tool call fragment -> ``signature`` of the first event
  made from it (its ``tool_call_start``, else its delta, else a ``raw`` event); on a delta -> ``signature`` of that
  delta's first event, else of a ``raw`` event.
- Every chunk with a non-null ``usage`` -> ``usage`` (verbatim; OpenAI puts it in a final ``choices: []`` chunk,
  Grok sometimes earlier); ``self.usage`` keeps the last one. :meth:`usage_from` reads OpenAI's
  ``prompt_tokens_details.cached_tokens``, else DeepSeek's ``prompt_cache_hit_tokens``, as cached input (and
  ``prompt_cache_hit_tokens + prompt_cache_miss_tokens`` as the input when ``prompt_tokens`` is missing).
- llama.cpp ``timings`` (on its last chunk -- the usage chunk, else the finish chunk -- and on every chunk with
  ``timings_per_token``) stay in the ``raw`` of that chunk's events; the latest is ``self.timings`` and rides on the
  ``done`` event's ``raw`` as ``timings``.
- Perplexity ``search_results`` (``title``, ``url``, ``date``) -> ``Citation("search_result", url, title,
  raw=result)`` and ``citations`` (URLs) -> ``Citation("citation", url, raw=url)``, on a ``raw`` event of the chunk
  that first brought them: Perplexity repeats both lists on every chunk, and a source (by URL) is cited once per
  stream; those chunks take the full decode.
- ``url_citation`` annotations of a delta (OpenAI's search models, OpenRouter's web search: ``{"type":
  "url_citation", "url_citation": {"url", "title", "start_index", "end_index"}}``, on a last delta of their own)
  -> ``Citation("url_citation", url, title, None, start, end, raw=annotation)`` on a ``raw`` event after the
  delta's events; those chunks take the full decode.
- ``data: [DONE]`` -> ``done`` (exactly one): ``raw_stop_reason`` is the last ``finish_reason`` seen, ``stop_reason``
  its unified value by :data:`CHAT_STOP`, one table for every compatible server (``stop`` -> end, ``length`` and
  Mistral's ``model_length`` -> max_tokens, ``tool_calls``/``function_call`` -> tool_use, ``content_filter`` ->
  refusal, Mistral's ``error`` and DeepSeek's ``insufficient_system_resource`` -> failed, Together's ``eos`` -> end,
  none -> end, other -> other; end becomes tool_use when client calls were made), so ``provider="auto"`` and the
  named provider agree. A body that ends between events after the ``finish_reason`` and a usage that came with or
  after it (Perplexity sends no ``[DONE]``) ends as ``[DONE]`` would.
- A chunk ``{"error": ...}`` (OpenAI-compatible servers report late failures this way; Groq's ``x_groq.error``) ->
  ``error`` carrying the chunk's own usage, else the last usage seen; it ends the stream (``self.done``), so no
  truncation error follows, and a ``[DONE]`` after it closes no call and gives a ``done`` only for a
  ``finish_reason`` that came before the error.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Union

from .._json import loads_exact
from ..citations import Citation
from ..events import LazyPayload, SSEEvent, Unified, new_done, new_event, new_usage
from ..names import UnifiedType
from ..usage import Usage, count, detail, usage_counts
from ._fast import typed
from ._fast.chat_shape import CHAT_SHAPE, chat_rule_args
from ._fast.utf8 import LARGE, decodable, held
from .common import error_object, error_payload, str_or, with_incomplete
from .contract import Normalizer, Recognition, not_a_payload
from .tool_calls import CallIds, CallTable, OpenCall, closes_calls, compact_json

__all__ = ["CHAT_STOP", "ChatCompletionsNormalizer", "ChatRules"]

#: Chat ``finish_reason`` -> unified stop reason (anything else maps to ``other``): OpenAI's values and those of the
#: compatible servers that have their own (one table, so auto-detection reads them as the named provider does).
CHAT_STOP: dict[str, str] = {
    "stop": "end",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
    "model_length": "max_tokens",  # Mistral: the model's context length was reached
    "error": "failed",  # Mistral
    "insufficient_system_resource": "failed",  # DeepSeek: the request was cut for lack of capacity
    "eos": "end",  # Together: the model's end-of-sequence token
}
#: The wrapper call some OpenAI models make around parallel calls (see the module docstring).
PARALLEL_WRAPPER = "multi_tool_use.parallel"

_EMPTY: dict[str, Any] = {}
#: The chunks read without a decode (see :data:`~._fast.chat_shape.CHAT_SHAPE`, which the rule is made from, and
#: :func:`~._fast.chat_shape.chat_rule_args`: typed content chunks too), once the stream's id and model are known:
#: such a chunk sets nothing else.
CHAT_DELTA_RULE = typed.delta_rule(**chat_rule_args())
#: ``(kind, text)`` of a decoded ``typed.chat_chunk`` of that shape (``("raw", "")`` without text), else None
#: (:meth:`.DeltaShape.reader`).
_DELTA_OF = CHAT_SHAPE.reader()
#: What a large chunk held as UTF-8 is decoded without (see :meth:`ChatCompletionsNormalizer.held_skip`).
_LOGPROBS = typed.member_path(("choices", 0, "logprobs"))
#: The one key of a delta that is a single text or reasoning fragment -> the event it makes.
_SINGLE_KEY: dict[Optional[str], UnifiedType] = {  # (a refusal is read by _delta: it makes the stop a refusal)
    "content": "text_delta",
    "reasoning_content": "reasoning_delta",
    "reasoning": "reasoning_delta",
}


def _choice_index(choice: dict[str, Any]) -> int:
    """A choice's ``index`` (0 when missing or not an int)."""
    index = dict.get(choice, "index")
    return index if type(index) is int else 0


def _content_chunk(chunk: Any, obj: dict[str, Any], out: list[Unified]) -> None:
    """The events of one typed content chunk: ``{"type": "text", "text"}`` -> ``text_delta``, ``{"type":
    "thinking", "thinking": [{"type": "text", "text"}, ...]}`` -> a ``reasoning_delta`` per inner text; any other
    chunk -> ``raw``."""
    kind = dict.get(chunk, "type") if type(chunk) is dict else None
    if kind == "text":
        text = dict.get(chunk, "text")
        if type(text) is str and text:
            out.append(new_event("text_delta", obj, text))
    elif kind == "thinking":
        parts = dict.get(chunk, "thinking")
        for part in parts if type(parts) is list else ():
            text = dict.get(part, "text") if type(part) is dict and dict.get(part, "type") == "text" else None
            if type(text) is str and text:
                out.append(new_event("reasoning_delta", obj, text))
    else:
        out.append(new_event("raw", obj))


def chat_citation(annotation: Any) -> Optional[Citation]:
    """The :class:`~ssewire.Citation` of one Chat Completions annotation: ``{"type": "url_citation", "url_citation":
    {"url", "title", "start_index", "end_index"}}`` (the span: characters of the message's content); the same
    members unnested are read too. None for any other annotation."""
    if type(annotation) is not dict or dict.get(annotation, "type") != "url_citation":
        return None
    inner = dict.get(annotation, "url_citation")
    found = inner if type(inner) is dict else annotation
    url = str_or(dict.get(found, "url"), None)
    if url is None:
        return None
    start, end = dict.get(found, "start_index"), dict.get(found, "end_index")
    start, end = (start if type(start) is int else None), (end if type(end) is int else None)
    return Citation("url_citation", url, str_or(dict.get(found, "title"), None), None, start, end, annotation)


def _google_signature(holder: Any) -> Optional[str]:
    """``holder["extra_content"]["google"]["thought_signature"]`` (Gemini's OpenAI-compatible endpoint), or None."""
    extra = dict.get(holder, "extra_content") if type(holder) is dict else None
    google = dict.get(extra, "google") if type(extra) is dict else None
    signature = dict.get(google, "thought_signature") if type(google) is dict else None
    return signature if type(signature) is str and signature else None


#: The OpenRouter ``reasoning_details`` types that carry reasoning text -> the member holding it.
_DETAIL_TEXT: dict[Any, str] = {"reasoning.text": "text", "reasoning.summary": "summary"}


def _reasoning_details(details: Any, obj: dict[str, Any], out: list[Unified], texts: bool, first: int) -> None:
    """The events of OpenRouter ``reasoning_details``: with ``texts``, a ``reasoning_delta`` per ``reasoning.text``
    (its ``text``) and ``reasoning.summary`` (its ``summary``) detail. Always what the next turn must send back: a
    detail's ``signature`` (Anthropic's thinking signature) -> ``signature`` of the delta's first event (from
    ``first`` in ``out``), else of a ``raw`` event; a ``reasoning.encrypted`` detail's ``data`` -> a ``raw`` event
    with ``encrypted_reasoning``."""
    for item in details if type(details) is list else ():
        if type(item) is not dict:
            continue
        kind = dict.get(item, "type")
        if texts:
            field = _DETAIL_TEXT.get(kind) if type(kind) is str else None  # (any JSON value: a list is unhashable)
            text = dict.get(item, field) if field is not None else None
            if type(text) is str and text:
                out.append(new_event("reasoning_delta", obj, text))
        signature = dict.get(item, "signature")
        if type(signature) is str and signature:
            if len(out) > first and out[first].signature is None:
                out[first].signature = signature
            else:
                out.append(new_event("raw", obj, "", None, signature))
        secret = dict.get(item, "data") if kind == "reasoning.encrypted" else None
        if type(secret) is str and secret:
            event = new_event("raw", obj)
            event.encrypted_reasoning = secret
            out.append(event)


def _unwrapped(text: str) -> Optional[list[tuple[str, Any]]]:
    """The ``(name, parameters)`` of each tool use a ``multi_tool_use.parallel`` argument text holds (``functions.``
    stripped from ``recipient_name``), or None when the text is not that shape."""
    try:
        value = loads_exact(text)
    except ValueError:
        return None
    uses = value.get("tool_uses") if type(value) is dict else None
    if type(uses) is not list or not uses:
        return None
    out: list[tuple[str, Any]] = []
    for use in uses:
        name = use.get("recipient_name") if type(use) is dict else None
        if type(name) is not str or not name:
            return None
        out.append((name[len("functions.") :] if name.startswith("functions.") else name, use.get("parameters")))
    return out


class ChatRules(Recognition):
    """How the registry recognises Chat Completions payloads, usage objects and metadata."""

    provider = "openai-chat"

    @classmethod
    def audio(cls, raw: dict[str, Any]) -> tuple[int, int, int]:
        """``prompt_tokens_details.audio_tokens`` and ``completion_tokens_details.audio_tokens`` (the audio models)."""
        return (
            detail(raw, "prompt_tokens_details", "audio_tokens"),
            0,
            detail(raw, "completion_tokens_details", "audio_tokens"),
        )

    @classmethod
    def claims(cls, obj: dict[str, Any], event: Optional[str] = None) -> bool:
        """Chat Completions chunks (``object: chat.completion.chunk``) and legacy Completions chunks (``object:
        text_completion``), or any payload with ``choices``."""
        return "choices" in obj or obj.get("object") in ("chat.completion.chunk", "text_completion")

    @classmethod
    def claims_error(cls, obj: dict[str, Any]) -> bool:
        """``{"error": ...}`` without anything else to go by: the OpenAI-compatible shape."""
        return "error" in obj

    @classmethod
    def usage_from(cls, raw: dict[str, Any], partial: bool = False) -> Optional[Usage]:
        """``prompt_tokens`` / ``completion_tokens``; OpenAI counts reasoning inside ``completion_tokens``, xAI
        apart (its ``total_tokens`` adds it separately), and both come out with reasoning in ``output_tokens``.
        Cached input: ``prompt_tokens_details.cached_tokens``, else DeepSeek's ``prompt_cache_hit_tokens`` (its
        ``prompt_cache_miss_tokens`` are the rest of the prompt: hit + miss is the input when ``prompt_tokens`` is
        missing)."""
        if "prompt_tokens" not in raw and "completion_tokens" not in raw:
            return None
        hit = count(raw.get("prompt_cache_hit_tokens"))
        prompt = raw.get("prompt_tokens")
        prompt = count(prompt) if type(prompt) is int else hit + count(raw.get("prompt_cache_miss_tokens"))
        completion = count(raw.get("completion_tokens"))
        reasoning = detail(raw, "completion_tokens_details", "reasoning_tokens") or count(raw.get("reasoning_tokens"))
        if reasoning and count(raw.get("total_tokens")) == prompt + completion + reasoning:
            completion += reasoning
        return usage_counts(
            prompt,
            completion,
            detail(raw, "prompt_tokens_details", "cached_tokens") or hit,
            detail(raw, "prompt_tokens_details", "cache_write_tokens"),
            reasoning,
            raw,
            partial,
            cls.provider,
        )

    @classmethod
    def meta_from(cls, obj: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
        """The chunk's ``id`` and ``model`` (an empty one names nothing: Azure's first chunk, its prompt filter
        results, has ``"id": ""`` and ``"model": ""``)."""
        return str_or(obj.get("id"), None) or None, str_or(obj.get("model"), None) or None


class ChatCompletionsNormalizer(Normalizer):
    """Chat Completions chunks -> Unified (see the module docstring for the full contract)."""

    provider = "openai-chat"
    stops = CHAT_STOP
    delta_rule = CHAT_DELTA_RULE
    terminal = "data: [DONE]"
    rules = ChatRules
    fast_beyond_rule = False  # fast_chunk reads CHAT_SHAPE, the rule's own shape
    reading_can_stop = stops_reading_at_done = True  # at [DONE]: what follows it is raw

    # The stream's state, each at its start value (the class's) until first set (see ``Normalizer``).
    #: The last ``finish_reason`` seen (the provider's own value).
    finish_reason: Optional[str] = None
    _client_calls = False
    _cite_counts = (0, 0)  # the lengths of the last search_results / citations lists read
    #: llama.cpp's latest ``timings`` object (None until one arrives).
    timings: Optional[dict[str, Any]] = None

    def __init__(self) -> None:
        super().__init__()
        self._typed = typed.chat_chunk  # None: every chunk takes the full decode
        self._calls = CallTable()  # open calls by (choice index, tool call index)
        #: The open calls of the first choice by tool call index, but the held wrappers: those whose argument
        #: fragments the compiled reader continues (the reader's own dict: made with the stream).
        self._call_view: dict[Any, OpenCall] = {}
        self._reader_calls = self._call_view

    # The stream's calls and citations, each empty (and immutable) until the stream first has one: most streams have
    # none, and a container made for each stream costs more than its first use.
    _ids: Optional[CallIds] = None
    _closed_ids: Union[set[str], frozenset[str]] = frozenset()  # provider ids of the calls closed (never repeat)
    _wrappers: Union[set[str], frozenset[str]] = frozenset()  # ids of the open multi_tool_use.parallel calls (held)
    _cited: Union[set[str], frozenset[str]] = frozenset()  # URLs cited so far (Perplexity repeats its sources)
    #: The keys of the open calls by id. Kept in step with ``_calls`` by :meth:`_open_at` and :meth:`_pop_at` (each
    #: call costs the same however many are open).
    _open_keys: Mapping[str, tuple[int, int]] = MappingProxyType({})

    @property
    def chat_id(self) -> Optional[str]:
        """The chunks' ``id`` (the contract's ``response_id``; kept under its old name)."""
        return self.response_id

    def reads_deltas(self) -> bool:
        """Whether the compiled delta reader takes this stream's text chunks now: it is there and the stream's id
        and model are known (so a chunk it takes changes nothing but the events)."""
        return (
            self._take is not None
            and self._delta_rule is not None
            and self.response_id is not None
            and self.model is not None
            and not self.finished
        )

    @property
    def fast(self) -> Optional[Callable[[SSEEvent], Optional[list[Unified]]]]:
        """:meth:`fast_chunk` when typed decoding is on."""
        return None if self._typed is None else self.fast_chunk

    def fast_chunk(self, ev: SSEEvent) -> Optional[list[Unified]]:
        """The events of a chunk that is one text or reasoning delta of one choice and nothing else (or such a
        chunk with no text: one ``raw`` event, as a stream's first chunk that only names the role makes), decoded
        with only the fields that decide it (``raw`` stays lazy); None for any other chunk (see :mod:`.typed`): the
        shape of :data:`~._fast.chat_shape.CHAT_SHAPE`, read by the struct and the reader made from it."""
        decode = self._typed
        if decode is None or self.finished:
            return None
        data: Union[str, bytes] = held(ev)
        if data == "[DONE]":
            return None
        try:
            # fails for a chunk with a type or a member that must be null; a large one is read as UTF-8 bytes
            chunk = decode(data if len(data) < LARGE else decodable(data))
        except typed.DECODE_ERRORS:
            return None
        found = _DELTA_OF(chunk)
        if found is None:
            return None
        kind, text = found
        if self.response_id is None and type(chunk.id) is str and chunk.id:
            self.response_id = chunk.id
        if self.model is None and type(chunk.model) is str and chunk.model:
            self.model = chunk.model
        return [new_event(kind, LazyPayload(data), text)]

    def held_skip(self, event: Optional[str] = None) -> Any:
        """A large chunk's bulk is its first choice's ``logprobs``, which nothing here reads."""
        return _LOGPROBS

    def payload(self, obj: dict[str, Any], event: Optional[str] = None) -> list[Unified]:
        """Normalise one chunk (after ``[DONE]``: ``raw``, as the SDK stops reading there)."""
        if not isinstance(obj, dict):
            raise not_a_payload(obj)
        if self.finished:
            return [new_event("raw", obj)]
        error = dict.get(obj, "error")
        if error and (type(error) is dict or type(error) is str):
            return [self._error(obj, obj)]
        groq = dict.get(obj, "x_groq")  # Groq: the request's id, its usage at the end, the error that stopped it early
        if groq is not None and type(groq) is dict:
            error = dict.get(groq, "error")
            if error and (type(error) is dict or type(error) is str):
                return [self._error(obj, groq)]
        if self.response_id is None:  # constant over a stream: read once (Azure's first chunk has an empty one)
            chat_id = dict.get(obj, "id")
            if type(chat_id) is str and chat_id:
                self.response_id = chat_id
        if self.model is None:
            model = dict.get(obj, "model")
            if type(model) is str and model:
                self.model = model
        out: list[Unified] = []
        choices = dict.get(obj, "choices")
        if type(choices) is list:
            for choice in choices:
                if type(choice) is dict:
                    self._choice(choice, obj, out)
        usage = dict.get(obj, "usage")
        if type(usage) is not dict and groq is not None and type(groq) is dict:
            usage = dict.get(groq, "usage")  # (sent there whether or not the request asked for usage)
        if type(usage) is dict:
            self.usage = usage
            self._usage_at_finish = self.finish_reason is not None
            out.append(new_usage(usage, obj))
        timings = dict.get(obj, "timings")  # llama.cpp
        if type(timings) is dict:
            self.timings = timings
        if "search_results" in obj or "citations" in obj:  # Perplexity
            self._cite(obj, out)
        if not out:
            out.append(new_event("raw", obj))
        return out

    def _open_at(self, key: tuple[int, int], call: OpenCall) -> None:
        """``call`` open at ``key`` (choice, tool call index): in the compiled reader's view too when it is the first
        choice's and not a ``multi_tool_use.parallel`` wrapper (held, never announced)."""
        self._calls.open[key] = call
        if type(self._open_keys) is not dict:  # (made on its first use)
            self._open_keys = {}
        self._open_keys[call.id] = key  # (a dict now)
        if key[0] == 0 and call.id not in self._wrappers:
            self._call_view[key[1]] = call

    def _pop_at(self, key: tuple[int, int]) -> OpenCall:
        """The call open at ``key``, no longer open."""
        call = self._calls.open.pop(key)
        if self._open_keys.get(call.id) == key:
            del self._open_keys[call.id]  # type: ignore[attr-defined]  # (a dict: a call is open)
        if key[0] == 0 and self._call_view.get(key[1]) is call:
            del self._call_view[key[1]]
        return call

    def _cite(self, obj: dict[str, Any], out: list[Unified]) -> None:
        """Append a ``raw`` event with the sources of ``search_results`` and ``citations`` not cited yet."""
        results, urls = dict.get(obj, "search_results"), dict.get(obj, "citations")
        results = results if type(results) is list else ()
        urls = urls if type(urls) is list else ()
        counts = (len(results), len(urls))
        if counts == self._cite_counts:  # the same lists again (every chunk repeats them)
            return
        self._cite_counts = counts
        new: list[Citation] = []
        cited = self._cited if type(self._cited) is set else set()  # (the class's empty one until the first)
        self._cited = cited
        for result in results:
            url = dict.get(result, "url") if type(result) is dict else None
            if type(url) is str and url not in cited:
                cited.add(url)
                new.append(Citation("search_result", url, str_or(dict.get(result, "title"), None), raw=result))
        for url in urls:
            if type(url) is str and url not in cited:
                cited.add(url)
                new.append(Citation("citation", url, raw=url))
        if new:
            out.append(Unified("raw", raw=obj, citations=new))

    def _annotated(self, annotations: list[Any], obj: dict[str, Any], out: list[Unified]) -> None:
        """Append a ``raw`` event with the ``url_citation`` annotations of a delta (OpenAI's search models send them
        on a last delta of their own)."""
        new = [citation for citation in map(chat_citation, annotations) if citation is not None]
        if new:
            out.append(Unified("raw", raw=obj, citations=new))

    def _choice(self, choice: dict[str, Any], obj: dict[str, Any], out: list[Unified]) -> None:
        """Append the events of one choice: its delta, then the calls its ``finish_reason`` closes; nothing for a
        choice but the first (see the module docstring)."""
        if _choice_index(choice):
            return
        delta = dict.get(choice, "delta")
        if type(delta) is dict:
            if delta:
                # the bulk of a stream is a one-key delta, {"content": "..."} or {"reasoning_content": "..."}
                key = next(iter(delta)) if len(delta) == 1 else None
                kind = _SINGLE_KEY.get(key)
                value = delta[key] if kind is not None else None
                if kind is None or type(value) is not str:  # a list of typed content chunks: the rules of _delta
                    self._delta(0, delta, obj, out)
                elif value:
                    out.append(new_event(kind, obj, value))
        else:  # a legacy Completions choice: {"text", "index", "logprobs", "finish_reason"}
            text = dict.get(choice, "text")
            if type(text) is str and text:
                out.append(new_event("text_delta", obj, text))
        finish = dict.get(choice, "finish_reason")
        if type(finish) is str and finish:
            self.finish_reason = finish
            if self._calls.open and closes_calls(self.stops.get(finish, "other")):
                for key in list(self._calls.open):  # (in opening order)
                    self._close(self._pop_at(key), obj, out)

    def _delta(self, index: int, delta: dict[str, Any], obj: dict[str, Any], out: list[Unified]) -> None:
        """Append the events of the delta of choice ``index``: reasoning, content, refusal, tool call fragments; a
        Gemini signature on the delta goes on the first of them."""
        first = len(out)
        reasoning = dict.get(delta, "reasoning_content")
        if type(reasoning) is not str or not reasoning:
            reasoning = dict.get(delta, "reasoning")  # vLLM / OpenRouter spelling; never both counted
        if type(reasoning) is str and reasoning:
            out.append(new_event("reasoning_delta", obj, reasoning))
        if "reasoning_details" in delta:  # OpenRouter's structured form: its text only when the plain one is absent
            _reasoning_details(delta["reasoning_details"], obj, out, len(out) == first, first)
        content = dict.get(delta, "content")
        if type(content) is str and content:
            out.append(new_event("text_delta", obj, content))
        elif type(content) is list:  # typed content chunks (Mistral's Magistral models)
            for chunk in content:
                _content_chunk(chunk, obj, out)
        refusal = dict.get(delta, "refusal")
        if type(refusal) is str and refusal:
            self._refused = True
            out.append(new_event("text_delta", obj, refusal))
        tool_calls = dict.get(delta, "tool_calls")
        if type(tool_calls) is list:
            for position, fragment in enumerate(tool_calls):
                if type(fragment) is dict:
                    function = dict.get(fragment, "function")
                    if function is None:  # a custom tool's call: {"type": "custom", "custom": {"name", "input"}}
                        function = dict.get(fragment, "custom")
                    self._tool(index, position, fragment, function, obj, out)
        legacy = dict.get(delta, "function_call")  # the pre-tools ``functions`` API: one call per choice
        if type(legacy) is dict:
            self._tool(index, -1, _EMPTY, legacy, obj, out)
        annotations = dict.get(delta, "annotations")
        if type(annotations) is list and annotations:
            self._annotated(annotations, obj, out)
        if "extra_content" in delta:
            signature = _google_signature(delta)
            if signature is not None:
                if len(out) > first and out[first].signature is None:
                    out[first].signature = signature
                else:
                    out.append(new_event("raw", obj, "", None, signature))

    def _tool(
        self,
        choice: int,
        position: int,
        fragment: dict[str, Any],
        function: Any,
        obj: dict[str, Any],
        out: list[Unified],
    ) -> None:
        """Append the events of one tool call fragment (see the module docstring)."""
        index = dict.get(fragment, "index")
        indexed = type(index) is int
        key: tuple[int, int] = (choice, index) if type(index) is int else (choice, position)
        if type(function) is not dict:
            function = _EMPTY
        call_id = dict.get(fragment, "id")
        if type(call_id) is not str or not call_id:
            call_id = None
        name = dict.get(function, "name")
        if type(name) is not str or not name:
            name = None
        call = self._calls.open.get(key)
        first = len(out)
        if call_id is not None:
            if call is None:  # the same id under another index is the same call, moved here (ids never repeat)
                moved = self._open_keys.get(call_id)
                if moved is not None:
                    call = self._pop_at(moved)
                    self._open_at(key, call)
            elif call.provider_id and call_id != call.id:
                self._close(self._pop_at(key), obj, out)  # a new call at an occupied index: never merge
                call = None
        if call is not None and not indexed and name is not None and call.name is not None and call_id != call.id:
            self._close(self._pop_at(key), obj, out)  # no index: each named fragment is a whole call
            call = None
        if call is None:
            given = None if call_id in self._closed_ids else call_id  # ids never repeat
            ids = self._ids
            if ids is None:
                ids = self._ids = CallIds()
            call = OpenCall(ids.take(given), name, provider_id=given is not None)
            self._client_calls = True
            if name == PARALLEL_WRAPPER:
                if not self._wrappers:
                    self._wrappers = set()
                self._wrappers.add(call.id)  # type: ignore[union-attr]  # held until it closes (see _close)
            self._open_at(key, call)
            if name != PARALLEL_WRAPPER:
                out.append(call.start(obj))
        elif call.name is None and name is not None:
            call.name = name
        arguments = dict.get(function, "arguments")
        if arguments is None:
            arguments = dict.get(function, "input")  # (a custom tool's input: text of the tool's own grammar)
        if type(arguments) is str and arguments:
            if call.id in self._wrappers:
                call.parts.append(arguments)
            else:
                out.append(call.delta(arguments, obj))
        if "extra_content" in fragment:
            signature = _google_signature(fragment)
            if signature is not None:
                made = [e for e in out[first:] if e.tool_call_id == call.id]
                if made:
                    made[0].signature = signature
                else:
                    out.append(new_event("raw", obj, "", None, signature))

    def _close(self, call: OpenCall, obj: Any, out: list[Unified]) -> None:
        """Append the ``tool_call_done`` of a call the provider closed; a ``multi_tool_use.parallel`` wrapper gives
        the calls it holds instead (start, one delta, done each), or, not being that shape, itself as one call."""
        if call.provider_id:
            if not self._closed_ids:
                self._closed_ids = set()
            self._closed_ids.add(call.id)  # type: ignore[union-attr]  # (a set now)
        if call.id not in self._wrappers:
            out.append(call.close(obj))
            return
        self._wrappers.discard(call.id)  # type: ignore[union-attr]  # (it holds this id: a set)
        text = "".join(call.parts)
        uses = _unwrapped(text)
        if uses is None:
            out.append(call.start(obj))
            call.parts = []
            if text:
                out.append(call.delta(text, obj))
            out.append(call.close(obj))
            return
        for number, (name, parameters) in enumerate(uses):
            inner = OpenCall(f"{call.id}_{number}", name)
            out.append(inner.start(obj))
            if parameters is not None:
                out.append(inner.delta(compact_json(parameters), obj))
            out.append(inner.close(obj))

    def _error(self, obj: dict[str, Any], holder: dict[str, Any]) -> Unified:
        """The ``error`` event of a chunk whose ``holder`` (the chunk, or Groq's ``x_groq``) has an ``error``."""
        usage = dict.get(obj, "usage")
        if type(usage) is not dict:
            usage = dict.get(holder, "usage")
        if type(usage) is dict:  # an error chunk that still reports usage (OpenRouter): the final counts
            self.usage = usage
        self.done = self._errored = True
        payload = with_incomplete(error_payload(error_object(holder, ("error",))), self.incomplete_for_error())
        return Unified("error", error=payload, usage=self.usage, raw=obj)

    #: Whether a delta carried a refusal: a response that then ends cleanly is a refusal.
    _refused = False
    #: Whether an error chunk came (vLLM and OpenRouter send ``[DONE]`` after one).
    _errored = False

    #: Whether a usage came with or after the ``finish_reason``: the response's last chunk (Perplexity ends the stream
    #: there, with no ``[DONE]``).
    _usage_at_finish = False

    def finish(self, detail: str = "") -> list[Unified]:
        """End of stream: one that ended between events after its ``finish_reason`` and a usage that came with or
        after it ends as ``[DONE]`` would end it (Perplexity sends none: nothing of the response is missing); any
        other without ``[DONE]`` is truncated."""
        if not self.done and self._usage_at_finish and not detail:
            return self.flush() + self.sentinel(SSEEvent("message", ""))
        return super().finish(detail)

    def not_json(self, ev: SSEEvent) -> list[Unified]:
        """A payload that is no JSON (one cut by the end of the body) after the last chunk: the stream is cut."""
        self._usage_at_finish = False
        return super().not_json(ev)

    def sentinel(self, ev: SSEEvent) -> list[Unified]:
        """``data: [DONE]``: close open calls, then the one ``done`` event. After an error chunk it closes nothing
        (the calls still open are incomplete: the error listed them) and gives a ``done`` only for a
        ``finish_reason`` that came before the error (the response had stopped when it failed)."""
        if self.finished:
            return []
        raw: dict[str, Any] = {"event": ev.event, "data": ev.data}
        if self._errored:
            self.finished = self.done = True
            if self.finish_reason is None:
                return []
            return [new_done(self.stop_for(self.finish_reason, self._client_calls), self.finish_reason, raw)]
        if self.timings is not None:
            raw["timings"] = self.timings
        stop = self.stop_for(self.finish_reason, self._client_calls)
        if stop == "end" and self._refused:  # (its text is the refusal: not an answer)
            stop = "refusal"
        out: list[Unified] = []
        if closes_calls(stop) and self._calls.open:
            for call in self._calls:
                self._close(call, raw, out)
            self._calls.clear()
            self._call_view.clear()
            self._open_keys.clear()  # type: ignore[attr-defined]  # (a dict: calls were open)
        self.finished = self.done = True
        out.append(new_done(stop, self.finish_reason, raw))
        return out

    def incomplete_tool_calls(self) -> list[dict[str, Any]]:
        """The calls still open (never closed by a finish reason or ``[DONE]``)."""
        return self._calls.incomplete()
