"""ssewire.batch.arrow.parse_table as a Ray Data map_batches function (batch_format="pyarrow"), on a local Ray instance:
every row equals result_row() of its body and the input columns are kept. Skipped without ray."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.archive import RESULT_NAMES, ROWS, expected_row, table_columns

pa = pytest.importorskip("pyarrow")
ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from ssewire.batch.arrow import output_schema, parse_table  # noqa: E402

# Ray Data's own DataContext trips its deprecation warnings
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local Ray instance on two CPUs (no dashboard, no auth token written), shut down at the end."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_AUTH_MODE", "disabled")
        env.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="ERROR",
            _temp_dir=str(tmp_path_factory.mktemp("ray")),
        )
        ray.data.DataContext.get_current().enable_progress_bars = False
        try:
            yield ray
        finally:
            ray.shutdown()


SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("body", pa.binary()), ("hint", pa.string())])


def _tables() -> list[Any]:
    """:data:`ROWS` as three tables (three blocks), the provider column named ``hint``."""
    size = len(ROWS) // 3 + 1
    tables = []
    for start in range(0, len(ROWS), size):
        columns = table_columns(ROWS[start : start + size], start)
        columns["hint"] = columns.pop("provider")
        tables.append(pa.table(columns, schema=SCHEMA))
    return tables


def _run(dataset: Any) -> Any:
    return pa.concat_tables(ray.get(dataset.to_arrow_refs())).sort_by("id")


@pytest.mark.parametrize("provider", [None, "hint"])
def test_map_batches_parse_table(local_ray: Any, provider: Any) -> None:
    tables = _tables()
    fn = functools.partial(parse_table, provider=provider)
    out = _run(local_ray.data.from_arrow(tables).map_batches(fn, batch_format="pyarrow"))
    assert out.schema.equals(output_schema(SCHEMA))
    assert out.column("body").to_pylist() == [body for _, body, _ in ROWS]  # input columns kept
    assert out.column("hint").to_pylist() == [hint for _, _, hint in ROWS]
    expected = [expected_row(body, hint if provider else None) for _, body, hint in ROWS]
    assert out.select(RESULT_NAMES).to_pylist() == expected
