"""Unified events -> an OpenAI Responses stream (typed events, each with its ``sequence_number``).

Contract (see :mod:`.base` for what every encoder does):

- ``response.created`` and ``response.in_progress`` first (the response's id, model and ``created_at``).
- Output items, one open at a time for text and reasoning, each with a stable id and its ``output_index``:
  text -> a ``message`` item (``output_item.added``, ``content_part.added``, ``output_text.delta`` ...,
  ``output_text.done``, ``content_part.done``, ``output_item.done``); reasoning -> a ``reasoning`` item with one
  summary part (``reasoning_summary_part.added`` with its first text, ``reasoning_summary_text.delta`` ...,
  ``.done``); a signature or a source's encrypted reasoning -> the reasoning item's ``encrypted_content`` (one per
  item: a reasoning item of its own when none is open, or the open one has one). A reasoning item with no text
  (a signature alone) has no summary part: ``output_item.added`` and ``output_item.done`` only, as the API writes
  an item of encrypted reasoning alone; a citation with a URL -> ``output_text.annotation.added``
  (a ``url_citation``) on the open message, kept in its part (others dropped).
- A client call -> a ``function_call`` item (``call_id`` the source's id, ``name``), its fragments as
  ``function_call_arguments.delta``, and when the source closed it ``function_call_arguments.done`` and
  ``output_item.done`` with the whole argument string. Calls the provider ran itself have no generic Responses
  item: dropped. A call never closed is never marked done.
- ``done`` -> ``response.completed`` (end, tool_use; stop_sequence counted as dropped), ``response.incomplete``
  (max_tokens: ``max_output_tokens``, refusal: ``content_filter``, incomplete), or ``response.failed``, carrying
  the whole ``output`` and the ``usage`` (``input_tokens`` with ``input_tokens_details.cached_tokens`` /
  ``cache_write_tokens``, ``output_tokens`` with ``output_tokens_details.reasoning_tokens``).
- ``error`` -> an ``error`` event (``code`` the source's error type, ``message``); the stream then ends with the
  terminal of the source's stop when it still sends one, else with ``response.failed`` carrying that error, the
  way the API ends a failed response.
- Memory: the final ``response`` repeats the whole output, so this target keeps it (the text, reasoning and
  argument strings written) until the end.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any, ClassVar, Mapping, Optional, Union

from ..events import Unified
from ..normalizers.common import client_stop
from ..normalizers.openai import INCOMPLETE_STOP, RESPONSES_STOP
from .base import (
    LONG_TEXT,
    Call,
    Encoder,
    Pieces,
    TextRun,
    Writer,
    arguments,
    dumps,
    error_parts,
    quote,
    quote_long,
    quote_text,
    url_citations,
    utf8,
)

__all__ = [
    "ResponsesEncoder",
    "ResponsesWriter",
    "call_item",
    "message_item",
    "reasoning_item",
    "responses_usage",
    "usage_json",
]


def responses_usage(usage: Any) -> dict[str, Any]:
    """A :class:`~ssewire.Usage` as the Responses API's ``usage`` object."""
    inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
    details = {"cached_tokens": usage.cached_input_tokens or 0, "cache_write_tokens": usage.cache_write_tokens or 0}
    return {
        "input_tokens": inputs,
        "input_tokens_details": details,
        "output_tokens": outputs,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": inputs + outputs,
    }


def usage_json(usage: Any) -> str:
    """:func:`responses_usage` as compact JSON text (the same text ``dumps`` writes of it), written directly: the
    counts of a :class:`~ssewire.Usage` are integers or None."""
    inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
    return (
        f'{{"input_tokens":{inputs},"input_tokens_details":{{"cached_tokens":{usage.cached_input_tokens or 0},'
        f'"cache_write_tokens":{usage.cache_write_tokens or 0}}},"output_tokens":{outputs},'
        f'"output_tokens_details":{{"reasoning_tokens":{usage.reasoning_tokens or 0}}},'
        f'"total_tokens":{inputs + outputs}}}'
    )


