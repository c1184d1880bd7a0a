"""Units in, result rows out, in input order: parsed in this process (no :class:`Workers`) or by worker processes
(:class:`Workers`, started once, before the inputs are opened).

:func:`tasks` sizes tasks by bytes and count, so that moving work and rows between processes costs little beside
parsing: consecutive items up to about ``task_bytes`` of bodies or :data:`TASK_ITEMS` items (a bigger body is a
task of its own), and a Parquet row group's rows (a :class:`~ssewire.batch.items.RowRange`) in ranges of about
``task_bytes`` of bodies (from the metadata), at most :data:`TASK_ITEMS` rows. Only payloads go to a worker
(bodies, the paths of files and the row ranges of tables it reads itself); the sources and kept values of items stay
in the parent, the kept values of table rows come back with their rows. :func:`run` keeps at most
:data:`IN_FLIGHT_PER_JOB` ``* jobs`` tasks in flight and hands results back in order, so neither the parent nor a
worker holds more than a few tasks' bodies, whatever the size of the archive. A worker reads a file's body up to its
limit (:class:`~ssewire.batch.items.ReadFile`): a bigger file is a ``body_too_large`` row, never held. Each result
carries the peak RSS of the process that parsed it.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Iterable, Iterator, NamedTuple, Optional, Sequence, Union

from ..limits import DEFAULT_MAX_BUFFER
from ..names import FramingName
from .items import INPUT_ERROR, Item, RowRange, Unit
from .parquet_rows import Reader
from .worker import Row, Work, import_modules, parse_range, parse_work, peak_rss, read_file, ready, start_worker

__all__ = [
    "INPUT_ERROR",
    "IN_FLIGHT_PER_JOB",
    "TASK_BYTES",
    "TASK_ITEMS",
    "TABLE_TASKS_PER_JOB",
    "TABLE_TASK_BYTES",
    "TABLE_TASK_ROWS",
    "TABLES_READ_BY_WORKERS",
    "Done",
    "Task",
    "Workers",
    "parse_range",
    "parse_work",
    "peak_rss",
    "read_file",
    "run",
    "table_task_bytes",
    "tasks",
]

#: Bytes of bodies per task (default); a task also ends at :data:`TASK_ITEMS` items.
TASK_BYTES = 1 << 20
TASK_ITEMS = 1024
#: Tasks of a table's rows: at least this many per worker (balance), of at most this many bytes of bodies (unless
#: ``--task-bytes`` asks for more) and rows.
TABLE_TASKS_PER_JOB = 8
TABLE_TASK_BYTES = 32 << 20
TABLE_TASK_ROWS = 4096
#: Workers read the tables of a batch whose tables hold this many bytes of bodies or more (from the metadata):
#: starting pyarrow in every worker costs about what the parent reading and sending 256 MB of bodies does.
TABLES_READ_BY_WORKERS = 256 << 20
#: Tasks in flight per worker: one being parsed, one queued, so that no worker waits for the parent.
IN_FLIGHT_PER_JOB = 2


class Task(NamedTuple):
    """Consecutive streams: what is parsed (``work``: items, or a range of table rows), and what stays in the
    parent (``sources``; ``kept``: the items' kept values, empty for table rows, whose values come back)."""

    work: Union[Work, RowRange]
    sources: list[str]
    kept: list[tuple[Any, ...]]


class Done(NamedTuple):
    """A parsed task: its sources and kept values, its rows, and the pid and peak RSS (bytes) of its parser."""

    sources: list[str]
    kept: list[tuple[Any, ...]]
    rows: list[Row]
    worker: int
    peak_rss: Optional[int]


Parsed = Union[tuple[list[Row], int, Optional[int]], tuple[list[Row], list[tuple[Any, ...]], int, Optional[int]]]


class Workers:
    """``jobs`` worker processes, all started at once, so that they start while the parent opens its inputs and
    imports what it writes with; :meth:`close` stops them. They are forks of this process where that is safe (see
    :func:`_context`); else, where there is a forkserver, it imports this module (and so ssewire) once and each
    worker starts as a fork of it; a thread waits for that, not the parent. Each worker
    imports the modules of ``preload`` (pyarrow for table inputs) as it starts; tasks sent before then wait."""

    def __init__(self, jobs: int, preload: Sequence[str] = ()) -> None:
        self.jobs = jobs
        self.preload = tuple(preload)
        self._executor: Optional[ProcessPoolExecutor] = None
        self._ready: list[Future[int]] = []
        self._failed: Optional[BaseException] = None
        self._context = _context()
        self._starter = threading.Thread(target=self._start, name="ssewire-batch-workers", daemon=True)
        if self._context.get_start_method() == "fork":  # forked now, from this thread, before pyarrow is imported
            self._start()
        else:
            self._starter.start()

    def _start(self) -> None:
        try:
            context = self._context
            if context.get_start_method() == "forkserver":  # its default preload, and ssewire
                context.set_forkserver_preload(["__main__", __name__])
            executor = ProcessPoolExecutor(
                self.jobs, mp_context=context, initializer=start_worker, initargs=(self.preload,)
            )
            self._executor = executor
            # a task while no worker is idle starts one: all of them, now
            self._ready = [executor.submit(ready) for _ in range(self.jobs)]
        except BaseException as exc:  # raised again where the workers are used
            self._failed = exc

    @property
    def executor(self) -> ProcessPoolExecutor:
        """The pool, once started (waits for the start; raises what made it fail)."""
        self._join()
        if self._failed is not None:
            raise self._failed
        assert self._executor is not None
        return self._executor

    def _join(self) -> None:
        if self._starter.ident is not None:
            self._starter.join()

    def wait(self) -> None:
        """Wait until every worker has started (raises what made one fail)."""
        if self.executor is not None:
            for future in self._ready:
                future.result()

    def warm(self, modules: Sequence[str]) -> None:
        """Have the workers import ``modules`` now (a task each: a worker that takes two imports once)."""
        for _ in range(self.jobs):
            self.executor.submit(import_modules, tuple(modules))

    def submit(self, task: Task, provider: str, framing: FramingName, max_body: int) -> Future[Parsed]:
        """``task`` sent to a worker (bodies of up to ``max_body`` bytes read: see :func:`~.worker.reading`); its
        rows (and kept values, for table rows) when done."""
        if isinstance(task.work, RowRange):
            return self.executor.submit(parse_range, task.work, provider, framing, max_body)
        return self.executor.submit(parse_work, task.work, provider, framing, max_body)

    def close(self) -> None:
        """Stop the workers: queued tasks cancelled, running ones waited for."""
        self._join()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)


