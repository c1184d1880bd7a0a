"""The Chat Completions chunk read without a full decode, written once (:data:`CHAT_SHAPE`): the compiled delta
rule (``chat.CHAT_DELTA_RULE``, :func:`chat_rule_args`), the msgspec struct (``typed.chat_chunk``) and
``ChatCompletionsNormalizer.fast_chunk`` are all made from it."""

from __future__ import annotations

from typing import Any

from .shape import CallShape, DeltaShape

__all__ = ["CHAT_SHAPE", "chat_rule_args"]

_DELTA = ("choices", 0, "delta")

_CALL = (*_DELTA, "tool_calls", 0)

#: One choice whose delta is text (``content``) or reasoning (``reasoning_content``, else ``reasoning``), never
#: both, with no ``type`` (a payload with one is routed by the Responses rules), usage, error, finish reason,
#: refusal, ``reasoning_details`` (OpenRouter's structured reasoning), ``extra_content`` (Gemini's thought
#: signature), ``annotations`` (url citations), Perplexity ``citations`` or ``search_results``, llama.cpp
#: ``timings`` (each absent or null), and no tool call fragment; or (the compiled reader only) one such choice,
#: the first (``index`` 0), whose delta is one tool call fragment that continues the open call at its ``index``
#: with a non-empty ``arguments`` text, naming no ``id``, ``name`` or Gemini ``extra_content`` (and no text).
#: The chunk's ``id`` and ``model`` are read, unchecked: the compiled reader takes such chunks once the stream's id
#: and model are known (a chunk it takes sets nothing else); the Python fast path notes them. Every other member is
#: ignored, as the full decode ignores it: ``role`` (OpenRouter and others repeat ``"role": "assistant"`` on every
#: delta), ``logprobs``, ``object``, ``created``, ``system_fingerprint``, ``service_tier``, ``obfuscation``.
CHAT_SHAPE = DeltaShape(
    name="ChatChunk",
    type=("type",),
    texts=(
        ((*_DELTA, "content"), "text_delta"),
        ((*_DELTA, "reasoning_content"), "reasoning_delta"),
        ((*_DELTA, "reasoning"), "reasoning_delta"),
    ),
    nulls=(
        ("usage",),
        ("error",),
        ("choices", 0, "finish_reason"),
        (*_DELTA, "refusal"),
        (*_DELTA, "function_call"),
        (*_DELTA, "reasoning_details"),
        (*_DELTA, "extra_content"),
        (*_DELTA, "annotations"),
        ("citations",),
        ("search_results",),
        ("timings",),
    ),
    zeros=(("choices", 0, "index"),),
    reads=(("id",), ("model",)),
    events=("message", None),
    call=CallShape(
        at=_CALL,
        key=(*_CALL, "index"),
        arguments=(*_CALL, "function", "arguments"),
        nulls=((*_CALL, "id"), (*_CALL, "function", "name"), (*_CALL, "extra_content")),
    ),
)


_CHUNK = (*_DELTA, "content", 0)
_DETAIL = (*_DELTA, "reasoning_details", 0)


def chat_rule_args() -> dict[str, Any]:
    """The compiled delta rule's arguments: :data:`CHAT_SHAPE`'s, with variants for two more shapes of delta, each
    taken under the shape's other rules (its nulls, the first choice):

    - OpenRouter's reasoning delta, its text twice: in ``reasoning`` and in ``reasoning_details`` (one
      ``reasoning.text`` or ``reasoning.summary`` detail, without a ``signature``: the full decode keeps that
      one): a ``reasoning_delta`` of
      the plain text, as the full decode counts it (a delta whose plain text is empty, or that has other text too,
      is left to it);
    - a delta whose ``content`` is one typed chunk (Mistral's Magistral models; an array of another length is not
      read): ``{"type": "thinking", "thinking": [{"type": "text", "text"}]}`` -> ``reasoning_delta``,
      ``{"type": "text", "text"}`` -> ``text_delta``, each only with no tool call fragment, ``reasoning_content``,
      ``reasoning`` or ``reasoning_details`` beside it (the full decode would make more events).

    The shape's own variants take neither (no ``reasoning_details``, ``content`` no chunk). The msgspec struct and
    the Python fast check take no such delta (``reasoning_details`` must be null there, ``content`` a string): they
    take the full decode without the compiled reader."""
    args = CHAT_SHAPE.rule_args()
    paths = args["paths"]
    details = paths.index((*_DELTA, "reasoning_details"))
    chunk_type, inner_type, thinking, text, detail_type, signature = range(len(paths), len(paths) + 6)
    args["paths"] = (
        *paths,
        (*_CHUNK, "type"),
        (*_CHUNK, "thinking", 0, "type"),
        (*_CHUNK, "thinking", 0, "text"),
        (*_CHUNK, "text"),
        (*_DETAIL, "type"),
        (*_DETAIL, "signature"),
    )
    args["nulls"] = tuple(index for index in args["nulls"] if index != details)  # (decided by each variant now)
    call, none = args["tag_path"], type(None)
    plain = ((details, none), (chunk_type, none))
    alone = (
        *((paths.index(path), none) for path in ((*_DELTA, "reasoning_content"), (*_DELTA, "reasoning"))),
        (call, none),
        (details, none),
    )
    texts = tuple((paths.index(path), kind) for path, kind in CHAT_SHAPE.texts)
    more = (
        *(
            (((call, none), (detail_type, kind), (signature, none)), texts, "reasoning_delta")
            for kind in ("reasoning.text", "reasoning.summary")
        ),
        (((chunk_type, "thinking"), (inner_type, "text"), *alone), ((thinking, "reasoning_delta"),)),
        (((chunk_type, "text"), *alone), ((text, "text_delta"),)),
    )
    args["cases"] = {
        name: (expected, tuple((((call, tag), *plain), *rest) for tag, *rest in variants) + more)
        for name, (expected, variants) in args["cases"].items()
    }
    return args
