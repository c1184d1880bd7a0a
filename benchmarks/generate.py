"""Deterministic generators of realistic LLM API streams: the benchmarks' input.

``generate(name, size)`` returns a :class:`Stream` whose ``data`` is one complete, valid response body of
about ``size`` bytes for its provider (terminal event included), built from ``random.Random(seed)`` only, so the
same name, size and seed give the same bytes on every machine (``sha256`` proves it). Shapes follow real recorded
payloads (ids, ``sequence_number``, ``usageMetadata``, CRLF framing ...). Nothing here touches the network;
``load()`` caches generated bodies under ``benchmarks/data/`` (git-ignored).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

__all__ = ["DATA_DIR", "GENERATOR_VERSION", "SEED", "STREAMS", "Spec", "Stream", "generate", "load"]

SEED = 20240601
GENERATOR_VERSION = 2  # bump when any generator's output changes (invalidates the cache)
DATA_DIR = Path(__file__).resolve().parent / "data"

_TEXT = (
    "the model streams tokens over server sent events and each chunk carries a small JSON payload with ids usage "
    "metadata and a delta of text that the client must join in order while tool calls arrive as argument "
    "fragments which only parse once complete so a parser must be fast correct and bounded in memory for every "
    "provider including OpenAI Anthropic Gemini and xAI"
)
_WORDS = tuple(_TEXT.split())
_SPECIAL = ("\n\n", ".", ",", " —", " °C", " naïve", " 東京", " 🙂", " `code`", ' "quoted"', ":", "\n- ", " 42")


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _google_dumps(obj: Any) -> str:
    """Google's wire style: ``", "``-free commas, ``": "`` after keys."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ": "))


