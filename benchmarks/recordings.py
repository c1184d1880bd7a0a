"""``python -m benchmarks.recordings [--quick] [--readme]``: ssewire on real traffic, many small streams of any shape.

1. **Real recordings.** Every recorded stream in ``../shared/corpus`` (both manifests) and every stream of
   ``fixtures/``, grouped by API and provider, each body run whole (one chunk: most are a few KB; a body over
   ``CHUNK_SIZE`` in ``CHUNK_SIZE`` chunks), the provider named. Per group: MB/s and the cost of ``iter_unified``,
   ``collect()`` and ``StreamTap`` against the floor -- the compiled scanner framing the body plus msgspec decoding
   every payload (Bedrock InvokeModel: its wrapper, the base64 and the event inside) and nothing else. A cost of
   1.0x is the floor's time; 2.0x twice it.
2. **Per-stream cost.** A minimal stream (one text delta, then the end) started and finished: microseconds per
   stream with the provider named and with ``auto``, and a hand-written loop's (lines split, payloads decoded by
   ``json.loads``) on the same body.

One sample is one pass over every stream of a group; the contenders' samples are interleaved, and the table gives
medians. Every ratio is between numbers of the same run. Writes ``benchmarks/results/recordings[-quick].json``,
prints a markdown table and, with ``--readme``, rewrites README.md's block between ``<!-- recordings:start -->`` and
``<!-- recordings:end -->``. Needs the corpus at ``../shared/corpus`` (or ``SSEWIRE_CORPUS``), msgspec and the
compiled scanner.

``--check`` (the CI gate, with a noise margin for a busy 2-core machine) exits 1 when, after the failing groups and
costs were measured again for longer: the geometric mean over the groups of a contender's cost / floor is above
:data:`GEOMEAN_CEILING`, any group's is above :data:`GROUP_CEILING`, or a minimal stream costs more than
:data:`PER_STREAM_CEILING_X` times what :func:`hand_written_loop` costs on its body in the same run.
"""

from __future__ import annotations

import argparse
import binascii
import gc
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from .contenders import CHUNK_SIZE, MAX_BUFFER, compiled_or_told, scanner_for
from .environment import brief, where
from .readme import exit_status, parser, publish, sampling

#: The gate's ceilings (see the module docstring): cost / floor, geometric mean over the groups (measured here:
#: 2.0x iter_unified, 2.2x collect(), 2.3x StreamTap, with the normalisers compiled from their own source; 2.2x /
#: 2.5x / 2.6x before) and any one group (5.7x / 6.4x / 6.5x: Gemini Vertex's streamed arguments; 7.3x / 8.4x /
#: 8.4x before); a minimal stream's time, named and with ``auto``, over the hand-written
#: loop's on the same body in the same run (measured on a busy 2-core machine: 1.0-1.8x named, 1.2-3.3x auto, at
#: 11-17 / 16-23 us; 8.4-9.8 / 13.9-14.2 us on a quiet one). Microseconds alone are no gate: the same machine read
#: the same build 1.7x slower on another day.
GEOMEAN_CEILING = 3.0
GROUP_CEILING = 10.0
PER_STREAM_CEILING_X = {"named": 3.0, "auto": 4.5}

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("SSEWIRE_CORPUS") or ROOT.parent / "shared" / "corpus")
FIXTURES = ROOT / "fixtures"


@dataclass
class Recording:
    """One body to run: where it came from, its group, provider and framing, its chunks and its payloads."""

    name: str
    group: str
    provider: str
    framing: str
    chunks: list[bytes]
    payloads: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(map(len, self.chunks))


def _manifest_names() -> tuple[Callable[[dict[str, Any]], str], Callable[[dict[str, Any]], str]]:
    """``(provider_for, framing_for)`` of a capture: the one mapping of the manifests' names (the tests' helper)."""
    sys.path.insert(0, str(ROOT))
    try:
        from tests.helpers.corpus import framing_for, provider_for
    finally:
        sys.path.pop(0)
    return provider_for, framing_for


def _chunked(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK_SIZE] for i in range(0, len(data), CHUNK_SIZE)] or [b""]