#: Unified stop -> (terminal event, ``status``, ``incomplete_details.reason``).
_ENDINGS: dict[str, tuple[str, str, Optional[str]]] = {
    "end": ("response.completed", "completed", None),
    "tool_use": ("response.completed", "completed", None),
    "stop_sequence": ("response.completed", "completed", None),
    "max_tokens": ("response.incomplete", "incomplete", "max_output_tokens"),
    "refusal": ("response.incomplete", "incomplete", "content_filter"),
    "incomplete": ("response.incomplete", "incomplete", None),
    "failed": ("response.failed", "failed", None),
    "cancelled": ("response.incomplete", "cancelled", None),
    "other": ("response.completed", "completed", None),
}


def url_annotation(citation: Any) -> dict[str, Any]:
    """A :class:`~ssewire.Citation` with a URL as a ``url_citation`` annotation."""
    start = citation.start if citation.start is not None else 0
    end = citation.end if citation.end is not None else start
    return {
        "type": "url_citation",
        "url": citation.url,
        "title": citation.title or "",
        "start_index": start,
        "end_index": end,
    }


def message_item(item_id: str, text: str, annotations: Optional[list[dict[str, Any]]] = None) -> dict[str, Any]:
    """A finished ``message`` output item holding ``text`` (and its ``annotations``)."""
    part = {"type": "output_text", "text": text, "annotations": annotations or []}
    return {"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]}


def reasoning_item(item_id: str, text: str, signature: Optional[str]) -> dict[str, Any]:
    """A finished ``reasoning`` output item: ``text`` as its one summary part, ``signature`` as its
    ``encrypted_content``."""
    item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
    if text:
        item["summary"] = [{"type": "summary_text", "text": text}]
    if signature is not None:
        item["encrypted_content"] = signature
    return item


def call_item(item_id: str, call_id: str, name: Optional[str], arguments: str, status: str) -> dict[str, Any]:
    """A ``function_call`` output item."""
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": name or "",
    }


#: How a message and a reasoning item open: the id prefix, the member that places a delta in the item, the delta
#: event, the item's members as added, the event that adds its part, and the part as added.
_OPENINGS = {
    "message": (
        "msg",
        "content_index",
        "response.output_text.delta",
        '"type":"message","status":"in_progress","role":"assistant","content":[]',
        "response.content_part.added",
        '{"type":"output_text","text":"","annotations":[]}',
    ),
    "reasoning": (
        "rs",
        "summary_index",
        "response.reasoning_summary_text.delta",
        '"type":"reasoning","summary":[]',
        "response.reasoning_summary_part.added",
        '{"type":"summary_text","text":""}',
    ),
}

#: An item's done events are written as text when its text is shorter than this (characters, or UTF-8 bytes where a
#: run of deltas was written as such); a longer one's are held as UTF-8 pieces (see :meth:`Encoder.hold`). The item
#: is kept for the final response (see SHORT_OUTPUT).
SHORT_ITEM = 1024
#: The finished items of an output are kept as text while they have fewer characters than this in all (the final
#: event of a short output is then written as text, with no UTF-8 round trip), else as UTF-8.
SHORT_OUTPUT = 1024


class _Item:
    """An output item being written: its id, kind, place, the text written to it and its annotations."""

    __slots__ = ("annotations", "id", "index", "kind", "parts", "signature")

    def __init__(self, item_id: str, kind: str, index: int) -> None:
        self.id = item_id
        self.kind = kind
        self.index = index
        self.parts = Pieces()
        self.signature: Optional[str] = None
        self.annotations: list[dict[str, Any]] = []


