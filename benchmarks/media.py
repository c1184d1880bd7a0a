"""``python -m benchmarks.media [--quick] [--check] [--readme]``: image and voice streams, whose bulk is base64.

Generated streams, each in its provider's documented shape, whose bytes are mostly an image or audio that no
unified event carries (each such payload is one ``raw`` event): a parser that decodes every payload pays for data
its caller never reads.

- ``openai-image``: an OpenAI Responses stream of the image generation tool: progress events, partial images, the
  finished item and the final response (each carrying the whole image), as the API sends them over SSE;
- ``gemini-image``: Gemini ``?alt=sse`` chunks of an image model: text, then ``inlineData`` parts;
- ``realtime-voice``: an OpenAI Realtime session saved one WebSocket frame per line (NDJSON): audio deltas, their
  transcript, ``response.done``;
- ``gemini-live-voice``: a Gemini Live session saved the same way: audio ``inlineData`` messages, output
  transcriptions, the turn's end with its usage.

Each stream is read whole in 64 KiB chunks, the provider named, like a group of ``benchmarks.recordings``: MB/s
and the cost of ``iter_unified``, ``collect()`` and ``StreamTap`` against the floor (the compiled scanner framing
the body plus msgspec decoding every payload), medians of interleaved samples, every ratio from the same run.
Writes ``benchmarks/results/media[-quick].json``, prints a markdown table and, with ``--readme``, rewrites README.md's
block between ``<!-- media:start -->`` and ``<!-- media:end -->``. ``--check`` (the CI gate) exits 1 when a
contender costs more than :data:`CEILING` times the floor on a stream, there and again on a longer run.
"""

from __future__ import annotations

import base64
import json
import random
import sys
from typing import Any, Callable, Optional

from .contenders import compiled_or_told
from .environment import brief, where
from .generate import SEED, generate
from .readme import exit_status, parser, publish, sampling
from .recordings import FLOOR_SAYS, MEASURED_HEADINGS, Recording, _chunked, _floor, measure_group, measured_cells

__all__ = ["CEILING", "STREAMS", "build", "main", "over_ceiling"]

#: The gate: a contender's cost over the floor on any stream (the goal, 1.3x, with room for a noisy runner).
CEILING = 1.6


