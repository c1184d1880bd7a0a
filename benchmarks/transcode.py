"""``python -m benchmarks.transcode [--quick] [--check] [--readme]``: what writing a stream costs against reading it.

1. **Real recordings and benchmark streams.** Every recording and fixture, grouped as in ``benchmarks.recordings``
   (each body whole, the provider named), and every generated benchmark stream (``benchmarks.generate``, in
   ``CHUNK_SIZE`` chunks): ``transcode`` to each target against ``iter_unified`` on the same bytes, as the speed
   ratio ``transcode MB/s / iter_unified MB/s`` (1.00: writing is free; the goal is at least 0.50 everywhere).
2. **LiteLLM.** Its own streaming translation of the same bytes (``benchmarks.litellm_contender``: its provider
   iterators wrapped in ``CustomStreamWrapper`` to OpenAI chunks, from Anthropic, Gemini and Bedrock; its
   Anthropic ``/v1/messages`` adapter from an OpenAI chat stream), timed against ``transcode`` to the same target
   on the recordings of that provider: how many times ssewire's CPU time LiteLLM's is (the goal is 50x).
3. **Memory.** Peak traced memory of ``transcode`` to each target on the generated streams whose events are
   largest, against the largest event read or written (the Responses target repeats the whole output in its
   final event, so there that event is the largest); the goal is at most 3x.

Samples are interleaved and the table gives medians; every ratio is between numbers of the same run. Writes
``benchmarks/results/transcode[-quick].json``, prints markdown tables and, with ``--readme``, rewrites README.md's
block between ``<!-- transcode:start -->`` and ``<!-- transcode:end -->``. ``--check`` (the CI gate) exits 1 when,
after a longer second measurement of what missed (:func:`again`), a ratio is below its :data:`FLOORS` entry (the
goals less a noise margin for a busy 2-core machine) or memory is above :data:`MEMORY_CEILING`.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
import tracemalloc
from typing import Any, Callable, Optional

from .contenders import CHUNK_SIZE, MAX_BUFFER, compiled_or_told
from .environment import brief, where
from .generate import STREAMS, generate
from .readme import exit_status, parser, publish, sampling
from .recordings import Recording, load_recordings, readable, sample_seconds

TARGETS = ("openai-chat", "openai", "anthropic", "gemini", "vercel-ui")
#: The gate: the lowest speed ratio of any group or stream to any target, the geometric mean over them, LiteLLM's
#: time over ssewire's, and peak memory over the largest event. The goals are 0.50, 0.50, 50x and 3x; measured
#: here: 0.49-0.97 to every target but Responses, whose wire format repeats each item's whole text in three done
#: events and the final response (0.34-0.95), with the encoders' writers compiled as extension types (before:
#: 0.45-0.95 and 0.30-0.92; before the encoders and normalisers were compiled from their own source: 0.34-0.95 and
#: 0.23-0.93); geometric mean 0.67 (0.62 before the writers were typed, 0.56 before they were compiled, 0.58 before
#: runs of deltas were written in C); LiteLLM 70-113x; memory 1.6-2.9x, the Responses target's highest (its final
#: event repeats the whole output, so the output is held while the source's own terminal event, as large, is read:
#: 3.68x before medium non-ASCII events were held as UTF-8 and a chunk's texts encoded each on its own). The floors
#: leave room for a busy 2-core machine (which read the smallest group, four Ollama fixtures of ~0.5 KB, to Responses
#: 0.06 lower than a quiet one).
FLOORS = {"group": 0.27, "geomean": 0.61, "litellm": 45.0}
MEMORY_CEILING = 3.0
#: Memory is held to the ceiling where the largest event is at least this long (below it, a chunk's worth of
#: events and the interpreter's own allocations are most of the peak, whatever the events).
MEMORY_FROM = 64 * 1024
#: The generated streams measured for memory: those with the largest events.
MEMORY_STREAMS = ("large-payload", "large-payload-1mb", "multiline", "openai-responses")

Body = tuple[str, str, list[bytes]]  # provider, framing, chunks


def _read(bodies: list[Body]) -> None:
    from ssewire import iter_unified

    for provider, framing, chunks in bodies:
        for _ in iter_unified(chunks, provider, framing, max_buffer=MAX_BUFFER):  # type: ignore[arg-type]
            pass


def _writer(to: str) -> Callable[[list[Body]], None]:
    from ssewire import transcode

    def run(bodies: list[Body]) -> None:
        for provider, framing, chunks in bodies:
            for _ in transcode(chunks, provider, to, framing, max_buffer=MAX_BUFFER):  # type: ignore[arg-type]
                pass

    return run


def speed_ratios(bodies: list[Body], samples: int, min_time: float) -> dict[str, Any]:
    """Median seconds per pass of ``iter_unified`` and of ``transcode`` to each target over ``bodies`` (samples
    interleaved, each about ``min_time`` seconds), and each target's speed ratio to ``iter_unified``."""
    runs = [("iter_unified", _read)] + [(to, _writer(to)) for to in TARGETS]
    start = time.perf_counter()
    for _, run in runs:
        run(bodies)
    passes = max(1, round(min_time / max(1e-6, (time.perf_counter() - start) / len(runs))))
    times: dict[str, list[float]] = {name: [] for name, _ in runs}
    for _ in range(samples):
        for name, run in runs:
            times[name].append(sample_seconds(run, bodies, passes))
    seconds = {name: statistics.median(values) for name, values in times.items()}
    size = sum(len(c) for _, _, chunks in bodies for c in chunks)
    return {
        "bytes": size,
        "mb_s": {name: size / s / 1e6 for name, s in seconds.items()},
        "ratio": {to: seconds["iter_unified"] / seconds[to] for to in TARGETS},
    }


