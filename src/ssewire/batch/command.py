"""``ssewire batch INPUT... --out FILE``: stored stream bodies in, one result row per stream out
(:func:`ssewire.batch.result_row`, with a ``source`` column first), written to Parquet, JSONL or CSV.

Inputs are files, directories and Parquet or JSONL tables (:mod:`ssewire.batch.inputs`); ``--jobs`` processes
parse them (:mod:`ssewire.batch.pool`; started first, so that they start while the inputs are opened) while rows are
written in input order as they come (:mod:`ssewire.batch.outputs`); memory stays bounded by a few tasks' bodies, not
the archive. A progress bar goes
to stderr (a terminal, or ``--progress``), the summary to stdout (``--summary-json`` for the same as JSON).

A body is read whole, up to ``--max-buffer`` bytes (default :data:`~ssewire.limits.DEFAULT_MAX_BUFFER`): a bigger
one is a ``body_too_large`` row, and no more than the limit and a byte of a file is read; one event of a body read
may be as large (see :func:`~ssewire.batch.worker.reading`). What cannot be read (a
broken link, a directory that cannot be listed, a file that vanished, a file that is not Parquet, a row group that
cannot be decoded, a JSONL line that is not a JSON object) is an ``unreadable_input`` row: the batch goes on.

Exit status: 0 when the batch completed (rows with errors included: they are data), 1 when it could not (a worker
died, the output could not be written), 2 for a usage error (a missing input or
column, an unknown provider or format, pyarrow missing for Parquet), 130 when interrupted (the rows so far stay in
the partial output file, which the message names).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Optional, Sequence

from ..cli.options import add_provider_options, byte_size
from ..limits import DEFAULT_MAX_BUFFER
from . import COLUMNS, SCHEMA_VERSION
from .errors import UsageError
from .inputs import NameFilter, open_inputs
from .items import Input, TableColumns
from .outputs import FORMATS, Writer, format_for, open_writer, partial_path, pyarrow_without_pandas, require_format
from .parquet_rows import Reader
from .pool import TABLES_READ_BY_WORKERS, TASK_BYTES, Workers, peak_rss, run, tasks
from .progress import Progress
from .summary import Summary
from .worker import single_threaded_blas

__all__ = ["main"]


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return jobs


def _cpus() -> int:
    count = getattr(os, "process_cpu_count", os.cpu_count)()  # 3.13+: the CPUs this process may use
    return int(count or 1)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssewire batch",
        usage="ssewire batch INPUT... --out FILE [--format FORMAT] [--jobs N] [--provider NAME] [--framing NAME]\n"
        "       [--body-column NAME] [--provider-column NAME] [--keep-columns A,B] [--task-bytes BYTES]\n"
        "       [--glob PATTERN] [--exclude PATTERN]... [--max-buffer BYTES] [--summary-json FILE]\n"
        "       [--progress | --quiet]",
        description="Parse stored stream bodies, one result row per stream, into Parquet, JSONL or CSV.",
        epilog="INPUT: a file (one stream), a directory (every file under it, recursively, sorted; hidden ones "
        "skipped; --glob and --exclude choose by the path inside it, e.g. --exclude '*.expected.json'), a .parquet "
        "table, or a .jsonl/.ndjson table when --body-column is given (one JSON object per "
        "line; binary bodies as base64 in <body-column>_base64). Exit status: 0 the batch completed (error rows "
        "are data), 1 it could not complete, 2 usage error, 130 interrupted.",
    )
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="files, directories, .parquet or .jsonl tables")
    parser.add_argument("--out", "-o", required=True, metavar="FILE", help="the output file")
    parser.add_argument(
        "--format", choices=FORMATS, help="parquet (needs pyarrow), jsonl or csv (default: from --out's suffix)"
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=_cpus(),
        metavar="N",
        help="worker processes (default: one per CPU; 1: parse in this process, which otherwise only reads the "
        "inputs and writes the rows)",
    )
    add_provider_options(parser, "whose streams", "detected per stream", "per stream")
    parser.add_argument(
        "--glob",
        metavar="PATTERN",
        help="directories: read only the files whose path inside the directory matches (fnmatch; default: all)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="directories: skip the files whose path inside the directory matches (fnmatch; repeatable)",
    )
    parser.add_argument("--body-column", metavar="NAME", help="tables: the body column (default: body)")
    parser.add_argument(
        "--provider-column", metavar="NAME", help="tables: a column of provider names (null: --provider)"
    )
    parser.add_argument(
        "--keep-columns", default="", metavar="A,B", help="tables: input columns copied into the output"
    )
    parser.add_argument(
        "--task-bytes",
        type=byte_size,
        default=TASK_BYTES,
        metavar="BYTES",
        help=f"bodies per task sent to a worker (default {TASK_BYTES >> 20}M; K, M, G suffixes)",
    )
    parser.add_argument(
        "--max-buffer",
        type=byte_size,
        default=DEFAULT_MAX_BUFFER,
        metavar="BYTES",
        help=f"largest body read, and event in it (default {DEFAULT_MAX_BUFFER >> 20}M; K, M, G suffixes): a "
        "bigger body is a body_too_large row",
    )
    parser.add_argument("--summary-json", metavar="FILE", help="also write the summary as JSON to FILE")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--progress", action="store_true", help="draw the progress bar even when stderr is no terminal")
    shown.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary on stdout")
    return parser


class _Batch:
    """A checked command: the inputs opened, the output format known, the kept columns typed."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.format = format_for(args.out, args.format)
        require_format(self.format)
        keep = tuple(name.strip() for name in args.keep_columns.split(",") if name.strip())
        taken = {"source", *(name for name, _ in COLUMNS)} & set(keep)
        if taken:
            raise UsageError(f"--keep-columns {', '.join(sorted(taken))}: an output column has that name already")
        columns = TableColumns(args.body_column or "body", args.provider_column, keep)
        exclude = (args.out, partial_path(args.out))  # never read the output, should it be in an input directory
        names = NameFilter(args.glob, tuple(args.exclude))
        self.inputs = open_inputs(args.inputs, columns, args.body_column is not None, exclude, args.max_buffer, names)
        if (args.provider_column or keep) and not any(found.table for found in self.inputs):
            raise UsageError(
                "--provider-column and --keep-columns read table inputs (.parquet, or .jsonl with --body-column)"
            )
        self.kept = _kept_types(self.inputs, keep)