def load_recordings(corpus: Path = CORPUS, fixtures: Path = FIXTURES) -> list[Recording]:
    """Every corpus capture (grouped ``api (provider)``) and every fixture (grouped ``fixtures: provider``) that a
    named provider reads; realtime sessions (WebSocket frames, not an HTTP body) are left out."""
    provider_for, framing_for = _manifest_names()
    out: list[Recording] = []
    for manifest in sorted(corpus.glob("**/manifest.json")):
        for capture in json.loads(manifest.read_text(encoding="utf-8")).get("captures", []):
            provider = provider_for(capture)
            if provider == "openai-realtime":
                continue
            framing = framing_for(capture)
            data = (manifest.parent / capture["file"]).read_bytes()
            group = f"{capture['api']} ({capture['provider']})"
            out.append(Recording(capture["file"], group, provider, framing, _chunked(data)))
    for expected_file in sorted(fixtures.glob("*.expected.json")):
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        if expected["provider"] == "openai-realtime":
            continue
        stream = expected_file.with_name(expected_file.name[: -len(".expected.json")])
        group = f"fixtures: {expected['provider']}"
        out.append(
            Recording(stream.name, group, expected["provider"], expected["framing"], _chunked(stream.read_bytes()))
        )
    return out


def readable(recordings: list[Recording]) -> tuple[list[Recording], list[str]]:
    """The recordings ``iter_unified`` reads to their end, and the names of those it raises on (a fixture of a
    cut or hostile body): a timing of a stream that stops at its first bad byte would flatter every contender."""
    from ssewire import iter_unified

    kept, left = [], []
    for rec in recordings:
        try:
            for _ in iter_unified(rec.chunks, rec.provider, rec.framing, max_buffer=MAX_BUFFER):
                pass
        except Exception as exc:  # any failure leaves the stream out, by name
            left.append(f"{rec.name}: {type(exc).__name__}")
        else:
            kept.append(rec)
    return kept, left


# -- what is timed -------------------------------------------------------------------------------------------------

Run = Callable[[list[Recording]], int]


def _floor(compiled: Any) -> Run:
    """The compiled scanner framing each body, msgspec decoding every payload (Bedrock InvokeModel: the wrapper,
    the base64, the event inside): the least any parser that decodes the payloads can do."""
    import msgspec

    decode = msgspec.json.Decoder().decode
    a2b = binascii.a2b_base64

    def run(group: list[Recording]) -> int:
        n = 0
        for rec in group:
            parser = scanner_for(compiled, rec.framing)
            events = []
            for chunk in rec.chunks:
                events += parser.feed(chunk)
            events += parser.close()
            wrapped = rec.framing == "aws-eventstream"  # InvokeModel's chunks, Anthropic's or Nova's
            for ev in events:
                data = ev.data
                if data and data != "[DONE]":
                    try:
                        value = decode(data)
                        if wrapped and type(value) is dict and "bytes" in value:
                            decode(a2b(value["bytes"]))
                    except (msgspec.DecodeError, binascii.Error):  # a cut or bad payload is decoded as far as it goes
                        pass
                    n += 1
        return n

    return run


def _iter_unified(group: list[Recording]) -> int:
    from ssewire import iter_unified

    n = 0
    for rec in group:
        for _ in iter_unified(rec.chunks, rec.provider, rec.framing, max_buffer=MAX_BUFFER):
            n += 1
    return n


def _collect(group: list[Recording]) -> int:
    from ssewire import collect, iter_unified

    n = 0
    for rec in group:
        n += len(collect(iter_unified(rec.chunks, rec.provider, rec.framing, max_buffer=MAX_BUFFER)).text)
    return n


def _tap(group: list[Recording]) -> int:
    from ssewire import StreamTap

    n = 0
    for rec in group:
        tap = StreamTap(rec.provider, rec.framing, max_buffer=MAX_BUFFER)
        for chunk in rec.chunks:
            tap.feed(chunk)
        n += len(tap.close().text)
    return n


CONTENDERS: tuple[tuple[str, Run], ...] = (
    ("iter_unified", _iter_unified),
    ("collect()", _collect),
    ("StreamTap", _tap),
)


