"""ssewire.batch.arrow: record batches of stored bodies in, the same batches with the result columns appended out; every
row is result_row() of its body."""

from __future__ import annotations

import functools
import random
from typing import Any, Optional

import pytest

from helpers import FIXTURES
from ssewire.batch import COLUMNS, SCHEMA_VERSION, result_row

pa = pytest.importorskip("pyarrow")

from ssewire.batch.arrow import SCHEMA, map_batches, output_schema, parse_batch, parse_table  # noqa: E402

STREAMS = sorted(p for p in FIXTURES.iterdir() if p.is_file() and not p.name.endswith(".expected.json"))
GOOD = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
BAD: list[Optional[bytes]] = [
    b"",
    random.Random(7).randbytes(256),
    b"<html>502 Bad Gateway</html>",
    GOOD[: len(GOOD) // 2],
    b'{"error": {"type": "overloaded_error", "message": "Overloaded"}}',
    None,
]
BODIES: list[Optional[bytes]] = [*(p.read_bytes() for p in STREAMS), *BAD]
RESULT_NAMES = [name for name, _ in COLUMNS]


def _batch(bodies: list[Optional[bytes]], body_type: Any = None, body_name: str = "body", **extra: Any) -> Any:
    body_type = body_type or pa.binary()
    if str(body_type) in ("string", "large_string", "string_view"):
        values: list[Any] = [None if b is None else b.decode("utf-8", "replace") for b in bodies]
    else:
        values = list(bodies)
    columns = {"id": pa.array(range(len(bodies)), pa.int64()), body_name: pa.array(values, body_type)}
    columns.update({name: pa.array(column) for name, column in extra.items()})
    return pa.RecordBatch.from_pydict(columns)


def _result_part(out: Any, start: int) -> list[dict[str, Any]]:
    return list(out.select(out.schema.names[start:]).to_pylist())


def test_schema_is_built_from_columns() -> None:
    assert SCHEMA.names == RESULT_NAMES
    assert SCHEMA.metadata == {b"ssewire.schema_version": str(SCHEMA_VERSION).encode()}
    types = dict(COLUMNS)
    for field in SCHEMA:
        assert field.nullable
        assert (
            str(field.type).replace("list<item: string>", "list<string>").replace("double", "float64")
            == (types[field.name])
        ), field.name


VIEWS = pytest.mark.skipif(not hasattr(pa, "binary_view"), reason="pyarrow < 16 has no view types")


@pytest.mark.parametrize("body_type", ["binary", "large_binary", pytest.param("binary_view", marks=VIEWS)])
def test_binary_bodies_round_trip(body_type: str) -> None:
    batch = _batch(BODIES, getattr(pa, body_type)())
    out = parse_batch(batch)
    assert out.num_rows == batch.num_rows
    assert out.schema.equals(output_schema(batch.schema), check_metadata=True)
    assert out.schema.names == [*batch.schema.names, *RESULT_NAMES]
    assert pa.schema(list(out.schema)[2:], metadata=out.schema.metadata).equals(SCHEMA, check_metadata=True)
    assert out.select(["id", "body"]).equals(batch)  # input columns kept, untouched
    assert _result_part(out, 2) == [result_row(body) for body in BODIES]


@pytest.mark.parametrize("body_type", ["string", "large_string", pytest.param("string_view", marks=VIEWS)])
def test_string_bodies_are_read_as_utf8(body_type: str) -> None:
    text_bodies = [b for b in BODIES if b is None or _is_utf8(b)]
    assert len(text_bodies) > len(STREAMS) // 2  # most fixtures are text
    out = parse_batch(_batch(text_bodies, getattr(pa, body_type)()))
    assert _result_part(out, 2) == [result_row(body) for body in text_bodies]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_provider_column() -> None:
    mistral = (FIXTURES / "mistral-chat-model-length.sse").read_bytes()
    bodies: list[Optional[bytes]] = [mistral, mistral, GOOD, GOOD, None]
    providers = ["mistral", None, "anthropic", "not-a-provider", "openai"]
    out = parse_batch(_batch(bodies, vendor=pa.array(providers, pa.string())), provider="vendor")
    rows = _result_part(out, 3)
    expected = [
        result_row(mistral, "mistral"),
        result_row(mistral),  # null: auto
        result_row(GOOD, "anthropic"),
    ]
    assert rows[:3] == expected
    assert rows[0]["stop_reason"] == "max_tokens" and rows[1]["provider"] == "openai-chat"
    assert rows[3]["error_type"] == "unknown_provider" and rows[3]["bytes"] == len(GOOD)
    assert rows[4]["error_type"] == "missing_body"


def test_null_and_bad_bodies_give_error_rows() -> None:
    out = parse_batch(_batch(BAD))
    rows = _result_part(out, 2)
    assert len(rows) == len(BAD)
    assert all(isinstance(row["error_type"], str) and isinstance(row["error_message"], str) for row in rows)
    assert rows[-1]["error_type"] == "missing_body" and rows[-1]["bytes"] is None
    assert rows[-1]["tool_call_names"] is None
    assert [row["error_type"] for row in rows[:4]] == ["not_a_stream"] * 3 + ["stream_truncated"]
    assert rows[4]["error_type"] == "overloaded_error"


def test_framing_argument() -> None:
    body = (FIXTURES / "gemini-stream-json-array.json").read_bytes()
    out = parse_batch(_batch([body]), framing="json_array")
    assert _result_part(out, 2) == [result_row(body, framing="json_array")]
    with pytest.raises(ValueError, match="framing"):
        parse_batch(_batch([body]), framing="JSON")  # type: ignore[arg-type]


def test_clear_errors_for_bad_input_columns() -> None:
    batch = _batch([GOOD], model=["m"], error_type=["x"])
    with pytest.raises(ValueError, match="error_type, model"):
        parse_batch(batch)
    with pytest.raises(ValueError, match="no body column 'payload'"):
        parse_batch(_batch([GOOD]), body="payload")
    with pytest.raises(ValueError, match="no provider column 'p'"):
        parse_batch(_batch([GOOD]), provider="p")
    with pytest.raises(TypeError, match="binary or string"):
        parse_batch(_batch([GOOD]), body="id")
    with pytest.raises(TypeError, match="provider column must be string"):
        parse_batch(_batch([GOOD]), provider="id")


def test_empty_batch() -> None:
    batch = _batch([])
    out = parse_batch(batch)
    assert out.num_rows == 0
    assert out.schema.equals(output_schema(batch.schema), check_metadata=True)


def test_input_schema_metadata_is_kept() -> None:
    batch = _batch([GOOD]).replace_schema_metadata({"source": "archive"})
    assert parse_batch(batch).schema.metadata == {b"source": b"archive", b"ssewire.schema_version": b"2"}


def test_map_batches_for_spark_map_in_arrow() -> None:
    """Spark's mapInArrow calls fn(iterator of batches) -> iterator of batches; the columns bound with partial."""
    batches = [_batch(BODIES[i : i + 5], body_name="payload") for i in range(0, len(BODIES), 5)]
    fn = functools.partial(map_batches, body="payload")
    out = list(fn(iter(batches)))
    assert len(out) == len(batches)
    rows = [row for batch in out for row in _result_part(batch, 2)]
    assert rows == [result_row(body) for body in BODIES]
    assert all(batch.schema.equals(output_schema(batches[0].schema), check_metadata=True) for batch in out)


def test_map_batches_is_lazy() -> None:
    def batches() -> Any:
        yield _batch([GOOD])
        raise AssertionError("read past the first batch")

    assert next(map_batches(batches())).num_rows == 1


def test_parse_table_for_ray() -> None:
    """Ray's map_batches(batch_format="pyarrow") passes a table, possibly of several chunks."""
    table = pa.Table.from_batches([_batch(BODIES[:7]), _batch(BODIES[7:])])
    out = parse_table(table)
    assert out.num_rows == len(BODIES)
    assert out.schema.equals(output_schema(table.schema), check_metadata=True)
    assert out.select(["id", "body"]).equals(table)
    assert out.select(RESULT_NAMES).to_pylist() == [result_row(body) for body in BODIES]
    empty = parse_table(table.schema.empty_table())
    assert empty.num_rows == 0 and empty.schema.equals(out.schema, check_metadata=True)


def test_a_provider_column_named_provider_is_replaced_by_the_provider_used() -> None:
    bodies = [b"", b"data: {}\n\n"]
    batch = pa.RecordBatch.from_pydict({"id": [1, 2], "body": bodies, "provider": ["anthropic", None]})
    out = parse_batch(batch, provider="provider")
    assert out.schema.names == ["id", "body", *SCHEMA.names]
    assert out.select(SCHEMA.names).to_pylist() == [result_row(b"", "anthropic"), result_row(bodies[1])]
    with pytest.raises(ValueError, match=r"already has result column\(s\) provider"):
        parse_batch(batch)  # a provider column that is not the hint: ambiguous


def test_a_string_body_that_is_not_utf8_gives_a_row() -> None:
    # Spark's CAST(binary AS STRING) does not check UTF-8: such a body must give a row, never fail the batch.
    text = pa.array([b"\xff\xfe junk", None], pa.binary()).view(pa.string())
    out = parse_batch(pa.RecordBatch.from_arrays([text], ["body"]))
    assert out.select(SCHEMA.names).to_pylist() == [result_row(b"\xff\xfe junk"), result_row(None)]