def _kept_types(inputs: Sequence[Input], keep: Sequence[str]) -> list[tuple[str, Any]]:
    """Each kept column with its one Arrow type across the inputs (None: strings), or :class:`UsageError`."""
    found: dict[str, dict[str, Any]] = {}
    for source in inputs:
        for name, kind in source.kept_types().items():
            found.setdefault(name, {})["string" if kind is None else str(kind)] = kind
    kept = []
    for name in keep:
        kinds = found.get(name)
        if not kinds:
            raise UsageError(f"--keep-columns {name}: no table input has that column")
        if len(kinds) > 1:
            raise UsageError(f"--keep-columns {name}: its type differs between inputs ({', '.join(sorted(kinds))})")
        kept.append((name, next(iter(kinds.values()))))
    return kept


def _totals(inputs: Sequence[Input]) -> tuple[int, Optional[int]]:
    """Streams and bytes of every input (bytes None when one input cannot tell)."""
    streams, size = 0, 0
    for source in inputs:
        count, known = source.totals()
        streams += count
        size = -1 if size < 0 or known is None else size + known
    return streams, None if size < 0 else size


def _run(batch: _Batch, writer: Writer, workers: Optional[Workers]) -> int:
    """Parse every input into ``writer`` (by ``workers``; None: in this process), drawing progress; print the
    summary; the exit status."""
    args = batch.args
    show = not args.quiet and (args.progress or sys.stderr.isatty())
    progress = Progress(sys.stderr, *_totals(batch.inputs)) if show else None
    summary = Summary()
    peaks: dict[int, int] = {}  # worker pid -> peak RSS in bytes
    parent = os.getpid()
    start = time.perf_counter()
    items = itertools.chain.from_iterable(source.items() for source in batch.inputs)
    try:
        if progress is not None:
            progress.update(0, 0)
        reader = _tables_read_here(batch.inputs, workers)
        for done in run(
            tasks(items, args.task_bytes, args.jobs, reader), args.provider, args.framing, workers, args.max_buffer
        ):
            writer.write(done.sources, done.kept, done.rows)
            summary.add(done.rows)
            if done.peak_rss is not None and (workers is None or done.worker != parent):  # its own: peak_rss_parent
                peaks[done.worker] = max(peaks.get(done.worker, 0), done.peak_rss)
            if progress is not None:
                progress.update(summary.streams, summary.bytes)
        writer.finish()
    except BaseException as exc:
        partial, unclosed = writer.abort()
        if progress is not None:
            progress.close(summary.streams, summary.bytes)
        return _failed(exc, summary.streams, partial, unclosed)
    seconds = time.perf_counter() - start
    if progress is not None:
        progress.close(summary.streams, summary.bytes)
    if not args.quiet:
        _print(f"{summary.text(seconds)}\nwrote {args.out} ({batch.format})")
    return 0 if args.summary_json is None else _write_summary(batch, summary.to_dict(seconds), peaks)