def _b64(rng: random.Random, size: int) -> str:
    """``size`` characters of base64 (the encoding of random bytes: what an image or audio looks like)."""
    return base64.b64encode(rng.randbytes(size * 3 // 4)).decode()[:size]


def _sse(kind: str, payload: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"


def _openai_image(rng: random.Random, size: int) -> bytes:
    """A Responses stream of the image generation tool: two partial images, then the finished image twice (its
    item's ``result`` and the final response's output), about ``size`` bytes."""
    image = _b64(rng, size // 4)
    partials = [image[: len(image) // 2], image[: len(image) * 3 // 4]]
    item = {"id": "ig_1", "type": "image_generation_call", "status": "in_progress"}
    response = {"id": "resp_img", "object": "response", "created_at": 1, "status": "in_progress", "model": "gpt-5"}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**response, "output": []}}),
        ("response.in_progress", {"response": {**response, "output": []}}),
        ("response.output_item.added", {"output_index": 0, "item": item}),
        ("response.image_generation_call.in_progress", {"output_index": 0, "item_id": "ig_1"}),
        ("response.image_generation_call.generating", {"output_index": 0, "item_id": "ig_1"}),
        *(
            (
                "response.image_generation_call.partial_image",
                {"output_index": 0, "item_id": "ig_1", "partial_image_index": i, "partial_image_b64": partial},
            )
            for i, partial in enumerate(partials)
        ),
        ("response.image_generation_call.completed", {"output_index": 0, "item_id": "ig_1"}),
    ]
    done = {**item, "status": "completed", "result": image, "revised_prompt": "a lighthouse at dusk"}
    usage = {"input_tokens": 12, "output_tokens": 1056, "total_tokens": 1068}
    events += [
        ("response.output_item.done", {"output_index": 0, "item": done}),
        ("response.completed", {"response": {**response, "status": "completed", "output": [done], "usage": usage}}),
    ]
    body = "".join(
        _sse(kind, {"type": kind, **fields, "sequence_number": i}) for i, (kind, fields) in enumerate(events)
    )
    return body.encode()


def _realtime_voice(rng: random.Random, size: int) -> bytes:
    """An OpenAI Realtime session, one server event per line: audio deltas of 8 KB of base64 (170 ms of 24 kHz
    PCM16) with a transcript delta every fourth, then the response's end."""
    frames: list[dict[str, Any]] = [
        {"type": "session.created", "session": {"id": "sess_1", "model": "gpt-realtime"}},
        {"type": "response.created", "response": {"id": "resp_v", "status": "in_progress", "output": []}},
    ]
    place = {"response_id": "resp_v", "item_id": "item_1", "output_index": 0, "content_index": 0}
    audio = _b64(rng, 8192)
    count = max(1, size // (len(audio) + 200))
    for i in range(count):
        frames.append({"type": "response.output_audio.delta", "event_id": f"ev_{i}", **place, "delta": audio})
        if i % 4 == 0:
            frames.append(
                {"type": "response.output_audio_transcript.delta", "event_id": f"et_{i}", **place, "delta": " word"}
            )
    usage = {"total_tokens": 40 + count, "input_tokens": 40, "output_tokens": count}
    frames += [
        {"type": "response.output_audio.done", **place},
        {"type": "response.done", "response": {"id": "resp_v", "status": "completed", "output": [], "usage": usage}},
    ]
    return "".join(json.dumps(frame, separators=(",", ":")) + "\n" for frame in frames).encode()


def _gemini_live_voice(rng: random.Random, size: int) -> bytes:
    """A Gemini Live session, one server message per line: audio parts of 16 KB of base64 with an output
    transcription every fifth, then the turn's end with its usage."""
    audio = {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": _b64(rng, 16384)}}
    frames: list[dict[str, Any]] = [{"setupComplete": {}}]
    count = max(1, size // 16600)
    for i in range(count):
        frames.append({"serverContent": {"modelTurn": {"parts": [audio]}}})
        if i % 5 == 0:
            frames.append({"serverContent": {"outputTranscription": {"text": " word"}}})
    usage = {"promptTokenCount": 30, "responseTokenCount": count, "totalTokenCount": 30 + count}
    frames.append({"serverContent": {"turnComplete": True}, "usageMetadata": usage})
    return "".join(json.dumps(frame, separators=(",", ":")) + "\n" for frame in frames).encode()


def _gemini_image(rng: random.Random, size: int) -> bytes:
    """The main benchmark's Gemini image stream (~200 KB ``inlineData`` chunks between text chunks)."""
    return generate("large-payload", size).data


#: name -> (provider, framing, builder): each builder makes about ``size`` bytes from its own random source.
STREAMS: dict[str, tuple[str, str, Callable[[random.Random, int], bytes]]] = {
    "openai-image": ("openai", "sse", _openai_image),
    "gemini-image": ("gemini", "sse", _gemini_image),
    "realtime-voice": ("openai-realtime", "ndjson", _realtime_voice),
    "gemini-live-voice": ("gemini-live", "ndjson", _gemini_live_voice),
}


def build(name: str, size: int, seed: int = SEED) -> Recording:
    """The generated stream ``name`` of about ``size`` bytes as a :class:`~.recordings.Recording` (64 KiB chunks)."""
    provider, framing, make = STREAMS[name]
    data = make(random.Random(f"{seed}:{name}"), size)
    return Recording(name, name, provider, framing, _chunked(data))


def format_table(doc: dict[str, Any]) -> str:
    lines = [f"| stream | MB | largest payload, KB | {MEASURED_HEADINGS} |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, g in doc["streams"].items():
        lines.append(f"| {name} | {g['bytes'] / 1e6:.1f} | {g['largest'] / 1000:.0f} | {measured_cells(g)} |")
    return "\n".join(lines)


def caption(doc: dict[str, Any]) -> str:
    env = doc["environment"]
    return (
        f"Measured on {where(env)}, {doc['size_mb']:g} MB streams, {doc['samples']} interleaved samples per "
        f"contender (medians); {FLOOR_SAYS}"
    )


def over_ceiling(doc: dict[str, Any], ceiling: float = CEILING) -> list[str]:
    """``"stream contender cost"`` for each contender of ``doc`` over ``ceiling`` times the floor."""
    return [
        f"{name} {contender}: {cost:.2f}x the floor > {ceiling}x"
        for name, g in doc["streams"].items()
        for contender, cost in g["cost_vs_floor"].items()
        if cost > ceiling
    ]


def _largest(rec: Recording) -> int:
    """The longest line of the body (an NDJSON frame, an SSE ``data:`` line): its largest payload, about."""
    return max(map(len, b"".join(rec.chunks).splitlines()))


def main(argv: Optional[list[str]] = None) -> int:
    check = f"exit 1 when a contender costs over {CEILING}x the floor"
    args = parser("media", __doc__ or "", "1 MB streams, fewer samples (a few seconds)", check).parse_args(argv)
    compiled = compiled_or_told()
    if compiled is None:
        return 2
    size_mb = 1.0 if args.quick else 4.0
    samples, min_time = sampling(args.quick)
    floor = _floor(compiled)
    recordings = {name: build(name, int(size_mb * 1e6)) for name in STREAMS}
    results: dict[str, Any] = {}
    for name, rec in recordings.items():
        print(f"{name}: {rec.size / 1e6:.1f} MB", file=sys.stderr)
        results[name] = {**measure_group([rec], floor, samples, min_time), "largest": _largest(rec)}
    doc = {"size_mb": size_mb, "samples": samples, "streams": results, "environment": brief()}
    if args.check and over_ceiling(doc):  # measured again, longer, before it fails
        for name in sorted({line.split()[0] for line in over_ceiling(doc)}):
            print(f"{name}: over the ceiling, measured again (3x the samples, 4x the time)", file=sys.stderr)
            rec = recordings[name]
            results[name] = {**measure_group([rec], floor, samples * 3, min_time * 4), "largest": _largest(rec)}
    publish(doc, "media", args, table=format_table(doc), caption=caption(doc))
    return exit_status(over_ceiling(doc), args.check)


if __name__ == "__main__":
    sys.exit(main())
