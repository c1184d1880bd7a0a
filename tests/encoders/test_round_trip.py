"""Every fixture and recording, written as every target and read back, says what the source said: text,
reasoning, client tool calls (ids, names, arguments), signatures, usage counts, stop reason and error type. Where a
target has no place for something, the encoder counted it in ``dropped`` -- that, and only that, may differ.

The pure-Python pass of ``.ci/run`` runs this file again on the twin scanner and the standard library's JSON."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Optional

import pytest

from helpers import chunked
from helpers.streams import all_streams
from ssewire import StreamResult, Unified, collect, iter_unified, normalizer_for
from ssewire.encoders import TARGETS, Encoder
from ssewire.transcode import transcode

STREAMS = [s for s in all_streams() if not s[0].startswith("generated-")]
IDS = [s[0] for s in STREAMS]


def written(data: bytes, provider: Any, framing: Any, to: str, **options: Any) -> tuple[bytes, Encoder]:
    """The stream written as ``to`` by an encoder fed event by event, and that encoder."""
    normalizer = normalizer_for(provider)
    options.setdefault("created", 1_700_000_000)
    encoder = Encoder(to, source=normalizer, **options)  # (the id and model: the source's, unless given)
    out = [encoder.encode(event) for event in iter_unified([data], normalizer, framing)]
    return b"".join(out) + encoder.close(), encoder


def _counts(result: StreamResult) -> Optional[dict[str, Optional[int]]]:
    usage = result.usage
    if usage is None or usage.source is None:  # none, or an object no provider's shape: no counts to carry
        return None
    names = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens", "cache_write_tokens")
    return {name: getattr(usage, name) or 0 for name in names}


def check_round_trip(source: StreamResult, back: StreamResult, encoder: Encoder) -> None:
    """``back`` (read from what ``encoder`` wrote) says what ``source`` said, but for what ``encoder.dropped``
    counts."""
    dropped = encoder.dropped
    assert back.text == source.text
    assert back.reasoning == source.reasoning
    calls = [(c.id, c.name, c.arguments) for c in source.client_tool_calls]
    assert [(c.id, c.name, c.arguments) for c in back.client_tool_calls] == calls
    assert not back.server_tool_calls or encoder.to in ("anthropic", "vercel-ui")
    assert len(back.server_tool_calls) + dropped["server_tool_call"] == len(source.server_tool_calls)
    assert len(back.citations) + dropped["citation"] == len(source.citations)
    # every signature (reasoning's and calls'), each once: read back (the Responses target writes one as a reasoning
    # item's encrypted_content), or counted
    signed = Counter(source.signatures)
    kept = Counter(back.signatures)
    if encoder.to == "openai":
        kept += Counter(secret for secret in back.encrypted_reasoning if secret in signed)
    assert not kept - signed, "a signature made up or written twice"
    assert sum((signed - kept).values()) == dropped["signature"]
    urls = [c.url for c in source.citations if c.url is not None]
    # in order, but those dropped (what has no URL, a source a target lists once cited again)
    assert _in_order([c.url for c in back.citations if c.url is not None], urls)
    want, got = _counts(source), _counts(back)
    if want is None:  # nothing to carry: nothing made up (the Messages stream always says its counts)
        assert got is None or not any(got.values())
    else:
        assert got is not None
        for name, value in want.items():
            if name == "reasoning_tokens" and dropped["reasoning_tokens"]:
                assert got[name] != value
            elif name == "cache_write_tokens" and dropped["cache_write_tokens"]:
                assert got[name] == 0
            else:
                assert got[name] == value, name
    if source.error is not None:  # the error, and the stop the source still sent after it
        assert back.error is not None and back.error["type"] == source.error["type"]
        if source.stop_reason in _FAILED:  # a target whose error is its end says "failed"
            assert back.stop_reason in _FAILED
        else:
            _check_stop(source, back, dropped)
    elif source.stop_reason in ("failed", "cancelled"):  # a target without such a stop writes its error instead
        assert back.stop_reason == source.stop_reason or (back.error or {}).get("type") == source.stop_reason
    else:
        assert back.error is None
        _check_stop(source, back, dropped)


_FAILED = (None, "failed")


def _in_order(some: list[Any], every: list[Any]) -> bool:
    """Whether ``some`` is ``every`` with items left out (same order)."""
    rest = iter(every)
    return all(any(item == other for other in rest) for item in some)


def _check_stop(source: StreamResult, back: StreamResult, dropped: Any) -> None:
    """The same stop reason, or one the target cannot carry, counted once."""
    assert dropped["stop_reason"] == (back.stop_reason != source.stop_reason)
    assert back.stop_reason not in _FAILED


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("stream", STREAMS, ids=IDS)
def test_a_stream_written_as_any_target_reads_back_the_same(stream: tuple[str, bytes, Any, Any], to: Any) -> None:
    _, data, provider, framing = stream
    source = collect(iter_unified([data], provider, framing))
    out, encoder = written(data, provider, framing, to)
    back = collect(iter_unified([out], to))
    check_round_trip(source, back, encoder)
    assert collect(iter_unified([out], "auto")).to_dict() == back.to_dict()  # auto-detection knows the target


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("stream", STREAMS, ids=IDS)
def test_transcode_writes_what_the_encoder_writes_at_any_chunking(stream: tuple[str, bytes, Any, Any], to: Any) -> None:
    _, data, provider, framing = stream
    fixed: dict[str, Any] = {"created": 1_700_000_000, "response_id": "r-1"}  # (made up where the source names none)
    whole, _ = written(data, provider, framing, to, **fixed)
    for size in (7, 64, None):
        pieces = list(transcode(chunked(data, size), provider, to, framing, **fixed))
        assert all(pieces), "no empty pieces"
        assert b"".join(pieces) == whole, size


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("stream", STREAMS, ids=IDS)
def test_a_cut_source_never_ends_as_a_clean_stop(stream: tuple[str, bytes, Any, Any], to: Any) -> None:
    _, data, provider, framing = stream
    cut = data[: len(data) // 2]
    source = collect(iter_unified([cut], provider, framing))
    out, _ = written(cut, provider, framing, to)
    back = collect(iter_unified([out], to))
    assert source.error is not None
    assert back.error is not None and back.error["type"] == source.error["type"]
    assert back.stop_reason not in ("end", "tool_use", "max_tokens", "stop_sequence", "refusal")
    complete = {c.id for c in back.tool_calls}
    assert not complete & {c.id for c in source.incomplete_tool_calls}, "an incomplete call was written as complete"


@pytest.mark.parametrize("to", TARGETS)
def test_atranscode_writes_what_transcode_writes(to: Any) -> None:
    import asyncio

    from ssewire import atranscode

    async def pieces(data: bytes) -> Any:
        for i in range(0, len(data), 50):
            yield data[i : i + 50]

    async def written_async(data: bytes, provider: Any, framing: Any) -> bytes:
        out = [p async for p in atranscode(pieces(data), provider, to, framing, created=1, response_id="r-1")]
        return b"".join(out)

    for _, data, provider, framing in STREAMS[:: max(1, len(STREAMS) // 15)]:
        whole = b"".join(transcode([data], provider, to, framing, created=1, response_id="r-1"))
        assert asyncio.run(written_async(data, provider, framing)) == whole


@pytest.mark.parametrize("to", TARGETS)
def test_encrypted_reasoning_is_carried_or_counted(to: Any) -> None:
    """(The Responses target writes a signature as a reasoning item's ``encrypted_content`` too: read back as
    encrypted reasoning, it is not counted here.)"""
    for _, data, provider, framing in STREAMS:
        source = list(iter_unified([data], provider, framing))
        secrets = [e.encrypted_reasoning for e in source if e.encrypted_reasoning]
        if not secrets:
            continue
        signatures = {e.signature for e in source if e.signature}
        out, encoder = written(data, provider, framing, to)
        back = [e.encrypted_reasoning for e in iter_unified([out], to) if e.encrypted_reasoning]
        carried = [secret for secret in back if secret not in signatures]
        assert carried == (secrets if to in ("openai", "vercel-ui") else [])
        assert encoder.dropped["encrypted_reasoning"] == len(secrets) - len(carried)


def _responses_events(out: bytes) -> list[dict[str, Any]]:
    """The data of every event of a Responses stream, in order."""
    return [json.loads(line[6:]) for line in out.split(b"\n") if line.startswith(b"data: ")]


@pytest.mark.parametrize("stream", STREAMS, ids=IDS)
def test_a_responses_stream_builds_the_items_it_finishes(stream: tuple[str, bytes, Any, Any]) -> None:
    """What a client builds from the Responses target's events (items added, parts added, deltas) is what each
    ``output_item.done`` and the final response say: no summary part the finished item does not have (a reasoning
    item of a signature alone is added and done, as the API writes one of encrypted reasoning alone), sequence
    numbers counting from 0."""
    _, data, provider, framing = stream
    out, _ = written(data, provider, framing, "openai")
    events = _responses_events(out)
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    built: dict[int, dict[str, Any]] = {}
    done: dict[int, dict[str, Any]] = {}
    for event in events:
        kind = event["type"]
        if kind == "response.output_item.added":
            built[event["output_index"]] = {**event["item"], "summary_texts": [], "content_texts": []}
        elif kind == "response.reasoning_summary_part.added":
            built[event["output_index"]]["summary_texts"].append("")
        elif kind == "response.reasoning_summary_text.delta":
            built[event["output_index"]]["summary_texts"][event["summary_index"]] += event["delta"]
        elif kind == "response.content_part.added":
            built[event["output_index"]]["content_texts"].append("")
        elif kind == "response.output_text.delta":
            built[event["output_index"]]["content_texts"][event["content_index"]] += event["delta"]
        elif kind == "response.output_item.done":
            item, place = event["item"], event["output_index"]
            mine = built.pop(place)
            assert mine["id"] == item["id"] and mine["type"] == item["type"]
            if item["type"] == "reasoning":
                assert mine["summary_texts"] == [part["text"] for part in item["summary"]]
            elif item["type"] == "message":
                assert mine["content_texts"] == [part["text"] for part in item["content"]]
            done[place] = item
    final = events[-1]
    if final["type"] in ("response.completed", "response.incomplete", "response.failed"):
        assert final["response"]["output"] == [done[place] for place in sorted(done)]


def test_a_signature_alone_is_a_reasoning_item_added_and_done() -> None:
    encoder = Encoder("openai", response_id="r", model="m", created=1)
    events = [
        Unified("reasoning_delta", text="", signature="c2ln"),
        Unified("text_delta", text="hi"),
        Unified("reasoning_delta", text="why", signature="c2lnMg=="),
        Unified("done", stop_reason="end"),
    ]
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    kinds = [event["type"].removeprefix("response.") for event in _responses_events(out)]
    assert kinds == [
        "created",
        "in_progress",
        "output_item.added",  # the signature's reasoning item: no summary part
        "output_item.done",
        "output_item.added",
        "content_part.added",
        "output_text.delta",
        "output_text.done",
        "content_part.done",
        "output_item.done",
        "output_item.added",  # a reasoning item with text: its summary part is added with its first text
        "reasoning_summary_part.added",
        "reasoning_summary_text.delta",
        "reasoning_summary_text.done",
        "reasoning_summary_part.done",
        "output_item.done",
        "completed",
    ]
    output = _responses_events(out)[-1]["response"]["output"]
    assert [(item["type"], item.get("encrypted_content")) for item in output] == [
        ("reasoning", "c2ln"),
        ("message", None),
        ("reasoning", "c2lnMg=="),
    ]
    assert output[0]["summary"] == [] and output[2]["summary"] == [{"type": "summary_text", "text": "why"}]