class _Source:
    """Seeded source of ids, text deltas and JSON fragments."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def token(self) -> str:
        rng = self.rng
        if rng.random() < 0.08:
            return rng.choice(_SPECIAL)
        word = rng.choice(_WORDS)
        return (" " + word) if rng.random() < 0.85 else word.capitalize()

    def delta(self, lo: int = 1, hi: int = 3) -> str:
        return "".join(self.token() for _ in range(self.rng.randint(lo, hi)))

    def sentence(self, tokens: int) -> str:
        return "".join(self.token() for _ in range(tokens))

    def ident(self, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        rng = self.rng
        return "".join(rng.choice(alphabet) for _ in range(n))

    def hexid(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.rng.randbytes(nbytes)).decode("ascii")

    def arguments(self, target: int) -> str:
        """A JSON object text of about ``target`` characters (tool-call arguments)."""
        obj: dict[str, Any] = {"query": self.sentence(6).strip(), "limit": self.rng.randint(1, 50), "items": []}
        while len(_dumps(obj)) < target:
            obj["items"].append({"id": self.hexid(8), "note": self.sentence(5).strip(), "score": self.rng.random()})
        return _dumps(obj)

    def split(self, text: str, lo: int = 2, hi: int = 12) -> list[str]:
        """``text`` cut into fragments of ``lo``..``hi`` characters (how providers stream arguments)."""
        out, i = [], 0
        while i < len(text):
            j = i + self.rng.randint(lo, hi)
            out.append(text[i:j])
            i = j
        return out


@dataclass(frozen=True)
class Stream:
    """One generated body. ``events`` framed events; ``text_chars``/``tool_calls`` what a normaliser must find."""

    name: str
    provider: str
    framing: str
    data: bytes
    events: int
    text_chars: int
    tool_calls: int
    largest_event: int
    sha256: str

    @property
    def size(self) -> int:
        return len(self.data)


# --- AWS event-stream (binary framing, written from the format) ---------------------------------------------------


def _event_headers(event_type: str) -> bytes:
    """The header block Bedrock sends with an event: ``:event-type``, ``:content-type``, ``:message-type``, each a
    string header (name length, name, type 7, value length, value)."""
    out = bytearray()
    for name, value in ((":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")):
        raw = value.encode()
        out += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    return bytes(out)


_HEADER_BLOCKS: dict[str, bytes] = {}


def _event_message(event_type: str, payload: bytes) -> bytes:
    """One whole message: prelude (total length, headers length, CRC-32 of those 8 bytes), headers, payload, CRC-32
    of everything before it; big-endian."""
    block = _HEADER_BLOCKS.get(event_type)
    if block is None:
        block = _HEADER_BLOCKS[event_type] = _event_headers(event_type)
    prelude = struct.pack(">II", 12 + len(block) + len(payload) + 4, len(block))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + block + payload
    return body + struct.pack(">I", zlib.crc32(body))


@dataclass
class _Body:
    """Accumulates framed events and the facts a normaliser must reproduce."""

    framing: str = "sse"
    eol: str = "\n"
    parts: Optional[list[str]] = None
    size: int = 0
    events: int = 0
    text_chars: int = 0
    tool_calls: int = 0
    largest: int = 0
    blobs: list[bytes] = field(default_factory=list)  # binary framings: the encoded messages

    def __post_init__(self) -> None:
        self.parts = []

    def sse(self, data: str, event: Optional[str] = None) -> None:
        eol = self.eol
        block = (f"event: {event}{eol}" if event else "") + f"data: {data}{eol}{eol}"
        self._add(block, len(data.encode()))

    def sse_lines(self, lines: list[str]) -> None:
        """One event whose data spans ``len(lines)`` ``data:`` lines."""
        eol = self.eol
        block = "".join(f"data: {line}{eol}" for line in lines) + eol
        self._add(block, len("\n".join(lines).encode()))

    def line(self, text: str) -> None:
        """One NDJSON line."""
        self._add(text + "\n", len(text.encode()))

    def element(self, text: str) -> None:
        self._add(("[" if not self.events else "\n,\n") + text, len(text.encode()))

    def message(self, event_type: str, payload: str) -> None:
        """One AWS event-stream message (``aws-eventstream`` framing): a JSON event named ``event_type``."""
        data = payload.encode()
        self._add_bytes(_event_message(event_type, data), len(data))

    def _add(self, block: str, data_bytes: int) -> None:
        assert self.parts is not None
        self.parts.append(block)
        self.size += len(block.encode()) if not block.isascii() else len(block)
        self.events += 1
        self.largest = max(self.largest, data_bytes)

    def _add_bytes(self, block: bytes, data_bytes: int) -> None:
        self.blobs.append(block)
        self.size += len(block)
        self.events += 1
        self.largest = max(self.largest, data_bytes)

    def finish(self, name: str, provider: str) -> Stream:
        assert self.parts is not None
        if self.framing == "json_array":
            self.parts.append("\n]" if self.events else "[]")
        data = b"".join(self.blobs) if self.blobs else "".join(self.parts).encode()
        return Stream(
            name=name,
            provider=provider,
            framing=self.framing,
            data=data,
            events=self.events,
            text_chars=self.text_chars,
            tool_calls=self.tool_calls,
            largest_event=self.largest,
            sha256=hashlib.sha256(data).hexdigest(),
        )


# --- OpenAI Responses -------------------------------------------------------------------------------------------

_OPENAI_TOOLS = [
    {
        "type": "function",
        "description": "Search the knowledge base",
        "name": "search",
        "parameters": {
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
            "type": "object",
        },
        "strict": False,
    }
]


def _response_obj(rid: str, status: str, output: list[Any], usage: Optional[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": 1782321669,
        "status": status,
        "background": False,
        "completed_at": 1782321770 if status == "completed" else None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": "gpt-5-2025-08-07",
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "service_tier": "default",
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": _OPENAI_TOOLS,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def _openai_responses(src: _Source, size: int) -> _Body:
    body = _Body()
    rng = src.rng
    rid = "resp_" + src.hexid(50)
    seq = 0

    def emit(obj: dict[str, Any]) -> None:
        nonlocal seq
        obj["sequence_number"] = seq
        seq += 1
        body.sse(_dumps(obj), obj["type"])

    emit({"type": "response.created", "response": _response_obj(rid, "in_progress", [], None)})
    emit({"type": "response.in_progress", "response": _response_obj(rid, "in_progress", [], None)})
    output: list[dict[str, Any]] = []
    out_tokens = 0
    while body.size < size - 4096 or not output:
        index = len(output)
        kind = rng.random()
        if kind < 0.15:  # reasoning summary
            item = {"id": "rs_" + src.hexid(48), "type": "reasoning", "encrypted_content": "gAAAAAB" + src.b64(300)}
            emit({"type": "response.output_item.added", "output_index": index, "item": {**item, "summary": []}})
            part = {"type": "summary_text", "text": ""}
            emit(
                {
                    "type": "response.reasoning_summary_part.added",
                    "item_id": item["id"],
                    "output_index": index,
                    "summary_index": 0,
                    "part": part,
                }
            )
            pieces = [src.delta() for _ in range(rng.randint(50, 300))]
            for piece in pieces:
                emit(
                    {
                        "type": "response.reasoning_summary_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "summary_index": 0,
                        "delta": piece,
                        "obfuscation": src.ident(rng.randint(4, 14)),
                    }
                )
            text = "".join(pieces)
            out_tokens += len(pieces)
            common = {"item_id": item["id"], "output_index": index, "summary_index": 0}
            emit({"type": "response.reasoning_summary_text.done", **common, "text": text})
            emit(
                {
                    "type": "response.reasoning_summary_part.done",
                    **common,
                    "part": {"type": "summary_text", "text": text},
                }
            )
            item["summary"] = [{"type": "summary_text", "text": text}]
        elif kind < 0.35:  # function call
            args = src.arguments(rng.randint(60, 600))
            item = {
                "id": "fc_" + src.hexid(48),
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": "call_" + src.ident(24),
                "name": "search",
            }
            emit({"type": "response.output_item.added", "output_index": index, "item": dict(item)})
            for piece in src.split(args):
                emit(
                    {
                        "type": "response.function_call_arguments.delta",
                        "delta": piece,
                        "item_id": item["id"],
                        "obfuscation": src.ident(rng.randint(4, 14)),
                        "output_index": index,
                    }
                )
            emit(
                {
                    "type": "response.function_call_arguments.done",
                    "arguments": args,
                    "item_id": item["id"],
                    "output_index": index,
                }
            )
            item.update(status="completed", arguments=args)
            body.tool_calls += 1
        else:  # assistant message
            item = {
                "id": "msg_" + src.hexid(48),
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            }
            emit({"type": "response.output_item.added", "output_index": index, "item": dict(item)})
            common = {"item_id": item["id"], "output_index": index, "content_index": 0}
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            emit({"type": "response.content_part.added", **common, "part": part})
            pieces = [src.delta() for _ in range(rng.randint(100, 600))]
            for piece in pieces:
                emit(
                    {
                        "type": "response.output_text.delta",
                        **common,
                        "delta": piece,
                        "logprobs": [],
                        "obfuscation": src.ident(rng.randint(4, 14)),
                    }
                )
            text = "".join(pieces)
            body.text_chars += len(text)
            out_tokens += len(pieces)
            emit({"type": "response.output_text.done", **common, "text": text, "logprobs": []})
            emit({"type": "response.content_part.done", **common, "part": {**part, "text": text}})
            item.update(status="completed", content=[{**part, "text": text}])
        emit({"type": "response.output_item.done", "output_index": index, "item": item})
        output.append(item)
    usage = {
        "input_tokens": 1234,
        "input_tokens_details": {"cached_tokens": 1024},
        "output_tokens": out_tokens,
        "output_tokens_details": {"reasoning_tokens": out_tokens // 5},
        "total_tokens": 1234 + out_tokens,
    }
    emit({"type": "response.completed", "response": _response_obj(rid, "completed", output, usage)})
    return body


# --- Anthropic Messages -----------------------------------------------------------------------------------------


def _anthropic(src: _Source, size: int, *, bedrock: bool = False) -> _Body:
    """Anthropic Messages over SSE, or, with ``bedrock``, as Bedrock's InvokeModelWithResponseStream sends it: each
    event's JSON base64-encoded in the ``bytes`` of a ``chunk`` event-stream message (padded with ``p``), no pings,
    ``bdrk`` ids and the invocation metrics on ``message_stop``."""
    body = _Body(framing="aws-eventstream") if bedrock else _Body()
    rng = src.rng
    bdrk = "bdrk_01" if bedrock else ""

    def emit(obj: dict[str, Any]) -> None:
        if bedrock:
            inner = base64.b64encode(_dumps(obj).encode()).decode("ascii")
            body.message("chunk", _dumps({"bytes": inner, "p": _bedrock_pad(rng)}))
            return
        pad = " " * rng.randint(1, 15) if rng.random() < 0.5 else ""  # the API pads some payloads
        body.sse(_dumps(obj) + pad, obj["type"])

    usage = {
        "input_tokens": 2479,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 4,
        "service_tier": "standard",
    }
    message = {
        "model": "claude-sonnet-4-5-20250929",
        "id": "msg_" + bdrk + src.ident(24),
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    emit({"type": "message_start", "message": message})
    index = 0
    out_tokens = 0
    stop = "end_turn"
    while body.size < size - 1024 or index == 0:
        if rng.random() < 0.25:
            block = {
                "type": "tool_use",
                "id": "toolu_" + bdrk + src.ident(24),
                "name": "search",
                "input": {},
                "caller": {"type": "direct"},
            }
            emit({"type": "content_block_start", "index": index, "content_block": block})
            for piece in ["", *src.split(src.arguments(rng.randint(60, 800)))]:
                emit(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    }
                )
            body.tool_calls += 1
            stop = "tool_use"
        else:
            emit({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            for _ in range(rng.randint(50, 400)):
                if rng.random() < 0.03:
                    if not bedrock:  # Bedrock does not forward pings
                        emit({"type": "ping"})
                    continue
                piece = src.delta()
                body.text_chars += len(piece)
                out_tokens += 1
                emit({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
            stop = "end_turn"
        emit({"type": "content_block_stop", "index": index})
        index += 1
    final_usage = {
        "input_tokens": 2479,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": out_tokens,
    }
    emit({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": final_usage})
    if bedrock:
        metrics = {
            "inputTokenCount": 2479,
            "outputTokenCount": out_tokens,
            "invocationLatency": 9120,
            "firstByteLatency": 603,
        }
        emit({"type": "message_stop", "amazon-bedrock-invocationMetrics": metrics})
    else:
        emit({"type": "message_stop"})
    return body


# --- Chat Completions (OpenAI, xAI) -----------------------------------------------------------------------------


def _chat(src: _Source, size: int, *, xai: bool, logprob_lines: int = 0) -> _Body:
    """A chat-completions stream; ``logprob_lines`` > 0 pretty-prints every text chunk (with logprobs) over that
    many ``data:`` lines."""
    body = _Body()
    rng = src.rng
    cid = src.hexid(8) + "-" + src.hexid(4) if xai else "chatcmpl-" + src.ident(29)
    model = "grok-4-fast-reasoning" if xai else "gpt-4o-2024-08-06"
    head = {"id": cid, "object": "chat.completion.chunk", "created": 1773345708, "model": model}
    tail = (
        {"system_fingerprint": "fp_25ea88a038"}
        if xai
        else {"service_tier": "default", "system_fingerprint": "fp_07871e2ad8"}
    )

    def chunk(delta: dict[str, Any], finish: Optional[str] = None, logprobs: Any = None) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": delta}
        if not xai:
            choice.update(logprobs=logprobs, finish_reason=finish)
        elif finish:
            choice["finish_reason"] = finish
        obj = {**head, "choices": [choice], **tail}
        if not xai:
            obj.update(usage=None, obfuscation=src.ident(rng.randint(2, 14)))
        return obj

    def emit(obj: dict[str, Any]) -> None:
        body.sse(_dumps(obj))

    calls = rng.randint(2, 4)
    budget = size - 600 * calls - 2048 if not logprob_lines else size - 2048
    reasoning = xai and not logprob_lines
    first = True
    while body.size < budget * (0.25 if reasoning else 1.0) or first:
        delta: dict[str, Any] = {"role": "assistant"} if first else {}
        if reasoning:
            delta["reasoning_content"] = src.delta(1, 2)
        else:
            delta["content"] = src.delta(1, 3) if not logprob_lines else src.sentence(rng.randint(200, 260))
            body.text_chars += len(delta["content"])
        first = False
        if logprob_lines:
            _emit_pretty(body, src, chunk(delta, logprobs=None), logprob_lines)
        else:
            emit(chunk(delta))
    while reasoning and body.size < budget:
        piece = src.delta(1, 3)
        body.text_chars += len(piece)
        emit(chunk({"content": piece}))
    if not logprob_lines:
        for n in range(calls):  # parallel tool calls at the end of the turn
            call_id = "call_" + src.ident(24)
            args = src.arguments(rng.randint(100, 500))
            if xai:  # xAI sends each call whole
                fn = {"name": "search", "arguments": args}
                emit(chunk({"tool_calls": [{"id": call_id, "function": fn, "index": n, "type": "function"}]}))
            else:
                fn = {"name": "search", "arguments": ""}
                emit(chunk({"tool_calls": [{"index": n, "id": call_id, "type": "function", "function": fn}]}))
                for piece in src.split(args):
                    emit(chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}))
            body.tool_calls += 1
    emit(chunk({}, finish="stop" if logprob_lines else "tool_calls"))
    usage: dict[str, Any] = {
        "prompt_tokens": 448,
        "completion_tokens": 9000,
        "total_tokens": 9448,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    if xai:
        usage.update(num_sources_used=0, cost_in_usd_ticks=1660500)
        emit({**head, "choices": [], "usage": usage, **tail})
    else:
        emit({**head, "choices": [], **tail, "usage": usage, "obfuscation": src.ident(8)})
    body.sse("[DONE]")
    return body


def _emit_pretty(body: _Body, src: _Source, obj: dict[str, Any], lines: int) -> None:
    """``obj`` with per-token logprobs, pretty-printed one JSON line per ``data:`` line, about ``lines`` lines."""
    rng = src.rng
    entries: list[dict[str, Any]] = []
    obj["choices"][0]["logprobs"] = {"content": entries, "refusal": None}
    count = 0
    while count < lines:
        token = src.token()
        raw = list(token.encode())
        top = [{"token": token, "logprob": round(-rng.random(), 6), "bytes": raw} for _ in range(2)]
        entries.append({"token": token, "logprob": round(-rng.random(), 6), "bytes": raw, "top_logprobs": top})
        count += 8 + 3 * len(raw) + 2 * 7
    body.sse_lines(json.dumps(obj, ensure_ascii=False, indent=1).split("\n"))


# --- Gemini -----------------------------------------------------------------------------------------------------


class _Gemini:
    """Seeded ``GenerateContentResponse`` chunks (``next()``), usage growing as a real stream's does."""

    def __init__(self, src: _Source, images: int = 0) -> None:
        self.src = src
        self.images = images  # bytes per image (0: a text stream)
        self.rid = src.ident(23)
        self.model = "gemini-2.5-flash-image" if images else "gemini-2.5-pro"
        self.count = 0
        self.prompt, self.thoughts, self.cand = 34, 0, 0

    def next(self, last: bool = False) -> dict[str, Any]:
        src, rng, n = self.src, self.src.rng, self.count
        self.count += 1
        if self.images and n % 2 == 1:
            part: dict[str, Any] = {"inlineData": {"mimeType": "image/png", "data": src.b64(self.images)}}
            self.cand += 1290
        elif self.images:
            part = {"text": src.sentence(rng.randint(10, 40))}
            self.cand += 20
        elif n < 8:
            part = {"text": src.sentence(rng.randint(30, 90)), "thought": True}
            self.thoughts += 70
        elif rng.random() < 0.04:
            args = json.loads(src.arguments(rng.randint(60, 300)))
            part = {"functionCall": {"name": "search", "args": args, "id": src.ident(8).lower()}}
            part["thoughtSignature"] = src.b64(rng.randint(200, 900))
            self.cand += 30
        else:
            part = {"text": src.sentence(rng.randint(8, 40))}
            self.cand += 20
        prompt, cand, thoughts = self.prompt, self.cand, self.thoughts
        usage: dict[str, Any] = {"promptTokenCount": prompt, "totalTokenCount": prompt + cand + thoughts}
        if cand:
            usage["candidatesTokenCount"] = cand
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}}
        if last:
            candidate["finishReason"] = "STOP"
        candidate["index"] = 0
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": self.model, "responseId": self.rid}