# -- LiteLLM -------------------------------------------------------------------------------------------------------

#: The sources LiteLLM translates, and the target each goes to.
LITELLM_ROUTES = (("anthropic", "openai-chat"), ("gemini", "openai-chat"), ("bedrock-converse", "openai-chat"))
LITELLM_ADAPTER = ("openai-chat", "anthropic")


def litellm_ratios(recordings: list[Recording], samples: int) -> dict[str, Any]:
    """LiteLLM's CPU time over ``transcode``'s on the same bodies, per route (the recordings of the source
    provider, each body whole)."""
    try:
        from . import litellm_contender as contender
    except ImportError as exc:
        return {"(every route)": {"error": f"benchmarks.litellm_contender: {exc}"}}
    if not contender.available():
        return {"(every route)": {"error": "litellm is not installed (pip install -e '.[bench]')"}}
    from ssewire import transcode

    out: dict[str, Any] = {}
    for source, to in (*LITELLM_ROUTES, LITELLM_ADAPTER):
        bodies = [b"".join(r.chunks) for r in recordings if r.provider == source and r.framing != "json_array"]
        if not bodies:
            continue
        if (source, to) == LITELLM_ADAPTER:
            theirs: Callable[[bytes], Any] = contender.chat_to_anthropic
        else:
            theirs = lambda body, source=source: contender.to_openai_chat(body, source)  # noqa: E731
        usable = []
        for body in bodies:  # a body LiteLLM raises on is left out of both sides (and counted)
            try:
                theirs(body)
            except Exception:  # any failure of LiteLLM's path is a finding, not a measurement
                continue
            usable.append(body)
        if not usable:
            out[f"{source} -> {to}"] = {"error": "LiteLLM raised on every body"}
            continue

        def ours(body: bytes, source: str = source, to: str = to) -> Any:
            return list(transcode([body], source, to))  # type: ignore[arg-type]

        times: dict[str, list[float]] = {"litellm": [], "ssewire": []}
        for _ in range(samples):
            for name, run in (("litellm", theirs), ("ssewire", ours)):
                gc.collect()
                start = time.process_time()
                for body in usable:
                    run(body)
                times[name].append(time.process_time() - start)
        seconds = {name: statistics.median(values) for name, values in times.items()}
        out[f"{source} -> {to}"] = {
            "bodies": len(usable),
            "left_out": len(bodies) - len(usable),
            "ms": {name: s * 1e3 for name, s in seconds.items()},
            "ratio": seconds["litellm"] / max(seconds["ssewire"], 1e-9),
        }
    return out


# -- memory --------------------------------------------------------------------------------------------------------