def sample_seconds(run: Callable[[Any], Any], group: Any, passes: int) -> float:
    """Seconds per pass of ``run(group)``, timed over ``passes`` passes (the collector held off)."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(passes):
            run(group)
        return (time.perf_counter() - start) / passes
    finally:
        gc.enable()


def measure_group(group: list[Recording], floor: Run, samples: int, min_time: float) -> dict[str, Any]:
    """Medians of ``samples`` interleaved samples of the floor and each contender on one group; each sample runs
    enough passes to last about ``min_time`` seconds."""
    runs = (("floor", floor), *CONTENDERS)
    start = time.perf_counter()
    for _name, run in runs:  # warm-up: imports, first-call caches, the output checked to be the same each pass
        run(group)
    once = max(1e-6, (time.perf_counter() - start) / len(runs))
    passes = max(1, round(min_time / once))
    times: dict[str, list[float]] = {name: [] for name, _run in runs}
    for _ in range(samples):
        for name, run in runs:
            times[name].append(sample_seconds(run, group, passes))
    medians = {name: statistics.median(values) for name, values in times.items()}
    size = sum(rec.size for rec in group)
    return {
        "streams": len(group),
        "bytes": size,
        "passes": passes,
        "samples": samples,
        "seconds": medians,
        "mb_s": {name: size / seconds / 1e6 for name, seconds in medians.items()},
        "cost_vs_floor": {name: medians[name] / medians["floor"] for name, _run in CONTENDERS},
    }


# -- per-stream cost ---------------------------------------------------------------------------------------------

#: The smallest complete stream of each framing's most common API: one text delta, then the end.
MINIMAL: tuple[tuple[str, str, bytes], ...] = (
    (
        "openai-chat",
        "sse",
        b'data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
        b'data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n",
    ),
    (
        "anthropic",
        "sse",
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","model":"c","content":[]}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"hi"}}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ),
    (
        "ollama",
        "ndjson",
        b'{"model":"m","message":{"role":"assistant","content":"hi"},"done":false}\n'
        b'{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}\n',
    ),
)


def hand_written_loop(body: bytes) -> list[Any]:
    """What a stream is read with today, by hand: the body split into lines, each payload (an SSE ``data:`` line
    but ``[DONE]``, or a JSON line) decoded by ``json.loads``: the per-stream gate's same-run yardstick."""
    out = []
    for line in body.split(b"\n"):
        if line.startswith(b"data: "):
            line = line[6:]
            if line == b"[DONE]":
                continue
        elif not line.startswith(b"{"):
            continue
        out.append(json.loads(line))
    return out


def per_stream_cost(repeats: int, count: int) -> dict[str, dict[str, float]]:
    """Microseconds to start, read and finish each :data:`MINIMAL` stream with ``collect(iter_unified(...))``,
    named and with ``provider="auto", framing="auto"``, and to read it with :func:`hand_written_loop` (``loop``): the
    median of ``repeats`` timings of ``count`` streams, the three interleaved."""
    from ssewire import collect, iter_unified

    out: dict[str, dict[str, float]] = {}
    for provider, framing, body in MINIMAL:
        chunks = [body]
        expected = collect(iter_unified(chunks, provider, framing)).text
        assert expected == "hi", (provider, expected)
        assert collect(iter_unified(chunks, "auto")).text == "hi", provider
        assert all(type(payload) is dict for payload in hand_written_loop(body)) and hand_written_loop(body)
        runs: dict[str, Callable[[], Any]] = {
            "named": lambda: collect(iter_unified(chunks, provider, framing)),  # noqa: B023 (run in this iteration)
            "auto": lambda: collect(iter_unified(chunks, "auto", "auto")),  # noqa: B023
            "loop": lambda: hand_written_loop(body),  # noqa: B023
        }
        timings: dict[str, list[float]] = {label: [] for label in runs}
        for _ in range(repeats):
            for label, run in runs.items():
                gc.collect()
                start = time.perf_counter()
                for _ in range(count):
                    run()
                timings[label].append((time.perf_counter() - start) / count * 1e6)
        out[provider] = {label: statistics.median(values) for label, values in timings.items()}
    return out


# -- report --------------------------------------------------------------------------------------------------------


def geomeans(doc: dict[str, Any]) -> dict[str, float]:
    """Each contender's cost / floor, geometric mean over the groups of ``doc``."""
    return {
        name: statistics.geometric_mean([g["cost_vs_floor"][name] for g in doc["groups"].values()])
        for name, _run in CONTENDERS
    }


