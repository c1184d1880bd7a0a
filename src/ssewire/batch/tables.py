"""Table inputs of ``ssewire batch``: one stream per row of a Parquet file (pyarrow) or a JSONL file, lazily.

Here a Parquet input's metadata is read; its rows are read by :mod:`ssewire.batch.parquet_rows` (in the workers, or
in the parent for a batch of small tables: :func:`ssewire.batch.pool.tasks`), a row group at a time, about
:data:`~ssewire.batch.parquet_rows.PARQUET_BATCH_BYTES` of bodies at a time (the body column's mean size from the
metadata; at most 64 rows), without pre-buffering. The reader also holds one data page of the body column: pyarrow
writes pages of up to 1024 values unless told otherwise (``write_batch_size``), which for bodies of megabytes is a
page of gigabytes. A JSONL input is read a line at a time, here.

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
from .items import (
    TOO_LARGE,
    Input,
    Item,
    Payload,
    RowRange,
    TableColumns,
    Unit,
    Unreadable,
    os_message,
    too_large,
    utf8,
)
from .parquet_rows import (
    PARQUET_BATCH_BYTES,
    PARQUET_BATCH_ROWS,
    body_kind,
    open_parquet,
    plain_type,
    pyarrow_modules,
)

__all__ = [
    "JSONL_LINE_FACTOR",
    "JSONL_LINE_SLACK",
    "PARQUET_BATCH_BYTES",
    "PARQUET_BATCH_ROWS",
    "JsonlInput",
    "ParquetInput",
]

#: A JSONL line holds a body of up to ``max_body`` bytes in at most this many times its size (``\\u0000`` for a
#: byte), plus this much for the rest of its row: a longer line is refused unread.
JSONL_LINE_FACTOR = 6
JSONL_LINE_SLACK = 1 << 20
_PIECE = 64 << 10  # a line too long to hold is read through in pieces of this size
_JSON_TYPES = {dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number"}


class ParquetInput(Input):
    """A Parquet table: one stream per row, given as one :class:`~ssewire.batch.items.RowRange` per row group (its
    rows are read by :mod:`ssewire.batch.parquet_rows`); only the metadata is read here. A file pyarrow cannot open
    is one :data:`~ssewire.batch.items.INPUT_ERROR` item."""

    table = True

    def __init__(self, path: str, columns: TableColumns, max_body: int = DEFAULT_MAX_BUFFER) -> None:
        super().__init__(path, columns, max_body)
        pa, _ = pyarrow_modules("reading a Parquet input")
        self.broken: Optional[str] = None
        self.present: dict[str, Any] = {}
        try:
            with open_parquet(path) as file:
                schema = file.schema_arrow
                self.metadata = file.metadata
        except (OSError, pa.ArrowException) as exc:
            self.broken = utf8(f"{path}: not a Parquet file pyarrow can read ({exc})")
            return
        if body_kind(pa, self._type(schema, columns.body, "body")) is None:
            raise UsageError(f"{path}: the body column {columns.body!r} must be binary or string")
        if columns.provider is not None and body_kind(pa, self._type(schema, columns.provider, "provider")) != "string":
            raise UsageError(f"{path}: the provider column {columns.provider!r} must be string")
        self.present = {name: plain_type(pa, schema.field(name).type) for name in columns.keep if name in schema.names}

    def _type(self, schema: Any, name: str, role: str) -> Any:
        if name not in schema.names:
            raise UsageError(f"{self.path}: no {role} column {name!r} (its columns: {', '.join(schema.names)})")
        return schema.field(name).type

    def kept_types(self) -> dict[str, Any]:
        return dict(self.present)

    def totals(self) -> tuple[int, Optional[int]]:
        return (1 if self.broken is not None else int(self.metadata.num_rows)), None

    def table_bytes(self) -> int:
        return 0 if self.broken is not None else sum(self._body_sizes())

    def _body_sizes(self) -> list[int]:
        """Each row group's body column size, uncompressed (from the metadata; 0 where it cannot tell)."""
        metadata = self.metadata
        leaves = [metadata.schema.column(index).path for index in range(metadata.num_columns)]
        if self.columns.body not in leaves:
            return [0] * metadata.num_row_groups
        column = leaves.index(self.columns.body)
        return [
            int(metadata.row_group(group).column(column).total_uncompressed_size)
            for group in range(metadata.num_row_groups)
        ]

    def _batch_rows(self, sizes: list[int]) -> int:
        """Rows per record batch: :data:`PARQUET_BATCH_BYTES` over the body column's mean size (uncompressed)."""
        fewest, most = PARQUET_BATCH_ROWS
        if not any(sizes):
            return most
        rows = max(self.metadata.num_rows, 1)
        return int(max(fewest, min(most, PARQUET_BATCH_BYTES * rows // max(sum(sizes), 1))))

    def items(self) -> Iterator[Unit]:
        if self.broken is not None:
            yield Item(self.source, Unreadable(self.broken), None, 0, self.nulls)
            return
        sizes = self._body_sizes()
        batch_rows = self._batch_rows(sizes)
        present = tuple(self.present)
        first = 0
        for group, size in enumerate(sizes):
            count = int(self.metadata.row_group(group).num_rows)
            if count:
                per_row = size / count
                yield RowRange(
                    self.path, self.source, group, first, 0, count, batch_rows, count, self.columns, present,
                    self.max_body, per_row, sum(sizes),
                )  # fmt: skip
            first += count


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