def _largest_event(data: bytes) -> int:
    """The longest event of an SSE or NDJSON body (bytes between blank lines, or between line ends)."""
    separator = b"\n\n" if b"\n\n" in data else b"\n"
    return max(len(piece) for piece in data.split(separator))


def memory(size: int) -> dict[str, Any]:
    """Peak traced memory of ``transcode`` to each target on :data:`MEMORY_STREAMS` at ``size`` bytes, against
    the largest event of the source and of the output."""
    from ssewire import transcode

    out: dict[str, Any] = {}
    for name in MEMORY_STREAMS:
        stream = generate(name, size)
        chunks = [stream.data[i : i + CHUNK_SIZE] for i in range(0, stream.size, CHUNK_SIZE)]
        row: dict[str, Any] = {"largest_source_event": stream.largest_event}
        for to in TARGETS:
            written = b"".join(transcode(chunks, stream.provider, to, stream.framing, max_buffer=MAX_BUFFER))
            largest = max(stream.largest_event, _largest_event(written))
            del written
            gc.collect()
            tracemalloc.start()
            try:
                for _ in transcode(chunks, stream.provider, to, stream.framing, max_buffer=MAX_BUFFER):
                    pass
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            row[to] = {"peak": peak, "largest_event": largest, "ratio": peak / largest}
        out[name] = row
    return out


# -- report --------------------------------------------------------------------------------------------------------


def _geomean(values: list[float]) -> float:
    return statistics.geometric_mean(values) if values else 0.0


def again(doc: dict[str, Any]) -> Optional[set[Any]]:
    """What to time again after :func:`failures`: each group with a ratio below its floor (``(table, name)``),
    ``"litellm"`` and ``"memory"`` when they missed theirs; None (everything) when the geometric mean did, as every
    group makes it."""
    out: set[Any] = set()
    ratios = []
    for table in ("recordings", "generated"):
        for name, row in doc[table].items():
            ratios += row["ratio"].values()
            if any(ratio < FLOORS["group"] for ratio in row["ratio"].values()):
                out.add((table, name))
    if ratios and _geomean(ratios) < FLOORS["geomean"]:
        return None
    if any(line.startswith("LiteLLM") for line in failures(doc)):
        out.add("litellm")
    if any(line.startswith("memory") for line in failures(doc)):
        out.add("memory")
    return out


def failures(doc: dict[str, Any]) -> list[str]:
    """What is below a floor or above the memory ceiling."""
    out = []
    ratios = []
    for table in ("recordings", "generated"):
        for name, row in doc[table].items():
            for to, ratio in row["ratio"].items():
                ratios.append(ratio)
                if ratio < FLOORS["group"]:
                    out.append(f"{table} {name} -> {to}: {ratio:.2f}x iter_unified's speed (floor {FLOORS['group']})")
    if ratios and _geomean(ratios) < FLOORS["geomean"]:
        out.append(f"geometric mean {_geomean(ratios):.2f}x (floor {FLOORS['geomean']})")
    for route, row in doc["litellm"].items():
        if isinstance(row, dict) and "ratio" in row and row["ratio"] < FLOORS["litellm"]:
            out.append(f"LiteLLM {route}: {row['ratio']:.0f}x ssewire's time (floor {FLOORS['litellm']:.0f}x)")
    for name, row in doc["memory"].items():
        for to in TARGETS:
            if row[to]["largest_event"] >= MEMORY_FROM and row[to]["ratio"] > MEMORY_CEILING:
                out.append(f"memory {name} -> {to}: {row[to]['ratio']:.2f}x the largest event")
    return out


