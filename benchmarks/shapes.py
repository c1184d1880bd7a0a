"""``python -m benchmarks.shapes [--quick] [--check] [--readme]``: no fast path may depend on one payload shape.

Each generated SSE stream of ``generate.py`` (OpenAI Chat Completions and Responses, Anthropic, xAI, Gemini) is
rewritten payload by payload into variants that real servers send and a parser must read as fast: the members in
the reverse order (``keys-reversed``); the optional members that do not change a payload's events dropped
(``minimal``: ``logprobs``, ``obfuscation``, ``service_tier``, ``system_fingerprint``, ``created``, ``object``,
``usage: null``); Chat Completions' ``"role": "assistant"`` on every delta (``role-every-delta``, as OpenRouter
sends it); the payloads pretty-printed (``spaced``: ``json.dumps`` with its default separators); every Gemini text
part split in two parts of one chunk (``parts-split``: a chunk of several parts, as a transition from thoughts to
text, code execution or an image with its caption make). The events must not change: every variant is checked to
give the plain stream's text and number of events (``parts-split``: its text, and a delta more for each part
split). Each variant is timed
end to end (``iter_unified``, the provider named) interleaved with the plain stream, and reported as its speed
against the plain shape's in the same run (1.00x: as fast). ``--check`` exits 1 when a variant reads below
:data:`FLOOR` times the plain shape's speed, there and again on a longer run of its stream (the goal is 0.9x;
the floor leaves room for a noisy 2-core runner).
Writes ``benchmarks/results/shapes[-quick].json``, prints a markdown table and, with ``--readme``, rewrites
README.md's block between ``<!-- shapes:start -->`` and ``<!-- shapes:end -->``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from typing import Any, Callable, Optional

from .contenders import CHUNK_SIZE, MAX_BUFFER
from .environment import brief, where
from .generate import generate
from .readme import parser, publish, sampling

#: Members that never change a payload's events (absent, null or any value): what ``minimal`` drops.
OPTIONAL = ("logprobs", "obfuscation", "service_tier", "system_fingerprint", "created", "object")


def _reversed(value: Any) -> Any:
    if type(value) is dict:
        return {key: _reversed(value[key]) for key in reversed(list(value))}
    if type(value) is list:
        return [_reversed(item) for item in value]
    return value


def _minimal(value: Any) -> Any:
    if type(value) is dict:
        return {
            key: _minimal(item)
            for key, item in value.items()
            if key not in OPTIONAL and not (key == "usage" and item is None)
        }
    if type(value) is list:
        return [_minimal(item) for item in value]
    return value


def _role_every_delta(value: Any) -> Any:
    choices = value.get("choices") if type(value) is dict else None
    for choice in choices if type(choices) is list else ():
        delta = choice.get("delta") if type(choice) is dict else None
        if type(delta) is dict:
            choice["delta"] = {"role": "assistant", **delta}
    return value


def _parts_split(value: Any) -> Any:
    for candidate in value.get("candidates") or () if type(value) is dict else ():
        content = candidate.get("content") if type(candidate) is dict else None
        parts = content.get("parts") if type(content) is dict else None
        if type(parts) is list:
            split = []
            for part in parts:
                text = part.get("text") if type(part) is dict else None
                if type(text) is str and len(text) > 1:
                    half = len(text) // 2
                    split += [{**part, "text": text[:half]}, {**part, "text": text[half:]}]
                else:
                    split.append(part)
            content["parts"] = split
    return value


#: The CI floor: a variant's speed against the plain shape's (same run); the goal is 0.9x.
FLOOR = 0.75
#: Variants that make more events than the plain stream (the same text): a delta for each part split.
MORE_EVENTS = frozenset({"parts-split"})

Rewrite = Callable[[Any], str]
VARIANTS: dict[str, Rewrite] = {
    "keys-reversed": lambda obj: json.dumps(_reversed(obj), separators=(",", ":"), ensure_ascii=False),
    "minimal": lambda obj: json.dumps(_minimal(obj), separators=(",", ":"), ensure_ascii=False),
    "role-every-delta": lambda obj: json.dumps(_role_every_delta(obj), separators=(",", ":"), ensure_ascii=False),
    "spaced": lambda obj: json.dumps(obj, ensure_ascii=False),
    "parts-split": lambda obj: json.dumps(_parts_split(obj), separators=(",", ":"), ensure_ascii=False),
}
#: The generated streams rewritten, and the variants that apply to each (role: Chat Completions only).
STREAMS: dict[str, tuple[str, ...]] = {
    "openai-chat": ("keys-reversed", "minimal", "role-every-delta", "spaced"),
    "xai-chat": ("keys-reversed", "minimal", "role-every-delta", "spaced"),
    "openai-responses": ("keys-reversed", "minimal", "spaced"),
    "anthropic-messages": ("keys-reversed", "spaced"),
    "gemini-sse": ("keys-reversed", "spaced", "parts-split"),
}


def rewrite_sse(body: bytes, rewrite: Rewrite) -> bytes:
    """``body`` (SSE whose events are one ``data:`` line each, any ``event:`` line kept) with each JSON payload
    rewritten; ``[DONE]`` and anything not JSON kept as it is."""
    out: list[bytes] = []
    for line in body.splitlines(keepends=True):
        if line.startswith(b"data: "):
            text = line[6:].rstrip(b"\r\n")
            ending = line[6 + len(text) :]
            try:
                obj = json.loads(text)
            except ValueError:
                out.append(line)
                continue
            out.append(b"data: " + rewrite(obj).encode() + ending)
        else:
            out.append(line)
    return b"".join(out)


def _chunks(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK_SIZE] for i in range(0, len(data), CHUNK_SIZE)]


def _read(chunks: list[bytes], provider: str) -> tuple[str, int]:
    """The stream's text and event count, end to end."""
    from ssewire import iter_unified

    parts, n = [], 0
    for ev in iter_unified(chunks, provider, "sse", max_buffer=MAX_BUFFER):
        n += 1
        if ev.type == "text_delta" and ev.text:
            parts.append(ev.text)
    return "".join(parts), n