def tasks(
    units: Iterable[Unit], task_bytes: int = TASK_BYTES, jobs: int = 1, reader: Optional[Reader] = None
) -> Iterator[Task]:
    """``units`` grouped, in order, into tasks: items into tasks of at least ``task_bytes`` bytes (but the last
    before a range or the end) or :data:`TASK_ITEMS` items; a row group's rows cut by :func:`table_task_bytes`
    (``jobs``: the workers), at most :data:`TABLE_TASK_ROWS` rows a task, or, given a ``reader``, read here into
    items (their bodies sent to the workers: small tables, see :data:`TABLES_READ_BY_WORKERS`)."""
    task = Task([], [], [])
    size = 0
    try:
        for unit in _units(units, reader):
            if isinstance(unit, RowRange):
                if task.work:
                    yield task
                    task, size = Task([], [], []), 0
                yield from _range_tasks(unit, table_task_bytes(unit.table_bytes, task_bytes, jobs))
                continue
            task.work.append((unit.payload, unit.provider))  # type: ignore[union-attr]  # a list until yielded
            task.sources.append(unit.source)
            task.kept.append(unit.kept)
            size += unit.size
            if size >= task_bytes or len(task.work) >= TASK_ITEMS:
                yield task
                task, size = Task([], [], []), 0
        if task.work:
            yield task
    finally:
        if reader is not None:
            reader.close()


def _units(units: Iterable[Unit], reader: Optional[Reader]) -> Iterator[Unit]:
    """``units``, with the rows of each range read by ``reader`` as items when there is one."""
    for unit in units:
        if reader is None or not isinstance(unit, RowRange):
            yield unit
            continue
        for source, (payload, provider, kept) in zip(unit.sources(), reader.items(unit)):
            yield Item(source, payload, provider, len(payload) if isinstance(payload, bytes) else 0, kept)


