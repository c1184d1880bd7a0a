"""Table inputs of ``ssewire batch``: one stream per row of a Parquet file (pyarrow) or a JSONL file, lazily.

A Parquet input is read about :data:`PARQUET_BATCH_BYTES` of bodies at a time (the body column's mean size from
the metadata; at most 64 rows), without pre-buffering. The reader also holds one data page of the body column:
pyarrow writes pages of up to 1024 values unless told otherwise (``write_batch_size``), which for bodies of
megabytes is a page of gigabytes. A JSONL input is read a line at a time.

The body column is binary or string (UTF-8). In JSONL the body is a string member, or, for bodies that are not
text, a ``<body column>_base64`` member holding the bytes in base64; kept values are strings (other JSON values
JSON-encoded). A row's source is ``path#N``, N its 0-based row index (JSONL: its 0-based line index; blank lines
are skipped). A JSONL line that is not a JSON object, or whose body is not a string, is an :class:`Unreadable`
item.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Iterator, Optional

from ._batch_errors import UsageError
from ._batch_items import Input, Item, Payload, TableColumns, Unreadable, os_message, utf8

__all__ = ["PARQUET_BATCH_BYTES", "PARQUET_BATCH_ROWS", "JsonlInput", "ParquetInput"]

#: Bytes of bodies per record batch read from a Parquet input (from the body column's size in the metadata), and
#: the bounds on its rows: what the reader holds at a time.
PARQUET_BATCH_BYTES = 4 << 20
PARQUET_BATCH_ROWS = (1, 64)
_PARQUET_BUFFER = 8 << 20  # column chunks read through a buffer, not whole; no pre-buffering (it keeps every one)
_STRINGS = ("string", "large_string", "string_view")
_JSON_TYPES = {dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number"}


class ParquetInput(Input):
    """A Parquet table: one stream per row, read in record batches of about :data:`PARQUET_BATCH_BYTES`."""

    table = True

    def __init__(self, path: str, columns: TableColumns) -> None:
        super().__init__(path, columns)
        pa, pq = _pyarrow("reading a Parquet input")
        try:
            self.file = pq.ParquetFile(path, buffer_size=_PARQUET_BUFFER, pre_buffer=False)
        except (OSError, pa.ArrowException) as exc:
            raise UsageError(f"{path}: not a Parquet file pyarrow can read ({exc})") from None
        schema = self.file.schema_arrow
        if _kind(pa, self._type(schema, columns.body, "body")) is None:
            raise UsageError(f"{path}: the body column {columns.body!r} must be binary or string")
        if columns.provider is not None and _kind(pa, self._type(schema, columns.provider, "provider")) != "string":
            raise UsageError(f"{path}: the provider column {columns.provider!r} must be string")
        self.body_kind = _kind(pa, schema.field(columns.body).type)
        self.present = {name: schema.field(name).type for name in columns.keep if name in schema.names}

    def _type(self, schema: Any, name: str, role: str) -> Any:
        if name not in schema.names:
            raise UsageError(f"{self.path}: no {role} column {name!r} (its columns: {', '.join(schema.names)})")
        return schema.field(name).type

    def kept_types(self) -> dict[str, Any]:
        return dict(self.present)

    def totals(self) -> tuple[int, Optional[int]]:
        return int(self.file.metadata.num_rows), None

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
        body, provider, keep = self.columns.body, self.columns.provider, self.columns.keep
        read = list(dict.fromkeys([body, *([provider] if provider else []), *self.present]))
        index = 0
        rows = self._batch_rows()
        for batch in self.file.iter_batches(batch_size=rows, columns=read, use_threads=False):
            count = batch.num_rows
            bodies = batch.column(body).to_pylist()
            if self.body_kind == "string":
                bodies = [None if text is None else text.encode("utf-8", "surrogatepass") for text in bodies]
            providers = batch.column(provider).to_pylist() if provider else [None] * count
            kept = [batch.column(name).to_pylist() if name in self.present else [None] * count for name in keep]
            for row, (data, name) in enumerate(zip(bodies, providers)):
                values = tuple(column[row] for column in kept)
                yield Item(f"{self.source}#{index}", data, name, 0 if data is None else len(data), values)
                index += 1


class JsonlInput(Input):
    """A JSONL table: one JSON object per line (blank lines skipped); kept values are strings (other JSON values
    JSON-encoded)."""

    table = True

    def __init__(self, path: str, columns: TableColumns) -> None:
        super().__init__(path, columns)
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise UsageError(os_message(exc)) from None

    def kept_types(self) -> dict[str, Any]:
        return dict.fromkeys(self.columns.keep)

    def totals(self) -> tuple[int, Optional[int]]:
        with open(self.path, "rb") as lines:
            return sum(1 for line in lines if line.strip()), None

    def items(self) -> Iterator[Item]:
        with open(self.path, "rb") as lines:
            for index, line in enumerate(lines):
                if line.strip():
                    yield self._item(f"{self.source}#{index}", line)

    def _item(self, source: str, line: bytes) -> Item:
        try:
            row = json.loads(line)
        except ValueError as exc:
            return Item(source, Unreadable(f"{source}: not JSON ({exc})"), None, 0, self.nulls)
        if not isinstance(row, dict):
            return Item(source, Unreadable(f"{source}: {_json_type(row)}, not a JSON object"), None, 0, self.nulls)
        payload = _jsonl_body(row, self.columns.body, source)
        provider = None if self.columns.provider is None else row.get(self.columns.provider)
        if provider is not None and not isinstance(provider, str):
            provider = json.dumps(provider)  # not a name: an unknown_provider row says so
        kept = tuple(_as_text(row.get(name)) for name in self.columns.keep)
        return Item(source, payload, provider, len(payload) if isinstance(payload, bytes) else 0, kept)


def _pyarrow(why: str) -> tuple[Any, Any]:
    """pyarrow and pyarrow.parquet, or :class:`UsageError` saying how to install them."""
    try:
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs
        import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise UsageError(f"{why} needs pyarrow: pip install 'ssewire[arrow]'") from None
    return pa, pq


def _kind(pa: Any, arrow_type: Any) -> Optional[str]:
    """``"binary"`` or ``"string"`` for the Arrow types of bodies (views included where pyarrow has them)."""
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