def _timed(chunks: list[bytes], provider: str, passes: int) -> float:
    from ssewire import iter_unified

    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(passes):
            for _ev in iter_unified(chunks, provider, "sse", max_buffer=MAX_BUFFER):
                pass
        return (time.perf_counter() - start) / passes
    finally:
        gc.enable()


def measure(name: str, size: int, samples: int, min_time: float) -> dict[str, Any]:
    """The plain stream ``name`` and each of its variants: checked to read the same text, then timed in
    ``samples`` interleaved samples; the speed of each variant against the plain shape (medians)."""
    stream = generate(name, size)
    plain = _chunks(stream.data)
    provider = stream.provider
    expected = _read(plain, provider)
    bodies = {"plain": plain}
    for variant in STREAMS[name]:
        chunks = _chunks(rewrite_sse(stream.data, VARIANTS[variant]))
        got = _read(chunks, provider)
        if got != expected and not (variant in MORE_EVENTS and got[0] == expected[0] and got[1] > expected[1]):
            raise AssertionError(f"{name} {variant}: the events changed (text, count: {got[1]} vs {expected[1]})")
        bodies[variant] = chunks
    start = time.perf_counter()
    _timed(plain, provider, 1)
    passes = max(1, round(min_time / max(1e-6, time.perf_counter() - start)))
    times: dict[str, list[float]] = {label: [] for label in bodies}
    for _ in range(samples):
        for label, chunks in bodies.items():
            times[label].append(_timed(chunks, provider, passes))
    medians = {label: statistics.median(values) for label, values in times.items()}
    sizes = {label: sum(map(len, chunks)) for label, chunks in bodies.items()}
    return {
        "provider": provider,
        "bytes": sizes,
        "seconds": medians,
        "mb_s": {label: sizes[label] / medians[label] / 1e6 for label in bodies},
        # the same text read (the same events but for parts-split): time(plain) / time(variant)
        "speed_vs_plain": {label: medians["plain"] / medians[label] for label in bodies if label != "plain"},
    }


def format_table(doc: dict[str, Any]) -> str:
    variants = list(VARIANTS)
    lines = [
        "| stream | plain MB/s | " + " | ".join(f"`{v}`" for v in variants) + " |",
        "|---|---:|" + "---:|" * len(variants),
    ]
    for name, result in doc["streams"].items():
        speed = result["speed_vs_plain"]
        cells = [f"{speed[v]:.2f}x" if v in speed else "—" for v in variants]
        lines.append(f"| {name} | {result['mb_s']['plain']:.0f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def caption(doc: dict[str, Any]) -> str:
    """The README block's line above the table: what is compared, where and how it was measured."""
    env = doc["environment"]
    return (
        "Each variant's end-to-end speed against the plain generated stream's (`iter_unified`: the plain stream's "
        f"time over the variant's), {doc['samples']} interleaved samples (medians), {doc['size_mb']:g} MB streams; "
        f"{where(env)}. Every variant reads the same text "
        "and events as the plain one (`parts-split`: the same text, a delta for each part, so more events to "
        "make: the compiled reader reads a Gemini chunk part by part)."
    )


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    check = f"exit 1 when a variant reads below {FLOOR}x the plain shape"
    return parser("shapes", __doc__ or "", "smaller streams, fewer samples", check).parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)

    size_mb = 0.5 if args.quick else 2.0
    samples, min_time = sampling(args.quick)
    results = {}
    for name in STREAMS:
        print(f"{name}: {len(STREAMS[name])} variant(s)", file=sys.stderr)
        results[name] = measure(name, int(size_mb * 1e6), samples, min_time)
    if args.check:  # a stream read below the floor is measured again, longer, before it fails
        for name in sorted({name for name, _variant, _speed in below_floor({"streams": results})}):
            print(f"{name}: a variant below its floor, measured again (3x the samples, 4x the time)", file=sys.stderr)
            results[name] = measure(name, int(size_mb * 1e6), samples * 3, min_time * 4)
    doc = {
        "size_mb": size_mb,
        "samples": samples,
        "streams": results,
        "environment": brief(),
    }
    publish(doc, "shapes", args, table=format_table(doc), caption=caption(doc))
    slow = below_floor(doc)
    for name, variant, speed in slow:
        print(f"FAIL {name} {variant}: {speed:.2f}x the plain shape's speed < {FLOOR}x", file=sys.stderr)
    return 1 if args.check and slow else 0


def below_floor(doc: dict[str, Any], floor: float = FLOOR) -> list[tuple[str, str, float]]:
    """``(stream, variant, speed)`` of each variant of ``doc`` slower than ``floor`` times the plain shape."""
    return [
        (name, variant, speed)
        for name, result in doc["streams"].items()
        for variant, speed in result["speed_vs_plain"].items()
        if speed < floor
    ]


if __name__ == "__main__":
    sys.exit(main())
