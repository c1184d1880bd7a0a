"""Items in, result rows out, in input order: parsed in this process (``jobs == 1``) or by ``jobs`` worker
processes.

:func:`tasks` groups items into tasks of about ``task_bytes`` of bodies (a bigger body is a task of its own) so
that moving work and rows between processes costs little beside parsing. Only payloads go to a worker (bodies, or
the paths of files it reads itself); sources and kept values stay in the parent. :func:`run` keeps at most
:data:`IN_FLIGHT_PER_JOB` ``* jobs`` tasks in flight and hands results back in order, so neither the parent nor a
worker holds more than a few tasks' bodies, whatever the size of the archive. A worker reads a file's body up to
its limit (:class:`~ssewire.batch.items.ReadFile`): a bigger file is a ``body_too_large`` row, never held. Each
result carries the peak RSS of the process that parsed it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import stat
import sys
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Iterable, Iterator, NamedTuple, Optional, Union

from ..names import FramingName
from ..normalizers.registry import PROVIDERS
from . import COLUMNS, error_row, result_row, result_rows
from .items import INPUT_ERROR, Item, Payload, ReadFile, Unreadable, os_message, too_large, utf8

__all__ = [
    "INPUT_ERROR",
    "IN_FLIGHT_PER_JOB",
    "TASK_BYTES",
    "Done",
    "Task",
    "parse_work",
    "peak_rss",
    "read_file",
    "run",
    "tasks",
]

#: Bytes of bodies per task (default); a task also ends at :data:`TASK_ITEMS` items.
TASK_BYTES = 1 << 20
TASK_ITEMS = 1024
#: Tasks in flight per worker: one being parsed, one queued, so that no worker waits for the parent.
IN_FLIGHT_PER_JOB = 2
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO with no writer returns at once (POSIX)

_NAMES = tuple(name for name, _ in COLUMNS)
Row = tuple[Any, ...]  # one result row: the values of COLUMNS, in order
Work = list[tuple[Payload, Optional[str]]]  # what a worker gets: (payload, provider or None) per item


class Task(NamedTuple):
    """Consecutive items: what is parsed (``work``), and what stays in the parent (``sources``, ``kept``)."""

    work: Work
    sources: list[str]
    kept: list[tuple[Any, ...]]


class Done(NamedTuple):
    """A parsed task: its sources and kept values, its rows, and the pid and peak RSS (bytes) of its parser."""

    sources: list[str]
    kept: list[tuple[Any, ...]]
    rows: list[Row]
    worker: int
    peak_rss: Optional[int]


def tasks(items: Iterable[Item], task_bytes: int = TASK_BYTES) -> Iterator[Task]:
    """``items`` grouped, in order, into tasks of at least ``task_bytes`` bytes (but the last) or
    :data:`TASK_ITEMS` items."""
    task = Task([], [], [])
    size = 0
    for item in items:
        task.work.append((item.payload, item.provider))
        task.sources.append(item.source)
        task.kept.append(item.kept)
        size += item.size
        if size >= task_bytes or len(task.work) >= TASK_ITEMS:
            yield task
            task, size = Task([], [], []), 0
    if task.work:
        yield task


def run(work: Iterable[Task], provider: str, framing: FramingName, jobs: int) -> Iterator[Done]:
    """Each task of ``work`` parsed (see :func:`parse_work`), in order; ``jobs == 1``: in this process."""
    if jobs == 1:
        for task in work:
            rows, pid, peak = parse_work(task.work, provider, framing)
            yield Done(task.sources, task.kept, rows, pid, peak)
        return
    pool = ProcessPoolExecutor(jobs, mp_context=_context(), initializer=_ignore_interrupts)
    pending: deque[tuple[Task, Future[tuple[list[Row], int, Optional[int]]]]] = deque()
    try:
        for task in work:
            pending.append((task._replace(work=[]), pool.submit(parse_work, task.work, provider, framing)))
            del task
            if len(pending) >= IN_FLIGHT_PER_JOB * jobs:
                yield _done(*pending.popleft())
        while pending:
            yield _done(*pending.popleft())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def parse_work(work: Work, provider: str, framing: FramingName) -> tuple[list[Row], int, Optional[int]]:
    """The rows of ``work`` (``provider`` where an item names none), this process's pid and peak RSS."""
    rows = [_row(payload, name, provider, framing) for payload, name in work]
    return rows, os.getpid(), peak_rss()


def peak_rss() -> Optional[int]:
    """This process's peak resident set size in bytes (``ru_maxrss``: KiB on Linux, bytes on macOS); None where
    there is no ``resource`` module (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def _done(task: Task, future: Future[tuple[list[Row], int, Optional[int]]]) -> Done:
    rows, pid, peak = future.result()
    return Done(task.sources, task.kept, rows, pid, peak)


def read_file(path: str, limit: int) -> Union[bytes, Unreadable]:
    """The bytes of the regular file at ``path``, or why not: it could not be read, is no regular file (not opened
    for reading: a FIFO never blocks), or holds more than ``limit`` bytes (its size from ``fstat``: not read at all;
    should it grow, no more than ``limit + 1`` bytes are read)."""
    try:
        with open(path, "rb", opener=_open_nonblocking) as file:
            found = os.fstat(file.fileno())
            if not stat.S_ISREG(found.st_mode):  # replaced since it was listed (a FIFO would block forever)
                return Unreadable(f"not a regular file (any more): {utf8(path)}")
            if found.st_size > limit:
                return too_large(f"the file {utf8(path)}", found.st_size, limit)
            first = found.st_size + 1
            data = file.read(first)
            if len(data) == first and first <= limit:  # more than stat said: it grew
                data += file.read(limit + 1 - first)
    except OSError as exc:
        return Unreadable(os_message(exc))
    if len(data) > limit:
        return too_large(f"the file {utf8(path)}", None, limit)
    return data


def _open_nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | _NONBLOCK)


def _row(payload: Payload, name: Optional[str], provider: str, framing: FramingName) -> Row:
    if isinstance(payload, ReadFile):
        payload = read_file(payload.path, payload.limit)
    if isinstance(payload, Unreadable):
        return _error(payload)
    if name is None or name in PROVIDERS:
        row = result_row(payload, provider if name is None else name, framing)  # type: ignore[arg-type]
    else:  # an unknown per-row name: result_rows makes its unknown_provider row
        row = next(result_rows([(payload, name)], provider, framing))  # type: ignore[arg-type]
    return tuple(row[column] for column in _NAMES)


def _error(payload: Unreadable) -> Row:
    row = error_row(payload.kind, payload.message, payload.size)
    return tuple(row[column] for column in _NAMES)


def _context() -> Any:
    """forkserver where there is one (workers start clean, not as copies of a parent that may run pyarrow's
    threads), else the platform's default (spawn on Windows). Debian's PyPy 3.9 ships a ProcessPoolExecutor that
    can only fork (it calls an ``_adjust_process_count`` it does not have): there, the default (fork)."""
    methods = multiprocessing.get_all_start_methods()
    usable = "forkserver" in methods and hasattr(ProcessPoolExecutor, "_adjust_process_count")
    return multiprocessing.get_context("forkserver" if usable else None)


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent, which stops the pool (no traceback from each worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