def _count_gemini(body: _Body, chunk: dict[str, Any]) -> None:
    for part in chunk["candidates"][0]["content"]["parts"]:
        if "text" in part and not part.get("thought"):
            body.text_chars += len(part["text"])
        if "functionCall" in part:
            body.tool_calls += 1


def _gemini(src: _Source, size: int, *, images: int = 0, array: bool = False) -> _Body:
    """Gemini ``streamGenerateContent``: ``?alt=sse`` (CRLF) or, with ``array``, the pretty-printed JSON array;
    ``images``: every other chunk an inline image of that many bytes."""
    body = _Body(framing="json_array") if array else _Body(eol="\r\n")
    gen = _Gemini(src, images)
    typical = images * 5 // 3 if images else 2_000
    while True:
        last = body.size + typical >= size and (not images or gen.count >= 2)  # an image stream has an image
        chunk = gen.next(last)
        _count_gemini(body, chunk)
        if array:
            body.element(json.dumps(chunk, ensure_ascii=False, indent=2))
        else:
            body.sse(_google_dumps(chunk))
        if last:
            return body


# --- Ollama -----------------------------------------------------------------------------------------------------


def _ollama(src: _Source, size: int) -> _Body:
    """Ollama ``/api/chat`` (NDJSON): thinking, then content, one token per line; now and then a line of whole tool
    calls; the ``done`` line with its counts."""
    body = _Body(framing="ndjson")
    model = "qwen3:8b"
    second = 0

    def line(message: dict[str, Any], **more: Any) -> None:
        nonlocal second
        second += 1
        stamp = f"2025-06-01T10:{second // 60 % 60:02d}:{second % 60:02d}.{src.rng.randint(0, 999999):06d}Z"
        body.line(_dumps({"model": model, "created_at": stamp, "message": message, "done": False, **more}))

    while body.size < size:
        for _ in range(src.rng.randint(10, 40)):
            line({"role": "assistant", "content": "", "thinking": src.delta()})
        for _ in range(src.rng.randint(40, 160)):
            text = src.delta()
            body.text_chars += len(text)
            line({"role": "assistant", "content": text})
        if src.rng.random() < 0.3:
            calls = [
                {"function": {"name": "search", "arguments": json.loads(src.arguments(160))}}
                for _ in range(src.rng.randint(1, 2))
            ]
            body.tool_calls += len(calls)
            line({"role": "assistant", "content": "", "tool_calls": calls})
    counts = {
        "total_duration": 9_120_000_000,
        "prompt_eval_count": 58,
        "eval_count": body.events,
        "eval_duration": 8_700,
    }
    done = {
        "model": model,
        "created_at": "2025-06-01T11:00:00.000000Z",
        "message": {"role": "assistant", "content": ""},
    }
    body.line(_dumps({**done, "done": True, "done_reason": "stop", **counts}))
    return body