def over_ceilings(doc: dict[str, Any]) -> list[str]:
    """What ``doc`` has above the gate's ceilings, one line each (see the module docstring)."""
    out = []
    for name, mean in geomeans(doc).items():
        if mean > GEOMEAN_CEILING:
            out.append(f"{name}: cost / floor {mean:.2f}x over the groups (geometric mean) > {GEOMEAN_CEILING}x")
    for group, g in doc["groups"].items():
        for name, cost in g["cost_vs_floor"].items():
            if cost > GROUP_CEILING:
                out.append(f"{group}: {name} cost / floor {cost:.2f}x > {GROUP_CEILING}x")
    for provider, row in doc["per_stream_us"].items():
        for label, ceiling in PER_STREAM_CEILING_X.items():
            if row[label] > ceiling * row["loop"]:
                out.append(
                    f"minimal {provider} stream, {label}: {row[label]:.1f} us > {ceiling}x the hand-written loop's "
                    f"{row['loop']:.1f} us"
                )
    return out


#: What the cost columns compare (the captions' words).
FLOOR_SAYS = (
    "cost / floor is the contender's time over the compiled scanner + msgspec decoding every payload, on the same "
    "bodies in the same run."
)
#: The headings of :func:`measured_cells`.
MEASURED_HEADINGS = "floor MB/s | `iter_unified` MB/s | cost / floor: `iter_unified` | `collect()` | `StreamTap`"


def measured_cells(g: dict[str, Any]) -> str:
    """The cells of a measured group's table row (see :data:`MEASURED_HEADINGS`): the floor's and ``iter_unified``'s
    MB/s, then each contender's cost / floor."""
    cost = g["cost_vs_floor"]
    return f"{g['mb_s']['floor']:.0f} | {g['mb_s']['iter_unified']:.0f} | " + " | ".join(
        f"{cost[name]:.2f}x" for name, _run in CONTENDERS
    )


def format_table(doc: dict[str, Any]) -> str:
    """The markdown table of one results document."""
    lines = [f"| API (provider) | streams | KB | {MEASURED_HEADINGS} |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, g in doc["groups"].items():
        lines.append(f"| {name} | {g['streams']} | {g['bytes'] / 1000:.0f} | {measured_cells(g)} |")
    means = geomeans(doc)
    lines.append(
        f"| **geometric mean** | | | | | {means['iter_unified']:.2f}x | {means['collect()']:.2f}x "
        f"| {means['StreamTap']:.2f}x |"
    )
    lines += ["", "| minimal stream | named, µs | auto, µs |", "|---|---:|---:|"]
    for provider, row in doc["per_stream_us"].items():
        lines.append(f"| {provider} | {row['named']:.1f} | {row['auto']:.1f} |")
    return "\n".join(lines)


def caption(doc: dict[str, Any]) -> str:
    """The README block's line above the table: where and how it was measured."""
    env = doc["environment"]
    return f"Measured on {where(env)}, {doc['samples']} interleaved samples per contender (medians); {FLOOR_SAYS}"


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = parser(
        "recordings",
        __doc__ or "",
        "fewer, shorter samples (about 30 s)",
        "exit 1 when a cost is above the gate's ceilings",
    )
    p.add_argument("--samples", type=int, help="interleaved samples per contender (default 7, quick 3)")
    return p.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    compiled = compiled_or_told()
    if compiled is None:
        return 2

    samples, min_time = sampling(args.quick)
    samples = args.samples or samples
    recordings, left_out = readable(load_recordings())
    for name in left_out:
        print(f"left out (raises): {name}", file=sys.stderr)
    if not recordings:
        print(f"no recordings under {CORPUS}", file=sys.stderr)
        return 2
    groups: dict[str, list[Recording]] = {}
    for rec in recordings:
        groups.setdefault(rec.group, []).append(rec)
    floor = _floor(compiled)
    results: dict[str, Any] = {}
    for name in sorted(groups):
        print(f"{name}: {len(groups[name])} stream(s)", file=sys.stderr)
        results[name] = measure_group(groups[name], floor, samples, min_time)
    count = 500 if args.quick else 3000
    doc = {
        "samples": samples,
        "min_time_s": min_time,
        "groups": results,
        "left_out": left_out,
        "per_stream_us": per_stream_cost(samples, count),
        "environment": brief(),
    }
    if args.check and over_ceilings(doc):  # measured again, longer, before it fails
        print("over a ceiling: the groups and the per-stream cost measured again (3x the samples, 4x the time)")
        for name in sorted(groups):
            results[name] = measure_group(groups[name], floor, samples * 3, min_time * 4)
        doc["per_stream_us"] = per_stream_cost(samples * 3, count * 4)
    publish(doc, "recordings", args, table=format_table(doc), caption=caption(doc))
    return exit_status(over_ceilings(doc), args.check)


if __name__ == "__main__":
    sys.exit(main())