def table_task_bytes(table_bytes: int, task_bytes: int = TASK_BYTES, jobs: int = 1) -> int:
    """Bytes of bodies per task of a table's rows: enough tasks for :data:`TABLE_TASKS_PER_JOB` per worker, but no
    smaller than ``task_bytes`` and no bigger than :data:`TABLE_TASK_BYTES` (or ``task_bytes``, if it is bigger).
    A row group within it is one task, read by one worker: a group cut into ranges is read through by each worker
    that is given one of them (the rows before its range decoded and dropped)."""
    return max(task_bytes, min(TABLE_TASK_BYTES, table_bytes // (TABLE_TASKS_PER_JOB * max(jobs, 1))))


def _range_tasks(rows: RowRange, task_bytes: int) -> Iterator[Task]:
    """``rows`` cut into consecutive ranges of equal rows, about ``task_bytes`` bytes of bodies each (a group of up
    to half as much again stays whole; at least one row, at most :data:`TABLE_TASK_ROWS`), one task each."""
    count = max(1, round(rows.bytes_per_row * rows.rows / max(task_bytes, 1)), -(-rows.rows // TABLE_TASK_ROWS))
    count = min(count, rows.rows)
    for index in range(count):
        start, stop = rows.start + rows.rows * index // count, rows.start + rows.rows * (index + 1) // count
        piece = rows._replace(start=start, stop=stop)
        yield Task(piece, piece.sources(), [])


def run(
    work: Iterable[Task],
    provider: str,
    framing: FramingName,
    workers: Optional[Workers] = None,
    max_body: int = DEFAULT_MAX_BUFFER,
) -> Iterator[Done]:
    """Each task of ``work`` parsed, in order (bodies of up to ``max_body`` bytes, ``--max-buffer``: see
    :func:`~.worker.reading`): by ``workers``, or in this process when there are none. With workers,
    this process never parses: its own work (listing the inputs, sending tasks, writing the rows) is what keeps them
    busy, and the first body it parsed would cost it the price table's import (a quarter of a second, which the
    workers take as they start); tasks sent before a worker has started wait in the pool's queue."""
    from . import parquet_rows

    try:
        pending: deque[tuple[Task, Future[Parsed]]] = deque()
        for task in work:
            if workers is None:
                yield _done(task, _parse_here(task, provider, framing, max_body))
                continue
            pending.append((task._replace(work=[]), workers.submit(task, provider, framing, max_body)))
            del task
            if len(pending) >= IN_FLIGHT_PER_JOB * workers.jobs:
                first, future = pending.popleft()
                yield _done(first, future.result())
        while pending:
            first, future = pending.popleft()
            yield _done(first, future.result())
    finally:
        parquet_rows.close()


def _parse_here(task: Task, provider: str, framing: FramingName, max_body: int) -> Parsed:
    if isinstance(task.work, RowRange):
        return parse_range(task.work, provider, framing, max_body)
    return parse_work(task.work, provider, framing, max_body)


def _done(task: Task, parsed: Parsed) -> Done:
    """The :class:`Done` of ``task`` from what its parser returned (kept values with the rows: table rows)."""
    if len(parsed) == 4:
        rows, kept, pid, peak = parsed
        return Done(task.sources, kept, rows, pid, peak)
    rows, pid, peak = parsed
    return Done(task.sources, task.kept, rows, pid, peak)


def _context() -> Any:
    """fork on Linux while this process runs one thread (the CLI starts its workers first thing, before pyarrow is
    imported): each worker is a copy of a parent that has imported ssewire, ready at once (a forkserver first
    starts an interpreter and imports ssewire again, a third of a second before the first task on a small archive).
    Else a forkserver where there is one (workers start clean, never copies of a parent that may run pyarrow's or
    the caller's threads), else the platform's default (spawn on Windows). Debian's PyPy 3.9 ships a
    ProcessPoolExecutor that can only fork (it calls an ``_adjust_process_count`` it does not have): there, the
    default (fork)."""
    if sys.platform.startswith("linux") and _threads() == 1:
        return multiprocessing.get_context("fork")
    methods = multiprocessing.get_all_start_methods()
    usable = "forkserver" in methods and hasattr(ProcessPoolExecutor, "_adjust_process_count")
    return multiprocessing.get_context("forkserver" if usable else None)


def _threads() -> int:
    """The threads this process runs, those of native code included (Linux: ``/proc/self/task``); 0 when unknown."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0
