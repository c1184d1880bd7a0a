"""ssewire.spark: parse() on a local Spark session (one per module) over a Parquet file of the fixtures, the shared
recordings and bad bodies; every row equals result_row() of its body, the input columns are kept, bad bodies give
error rows and the job completes.

Skipped without pyspark or Java; ``SSEWIRE_REQUIRE_SPARK=1`` (set by CI) makes their absence a failure instead.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

import pytest

from helpers import FIXTURES
from helpers.archive import RESULT_NAMES, ROWS, expected_row, table_columns
from ssewire._config import env_flag
from ssewire.batch import COLUMNS, result_row

REQUIRED = env_flag("SSEWIRE_REQUIRE_SPARK")


def _module(name: str) -> ModuleType:
    """``name`` imported; a skip where it is missing, unless Spark is required (then the ImportError fails)."""
    return importlib.import_module(name) if REQUIRED else pytest.importorskip(name)


pa = _module("pyarrow")
pq = _module("pyarrow.parquet")
_module("pandas")  # mapInArrow insists on it (pyspark[sql])
sql = _module("pyspark.sql")

from pyspark.sql.pandas.types import to_arrow_schema  # noqa: E402
from pyspark.sql.types import (  # noqa: E402
    ArrayType,
    BinaryType,
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ssewire.batch.spark import RESULT_STRUCT, _map_batches, output_struct, parse  # noqa: E402

# pyspark 4.x warns on every mapInArrow under pandas 3, which mapInArrow does not use
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

GOOD = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local Spark session on two cores, small Arrow batches so that a task sees several; stopped at the end."""
    java_home = os.environ.get("JAVA_HOME")
    if not (shutil.which("java") or (java_home and Path(java_home, "bin", "java").is_file())):
        if REQUIRED:
            pytest.fail("SSEWIRE_REQUIRE_SPARK is set but there is no java on PATH (nor in JAVA_HOME)")
        pytest.skip("no java on PATH (nor in JAVA_HOME): Spark cannot start")
    tmp = tmp_path_factory.mktemp("spark")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYSPARK_PYTHON", sys.executable)  # the Python workers run this interpreter, with ssewire
        session = (
            sql.SparkSession.builder.master("local[2]")
            .appName("ssewire-tests")
            .config("spark.driver.memory", "512m")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={tmp}")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.local.dir", str(tmp / "local"))
            .config("spark.sql.warehouse.dir", str(tmp / "warehouse"))
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "16")  # several batches per partition
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("ERROR")
        try:
            yield session
        finally:
            session.stop()


