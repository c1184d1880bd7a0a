"""Arrow record batches of stored stream bodies in, the same batches with the result columns appended out (extra
``arrow``: needs ``pyarrow``).

:func:`parse_batch` is the one function engines call: Spark ``mapInArrow`` (through :func:`map_batches`), Ray
``map_batches(batch_format="pyarrow")`` (a table: :func:`parse_table`), DuckDB and Polars (``to_arrow()`` /
``fetch_record_batch()``). The result columns are :data:`SCHEMA`, built from :data:`ssewire.batch.COLUMNS`, and
every row is exactly :func:`ssewire.batch.result_row` of its body.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

try:
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without it
    raise ImportError(
        "ssewire.batch.arrow (ssewire.arrow) needs pyarrow: install it with pip install 'ssewire[arrow]'",
        name="pyarrow",
    ) from exc

from ..names import FramingName
from . import COLUMNS, SCHEMA_VERSION, result_rows

__all__ = ["SCHEMA", "kept_columns", "map_batches", "output_schema", "parse_batch", "parse_table"]

_TYPES = {
    "string": pa.string(),
    "int64": pa.int64(),
    "bool": pa.bool_(),
    "float64": pa.float64(),
    "list<string>": pa.list_(pa.string()),
}

#: The result columns (:data:`ssewire.batch.COLUMNS`), with ``{"ssewire.schema_version": "1"}`` as metadata.
SCHEMA: pa.Schema = pa.schema(
    [pa.field(name, _TYPES[kind]) for name, kind in COLUMNS],
    metadata={"ssewire.schema_version": str(SCHEMA_VERSION)},
)


def _is(kind: Any, names: tuple[str, ...]) -> bool:
    """Whether the Arrow type ``kind`` is one of ``names`` (``pa.types.is_<name>``; a name this pyarrow lacks: no)."""
    return any(getattr(pa.types, f"is_{name}", lambda _: False)(kind) for name in names)


_BINARY = ("binary", "large_binary", "binary_view")  # binary_view, string_view: pyarrow 16+ (Polars, DuckDB)
_STRING = ("string", "large_string", "string_view")
_AS_BINARY = {"string": "binary", "large_string": "large_binary", "string_view": "binary_view"}


def _bodies(column: Any) -> list[Any]:
    """The body column as Python values: bytes (a string's own bytes, unchecked: Spark's ``CAST(binary AS STRING)``
    does not check UTF-8), None where null."""
    if _is(column.type, _BINARY):
        return list(column.to_pylist())
    if _is(column.type, _STRING):
        return list(column.cast(getattr(pa, _AS_BINARY[str(column.type)])()).to_pylist())
    raise TypeError(f"the body column must be binary or string, not {column.type}")


def _input_column(batch: Any, name: str, role: str) -> Any:
    index = batch.schema.get_field_index(name)
    if index < 0:
        raise ValueError(f"no {role} column {name!r} in the batch (its columns: {', '.join(batch.schema.names)})")
    return batch.column(index)


def kept_columns(names: Iterable[str], provider: Optional[str] = None, *, fold_case: bool = False) -> list[str]:
    """The input columns a result keeps: all of ``names`` but a ``provider`` column named like a result column (the
    result's ``provider``, the provider used, takes its place). Any other name a result column has raises
    ``ValueError`` (``fold_case``: compared ignoring case, as Spark does)."""

    def key(name: str) -> str:
        return name.lower() if fold_case else name

    replaced = provider if provider in SCHEMA.names else None  # the exact name only
    kept = [name for name in names if name != replaced]
    taken = {key(name) for name in SCHEMA.names}
    clash = sorted(name for name in kept if key(name) in taken)
    if clash:
        raise ValueError(f"the input already has result column(s) {', '.join(clash)}: rename or drop them first")
    return kept


def output_schema(schema: pa.Schema, provider: Optional[str] = None) -> pa.Schema:
    """The schema :func:`parse_batch` returns for input ``schema``: its fields (see :func:`kept_columns`), then
    :data:`SCHEMA`'s. Spark's ``mapInArrow`` needs it up front."""
    kept = kept_columns(schema.names, provider)
    metadata = dict(schema.metadata or {})
    metadata.update(SCHEMA.metadata)
    return pa.schema([*(schema.field(name) for name in kept), *SCHEMA], metadata=metadata)


def parse_batch(
    batch: pa.RecordBatch,
    body: str = "body",
    provider: Optional[str] = None,
    framing: FramingName = "auto",
) -> pa.RecordBatch:
    """``batch`` with the result columns of each row's body appended (:data:`SCHEMA`; every input column kept).

    ``body`` names the column of stored bodies (binary or string, read as UTF-8; a null body gives a
    ``missing_body`` row). ``provider`` names a column of provider names (null: ``auto``); None: ``auto`` for every
    row; a provider column named ``provider`` is replaced by the result's (the provider used). Raises
    ``ValueError`` when a column is missing or the batch already has another result column's name."""
    schema = output_schema(batch.schema, provider)
    bodies = _bodies(_input_column(batch, body, "body"))
    items: Iterable[Any] = bodies
    if provider is not None:
        names = _input_column(batch, provider, "provider")
        if not _is(names.type, _STRING):
            raise TypeError(f"the provider column must be string, not {names.type}")
        items = zip(bodies, names.to_pylist())
    results = pa.RecordBatch.from_pylist(list(result_rows(items, "auto", framing)), schema=SCHEMA)
    kept = [batch.column(name) for name in schema.names[: len(schema) - len(SCHEMA)]]
    return pa.RecordBatch.from_arrays([*kept, *results.columns], schema=schema)


def parse_table(
    table: pa.Table, body: str = "body", provider: Optional[str] = None, framing: FramingName = "auto"
) -> pa.Table:
    """:func:`parse_batch` of every batch of ``table`` (what Ray's ``map_batches(batch_format="pyarrow")`` gives)."""
    batches = [parse_batch(batch, body, provider, framing) for batch in table.to_batches()]
    return pa.Table.from_batches(batches, schema=output_schema(table.schema, provider))


def map_batches(
    batches: Iterable[pa.RecordBatch], body: str = "body", provider: Optional[str] = None, framing: FramingName = "auto"
) -> Iterator[pa.RecordBatch]:
    """:func:`parse_batch` of each batch, lazily: the function Spark's ``mapInArrow`` takes (bind the column names
    with ``functools.partial``; the output schema is :func:`output_schema` of the input's and ``provider``)."""
    for batch in batches:
        yield parse_batch(batch, body, provider, framing)
