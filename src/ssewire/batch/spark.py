"""Spark DataFrames of stored stream bodies in, the same DataFrames with the result columns appended out (extra
``spark``: needs ``pyspark[sql]`` and, on every executor, ``ssewire[arrow]``).

:func:`parse` runs :func:`ssewire.batch.arrow.parse_batch` through ``DataFrame.mapInArrow``: every row is exactly
:func:`ssewire.batch.result_row` of its body, and a body that holds no stream gives an error row, never a failed
job. Nothing runs until an action (``collect``, ``write`` ...).
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Iterator, Optional

try:
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import BinaryType, StringType, StructType
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without them
    raise ImportError(
        f"ssewire.batch.spark (ssewire.spark) needs pyspark, pandas and pyarrow ({exc.name or exc} is missing): "
        "install them with pip install 'ssewire[spark]'",
        name=exc.name,
    ) from exc

from ..names import FramingName
from . import result_row
from .arrow import SCHEMA, kept_columns, parse_batch

__all__ = ["RESULT_STRUCT", "output_struct", "parse"]

#: The result columns (:data:`ssewire.batch.arrow.SCHEMA`) as a Spark ``StructType``, every field nullable.
RESULT_STRUCT: StructType = from_arrow_schema(SCHEMA)


def output_struct(schema: StructType, provider: Optional[str] = None) -> StructType:
    """The schema :func:`parse` returns for input ``schema``: its fields as they are, then :data:`RESULT_STRUCT`'s,
    as :func:`ssewire.arrow.output_schema` does it (:func:`ssewire.arrow.kept_columns`, names compared ignoring
    case, as Spark does by default)."""
    kept = set(kept_columns(schema.names, provider, fold_case=True))
    return StructType([*(field for field in schema.fields if field.name in kept), *RESULT_STRUCT.fields])


def parse(
    df: DataFrame, body: str = "body", provider: Optional[str] = None, framing: FramingName = "auto"
) -> DataFrame:
    """``df`` with the result columns of each row's body appended (:func:`output_struct`; every input column kept).

    ``body`` names the column of stored bodies (binary, or string read as UTF-8; null gives a ``missing_body`` row).
    ``provider`` names a string column of provider names (null: ``auto``); None: ``auto`` for every row; one named
    ``provider`` is replaced by the result's (the provider used). Raises
    here, before any job runs, for a missing column, a column of the wrong type, a result column's name already
    taken or an unknown ``framing``."""
    result_row(None, "auto", framing)  # an unknown framing raises ValueError now, not in every task
    _check_column(df.schema, body, "body", (BinaryType, StringType))
    if provider is not None:
        _check_column(df.schema, provider, "provider", (StringType,))
    function = functools.partial(_map_batches, body=body, provider=provider, framing=framing)
    return df.mapInArrow(function, output_struct(df.schema, provider))


def _check_column(schema: StructType, name: str, role: str, kinds: tuple[type, ...]) -> None:
    if name not in schema.names:
        raise ValueError(f"no {role} column {name!r} in the DataFrame (its columns: {', '.join(schema.names)})")
    kind = schema[name].dataType
    if not isinstance(kind, kinds):
        expected = " or ".join(k.__name__.replace("Type", "").lower() for k in kinds)
        raise TypeError(f"the {role} column must be {expected}, not {kind.simpleString()}")


def _map_batches(
    batches: Iterable[pa.RecordBatch], body: str, provider: Optional[str], framing: FramingName
) -> Iterator[pa.RecordBatch]:
    """What the executors run: :func:`~ssewire.batch.arrow.parse_batch` of each batch, its result strings cast to the
    width Spark used for the body column (``large_string`` when ``spark.sql.execution.arrow.useLargeVarTypes`` is
    on), so each batch is exactly the Arrow form of :func:`output_struct`."""
    for batch in batches:
        out = parse_batch(batch, body, provider, framing)
        text = _text_type(batch.column(batch.schema.get_field_index(body)).type)
        if text != pa.string():
            out = _with_text_type(out, out.num_columns - len(SCHEMA), text)
        yield out


def _text_type(kind: Any) -> Any:
    """The string type of the same width as the body column's type (binary or string, plain, large or view)."""
    if pa.types.is_large_binary(kind) or pa.types.is_large_string(kind):
        return pa.large_string()
    if str(kind) in ("binary_view", "string_view"):
        return pa.string_view()
    return pa.string()


def _with_text_type(batch: pa.RecordBatch, start: int, text: Any) -> pa.RecordBatch:
    """``batch`` with its string and list-of-string columns from ``start`` on cast to ``text`` strings."""
    fields, columns = list(batch.schema)[:start], list(batch.columns)[:start]
    for field, column in zip(list(batch.schema)[start:], list(batch.columns)[start:]):
        kind = field.type
        if pa.types.is_string(kind):
            kind = text
        elif pa.types.is_list(kind) and pa.types.is_string(kind.value_type):
            kind = pa.list_(kind.value_field.with_type(text))
        fields.append(field.with_type(kind))
        columns.append(column.cast(kind))
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields, metadata=batch.schema.metadata))