@pytest.fixture(scope="module")
def archive(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The Parquet file of :data:`ROWS` (columns id, name, body, provider), read by Spark."""
    path = tmp_path_factory.mktemp("archive") / "streams.parquet"
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("body", pa.binary()), ("provider", pa.string())])
    table = pa.table(table_columns(ROWS), schema=schema)
    pq.write_table(table, path, row_group_size=8)
    return spark.read.parquet(str(path))


@pytest.fixture(scope="module")
def hinted(archive: Any) -> Any:
    """The archive with its provider column under another name."""
    return archive.withColumnRenamed("provider", "hint")


def _rows(df: Any) -> list[dict[str, Any]]:
    return sorted((row.asDict() for row in df.collect()), key=lambda row: row["id"])


def _check_results(rows: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    """Each row's result columns equal ``expected``'s (lists as lists, floats to the last bits of a double)."""
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected):
        got = {name: row[name] for name in RESULT_NAMES}
        floats = {name for name, value in want.items() if isinstance(value, float)}
        assert {k: v for k, v in got.items() if k not in floats} == {k: v for k, v in want.items() if k not in floats}
        assert all(got[name] == pytest.approx(want[name], rel=1e-15) for name in floats), row["id"]


def test_result_struct_is_built_from_columns() -> None:
    kinds = {
        "string": StringType(),
        "int64": LongType(),
        "bool": BooleanType(),
        "float64": DoubleType(),
        "list<string>": ArrayType(StringType()),
    }
    assert StructType([StructField(name, kinds[kind]) for name, kind in COLUMNS]) == RESULT_STRUCT


def test_rows_with_a_provider_column(hinted: Any) -> None:
    out = parse(hinted, provider="hint")
    assert out.schema == output_struct(hinted.schema)
    assert out.columns == ["id", "name", "body", "hint", *RESULT_NAMES]
    rows = _rows(out)
    assert [(row["name"], row["body"], row["hint"]) for row in rows] == ROWS  # input columns kept
    _check_results(rows, [expected_row(body, provider) for _, body, provider in ROWS])
    bad = {row["name"]: row for row in rows if row["name"].startswith("bad/")}
    assert all(isinstance(row["error_type"], str) for row in bad.values())
    assert bad["bad/null"]["error_type"] == "missing_body"
    assert bad["bad/unknown-provider"]["error_type"] == "unknown_provider"
    assert bad["bad/truncated"]["truncated"] is True and bad["bad/truncated"]["provider"] == "anthropic"


def test_rows_auto(hinted: Any) -> None:
    rows = _rows(parse(hinted.drop("hint")))
    assert [(row["name"], row["body"]) for row in rows] == [(name, body) for name, body, _ in ROWS]
    _check_results(rows, [result_row(body) for _, body, _ in ROWS])


def _is_utf8(data: Optional[bytes]) -> bool:
    try:
        data is None or data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_string_body_column(hinted: Any) -> None:
    """A string body (Spark's own cast of the binary one) is read as UTF-8."""
    ids = [i for i, (_, body, _) in enumerate(ROWS) if _is_utf8(body)]
    assert len(ids) > len(ROWS) // 2
    text = hinted.where(hinted.id.isin(ids)).selectExpr("id", "CAST(body AS STRING) AS text", "hint")
    out = parse(text, body="text", provider="hint")
    assert out.schema["text"].dataType == StringType()
    _check_results(_rows(out), [expected_row(ROWS[i][1], ROWS[i][2]) for i in ids])


def test_large_var_types(spark: Any, hinted: Any) -> None:
    """With ``useLargeVarTypes`` Spark hands over large_binary bodies; the job runs the same."""
    key = "spark.sql.execution.arrow.useLargeVarTypes"
    previous = spark.conf.get(key, "false")
    spark.conf.set(key, "true")
    try:
        rows = _rows(parse(hinted.where(hinted.id < 24), provider="hint"))
    finally:
        spark.conf.set(key, previous)
    _check_results(rows, [expected_row(body, provider) for _, body, provider in ROWS[:24]])


def test_a_provider_column_named_provider_is_replaced_by_the_provider_used(archive: Any) -> None:
    out = parse(archive, provider="provider")
    assert out.columns == ["id", "name", "body", *RESULT_NAMES]
    rows = _rows(out)
    _check_results(rows, [expected_row(body, provider) for _, body, provider in ROWS])


def test_clear_errors_before_any_job(archive: Any) -> None:
    with pytest.raises(ValueError, match=r"already has result column\(s\) provider"):
        parse(archive)  # a provider column that is not the hint: ambiguous
    with pytest.raises(ValueError, match="Model"):
        parse(archive.withColumnRenamed("name", "Model"))  # Spark ignores case by default
    with pytest.raises(ValueError, match="no body column 'payload'"):
        parse(archive, body="payload")
    with pytest.raises(ValueError, match="no provider column 'vendor'"):
        parse(archive.drop("provider"), provider="vendor")
    with pytest.raises(TypeError, match="body column must be binary or string, not bigint"):
        parse(archive, body="id")
    with pytest.raises(TypeError, match="provider column must be string, not binary"):
        parse(archive.drop("provider"), provider="body")
    with pytest.raises(ValueError, match="framing"):
        parse(archive.drop("provider"), framing="JSON")  # type: ignore[arg-type]


BODY_TYPES = [(BinaryType(), "binary"), (BinaryType(), "large_binary"), (StringType(), "string")]
BODY_TYPES += [(StringType(), "large_string")]


@pytest.mark.parametrize(("spark_type", "arrow_type"), BODY_TYPES, ids=[name for _, name in BODY_TYPES])
def test_batches_are_the_declared_schema(spark_type: Any, arrow_type: str) -> None:
    """What the executors return is exactly the Arrow form of the declared schema, in the width Spark hands over
    (large_* with ``useLargeVarTypes``); no JVM needed."""
    struct = StructType([StructField("id", LongType()), StructField("body", spark_type)])
    options = {"prefers_large_types": True} if arrow_type.startswith("large") else {}
    try:
        declared = to_arrow_schema(output_struct(struct), **options)
    except TypeError:  # pyspark 3.5 has no large types
        pytest.skip("this pyspark has no prefers_large_types")
    bodies = [GOOD, None, b"<html>"]
    values = [None if b is None else b.decode() for b in bodies] if spark_type == StringType() else bodies
    batch = pa.RecordBatch.from_arrays(
        [pa.array([1, 2, 3]), pa.array(values, getattr(pa, arrow_type)())], ["id", "body"]
    )
    (out,) = _map_batches(iter([batch]), "body", None, "auto")
    assert out.schema.equals(declared)
    assert out.select(RESULT_NAMES).to_pylist() == [result_row(body) for body in bodies]


def test_string_body_that_is_not_utf8_gives_an_error_row() -> None:
    """Spark's CAST(binary AS STRING) does not check UTF-8: such a body must give a row, not fail the task."""
    text = pa.array([b"\xff\xfe junk", None], pa.binary()).view(pa.string())
    (out,) = _map_batches(iter([pa.RecordBatch.from_arrays([text], ["body"])]), "body", None, "auto")
    assert out.select(RESULT_NAMES).to_pylist() == [result_row(b"\xff\xfe junk"), result_row(None)]
