"""Rows of a Parquet row group read where they are parsed (a worker, or the parent: with ``--jobs 1``, while the
workers start, and for small tables whose bodies it sends): a :class:`~ssewire.batch.items.RowRange` in, one
``(payload, provider, kept values)`` per row out (:meth:`Reader.items`, :func:`range_items`), one record batch at a
time (needs pyarrow).

Every process reads a row group in the same record batches (``batch_rows`` rows from its first row), and a batch is
taken whole or not at all: its columns are decoded and checked (dictionaries decoded, the provider and kept values
made Python values, the bodies' sizes known) before any of its rows is given. A batch that cannot be decoded, or a
group that ends before the rows its metadata counts, makes that batch's rows and every later row of the group
:class:`~ssewire.batch.items.Unreadable` items, wherever the group is read: rows come out the same whatever the
ranges and the process reading them.

A reader keeps one group open (a cursor): a range of that group that starts where the last one stopped, or further
on, goes on from there; the rows between are decoded, checked and dropped (bodies are never made Python bytes for
rows that are not given), so a reader reads a group once, whatever the ranges it is given of it. An earlier range
reopens the group. Memory: one record batch (about :data:`PARQUET_BATCH_BYTES` of bodies, a body over ``max_body``
never copied into Python), one data page of the body column and the reader's buffer, whatever the group's size.
:func:`range_items` and :func:`close` use the process's own reader (closed at the end of a batch run).
"""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple, Optional

from .errors import UsageError
from .items import Payload, RowRange, Unreadable, too_large, utf8

__all__ = [
    "PARQUET_BATCH_BYTES",
    "PARQUET_BATCH_ROWS",
    "PARQUET_BUFFER",
    "Reader",
    "RowItem",
    "as_binary",
    "body_kind",
    "close",
    "open_parquet",
    "plain_type",
    "pyarrow_modules",
    "range_items",
]

#: Bytes of bodies per record batch read from a Parquet input (from the body column's size in the metadata), and
#: the bounds on its rows: what the reader holds at a time.
PARQUET_BATCH_BYTES = 4 << 20
PARQUET_BATCH_ROWS = (1, 64)
#: Column chunks are read through a buffer of this size, not whole; no pre-buffering (it keeps every one).
PARQUET_BUFFER = 8 << 20
_STRINGS = ("string", "large_string", "string_view")

#: One row as a worker parses it: its payload, its own provider (None: ``--provider``) and its kept values.
RowItem = tuple[Payload, Optional[str], tuple[Any, ...]]


def pyarrow_modules(why: str) -> tuple[Any, Any]:
    """pyarrow and pyarrow.parquet, or :class:`~ssewire.batch.errors.UsageError` saying how to install them."""
    try:
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs
        import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise UsageError(f"{why} needs pyarrow: pip install 'ssewire[arrow]'") from None
    return pa, pq