class ResponsesWriter(Writer):
    """:class:`ResponsesEncoder`'s code (its state typed where compiled: ``openai.pxd``)."""

    to = "openai"
    carries_encrypted_reasoning = True
    usage_at_close = True  # (response.failed carries it)
    stops: ClassVar[Mapping[str, str]] = {stop: ending[1] for stop, ending in _ENDINGS.items()}
    #: What the reader makes of each ending: by ``status``, and an incomplete one by its reason.
    reads_stop: ClassVar[Mapping[str, str]] = {
        stop: INCOMPLETE_STOP.get(reason or "", "incomplete") if status == "incomplete" else RESPONSES_STOP[status]
        for stop, (_, status, reason) in _ENDINGS.items()
    }

    def _target_stop(self, stop: str) -> str:
        """The ending's ``status``; checked by what the reader makes of the whole ending (see ``reads_stop``)."""
        ending = stop if stop in _ENDINGS else "other"
        back = client_stop(self.reads_stop[ending], self.client_calls > 0)
        if back != stop:
            self.dropped["stop_reason"] += 1
        return _ENDINGS[ending][1]

    def _init_state(self) -> None:
        # the stream's state (one stream, one encoder, made for each)
        self._seq = 0
        self._stem = ""  # made from the response id: item ids are the same each time a stream is written
        self._open: Optional[_Item] = None  # the open message or reasoning item
        #: every finished item's JSON with its output_index: as text while the output is short (fewer than
        #: SHORT_OUTPUT characters kept as text), else as UTF-8 pieces (a text is up to four bytes a character)
        self._output: list[tuple[int, Union[str, list[bytes]]]] = []
        self._output_chars = 0  # the length of the items kept as text
        self._items = 0
        self._delta_head = ""  # the open item's delta event, up to its delta's value
        self._part_added = ""  # the open reasoning item's summary_part.added event, up to its sequence number
        self._error: Optional[str] = None  # the error written (its JSON text), for the failed response
        self._head = ""  # the response's JSON up to its status (its id, object and created_at), made by on_start
        self._model = ""  # the response's model member, from the comma before it to its value, made by on_start

    # -- framing ------------------------------------------------------------------------------------------------
    def _event(self, kind: str, body: dict[str, Any]) -> str:
        """One event of type ``kind`` (one of the API's names: no escaping needed) with ``body``'s members."""
        return self._members(kind, dumps(body)[1:-1])

    def _response(self, status: str) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": self.model,
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": None,
        }

    def _response_ends(self, status: str, members: str = "", usage: str = "null") -> tuple[str, str]:
        """:meth:`_response` as JSON text, before and after the items of its ``output`` (``status``: one of the
        API's, no escaping needed; ``members``: JSON text of more members after ``status``, each with its leading
        comma; ``usage``: JSON). After :meth:`on_start`, which writes the id and model once."""
        return (
            f'{self._head}"status":"{status}"{members}{self._model},"output":[',
            f'],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"usage":{usage}}}',
        )

    def on_start(self) -> str:
        self._set_stem()
        self._output = []
        self._head = f'{{"id":{quote(self.response_id or "")},"object":"response","created_at":{int(self.created)},'
        self._model = f',"model":{quote(self.model or "")}'
        head, tail = self._response_ends("in_progress", ',"error":null,"incomplete_details":null')
        response = head + tail
        created, progress = self._seq, self._seq + 1
        self._seq += 2
        return (
            f'event: response.created\ndata: {{"type":"response.created","response":{response},'
            f'"sequence_number":{created}}}\n\n'
            f'event: response.in_progress\ndata: {{"type":"response.in_progress","response":{response},'
            f'"sequence_number":{progress}}}\n\n'
        )

    def _set_stem(self) -> None:
        """The item ids' stem, made from the response id (the same ids each time a response is written): two
        checksums of it, 16 hex digits (an id is unique in its response by its index; the stem tells responses
        apart)."""
        data = (self.response_id or "").encode("utf-8", "backslashreplace")  # (as utf8() writes it)
        self._stem = _two_words(zlib.crc32(data), zlib.adler32(data)).hex()

    def _new_item(self, prefix: str, kind: str) -> _Item:
        item = _Item(f"{prefix}_{self._stem}{self._items}", kind, self._items)
        self._items += 1
        return item

    # -- text and reasoning ------------------------------------------------------------------------------------
    def _switch(self, kind: str) -> str:
        """Make the open item a ``kind`` item (closing another kind first): the text written (its two opening
        events, written at once; item ids are ASCII letters, digits and "_": written as they are)."""
        item = self._open
        if item is not None and item.kind == kind:
            return ""
        out = self._close_open() if item is not None else ""
        prefix, index_member, delta_event, added, part_event, part = _OPENINGS[kind]
        item = self._open = self._new_item(prefix, kind)
        place = f'"item_id":"{item.id}","output_index":{item.index},"{index_member}":0'
        self._delta_head = _delta_head(delta_event, place)
        seq = self._seq
        out += (
            f'event: response.output_item.added\ndata: {{"type":"response.output_item.added",'
            f'"output_index":{item.index},"item":{{"id":"{item.id}",{added}}},"sequence_number":{seq}}}\n\n'
        )
        if kind == "reasoning":  # (its summary part is added with its first text: an item may have none)
            self._seq = seq + 1
            self._part_added = f'event: {part_event}\ndata: {{"type":"{part_event}",{place},"part":{part},'
            return out
        self._seq = seq + 2
        return (
            f'{out}event: {part_event}\ndata: {{"type":"{part_event}",{place},"part":{part},'
            f'"sequence_number":{seq + 1}}}\n\n'
        )

    def on_text(self, text: str) -> str:
        return self._text(text, "message")

    def on_reasoning(self, text: str) -> str:
        return self._text(text, "reasoning")

    def _text(self, text: str, kind: str) -> str:
        """A delta of the open ``kind`` item (``message`` or ``reasoning``; opened first when another is open)."""
        item = self._open
        out = ""
        if item is None or item.kind != kind:
            out = self._switch(kind)
            item = self._open
        parts = item.parts  # type: ignore[union-attr]
        seq = self._seq
        if not parts and kind == "reasoning":  # its first text: its summary part is added first
            out += f'{self._part_added}"sequence_number":{seq}}}\n\n'
            seq += 1
        parts.append(text)
        if len(parts) >= parts.limit:
            parts.compact()
        self._seq = seq + 1
        quoted = quote(text) if len(text) < LONG_TEXT else quote_long(text)  # (see quote_text)
        return f'{out}{self._delta_head}{quoted},"sequence_number":{seq}}}\n\n'

    def text_run(self, kind: str) -> Optional[TextRun]:
        """A delta of the open message or reasoning item, as :meth:`on_text` writes it: its text kept in the item,
        its sequence number the next."""
        item = self._open
        if item is None or item.kind != ("message" if kind == "text_delta" else "reasoning"):
            return None
        if not item.parts and kind == "reasoning_delta":  # (its summary part is added with its first text)
            return None
        return self._delta_head, ',"sequence_number":', item.parts, self._seq, "}\n\n"

    def open_run(self, kind: str) -> str:
        """The message or reasoning item a ``kind`` delta goes to, opened (another kind closed first)."""
        return self._switch("message" if kind == "text_delta" else "reasoning")

    def wrote_texts(self, count: int) -> None:
        self._seq += count
        parts = self._open.parts  # type: ignore[union-attr]  # (text_run had an open item)
        if len(parts) >= parts.limit:
            parts.compact()

    def on_citations(self, citations: list[Any]) -> str:
        """Each citation with a URL -> ``output_text.annotation.added`` on the open message (one is opened when
        none is): a ``url_citation`` annotation, kept in the message's part too."""
        kept = url_citations(self, citations)
        if not kept:
            return ""
        out = self._switch("message")
        item = self._open
        assert item is not None
        for citation in kept:
            annotation = url_annotation(citation)
            place = {"item_id": item.id, "output_index": item.index, "content_index": 0}
            body = {**place, "annotation_index": len(item.annotations), "annotation": annotation}
            item.annotations.append(annotation)
            out += self._event("response.output_text.annotation.added", body)
        return out

    def on_signature(self, signature: str) -> str:
        """The open reasoning item's ``encrypted_content`` (one per item: a second starts a new item)."""
        item = self._open
        out = self._close_open() if item is not None and item.signature is not None else ""
        out += self._switch("reasoning")
        self._open.signature = signature  # type: ignore[union-attr]
        return out

    def on_encrypted_reasoning(self, secret: str) -> str:
        """As a signature: the reasoning item's ``encrypted_content``."""
        return self.on_signature(secret)

    def _close_open(self) -> str:
        """Finish the open text or reasoning item: its three done events, each with the whole text, and its finished
        JSON, kept for the final response (see :meth:`_written`); a reasoning item with no text has only its
        ``output_item.done``."""
        item = self._open
        if item is None:
            return ""
        self._open = None
        seq, index = self._seq, item.index  # (the three done events' sequence numbers: seq, seq + 1, seq + 2)
        size = sum(map(len, item.parts))
        item_done = (
            f'event: response.output_item.done\ndata: {{"type":"response.output_item.done","output_index":{index},'
            '"item":'
        )
        if not size and item.kind == "reasoning":  # (no summary part was added)
            self._seq = seq + 1
            secret = "" if item.signature is None else f',"encrypted_content":{quote_text(item.signature)}'
            done = [f'{{"id":"{item.id}","type":"reasoning","summary":[]{secret}}}']
            return self._written(index, [item_done], done, f',"sequence_number":{seq}}}\n\n', item.parts, 0)
        self._seq = seq + 3
        place = f'"item_id":"{item.id}","output_index":{index}'
        if item.kind == "message":
            annotations = f',"annotations":{dumps(item.annotations) if item.annotations else "[]"}'
            events = [
                f'event: response.output_text.done\ndata: {{"type":"response.output_text.done",{place},'
                '"content_index":0,"text":',
                f',"sequence_number":{seq}}}\n\nevent: response.content_part.done\n'
                f'data: {{"type":"response.content_part.done",{place},"content_index":0,'
                '"part":{"type":"output_text","text":',
                f'{annotations}}},"sequence_number":{seq + 1}}}\n\n',
            ]
            done = [
                f'{{"id":"{item.id}","type":"message","status":"completed","role":"assistant","content":['
                '{"type":"output_text","text":',
                f"{annotations}}}]}}",
            ]
        else:
            events = [
                f'event: response.reasoning_summary_text.done\ndata: {{"type":"response.reasoning_summary_text.done",'
                f'{place},"summary_index":0,"text":',
                f',"sequence_number":{seq}}}\n\nevent: response.reasoning_summary_part.done\n'
                f'data: {{"type":"response.reasoning_summary_part.done",{place},"summary_index":0,'
                '"part":{"type":"summary_text","text":',
                f'}},"sequence_number":{seq + 1}}}\n\n',
            ]
            secret = "" if item.signature is None else f',"encrypted_content":{quote_text(item.signature)}'
            head = f'{{"id":"{item.id}","type":"reasoning","summary":[{{"type":"summary_text","text":'
            done = [head, f"}}]{secret}}}"]
        events[-1] += item_done
        return self._written(index, events, done, f',"sequence_number":{seq + 2}}}\n\n', item.parts, size)

    def _written(self, index: int, events: list[str], done: list[str], end: str, parts: Pieces, size: int) -> str:
        """Done events whose last one carries the finished item: ``events`` and ``done`` (the item's JSON) are the
        text around the places of the text in ``parts`` (of length ``size``), quoted; ``end`` closes the last event;
        the item is kept for the final response. A text shorter than :data:`SHORT_ITEM` is written as text; a longer
        one is quoted into UTF-8 (a text is up to four times its UTF-8 in memory; a run of deltas is UTF-8 already,
        quoted as it was written: :meth:`Pieces.take_quoted`), and the events are held as pieces that share those
        bytes (:meth:`hold`)."""
        if size < SHORT_ITEM:
            quoted = parts.take_quoted_text()
            item = quoted.join(done)
            if self._output_chars + len(item) < SHORT_OUTPUT:  # (the items of a short output stay text)
                self._output.append((index, item))
                self._output_chars += len(item)
            else:
                self._output.append((index, [utf8(item)]))
            return f"{quoted.join(events)}{item}{end}"
        quoted_utf8 = parts.take_quoted()
        item_pieces = _filled(done, quoted_utf8)
        self._output.append((index, item_pieces))
        return self.hold([*_filled(events, quoted_utf8), *item_pieces, utf8(end)])

    # -- calls --------------------------------------------------------------------------------------------------
    def on_call_start(self, call: Call) -> str:
        out = self._close_open()
        item = self._new_item("fc", "function_call")
        call.index, call.item_id = item.index, item.id
        head, tail = _call_item_ends(item.id, call, "in_progress")
        return out + self._members("response.output_item.added", f'"output_index":{item.index},"item":{head}""{tail}')

    def on_call_arguments(self, call: Call, text: str) -> str:
        parts = call.parts
        parts.append(text)
        if len(parts) >= parts.limit:
            parts.compact()
        place = f'"item_id":"{call.item_id}","output_index":{call.index}'
        return self._members("response.function_call_arguments.delta", f'{place},"delta":{quote_text(text)}')

    def on_call_done(self, call: Call, event: Unified) -> str:
        """The call's done events, its whole arguments in two of them and in the finished item (see
        :meth:`_written`)."""
        place = f'"item_id":"{call.item_id}","output_index":{call.index}'
        head, tail = _call_item_ends(call.item_id, call, "completed")
        seq = self._seq  # (the two done events' sequence numbers: seq, seq + 1)
        self._seq = seq + 2
        events = [
            f'event: response.function_call_arguments.done\ndata: {{"type":"response.function_call_arguments.done",'
            f'{place},"arguments":',
            f',"sequence_number":{seq}}}\n\nevent: response.output_item.done\n'
            f'data: {{"type":"response.output_item.done","output_index":{call.index},"item":',
        ]
        end = f',"sequence_number":{seq + 1}}}\n\n'
        return self._written(call.index, events, [head, tail], end, call.parts, sum(map(len, call.parts)))

    # -- the end ------------------------------------------------------------------------------------------------
    def _final(self, kind: str, status: str, error: Optional[str] = None, reason: Optional[str] = None) -> str:
        """The terminal event ``kind``: the response with ``status``, its ``error`` (JSON text) and
        ``incomplete_details`` (with ``reason``: one of the API's, no escaping needed), the usage and every finished
        item, in output order. It repeats the whole output: an output of short items kept
        as text is written as text; any other is held as the pieces of the items (:meth:`hold`), the long ones kept
        as UTF-8, so no copy of their text is made."""
        head, tail = self._response_ends(
            status,
            f',"error":{"null" if error is None else error}'
            f',"incomplete_details":{"null" if reason is None else _reason_json(reason)}',
            "null" if self.usage is None else usage_json(self.usage),
        )
        seq = self._seq
        self._seq = seq + 1
        output = self._output
        self._output, self._output_chars = [], 0
        if len(output) > 1:
            output.sort(key=_first)
        start = f'event: {kind}\ndata: {{"type":"{kind}","response":{head}'
        end = f'{tail},"sequence_number":{seq}}}\n\n'
        texts = [item for _, item in output if type(item) is str]
        if len(texts) == len(output):  # every item kept as text (fewer than SHORT_OUTPUT characters in all)
            return f"{start}{','.join(texts)}{end}"
        pieces = [utf8(start)]
        for place, (_, item) in enumerate(output):
            if place:
                pieces.append(b",")
            if isinstance(item, str):
                pieces.append(utf8(item))
            else:
                pieces += item
        pieces.append(utf8(end))
        return self.hold(pieces)

    def _members(self, kind: str, members: str) -> str:
        """One event of type ``kind`` whose members (JSON text, without braces) are ``members``."""
        seq = self._seq
        self._seq = seq + 1
        return f'event: {kind}\ndata: {{"type":"{kind}",{members},"sequence_number":{seq}}}\n\n'

    def on_done(self, stop: str, native: str) -> str:
        out = self._close_open()
        kind, status, reason = _ENDINGS.get(stop, _ENDINGS["other"])
        error = self._error if status == "failed" else None  # the source's error, else none (it said only "failed")
        return out + self._final(kind, status, error, reason)

    def body(self, result: Any, native: str) -> dict[str, Any]:
        """A ``response`` object: a reasoning item (the reasoning as its summary, the last encrypted reasoning, else
        the last signature, as its ``encrypted_content``), a message item, a ``function_call`` item per client call,
        its status and usage."""
        self._set_stem()
        output: list[dict[str, Any]] = []
        signatures, secrets = result.signatures, result.encrypted_reasoning
        if result.reasoning or signatures or secrets:
            # one reasoning item, one encrypted_content: the last encrypted reasoning, else the last signature
            kept = secrets[-1] if secrets else signatures[-1] if signatures else None
            output.append(reasoning_item(self._new_item("rs", "reasoning").id, result.reasoning, kept))
            self.dropped["encrypted_reasoning"] += max(len(secrets) - 1, 0)
            self.dropped["signature"] += len(signatures) if secrets else max(len(signatures) - 1, 0)
        if result.text:
            annotations = [url_annotation(c) for c in url_citations(self, result.citations)]
            output.append(message_item(self._new_item("msg", "message").id, result.text, annotations))
        else:
            self.dropped["citation"] += len(result.citations)
        for call in result.client_tool_calls:
            item_id = self._new_item("fc", "function_call").id
            output.append(call_item(item_id, call.id or item_id, call.name, arguments(call), "completed"))
        stop = result.stop_reason if result.stop_reason in _ENDINGS else "other"
        _, status, reason = _ENDINGS[stop]
        response = self._response(status)
        response["output"] = output
        if reason is not None:
            response["incomplete_details"] = {"reason": reason}
        if self.usage is not None:
            response["usage"] = responses_usage(self.usage)
        return response

    def error_body(self, error: Mapping[str, Any]) -> dict[str, Any]:
        """OpenAI's error body, ``{"error": {"message", "type", "code", "param"}}``."""
        kind, message = error_parts(error)
        return {"error": {"message": message, "type": kind, "code": kind, "param": None}}

    def on_error(self, error: Mapping[str, Any]) -> str:
        out = self._close_open()
        kind, message = error_parts(error)
        members = self._error = f'{{"code":{quote_text(kind)},"message":{quote_text(message)}}}'
        return out + self._members("error", f'{members[1:-1]},"param":null')

    def on_close(self) -> str:
        """After an error without a stop: ``response.failed`` carrying that error."""
        return self._final("response.failed", "failed", self._error)


