"""What a worker process of ``ssewire batch`` does (the parent too, with ``--jobs 1``): a task's payloads in, its
result rows out, with the pid and peak RSS of the process that parsed them.

:func:`parse_work` parses items the parent listed (bodies, files it reads itself: :func:`read_file`, or why there is
nothing to parse); :func:`parse_range` reads rows of a Parquet table itself (:mod:`ssewire.batch.parquet_rows`) and
gives back their kept values with their rows. :func:`start_worker` is a worker's first call.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import stat
import sys
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

from ..limits import DEFAULT_MAX_BUFFER, DEFAULT_MAX_INFLATED
from ..names import FramingName
from . import COLUMNS, Options, ParsedRow, error_row, parsed_row, priced_rows
from .items import Payload, ReadFile, RowRange, Unreadable, os_message, too_large, utf8

__all__ = [
    "Row",
    "Work",
    "import_modules",
    "parse_range",
    "parse_work",
    "peak_rss",
    "read_file",
    "reading",
    "ready",
    "start_worker",
]

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO with no writer returns at once (POSIX)
_NAMES = tuple(name for name, _ in COLUMNS)
Row = tuple[Any, ...]  # one result row: the values of COLUMNS, in order
Work = list[tuple[Payload, Optional[str]]]  # items a worker gets: (payload, provider or None) per item


def reading(max_body: int = DEFAULT_MAX_BUFFER) -> Options:
    """How every body is read when bodies of up to ``max_body`` bytes are read (``--max-buffer``): one event up to
    that size too (a body let in is never refused for an event it holds), a compressed one inflated up to the
    larger of that and :data:`~ssewire.limits.DEFAULT_MAX_INFLATED`; otherwise the row API's defaults."""
    return Options(None, max_body, max(DEFAULT_MAX_INFLATED, max_body))


def parse_work(
    work: Work, provider: str, framing: FramingName, max_body: int = DEFAULT_MAX_BUFFER
) -> tuple[list[Row], int, Optional[int]]:
    """The rows of ``work`` (``provider`` where an item names none; read as :func:`reading` says), this process's
    pid and peak RSS."""
    options = reading(max_body)
    parsed = (_parsed(payload, name, provider, framing, options) for payload, name in work)
    return _values(priced_rows(parsed, options)), os.getpid(), peak_rss()


def parse_range(
    rows: RowRange, provider: str, framing: FramingName, max_body: int = DEFAULT_MAX_BUFFER
) -> tuple[list[Row], list[tuple[Any, ...]], int, Optional[int]]:
    """The rows of a range of table rows read here (``provider`` where a row names none; read as :func:`reading`
    says), their kept values, this process's pid and peak RSS. Holds one record batch of bodies at a time."""
    from .parquet_rows import range_items

    options = reading(max_body)
    kept: list[tuple[Any, ...]] = []

    def parsed() -> Iterator[ParsedRow]:
        for payload, name, values in range_items(rows):
            kept.append(values)
            yield _parsed(payload, name, provider, framing, options)

    return _values(priced_rows(parsed(), options)), kept, os.getpid(), peak_rss()


def peak_rss() -> Optional[int]:
    """This process's peak resident set size in bytes: on Linux its address space's own (``VmHWM``: Linux's
    ``ru_maxrss`` keeps, across ``exec``, the peak of the process that started it, so a command run by a large
    process would report that one's), else ``ru_maxrss`` (KiB on Linux, bytes on macOS); None where there is
    neither (Windows)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def start_worker(preload: Sequence[str] = ()) -> None:
    """A worker's start: Ctrl-C left to the parent, which stops the pool (no traceback from each worker); no BLAS
    threads (:func:`single_threaded_blas`); the modules of ``preload`` imported now."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    single_threaded_blas()
    import_modules(preload)


def single_threaded_blas() -> None:
    """Have the OpenBLAS that numpy loads in this process start no threads of its own, unless the environment already
    says how many or numpy is loaded: pyarrow imports numpy where it is installed, and OpenBLAS then starts a thread
    per core that spins while it waits for work. Nothing in a batch run computes with it; with two workers and the
    parent on two cores, those threads took about 7% of a run's wall time. For processes of ssewire's own (a
    worker, the command line): it sets ``OPENBLAS_NUM_THREADS`` in this process's environment."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def import_modules(names: Sequence[str]) -> int:
    """The modules ``names`` imported (those that cannot be, whatever the reason: left to the task that needs them,
    never a worker that fails to start and breaks the pool); this pid."""
    for name in names:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    return os.getpid()


def ready() -> int:
    """This process's pid: a task that only makes the pool start a worker."""
    return os.getpid()


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


def _parsed(payload: Payload, name: Optional[str], provider: str, framing: FramingName, options: Options) -> ParsedRow:
    if isinstance(payload, ReadFile):
        payload = read_file(payload.path, payload.limit)
    if isinstance(payload, Unreadable):
        return ParsedRow(error_row(payload.kind, payload.message, payload.size), None, payload.size or 0)
    return parsed_row(payload, provider if name is None else name, framing, options)


def _values(rows: Iterable[dict[str, Any]]) -> list[Row]:
    return [tuple(row[column] for column in _NAMES) for row in rows]