# --- Amazon Bedrock ---------------------------------------------------------------------------------------------

_PAD = string.ascii_letters + string.digits


def _bedrock_pad(rng: random.Random) -> str:
    """The ``p`` field Bedrock adds to every event payload (a prefix of ``abc...XYZ0..9``, hiding its length)."""
    return _PAD[: rng.randint(3, 60)]


def _bedrock_converse(src: _Source, size: int) -> _Body:
    """Bedrock ConverseStream (AWS event-stream): ``messageStart``; a reasoning block (``reasoningContent`` text
    deltas, then its signature); text blocks (``contentBlockDelta`` text deltas, no ``contentBlockStart``) and tool
    blocks (``contentBlockStart`` with ``toolUse`` id and name, ``toolUse.input`` fragments), each closed by
    ``contentBlockStop``; ``messageStop``; ``metadata`` with usage and metrics. Every payload carries ``p`` and
    sorted keys, as Bedrock sends them."""
    body = _Body(framing="aws-eventstream")
    rng = src.rng

    def emit(event_type: str, obj: dict[str, Any]) -> None:
        obj["p"] = _bedrock_pad(rng)
        body.message(event_type, json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True))

    emit("messageStart", {"role": "assistant"})
    out_tokens = 0
    for _ in range(rng.randint(30, 120)):
        emit("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": src.delta()}}})
        out_tokens += 1
    signature = {"signature": src.b64(rng.randint(200, 600))}
    emit("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": signature}})
    emit("contentBlockStop", {"contentBlockIndex": 0})
    index = 1
    stop = "end_turn"
    while body.size < size - 1024 or index < 2:
        if rng.random() < 0.25:
            tool = {"name": "search", "toolUseId": "tooluse_" + src.ident(22, _PAD + "-_")}
            emit("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": tool}})
            for piece in ["", *src.split(src.arguments(rng.randint(60, 800)))]:
                emit("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}})
            body.tool_calls += 1
            stop = "tool_use"
        else:
            for _ in range(rng.randint(50, 400)):
                piece = src.delta()
                body.text_chars += len(piece)
                out_tokens += 1
                emit("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
            stop = "end_turn"
        emit("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    emit("messageStop", {"stopReason": stop})
    usage = {
        "cacheReadInputTokens": 1024,
        "cacheWriteInputTokens": 0,
        "inputTokens": 1455,
        "outputTokens": out_tokens,
        "serverToolUsage": {},
        "totalTokens": 2479 + out_tokens,
    }
    emit("metadata", {"metrics": {"latencyMs": 9120}, "usage": usage})
    return body


# --- Registry ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """A stream kind: its name, provider (for ``normalizer_for``), framing and generator."""

    name: str
    provider: str
    framing: str
    title: str
    build: Callable[[_Source, int], _Body]


STREAMS: dict[str, Spec] = {
    spec.name: spec
    for spec in (
        Spec(
            "openai-responses", "openai", "sse", "OpenAI Responses: text, reasoning, function calls", _openai_responses
        ),
        Spec("anthropic-messages", "anthropic", "sse", "Anthropic Messages: text, input_json_delta, pings", _anthropic),
        Spec(
            "openai-chat",
            "openai-chat",
            "sse",
            "OpenAI Chat Completions: text, tool calls, [DONE]",
            lambda s, n: _chat(s, n, xai=False),
        ),
        Spec(
            "xai-chat",
            "xai",
            "sse",
            "xAI chat: reasoning_content, text, tool calls, [DONE]",
            lambda s, n: _chat(s, n, xai=True),
        ),
        Spec("gemini-sse", "gemini", "sse", "Gemini ?alt=sse: CRLF, usageMetadata on every chunk", _gemini),
        Spec(
            "gemini-array",
            "gemini",
            "json_array",
            "Gemini JSON array (pretty-printed)",
            lambda s, n: _gemini(s, n, array=True),
        ),
        Spec(
            "large-payload",
            "gemini",
            "sse",
            "Gemini image stream: ~200 KB base64 events",
            lambda s, n: _gemini(s, n, images=150_000),
        ),
        Spec(
            "large-payload-1mb",
            "gemini",
            "sse",
            "Gemini image stream: ~1 MB base64 events",
            lambda s, n: _gemini(s, n, images=750_000),
        ),
        Spec("ollama-chat", "ollama", "ndjson", "Ollama /api/chat (NDJSON): thinking, text, whole tool calls", _ollama),
        Spec(
            "bedrock-converse",
            "bedrock-converse",
            "aws-eventstream",
            "Bedrock ConverseStream (AWS event-stream): reasoning, text, toolUse input, metadata",
            _bedrock_converse,
        ),
        Spec(
            "bedrock-anthropic",
            "bedrock-anthropic",
            "aws-eventstream",
            "Bedrock InvokeModelWithResponseStream: base64 Anthropic events in chunk messages",
            lambda s, n: _anthropic(s, n, bedrock=True),
        ),
        Spec(
            "multiline",
            "openai-chat",
            "sse",
            "Chat chunks each split over ~10k data: lines",
            lambda s, n: _chat(s, n, xai=False, logprob_lines=10_500),
        ),
    )
}


def generate(name: str, size: int, seed: int = SEED) -> Stream:
    """Build stream ``name`` (a key of :data:`STREAMS`) of about ``size`` bytes from ``seed``."""
    spec = STREAMS[name]
    body = spec.build(_Source(_seed(seed, name)), size)
    return body.finish(spec.name, spec.provider)


def _seed(seed: int, name: str) -> int:
    """A per-stream seed that does not depend on ``PYTHONHASHSEED``."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "big")


def load(name: str, size: int, seed: int = SEED, cache: bool = True) -> Stream:
    """:func:`generate`, cached in :data:`DATA_DIR` (the cache file is keyed by name, size, seed and version)."""
    if not cache:
        return generate(name, size, seed)
    path = DATA_DIR / f"{name}-{size}-{seed}-v{GENERATOR_VERSION}.json"
    blob = path.with_suffix(".bin")
    if path.exists() and blob.exists():
        meta = json.loads(path.read_text())
        data = blob.read_bytes()
        if hashlib.sha256(data).hexdigest() == meta["sha256"]:
            return Stream(data=data, **meta)
    stream = generate(name, size, seed)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(stream.data)
    meta = {k: v for k, v in stream.__dict__.items() if k != "data"}
    path.write_text(json.dumps(meta))
    return stream
