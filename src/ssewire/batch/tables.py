"""Table inputs of ``ssewire batch``: one stream per row of a Parquet file (pyarrow) or a JSONL file, lazily.

A Parquet input is read a row group at a time, about :data:`PARQUET_BATCH_BYTES` of bodies at a time (the body
column's mean size from the metadata; at most 64 rows), without pre-buffering. The reader also holds one data
page of the body column: pyarrow writes pages of up to 1024 values unless told otherwise (``write_batch_size``),
which for bodies of megabytes is a page of gigabytes. A JSONL input is read a line at a time.

The body column is binary or string (UTF-8), dictionary-encoded or not (dictionaries are decoded a batch at a time;
so are those of the provider and kept columns). A body of more than ``max_body`` bytes (``--max-buffer``) is a
``body_too_large`` item: a Parquet cell is read by pyarrow (it cannot read part of one) but never copied, a JSONL
line too long to hold such a body is never held. In JSONL the body is a string member, or, for bodies that are not
text, a ``<body column>_base64`` member holding the bytes in base64; kept values are strings (other JSON values
JSON-encoded). A row's source is ``path#N``, N its 0-based row index (JSONL: its 0-based line index; blank lines
are skipped). A JSONL line that is not a JSON object (or nested too deeply to read), or whose body is not a
string, is an :class:`Unreadable` item; so is a Parquet file pyarrow cannot open, and each row of a row group it
cannot decode.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, BinaryIO, Iterator, Optional

from ..limits import DEFAULT_MAX_BUFFER
from .errors import UsageError
from .items import TOO_LARGE, Input, Item, Payload, TableColumns, Unreadable, os_message, too_large, utf8

__all__ = [
    "JSONL_LINE_FACTOR",
    "JSONL_LINE_SLACK",
    "PARQUET_BATCH_BYTES",
    "PARQUET_BATCH_ROWS",
    "JsonlInput",
    "ParquetInput",
]

#: Bytes of bodies per record batch read from a Parquet input (from the body column's size in the metadata), and
#: the bounds on its rows: what the reader holds at a time.
PARQUET_BATCH_BYTES = 4 << 20
PARQUET_BATCH_ROWS = (1, 64)
_PARQUET_BUFFER = 8 << 20  # column chunks read through a buffer, not whole; no pre-buffering (it keeps every one)
#: A JSONL line holds a body of up to ``max_body`` bytes in at most this many times its size (``\\u0000`` for a
#: byte), plus this much for the rest of its row: a longer line is refused unread.
JSONL_LINE_FACTOR = 6
JSONL_LINE_SLACK = 1 << 20
_PIECE = 64 << 10  # a line too long to hold is read through in pieces of this size
_STRINGS = ("string", "large_string", "string_view")
_JSON_TYPES = {dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number"}


class ParquetInput(Input):
    """A Parquet table: one stream per row, read in record batches of about :data:`PARQUET_BATCH_BYTES`, one row
    group at a time. A file pyarrow cannot open is one :data:`~ssewire.batch.items.INPUT_ERROR` item; a row group
    that cannot be decoded gives one such item for each of its rows not read yet, and the next group is read."""

    table = True

    def __init__(self, path: str, columns: TableColumns, max_body: int = DEFAULT_MAX_BUFFER) -> None:
        super().__init__(path, columns, max_body)
        pa, pq = _pyarrow("reading a Parquet input")
        self.broken: Optional[str] = None
        self.present: dict[str, Any] = {}
        try:
            self.file = pq.ParquetFile(path, buffer_size=_PARQUET_BUFFER, pre_buffer=False)
            schema = self.file.schema_arrow
        except (OSError, pa.ArrowException) as exc:
            self.broken = utf8(f"{path}: not a Parquet file pyarrow can read ({exc})")
            return
        if _kind(pa, self._type(schema, columns.body, "body")) is None:
            raise UsageError(f"{path}: the body column {columns.body!r} must be binary or string")
        if columns.provider is not None and _kind(pa, self._type(schema, columns.provider, "provider")) != "string":
            raise UsageError(f"{path}: the provider column {columns.provider!r} must be string")
        self.present = {name: _plain_type(pa, schema.field(name).type) for name in columns.keep if name in schema.names}

    def _type(self, schema: Any, name: str, role: str) -> Any:
        if name not in schema.names:
            raise UsageError(f"{self.path}: no {role} column {name!r} (its columns: {', '.join(schema.names)})")
        return schema.field(name).type

    def kept_types(self) -> dict[str, Any]:
        return dict(self.present)

    def totals(self) -> tuple[int, Optional[int]]:
        return (1 if self.broken is not None else int(self.file.metadata.num_rows)), None

    def _batch_rows(self) -> int:
        """Rows per record batch: :data:`PARQUET_BATCH_BYTES` over the body column's mean size (uncompressed)."""
        metadata = self.file.metadata
        fewest, most = PARQUET_BATCH_ROWS
        leaves = [metadata.schema.column(index).path for index in range(metadata.num_columns)]
        if self.columns.body not in leaves:
            return most
        column = leaves.index(self.columns.body)
        size = sum(
            metadata.row_group(group).column(column).total_uncompressed_size for group in range(metadata.num_row_groups)
        )
        return int(max(fewest, min(most, PARQUET_BATCH_BYTES * max(metadata.num_rows, 1) // max(size, 1))))

    def items(self) -> Iterator[Item]:
        if self.broken is not None:
            yield Item(self.source, Unreadable(self.broken), None, 0, self.nulls)
            return
        pa, _ = _pyarrow("reading a Parquet input")
        body, provider = self.columns.body, self.columns.provider
        read = list(dict.fromkeys([body, *([provider] if provider else []), *self.present]))
        rows = self._batch_rows()
        index = 0
        for group in range(self.file.metadata.num_row_groups):
            yield from self._group(pa, group, index, read, rows)
            index += self.file.metadata.row_group(group).num_rows

    def _group(self, pa: Any, group: int, index: int, read: list[str], rows: int) -> Iterator[Item]:
        """The items of row group ``group``, its first row being row ``index``: exactly as many as the metadata
        says it holds, those that could not be decoded (or were missing) as unreadable items."""
        count = self.file.metadata.row_group(group).num_rows
        done = 0
        why = f"{self.path}: row group {group} ended before its {count:,} rows"
        batches: Optional[Iterator[Any]] = None
        while done < count:
            try:
                if batches is None:
                    batches = iter(
                        self.file.iter_batches(batch_size=rows, row_groups=[group], columns=read, use_threads=False)
                    )
                batch = next(batches, None)
                found = [] if batch is None else self._items(pa, batch, index + done)
            except (OSError, ValueError, pa.ArrowException) as exc:  # pages that cannot be decoded
                why = f"{self.path}: row group {group} cannot be decoded ({type(exc).__name__}: {exc})"
                break
            if batch is None:
                break
            found = found[: count - done]  # never more rows than the metadata says: the sources stay unique
            yield from found
            done += len(found)
        for row in range(index + done, index + count):
            yield Item(f"{self.source}#{row}", Unreadable(utf8(why)), None, 0, self.nulls)

    def _items(self, pa: Any, batch: Any, index: int) -> list[Item]:
        """The items of one record batch, its first row being row ``index`` of the table."""
        count = batch.num_rows
        bodies = self._bodies(pa, batch.column(self.columns.body), index)
        provider = self.columns.provider
        providers = _values(pa, batch.column(provider)) if provider else [None] * count
        kept = [
            _values(pa, batch.column(name)) if name in self.present else [None] * count for name in self.columns.keep
        ]
        return [
            Item(
                f"{self.source}#{index + row}",
                data,
                name,
                len(data) if isinstance(data, bytes) else 0,
                tuple(column[row] for column in kept),
            )
            for row, (data, name) in enumerate(zip(bodies, providers))
        ]

    def _bodies(self, pa: Any, column: Any, index: int) -> list[Payload]:
        """A batch's body cells (its first row: row ``index``) as bytes (None: null); a cell over ``max_body`` as
        a too-large payload, never copied into Python."""
        import pyarrow.compute as pc  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs

        column = _as_binary(pa, _plain(pa, column))
        sizes = pc.binary_length(column)
        longest = pc.max(sizes).as_py()
        if longest is None or longest <= self.max_body:
            return list(column.to_pylist())
        fits = pc.fill_null(pc.less_equal(sizes, self.max_body), True)
        bodies: list[Payload] = list(pc.if_else(fits, column, pa.scalar(None, column.type)).to_pylist())
        for row, (fit, size) in enumerate(zip(fits.to_pylist(), sizes.to_pylist())):
            if not fit:
                bodies[row] = too_large(f"{self.source}#{index + row}: the body", size, self.max_body)
        return bodies


class JsonlInput(Input):
    """A JSONL table: one JSON object per line (blank lines skipped); kept values are strings (other JSON values
    JSON-encoded). A line is read up to :data:`JSONL_LINE_FACTOR` ``* max_body +`` :data:`JSONL_LINE_SLACK` bytes
    (the most a body of ``max_body`` bytes takes, JSON-escaped, with its row): a longer one is a too-large item,
    read through in pieces and never held whole."""

    table = True

    def __init__(self, path: str, columns: TableColumns, max_body: int = DEFAULT_MAX_BUFFER) -> None:
        super().__init__(path, columns, max_body)
        self.max_line = JSONL_LINE_FACTOR * max_body + JSONL_LINE_SLACK
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise UsageError(os_message(exc)) from None

    def kept_types(self) -> dict[str, Any]:
        return dict.fromkeys(self.columns.keep)

    def totals(self) -> tuple[int, Optional[int]]:
        try:
            with open(self.path, "rb") as lines:
                return sum(1 for _ in _lines(lines, _PIECE)), None
        except OSError:
            return 1, None

    def items(self) -> Iterator[Item]:
        try:
            with open(self.path, "rb") as lines:
                for index, line, size in _lines(lines, self.max_line):
                    source = f"{self.source}#{index}"
                    if line is None:
                        yield Item(source, self._too_long(source, size), None, 0, self.nulls)
                    else:
                        yield self._item(source, line)
        except OSError as exc:  # it vanished since it was checked, or a read failed
            yield Item(self.source, Unreadable(os_message(exc)), None, 0, self.nulls)

    def _too_long(self, source: str, size: int) -> Unreadable:
        limit = f"--max-buffer ({self.max_body:,} bytes; lines are read up to {self.max_line:,} bytes)"
        return Unreadable(
            f"{source}: a line of {size:,} bytes, too long for a body within {limit}: not read", TOO_LARGE
        )

    def _item(self, source: str, line: bytes) -> Item:
        try:
            row = json.loads(line)
        except ValueError as exc:
            return Item(source, Unreadable(f"{source}: not JSON ({exc})"), None, 0, self.nulls)
        except RecursionError:
            return Item(
                source, Unreadable(f"{source}: not JSON ssewire can read (nested too deeply)"), None, 0, self.nulls
            )
        if not isinstance(row, dict):
            return Item(source, Unreadable(f"{source}: {_json_type(row)}, not a JSON object"), None, 0, self.nulls)
        payload = _jsonl_body(row, self.columns.body, source)
        if isinstance(payload, bytes) and len(payload) > self.max_body:
            payload = too_large(f"{source}: the body", len(payload), self.max_body)
        provider = None if self.columns.provider is None else row.get(self.columns.provider)
        try:
            if provider is not None and not isinstance(provider, str):
                provider = json.dumps(provider)  # not a name: an unknown_provider row says so
            kept = tuple(_as_text(row.get(name)) for name in self.columns.keep)
        except (RecursionError, ValueError):  # a value too deeply nested to write back
            return Item(source, Unreadable(f"{source}: a value nested too deeply to keep"), None, 0, self.nulls)
        return Item(source, payload, provider, len(payload) if isinstance(payload, bytes) else 0, kept)


def _lines(file: BinaryIO, limit: int) -> Iterator[tuple[int, Optional[bytes], int]]:
    """(index, line, size) of each non-blank line of ``file`` (index 0-based, counting blank lines); a line of
    more than ``limit`` bytes is read through in pieces and given as None: no more than ``limit + 1`` bytes are
    held."""
    index = 0
    while True:
        line = file.readline(limit + 1)
        if not line:
            return
        if len(line) > limit:
            size, blank = len(line), not line.strip()
            while not line.endswith(b"\n"):
                line = file.readline(_PIECE)
                if not line:
                    break
                size += len(line)
                blank = blank and not line.strip()
            if not blank:
                yield index, None, size
        elif line.strip():
            yield index, line, len(line)
        index += 1


def _pyarrow(why: str) -> tuple[Any, Any]:
    """pyarrow and pyarrow.parquet, or :class:`UsageError` saying how to install them."""
    try:
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs
        import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise UsageError(f"{why} needs pyarrow: pip install 'ssewire[arrow]'") from None
    return pa, pq


def _plain_type(pa: Any, arrow_type: Any) -> Any:
    """``arrow_type``, or the values' type of a dictionary type (what :func:`_plain` makes of its arrays)."""
    return arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type


def _plain(pa: Any, column: Any) -> Any:
    """``column`` with its dictionary (if it has one) decoded: plain strings, bytes ..."""
    return column.dictionary_decode() if pa.types.is_dictionary(column.type) else column


def _values(pa: Any, column: Any) -> list[Any]:
    """A provider or kept column's values (dictionaries decoded); a string that is not UTF-8 (Parquet does not
    check) with its bad bytes written as escapes, as a file name's."""
    column = _plain(pa, column)
    try:
        return list(column.to_pylist())
    except UnicodeDecodeError:
        if _kind(pa, column.type) != "string":
            raise
        raw = _as_binary(pa, column).to_pylist()
        return [None if value is None else value.decode("utf-8", "backslashreplace") for value in raw]


def _as_binary(pa: Any, column: Any) -> Any:
    """A string or binary array as binary (string and large string: the same buffers, viewed; views: copied)."""
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column.view(pa.binary() if pa.types.is_string(kind) else pa.large_binary())
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return column
    return column.cast(pa.large_binary())  # string_view, binary_view: binary_length has no kernel for them


def _kind(pa: Any, arrow_type: Any) -> Optional[str]:
    """``"binary"`` or ``"string"`` for the Arrow types of bodies (views included where pyarrow has them; a
    dictionary of them too)."""
    arrow_type = _plain_type(pa, arrow_type)
    for kind, names in (("binary", ("binary", "large_binary", "binary_view")), ("string", _STRINGS)):
        if any(getattr(pa.types, f"is_{name}", lambda _: False)(arrow_type) for name in names):
            return kind
    return None


def _jsonl_body(row: dict[str, Any], column: str, source: str) -> Payload:
    """The body of a JSONL row: the ``column`` string as UTF-8, else base64 of ``<column>_base64``; None when
    neither is there (or null)."""
    value = row.get(column)
    if value is None and row.get(f"{column}_base64") is not None:
        encoded = row[f"{column}_base64"]
        if not isinstance(encoded, str):
            return Unreadable(f"{source}: {column}_base64 is {_json_type(encoded)}, not a base64 string")
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            return Unreadable(f"{source}: {column}_base64 is not base64 ({exc})")
    if value is None or isinstance(value, str):
        return None if value is None else value.encode("utf-8", "surrogatepass")
    return Unreadable(f"{source}: the body {column!r} is {_json_type(value)}, not a string")


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), "a string" if isinstance(value, str) else "null")


def _as_text(value: Any) -> Optional[str]:
    if value is None:
        return None
    return utf8(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