#: Two unsigned 32-bit words as 8 bytes (the stem's checksums; see ``ResponsesEncoder._set_stem``).
_two_words = struct.Struct(">II").pack


def _call_item_ends(item_id: str, call: Call, status: str) -> tuple[str, str]:
    """:func:`call_item` as JSON text, before and after the value of its ``arguments`` (written between them)."""
    return (
        f'{{"id":"{item_id}","type":"function_call","status":"{status}","arguments":',
        f',"call_id":{quote(call.id)},"name":{quote(call.name or "")}}}',
    )


def _delta_head(kind: str, place: str) -> str:
    """A delta event of type ``kind`` at ``place`` (its members, JSON text), up to the value of its ``delta``."""
    return f'event: {kind}\ndata: {{"type":"{kind}",{place},"delta":'


def _filled(parts: list[str], quoted: bytes) -> list[bytes]:
    """``parts`` as UTF-8 with ``quoted`` (a JSON string literal, as UTF-8) between each two of them."""
    out = [utf8(parts[0])]
    for part in parts[1:]:
        out += (quoted, utf8(part))
    return out


def _reason_json(reason: str) -> str:
    """``incomplete_details`` with ``reason`` (one of the API's: no escaping needed) as JSON text."""
    return f'{{"reason":"{reason}"}}'


def _first(pair: tuple[int, Any]) -> int:
    """Sort key: the ``output_index`` of a finished item (calls can finish out of order)."""
    return pair[0]


class ResponsesEncoder(ResponsesWriter, Encoder):
    """Unified events -> Responses stream events (see the module docstring)."""

    __slots__ = ()