def format_tables(doc: dict[str, Any]) -> str:
    head = "| | MB/s `iter_unified` | " + " | ".join(f"`{to}`" for to in TARGETS) + " |"
    rule = "|---|---:|" + "---:|" * len(TARGETS)
    lines = [head, rule]
    for table in ("recordings", "generated"):
        for name, row in doc[table].items():
            label = name if table == "recordings" else f"generated: {name}"
            cells = " | ".join(f"{row['ratio'][to]:.2f}" for to in TARGETS)
            lines.append(f"| {label} | {row['mb_s']['iter_unified']:.0f} | {cells} |")
    ratios = [r for table in ("recordings", "generated") for row in doc[table].values() for r in row["ratio"].values()]
    lines.append(f"| **geometric mean** | | {_geomean(ratios):.2f} (all targets) |" + " |" * (len(TARGETS) - 1))
    lines += ["", "| LiteLLM route | bodies | LiteLLM ms | ssewire ms | LiteLLM / ssewire |"]
    lines.append("|---|---:|---:|---:|---:|")
    for route, row in doc["litellm"].items():
        if "ratio" in row:
            ms, ratio = row["ms"], row["ratio"]
            lines.append(f"| {route} | {row['bodies']} | {ms['litellm']:.1f} | {ms['ssewire']:.2f} | {ratio:.0f}x |")
        else:
            lines.append(f"| {route} | | | | {row['error']} |")
    lines += ["", "| memory: peak / largest event | largest event | " + " | ".join(f"`{to}`" for to in TARGETS) + " |"]
    lines.append("|---|---:|" + "---:|" * len(TARGETS))
    for name, row in doc["memory"].items():
        largest = max(row[to]["largest_event"] for to in TARGETS)
        cells = " | ".join(f"{row[to]['ratio']:.2f}" for to in TARGETS)
        note = "" if largest >= MEMORY_FROM else " (events under 64 KiB: not held to the ceiling)"
        lines.append(f"| {name}{note} | {largest / 1024:.0f} KiB | {cells} |")
    return "\n".join(lines)


def caption(doc: dict[str, Any]) -> str:
    """The README block's line above the tables: what they compare, where and how it was measured."""
    env = doc["environment"]
    return (
        "`transcode` to each target against `iter_unified` on the same bytes: speed ratio (1.00: writing costs "
        f"nothing more than reading; medians of {doc['samples']} interleaved samples), then LiteLLM's streaming "
        "translation of the same recordings against ssewire's (CPU time), then peak memory against the largest "
        f"event read or written. Measured on {where(env)}."
    )


def main(argv: Optional[list[str]] = None) -> int:
    check = "exit 1 below a floor (the CI gate)"
    args = parser("transcode", __doc__ or "", "a short run: fewer samples, smaller streams", check).parse_args(argv)
    compiled = compiled_or_told()
    if compiled is None:
        return 2
    samples, min_time = sampling(args.quick)
    size = 300_000 if args.quick else 2_000_000
    recordings, _ = readable(load_recordings())
    groups: dict[str, list[Body]] = {}
    for rec in recordings:
        groups.setdefault(rec.group, []).append((rec.provider, rec.framing, rec.chunks))

    def measure(factor: int, doc: Optional[dict[str, Any]] = None, only: Optional[set[Any]] = None) -> dict[str, Any]:
        """Every ratio (``only`` None), or only the entries of ``only`` (see :func:`again`) into ``doc``."""
        if doc is None:
            doc = {"samples": samples * factor, "recordings": {}, "generated": {}}
        for name in sorted(groups):
            if only is None or ("recordings", name) in only:
                print(f"{name}", file=sys.stderr)
                doc["recordings"][name] = speed_ratios(groups[name], samples * factor, min_time * factor)
        for name, spec in STREAMS.items():
            if only is None or ("generated", name) in only:
                print(f"generated: {name}", file=sys.stderr)
                data = generate(name, size).data
                chunks = [data[i : i + CHUNK_SIZE] for i in range(0, len(data), CHUNK_SIZE)]
                doc["generated"][name] = speed_ratios(
                    [(spec.provider, spec.framing, chunks)], samples * factor, min_time
                )
        if only is None or "litellm" in only:
            doc["litellm"] = litellm_ratios(recordings, samples * factor)
        if only is None or "memory" in only:
            doc["memory"] = memory(size)
        doc["environment"] = brief()
        return doc

    doc = measure(1)
    if args.check and failures(doc):
        for line in failures(doc):
            print(f"below: {line}", file=sys.stderr)
        retry = again(doc)
        print("below a floor: measured again (3x the samples and the time): what missed it", file=sys.stderr)
        doc = measure(3, doc, retry)
        doc["measured_again"] = "everything" if retry is None else sorted(map(str, retry))
    publish(doc, "transcode", args, table=format_tables(doc), caption=caption(doc))
    return exit_status(failures(doc), args.check)


if __name__ == "__main__":
    sys.exit(main())
