"""What ``ssewire batch``'s inputs yield: one :class:`Item` per stream, whose :data:`Payload` is what a worker
parses (a body, a file it reads itself, or why there is nothing to parse), or a :class:`RowRange` of a Parquet table
that a worker reads itself; and the :class:`Input` they all are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple, Optional, Union

from ..limits import DEFAULT_MAX_BUFFER

__all__ = [
    "INPUT_ERROR",
    "TOO_LARGE",
    "Input",
    "Item",
    "Payload",
    "ReadFile",
    "RowRange",
    "TableColumns",
    "Unit",
    "Unreadable",
    "os_message",
    "too_large",
    "utf8",
]

#: ``error_type`` of a row whose input could not be read (a file that vanished, a broken link, a JSONL line that is
#: not JSON, a file that is not Parquet ...), and of one whose body is over ``--max-buffer`` (never read whole).
INPUT_ERROR = "unreadable_input"
TOO_LARGE = "body_too_large"


class ReadFile(NamedTuple):
    """A payload: the stream is the whole file at ``path``, read where it is parsed; a file of more than ``limit``
    bytes is a :data:`TOO_LARGE` row, and no more than ``limit + 1`` bytes of it are ever read."""

    path: str
    limit: int = DEFAULT_MAX_BUFFER


class Unreadable(NamedTuple):
    """A payload: no body to parse; ``message`` says why, ``kind`` is the row's ``error_type`` and ``size`` its
    ``bytes`` (None: unknown)."""

    message: str
    kind: str = INPUT_ERROR
    size: Optional[int] = None


#: What is parsed: a body (None: a null one), a file to read, or what could not be read.
Payload = Union[bytes, None, ReadFile, Unreadable]


class Item(NamedTuple):
    """One stream: where it comes from, what to parse, its own provider (tables; None: ``--provider``), its size
    in bytes (the body's, or the file's from ``stat``) and the values of ``--keep-columns`` (None where absent)."""

    source: str
    payload: Payload
    provider: Optional[str]
    size: int
    kept: tuple[Any, ...]


@dataclass(frozen=True)
class TableColumns:
    """The columns read from table inputs: the body, the provider (optional) and those kept in the output."""

    body: str = "body"
    provider: Optional[str] = None
    keep: tuple[str, ...] = ()


class RowRange(NamedTuple):
    """Rows ``start`` to ``stop`` (0-based within the group, ``stop`` excluded) of row group ``group`` of the Parquet
    table at ``path``: read where they are parsed (:mod:`ssewire.batch.parquet_rows`), so that only rows travel
    between processes. The group's first row is row ``first`` of the table (a row's source is ``source#N``, N its
    table index). ``batch_rows``: rows per record batch read (the same for every range of a group: a batch that
    cannot be decoded fails alike wherever it is read); ``group_rows``: the rows the metadata counts in the group;
    ``present``: the kept columns the table has;
    ``bytes_per_row``: the body column's mean uncompressed size in the group and ``table_bytes`` its size in the
    whole table (from the metadata), for sizing tasks."""

    path: str
    source: str
    group: int
    first: int
    start: int
    stop: int
    batch_rows: int
    group_rows: int
    columns: TableColumns
    present: tuple[str, ...]
    max_body: int
    bytes_per_row: float
    table_bytes: int

    @property
    def rows(self) -> int:
        return self.stop - self.start

    def sources(self) -> list[str]:
        """The source of each row, in order."""
        return [f"{self.source}#{self.first + row}" for row in range(self.start, self.stop)]


#: What an input yields: one stream, or a range of table rows read where they are parsed.
Unit = Union[Item, RowRange]


class Input:
    """One INPUT path: its items in order, and its totals for the progress bar; ``table``: rows of a table.
    ``max_body``: the largest body read (``--max-buffer``); a bigger one is a :data:`TOO_LARGE` item."""

    table = False

    def __init__(self, path: str, columns: TableColumns, max_body: int = DEFAULT_MAX_BUFFER) -> None:
        self.path = path
        self.source = utf8(path)  # what the rows say: valid UTF-8 whatever bytes the file name holds
        self.columns = columns
        self.max_body = max_body
        self.nulls: tuple[Any, ...] = (None,) * len(columns.keep)

    def items(self) -> Iterator[Unit]:
        """The input's streams, in order: items, or ranges of rows a worker reads itself."""
        raise NotImplementedError

    def totals(self) -> tuple[int, Optional[int]]:
        """(streams, bytes or None when unknown); may read the input once (a directory walk, JSONL lines)."""
        raise NotImplementedError

    def kept_types(self) -> dict[str, Any]:
        """The kept columns this input has, with their Arrow type (None: strings)."""
        return {}

    def table_bytes(self) -> int:
        """Bytes of bodies in the row ranges this input gives (Parquet: from the metadata); 0 for items."""
        return 0


def too_large(what: str, size: Optional[int], limit: int) -> Unreadable:
    """The payload of a body over ``limit`` bytes (``size``: its size, None when unknown): not parsed."""
    told = "" if size is None else f" ({size:,} bytes)"
    return Unreadable(f"{what}{told} is larger than --max-buffer ({limit:,} bytes): not read", TOO_LARGE, size)


def utf8(text: str) -> str:
    """``text`` made valid UTF-8 for the output: a lone surrogate (a file name's undecodable byte, a JSON
    ``\\ud800``) written as its escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def os_message(exc: OSError) -> str:
    """What went wrong with a file, for a row or a message: the reason and the file name (valid UTF-8)."""
    return utf8(f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else str(exc))
