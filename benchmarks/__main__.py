"""python -m benchmarks [--quick] [--check] [--readme]: run every benchmark, print the tables, write the results.

Full run: ~10 MB streams, up to 7 timed runs per contender, memory scaling at 10 MB and 100 MB; writes
``benchmarks/results/results.json`` and ``throughput.png``/``.svg``. ``--quick``: ~2 MB streams, fewer runs,
scaling at 1 MB and 5 MB; writes ``results-quick.json`` and ``throughput-quick.*``. ``--readme`` also rewrites the
generated block of README.md (never without it). ``--check``: exit 1 when a CI floor (``check.FLOORS``) fails,
on the run and again on a longer run of that stream.
Progress goes to stderr, tables to stdout.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from .check import Verdict, evaluate
from .contenders import CHUNK_SIZE, Contender, compiled_scanner, contenders, prepare
from .environment import describe
from .generate import STREAMS, load
from .measure import Settings, StreamResult, bench_stream, scaling
from .progress import Progress
from .report import (
    document,
    draw_chart,
    format_checks,
    format_scaling,
    format_tables,
    readme_block,
    update_readme,
    write_json,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
MB = 1_000_000


def _sizes(text: str) -> tuple[int, int]:
    small, large = (float(x) for x in text.split(","))
    return int(small * MB), int(large * MB)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run every benchmark, print the tables and write the results (JSON and a chart) to "
        "benchmarks/results; with --readme, also rewrite the generated block of README.md.",
    )
    p.add_argument("--quick", action="store_true", help="smaller streams, fewer runs (CI; under 2 minutes)")
    p.add_argument("--check", action="store_true", help="exit 1 when a speed ratio falls below its CI floor")
    p.add_argument("--size", type=float, help="stream size in MB (default 10, quick 2)")
    p.add_argument("--repeats", type=int, help="timed runs per contender at least (default 7, quick 3)")
    p.add_argument(
        "--budget", type=float, help="seconds of timed runs per slow contender at most (default 10, quick 1)"
    )
    p.add_argument("--streams", help=f"comma-separated subset of: {', '.join(STREAMS)}")
    p.add_argument(
        "--scaling-sizes", type=_sizes, help="two sizes in MB for the memory check (default 10,100; quick 1,5)"
    )
    p.add_argument("--no-memory", action="store_true", help="skip tracemalloc peaks and the memory-scaling check")
    p.add_argument("--no-chart", action="store_true", help="do not draw the chart")
    readme = p.add_mutually_exclusive_group()
    readme.add_argument("--readme", dest="readme", action="store_true", default=False, help="rewrite README's block")
    readme.add_argument("--no-readme", dest="readme", action="store_false", help="leave README.md alone (default)")
    p.add_argument("--results", type=Path, default=RESULTS, help="output directory (default benchmarks/results)")
    args = p.parse_args(argv)
    names = args.streams.split(",") if args.streams else list(STREAMS)
    unknown = [n for n in names if n not in STREAMS]
    if unknown:
        p.error(f"unknown stream(s): {', '.join(unknown)}")
    args.names = names
    return args


def _remeasure_failures(
    args: argparse.Namespace,
    results: list[StreamResult],
    verdicts: list[Verdict],
    all_contenders: list[Contender],
    settings: Settings,
    size_mb: float,
) -> list[str]:
    """With ``--check``: measure again, longer, each stream where a measured ratio fell below its floor, and put
    its new timings in ``results`` (the peaks traced first are kept). A quick run's few samples on a busy 2-core
    runner can lose a scheduler slice; a real regression stays below the floor on the longer run too. Returns the
    streams measured again."""
    failing = {v.stream for v in verdicts if v.status == "fail" and v.ratio is not None and v.op == ">="}
    names = [r.stream.name for r in results if r.stream.name in failing]
    if not args.check or not names:
        return []
    longer = replace(settings, repeats=settings.repeats * 3, min_time=settings.min_time * 4, memory=False)
    for index, result in enumerate(results):
        if result.stream.name not in names:
            continue
        print(f"re-measuring {result.stream.name} (a ratio below its floor), {longer.repeats}+ runs", file=sys.stderr)
        case = prepare(load(result.stream.name, int(size_mb * MB)), CHUNK_SIZE)
        again = bench_stream(case, all_contenders, longer)
        peaks = {(row.contender, row.group): row.peak for row in result.rows}
        for row in again.rows:
            row.peak = peaks.get((row.contender, row.group))
        again.notes.append("re-measured: a ratio fell below its floor on the first, shorter run")
        results[index] = again
    return names


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Measure everything ``args`` asks for; return the results document."""
    quick = args.quick
    size_mb = args.size or (2.0 if quick else 10.0)
    settings = Settings(
        repeats=args.repeats or (3 if quick else 7),
        max_runs=25 if quick else 50,
        min_time=0.3 if quick else 1.5,
        budget=args.budget or (1.0 if quick else 10.0),
        memory=not args.no_memory,
    )
    scale_sizes = args.scaling_sizes or ((1 * MB, 5 * MB) if quick else (10 * MB, 100 * MB))
    all_contenders = contenders()
    compiled, _why = compiled_scanner()
    progress = Progress(len(args.names) * (2 if settings.memory else 1))
    results: list[StreamResult] = []
    scales: list[dict[str, Any]] = []
    try:
        for name in args.names:
            progress(f"{name}: generating {size_mb:g} MB")
            case = prepare(load(name, int(size_mb * MB)), CHUNK_SIZE)
            results.append(bench_stream(case, all_contenders, settings, progress))
            progress.step()
            del case
        if settings.memory:
            from ssewire._scan import scanner_py as _scanner_py

            module, impl = (compiled, "cython") if compiled is not None else (_scanner_py, "python")
            for name in args.names:
                scales.append(scaling(name, scale_sizes, module, impl, progress))
                progress.step()
    finally:
        progress.close()
    verdicts = evaluate(results)
    remeasured = _remeasure_failures(args, results, verdicts, all_contenders, settings, size_mb)
    if remeasured:
        verdicts = evaluate(results)
    info = {
        "mode": "quick" if quick else "full",
        "size_mb": size_mb,
        "chunk_size": CHUNK_SIZE,
        "repeats": settings.repeats,
        "max_runs": settings.max_runs,
        "min_time_s": settings.min_time,
        "budget_s": settings.budget,
        "scaling_sizes": list(scale_sizes),
        "argv": sys.argv[1:],
        "remeasured": remeasured,
    }
    return document(results, scales, verdicts, describe(), info)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    doc = run(args)
    suffix = "-quick" if args.quick else ""
    out = args.results
    write_json(doc, out / f"results{suffix}.json")
    print(format_tables(doc))
    if doc["memory_scaling"]:
        print(format_scaling(doc))
    print(format_checks(doc))
    written = [out / f"results{suffix}.json"]
    if not args.no_chart:
        written += draw_chart(doc, out / f"throughput{suffix}")
    if args.readme:
        block = readme_block(doc, f"benchmarks/results/throughput{suffix}.svg")
        if update_readme(ROOT / "README.md", block):
            written.append(ROOT / "README.md")
        else:
            print("\nREADME.md has no bench markers; the block would be:\n")
            print(block)
    print("\nwrote: " + ", ".join(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p) for p in written))
    failed = [v for v in doc["checks"] if v["status"] == "fail"]
    skipped = [v for v in doc["checks"] if v["status"] == "skip"]
    if skipped:
        print(f"warning: {len(skipped)} floor check(s) skipped: {skipped[0]['reason']}", file=sys.stderr)
    if args.check and failed:
        print(f"CHECK FAILED: {len(failed)} ratio(s) below their floor", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