def _write_summary(batch: _Batch, report: dict[str, Any], peaks: dict[int, int]) -> int:
    """``--summary-json``: the summary, the jobs, each worker's peak RSS and this process's; 1 when unwritable."""
    args = batch.args
    report.update(
        jobs=args.jobs,
        peak_rss_per_worker=list(peaks.values()),
        peak_rss_parent=peak_rss(),
        output=args.out,
        format=batch.format,
        schema_version=SCHEMA_VERSION,
    )
    try:
        with open(args.summary_json, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
            out.write("\n")
    except OSError as exc:
        print(f"ssewire batch: cannot write {args.summary_json}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def _print(text: str) -> None:
    """``text`` to stdout; a reader that went away (``| head``) is no failure: the batch is done."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush must not fail


def _failed(exc: BaseException, rows: int, partial: str, unclosed: Optional[str] = None) -> int:
    """Say why the batch stopped and where its rows are (``unclosed``: why the partial file could not be closed
    either: it may hold fewer rows, or be unreadable); the exit status (or re-raise what is a bug)."""
    if unclosed is not None:
        kept = f"{partial} could not be closed ({unclosed}): it holds at most {rows:,} rows and may be unreadable"
    elif isinstance(exc, (OSError, ValueError)):  # the output failed as it was written: the last row may be cut
        kept = f"{partial} holds at most the {rows:,} rows written before, the last possibly cut"
    else:
        kept = f"the {rows:,} rows written so far are in {partial}"
    if isinstance(exc, KeyboardInterrupt):
        print(f"ssewire batch: interrupted: {kept}", file=sys.stderr)
        return 130
    if isinstance(exc, BrokenProcessPool):
        print(f"ssewire batch: a worker process stopped ({exc}; killed for memory?): {kept}", file=sys.stderr)
        return 1
    if isinstance(exc, (OSError, ValueError)):  # unwritable output (pyarrow's errors)
        print(f"ssewire batch: {type(exc).__name__}: {exc}: {kept}", file=sys.stderr)
        return 1
    raise exc


def main(argv: Optional[Sequence[str]] = None, *, own_process: bool = False) -> int:
    """Run ``ssewire batch`` with ``argv`` (the arguments after ``batch``); returns the exit status.
    ``own_process``: the command runs in a process of its own (the console script, ``python -m ssewire``), where
    pyarrow may be told pandas is absent (:func:`~ssewire.batch.outputs.pyarrow_without_pandas`) and numpy's BLAS
    starts no threads (:func:`~ssewire.batch.worker.single_threaded_blas`)."""
    args = _parser().parse_args(argv)
    if own_process:
        single_threaded_blas()  # (before the workers are forked: theirs too)
    workers = _start_workers(args.jobs)
    try:
        try:
            batch = _Batch(args)
            if own_process and batch.format == "parquet":
                pyarrow_without_pandas()
            writer = open_writer(args.out, batch.format, batch.kept)
        except UsageError as exc:
            print(f"ssewire batch: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:  # the output's path is right but it cannot be written (a full disk): no usage error
            print(f"ssewire batch: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        return _run(batch, writer, workers)
    finally:
        if workers is not None:
            workers.close()


def _start_workers(jobs: int) -> Optional[Workers]:
    """``jobs`` workers (None for one job: this process parses), started now; each imports the price table as it
    starts (a quarter of a second, once per worker, not in the first task)."""
    return None if jobs == 1 else Workers(jobs, preload=("genai_prices",))


def _tables_read_here(inputs: Sequence[Input], workers: Optional[Workers]) -> Optional[Reader]:
    """A reader for this process when it sends the workers the bodies of its tables (fewer than
    :data:`~ssewire.batch.pool.TABLES_READ_BY_WORKERS` bytes of them); else None: the workers read the tables'
    row groups themselves (they import pyarrow now), or there are no workers."""
    table_bytes = sum(source.table_bytes() for source in inputs)
    if workers is None or table_bytes == 0:
        return None
    if table_bytes < TABLES_READ_BY_WORKERS:
        return Reader()
    workers.warm(("pyarrow.parquet", "pyarrow.compute"))
    return None