def open_parquet(path: str) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` reading ``path`` through a buffer, without pre-buffering."""
    _, pq = pyarrow_modules("reading a Parquet input")
    return pq.ParquetFile(path, buffer_size=PARQUET_BUFFER, pre_buffer=False)


class Reader:
    """Rows of row ranges read in this process, one open group at a time (a cursor: see the module docstring)."""

    def __init__(self) -> None:
        self._cursor: Optional[_Cursor] = None

    def items(self, rows: RowRange) -> Iterator[RowItem]:
        """Each row of ``rows``, in order: exactly ``rows.stop - rows.start`` of them (those that could not be read
        as unreadable items)."""
        pa, _ = pyarrow_modules("reading a Parquet input")
        if self._cursor is None or not self._cursor.can_give(rows):
            self.close()
            self._cursor = _Cursor(pa, rows)
        cursor = self._cursor
        position = rows.start
        while position < rows.stop:
            batch = cursor.batch_holding(position)
            if batch is None:
                failed = Unreadable(utf8(cursor.failed or "?"))
                nulls = (None,) * len(rows.columns.keep)
                for _ in range(position, rows.stop):
                    yield failed, None, nulls
                return
            end = min(rows.stop, cursor.at + batch.rows)
            yield from batch.items(position - cursor.at, end - cursor.at)
            position = end

    def close(self) -> None:
        """Close the open group, if any (its file and reader)."""
        if self._cursor is not None:
            self._cursor.close()
            self._cursor = None


def range_items(rows: RowRange) -> Iterator[RowItem]:
    """The rows of ``rows`` read by this process's reader (a worker's, or the parent's own parsing)."""
    return _reader.items(rows)


def close() -> None:
    """Close this process's reader's open group, if any."""
    _reader.close()


class _Batch(NamedTuple):
    """A record batch decoded and checked: its bodies (a binary array; ``sizes`` None when none is over the
    limit), providers and kept values; ``first``: the table index of its first row, for messages."""

    rows: int
    bodies: Any
    sizes: Optional[list[Optional[int]]]
    providers: Optional[list[Any]]
    kept: list[Optional[list[Any]]]
    first: int
    source: str
    max_body: int

    def items(self, start: int, stop: int) -> Iterator[RowItem]:
        """Rows ``start`` to ``stop`` of the batch, bodies as bytes (None: null) or too-large payloads."""
        count = stop - start
        bodies: list[Payload] = self.bodies.slice(start, count).to_pylist() if self.sizes is None else []
        if self.sizes is not None:
            for row in range(start, stop):
                size = self.sizes[row]
                if size is not None and size > self.max_body:
                    what = f"{self.source}#{self.first + row}: the body"
                    bodies.append(too_large(what, size, self.max_body))
                else:
                    bodies.append(self.bodies[row].as_py())
        providers = [None] * count if self.providers is None else self.providers[start:stop]
        kept = [[None] * count if values is None else values[start:stop] for values in self.kept]
        yield from zip(bodies, providers, zip(*kept) if kept else [()] * count)


class _Cursor:
    """One open row group of one file, read forward a record batch at a time: ``at`` is the group row of the
    current batch's first row; ``failed`` says why no row from there on can be read (None: they can)."""

    def __init__(self, pa: Any, rows: RowRange) -> None:
        self.key = (rows.path, rows.group, rows.batch_rows, rows.columns, rows.present, rows.max_body)
        self.rows = rows
        self.at = 0
        self.batch: Optional[_Batch] = None
        self.failed: Optional[str] = None
        self.file: Any = None
        self.batches: Optional[Iterator[Any]] = None
        self.errors = (OSError, ValueError, pa.ArrowException)
        columns = rows.columns
        self.read = list(
            dict.fromkeys([columns.body, *([columns.provider] if columns.provider else []), *rows.present])
        )
        try:
            self.file = open_parquet(rows.path)
            self.batches = iter(
                self.file.iter_batches(
                    batch_size=rows.batch_rows, row_groups=[rows.group], columns=self.read, use_threads=False
                )
            )
        except self.errors as exc:
            self._fail(exc)

    def can_give(self, rows: RowRange) -> bool:
        """Whether ``rows`` is of this group and starts at or after the current batch."""
        key = (rows.path, rows.group, rows.batch_rows, rows.columns, rows.present, rows.max_body)
        return key == self.key and rows.start >= self.at

    def batch_holding(self, position: int) -> Optional[_Batch]:
        """The checked batch holding group row ``position`` (reading forward to it), or None when it cannot be
        read (``failed`` says why)."""
        while self.failed is None and (self.batch is None or position >= self.at + self.batch.rows):
            if self.batch is not None:
                self.at += self.batch.rows
                self.batch = None
            try:
                found = next(self.batches, None) if self.batches is not None else None
                if found is None:
                    rows = self.rows
                    self.failed = f"{rows.path}: row group {rows.group} ended before its {rows.group_rows:,} rows"
                    break
                self.batch = self._checked(found)
            except self.errors as exc:  # pages that cannot be decoded
                self._fail(exc)
        return None if self.failed is not None else self.batch

    def _fail(self, exc: BaseException) -> None:
        self.failed = f"{self.rows.path}: row group {self.rows.group} cannot be decoded ({type(exc).__name__}: {exc})"
        self.batch = None

    def _checked(self, batch: Any) -> _Batch:
        """``batch`` decoded: every column made what :meth:`_Batch.items` takes (what can fail fails here)."""
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs
        import pyarrow.compute as pc  # type: ignore[import-untyped,import-not-found,unused-ignore]

        rows, columns = self.rows, self.rows.columns
        bodies = as_binary(pa, _plain(pa, batch.column(columns.body)))
        sizes = None
        longest = pc.max(pc.binary_length(bodies)).as_py() if len(bodies) else None
        if longest is not None and longest > rows.max_body:
            sizes = pc.binary_length(bodies).to_pylist()
        providers = _values(pa, batch.column(columns.provider)) if columns.provider else None
        kept = [_values(pa, batch.column(name)) if name in rows.present else None for name in columns.keep]
        first = rows.first + self.at
        return _Batch(batch.num_rows, bodies, sizes, providers, kept, first, rows.source, rows.max_body)

    def close(self) -> None:
        self.batch, self.batches = None, None
        if self.file is not None:
            self.file.close()
            self.file = None


_reader = Reader()  # this process's reader


def plain_type(pa: Any, arrow_type: Any) -> Any:
    """``arrow_type``, or the values' type of a dictionary type (what :func:`_plain` makes of its arrays)."""
    return arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type


def body_kind(pa: Any, arrow_type: Any) -> Optional[str]:
    """``"binary"`` or ``"string"`` for the Arrow types of bodies (views included where pyarrow has them; a
    dictionary of them too), else None."""
    arrow_type = plain_type(pa, arrow_type)
    for kind, names in (("binary", ("binary", "large_binary", "binary_view")), ("string", _STRINGS)):
        if any(getattr(pa.types, f"is_{name}", lambda _: False)(arrow_type) for name in names):
            return kind
    return None


def as_binary(pa: Any, column: Any) -> Any:
    """A string or binary array as binary (string and large string: the same buffers, viewed; views: copied)."""
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column.view(pa.binary() if pa.types.is_string(kind) else pa.large_binary())
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return column
    return column.cast(pa.large_binary())  # string_view, binary_view: binary_length has no kernel for them


def _plain(pa: Any, column: Any) -> Any:
    """``column`` with its dictionary (if it has one) decoded: plain strings, bytes ..."""
    return column.dictionary_decode() if pa.types.is_dictionary(column.type) else column


def is_time(pa: Any, kind: Any) -> bool:
    """Whether Arrow type ``kind`` is a date, time, timestamp or duration: kept as its integer (see :func:`_values`),
    which the writers make that type again (:mod:`ssewire.batch.outputs`)."""
    return bool(pa.types.is_temporal(kind)) and not pa.types.is_interval(kind)


def _values(pa: Any, column: Any) -> list[Any]:
    """A provider or kept column's values (dictionaries decoded; a date, time, timestamp or duration as its integer:
    :func:`is_time`); a string that is not UTF-8 (Parquet does not check) with its bad bytes written as escapes,
    as a file name's."""
    column = _plain(pa, column)
    kind = column.type
    if is_time(pa, kind):  # as its integer: Python's dates hold neither nanoseconds nor years past 9999
        return list(column.view(pa.int64() if kind.bit_width == 64 else pa.int32()).to_pylist())
    try:
        return list(column.to_pylist())
    except UnicodeDecodeError:
        if body_kind(pa, column.type) != "string":
            raise
        raw = as_binary(pa, column).to_pylist()
        return [None if value is None else value.decode("utf-8", "backslashreplace") for value in raw]
