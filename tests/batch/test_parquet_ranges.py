"""Parquet inputs read where they are parsed: the parent reads only the metadata, gives each row group as a range
of rows, and tasks cut it by bytes and count; whoever reads a range (this process or a worker, in any split, skipping
rows or reopening the group) gives the same rows as one read of the whole group, a group that cannot be decoded
included; rows come back in input order with their kept values; a huge row group is never held whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

from helpers import FIXTURES
from ssewire.batch import COLUMNS, command, result_row
from ssewire.batch.command import main
from ssewire.batch.items import INPUT_ERROR, TOO_LARGE, Item, RowRange, TableColumns, Unreadable
from ssewire.batch.pool import (
    TABLE_TASK_BYTES,
    TABLE_TASK_ROWS,
    TABLE_TASKS_PER_JOB,
    Workers,
    run,
    table_task_bytes,
    tasks,
)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from ssewire.batch import parquet_rows  # noqa: E402  # needs pyarrow
from ssewire.batch.tables import ParquetInput  # noqa: E402

NAMES = [name for name, _ in COLUMNS]
GOOD = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
OPENAI = (FIXTURES / "openai-responses-tool-call.sse").read_bytes()
CHAT = (FIXTURES / "openai-chat-truncated.sse").read_bytes()
HTML = b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>\n"
BODIES: list[Optional[bytes]] = [GOOD, OPENAI, HTML, None, b"", CHAT, b"\x00\xff junk", GOOD * 5]
PLAIN = TableColumns()
PROVIDERS = ["anthropic", None, "openai", None, "no-such-provider", None, None, "anthropic"]


def _write(path: Path, rows: int, group_rows: int, **options: Any) -> list[Optional[bytes]]:
    """A table of ``rows`` bodies (cycling through :data:`BODIES`, each made distinct), a provider and a kept
    column, in row groups of ``group_rows``, small pages; returns the bodies."""
    bodies = [None if BODIES[i % 8] is None else BODIES[i % 8] + b"\n" * (i // 8) for i in range(rows)]  # type: ignore[operator]
    table = pa.table(
        {
            "body": pa.array(bodies, pa.binary()),
            "provider": [PROVIDERS[i % 8] for i in range(rows)],
            "request": [f"req-{i}" for i in range(rows)],
            "day": pa.array([i % 5 for i in range(rows)], pa.int32()),
        }
    )
    options = {"write_batch_size": 2, "data_page_size": 512, "use_dictionary": False, **options}
    pq.write_table(table, path, row_group_size=group_rows, **options)
    return bodies


def _ranges(path: Path, columns: TableColumns = PLAIN, max_body: int = 1 << 30) -> list[RowRange]:
    return [unit for unit in ParquetInput(str(path), columns, max_body).items() if isinstance(unit, RowRange)]


def _read(*ranges: RowRange) -> list[Any]:
    """The items of ``ranges``, read one after the other in this process, from a closed cursor."""
    parquet_rows.close()
    try:
        return [item for rows in ranges for item in parquet_rows.range_items(rows)]
    finally:
        parquet_rows.close()


def _split(rows: RowRange, cuts: list[int]) -> list[RowRange]:
    edges = [rows.start, *cuts, rows.stop]
    return [rows._replace(start=a, stop=b) for a, b in zip(edges, edges[1:]) if a < b]


# --- what the parent makes of a table ---------------------------------------------------------------------------------


def test_the_parent_gives_one_range_per_row_group_from_the_metadata(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    _write(path, 20, 6)
    columns = TableColumns("body", "provider", ("request", "missing"))
    ranges = _ranges(path, columns)
    assert [(r.group, r.first, r.start, r.stop, r.group_rows) for r in ranges] == [
        (0, 0, 0, 6, 6),
        (1, 6, 0, 6, 6),
        (2, 12, 0, 6, 6),
        (3, 18, 0, 2, 2),
    ]
    assert all(r.present == ("request",) and r.columns == columns and r.bytes_per_row > 0 for r in ranges)
    assert len({r.batch_rows for r in ranges}) == 1  # one batch size for the whole table
    assert ranges[1].sources() == [f"{path}#{i}" for i in range(6, 12)]


def test_tasks_cut_a_row_group_by_bytes_and_count_in_order() -> None:
    rows = RowRange("t.parquet", "t.parquet", 0, 100, 0, 50, 8, 50, PLAIN, (), 1 << 20, 1000.0, 50_000)
    items = [Item(f"f{i}", b"x" * 10, None, 10, ()) for i in range(3)]
    got = list(tasks([items[0], rows, items[1], items[2]], task_bytes=12_000))
    assert [task.sources for task in got[:1]] == [["f0"]]  # the items before a range: a task of their own
    pieces = [task.work for task in got[1:-1]]
    assert [(p.start, p.stop) for p in pieces] == [(0, 12), (12, 25), (25, 37), (37, 50)]  # type: ignore[union-attr]
    assert [s for task in got[1:-1] for s in task.sources] == [f"t.parquet#{i}" for i in range(100, 150)]
    assert all(task.kept == [] for task in got[1:-1])  # the worker reads the kept values
    assert got[-1].sources == ["f1", "f2"]
    assert [(p.start, p.stop) for p in _pieces(rows._replace(table_bytes=0), task_bytes=1)] == [
        (i, i + 1) for i in range(50)
    ]  # a row at least
    many = rows._replace(stop=TABLE_TASK_ROWS * 2 + 1, group_rows=TABLE_TASK_ROWS * 2 + 1, bytes_per_row=0.0)
    assert [p.rows for p in _pieces(many, task_bytes=1 << 30)] == [2731, 2731, 2731]  # at most TABLE_TASK_ROWS


def test_a_table_is_cut_into_enough_tasks_for_every_worker_and_no_more() -> None:
    mib = 1 << 20
    assert table_task_bytes(1 << 30, mib, jobs=1) == TABLE_TASK_BYTES  # big tables: big tasks, whole row groups
    assert table_task_bytes(100 * mib, mib, jobs=2) == 100 * mib // (2 * TABLE_TASKS_PER_JOB)  # enough for both
    assert table_task_bytes(4 * mib, mib, jobs=2) == mib  # never under --task-bytes ...
    assert table_task_bytes(1 << 30, 64 * mib, jobs=2) == 64 * mib  # ... which may ask for more
    group = RowRange("t.parquet", "t.parquet", 0, 0, 0, 3000, 64, 3000, PLAIN, (), 1 << 20, 25_000.0, 75_000_000)
    pieces = [task.work for task in tasks([group], mib, jobs=2)]
    sizes = [p.rows for p in pieces]  # type: ignore[union-attr]
    assert len(pieces) == 16 and max(sizes) - min(sizes) <= 1 and sum(sizes) == 3000  # 8 a worker
    archive = [group._replace(group=g, first=500 * g, stop=500, group_rows=500, table_bytes=1 << 30) for g in range(4)]
    assert [task.work for task in tasks(archive, mib, jobs=2)] == archive  # groups of 12.5 MB: one task each
    over = [rows._replace(bytes_per_row=TABLE_TASK_BYTES * 1.4 / 500) for rows in archive]
    assert [task.work for task in tasks(over, mib, jobs=2)] == over  # a group a little over the size stays whole


def _pieces(rows: RowRange, task_bytes: int) -> list[RowRange]:
    return [task.work for task in tasks([rows], task_bytes) if isinstance(task.work, RowRange)]


# --- reading ranges -------------------------------------------------------------------------------------------------


def test_any_split_of_a_group_gives_the_rows_of_the_whole_group(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    bodies = _write(path, 40, 40)
    columns = TableColumns("body", "provider", ("request", "day"))
    (whole,) = _ranges(path, columns, max_body=len(GOOD) * 4)  # GOOD * 5 is over the limit
    whole = whole._replace(batch_rows=3)  # batches that ranges cut across
    expected = _read(whole)
    assert len(expected) == 40
    for row, (payload, provider, kept) in enumerate(expected):
        assert kept == (f"req-{row}", row % 5) and provider == PROVIDERS[row % 8]
        if row % 8 == 7:
            assert isinstance(payload, Unreadable) and payload.kind == TOO_LARGE and f"{path}#{row}" in payload.message
        else:
            assert payload == bodies[row]
    for cuts in ([1], [2, 3, 4], list(range(1, 40)), [5, 17, 18, 33]):
        assert _read(*_split(whole, cuts)) == expected, cuts
    backwards = _split(whole, [10, 20, 30])[::-1]  # each range before the last one read: the group reopened
    assert _read(*backwards) == [row for piece in _split(whole, [10, 20, 30])[::-1] for row in _read(piece)]
    assert sorted(_read(*backwards), key=str) == sorted(expected, key=str)
    skipping = _split(whole, [7, 15, 29])[1::2]  # every other range: the rows between decoded and dropped
    assert _read(*skipping) == expected[7:15] + expected[29:]


def test_a_group_that_cannot_be_decoded_fails_at_the_same_row_whatever_the_split(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    _write(path, 60, 30, compression="gzip")
    column = pq.ParquetFile(path).metadata.row_group(1).column(0)  # the second group's bodies: rows 30-59
    with path.open("r+b") as file:  # junk over the last third of its pages (headers included); the footer stays
        file.seek(column.data_page_offset + column.total_compressed_size * 2 // 3)
        file.write(b"\xff" * (column.total_compressed_size // 3))
    first, second = (rows._replace(batch_rows=4) for rows in _ranges(path))
    good = _read(first)
    assert all(not isinstance(payload, Unreadable) for payload, _, _ in good)
    whole = _read(second)
    failed = [row for row, (payload, _, _) in enumerate(whole) if isinstance(payload, Unreadable)]
    assert failed and failed == list(range(failed[0], 30)) and failed[0] % 4 == 0  # a whole batch on
    assert failed[0] > 0  # the rows before it are read
    assert all("row group 1 cannot be decoded" in payload.message for payload, _, _ in whole[failed[0] :])
    for cuts in ([1], [failed[0] - 1], [failed[0] + 1], list(range(2, 30, 3))):
        assert _read(*_split(second, cuts)) == whole, cuts
        assert _read(*_split(second, cuts)[1:]) == whole[_split(second, cuts)[1].start :]  # skipping to it


def test_a_file_gone_before_its_rows_are_read_gives_unreadable_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    _write(path, 5, 5)
    (rows,) = _ranges(path)
    path.unlink()
    got = _read(rows)
    assert len(got) == 5
    assert all(isinstance(payload, Unreadable) and payload.kind == INPUT_ERROR for payload, _, _ in got)


# --- workers ----------------------------------------------------------------------------------------------------------


def test_workers_read_the_ranges_and_give_the_rows_of_this_process_in_order(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    _write(path, 64, 24)
    columns = TableColumns("body", "provider", ("request", "day"))
    units = ParquetInput(str(path), columns).items()
    here = list(run(tasks(units, task_bytes=2_000), "auto", "auto"))
    workers = Workers(2, ("pyarrow.parquet",))
    try:
        workers.wait()  # started: every task goes to a worker
        units = ParquetInput(str(path), columns).items()
        there = list(run(tasks(units, task_bytes=2_000), "auto", "auto", workers))
    finally:
        workers.close()
    assert len(here) == len(there) > 6
    assert {done.worker for done in here} == {os.getpid()}
    assert os.getpid() not in {done.worker for done in there}
    assert [(d.sources, d.kept, d.rows) for d in here] == [(d.sources, d.kept, d.rows) for d in there]
    sources = [source for done in there for source in done.sources]
    assert sources == [f"{path}#{i}" for i in range(64)]
    assert [kept for done in there for kept in done.kept] == [(f"req-{i}", i % 5) for i in range(64)]


@pytest.mark.parametrize(("jobs", "workers_read"), [("1", False), ("2", False), ("2", True)])
def test_the_command_gives_each_row_its_result_row_in_input_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str, workers_read: bool
) -> None:
    """With workers, a batch's tables are read by the parent (bodies sent) or, holding enough bodies, by the
    workers themselves: the same rows."""
    if workers_read:
        monkeypatch.setattr(command, "TABLES_READ_BY_WORKERS", 1)
    path = tmp_path / "t.parquet"
    bodies = _write(path, 48, 10)
    out = tmp_path / "r.jsonl"
    args = ["--provider-column", "provider", "--keep-columns", "request", "--task-bytes", "3K", "--quiet"]
    assert main([str(path), "--out", str(out), "--jobs", jobs, *args]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = [
        {"source": f"{path}#{i}", "request": f"req-{i}", **_row(body, PROVIDERS[i % 8])}
        for i, body in enumerate(bodies)
    ]
    assert rows == expected


def _row(body: Optional[bytes], provider: Optional[str]) -> dict[str, Any]:
    if provider == "no-such-provider":
        from ssewire.batch import result_rows

        return next(result_rows([(body, provider)]))
    return result_row(body, provider or "auto")  # type: ignore[arg-type]  # (a column's name: any string)


# --- memory -----------------------------------------------------------------------------------------------------------

_READ_HUGE = """
import json, sys, tracemalloc
import pyarrow as pa, pyarrow.parquet as pq
from ssewire.batch import parquet_rows
from ssewire.batch.items import TableColumns
from ssewire.batch.tables import ParquetInput

path = sys.argv[1]
(rows,) = ParquetInput(path, TableColumns()).items()
tracemalloc.start()
count = size = 0
for piece in (rows._replace(stop=100), rows._replace(start=100, stop=180), rows._replace(start=200)):
    for payload, _, _ in parquet_rows.range_items(piece):
        count, size = count + 1, size + len(payload)
parquet_rows.close()
python_peak, arrow_peak = tracemalloc.get_traced_memory()[1], pa.default_memory_pool().max_memory()
whole = pq.ParquetFile(path).read_row_group(0)  # the control: what holding the group takes
print(json.dumps({"rows": count, "bytes": size, "python_peak": python_peak, "arrow_peak": arrow_peak,
                  "group": rows.bytes_per_row * rows.group_rows, "whole": pa.default_memory_pool().max_memory()}))
"""


def test_a_huge_row_group_is_read_a_batch_at_a_time(tmp_path: Path) -> None:
    """A row group of 256 MiB of bodies, read in ranges that skip rows: a few MiB held at a time, on both sides."""
    path = tmp_path / "huge.parquet"
    delta = b'data: {"type":"response.output_text.delta","delta":"%s"}\n\n' % (b"abcdefgh" * 8192)
    body = delta * 16  # 1 MiB; compresses to little
    chunk = pa.array([body] * 32, pa.binary())  # 32 MiB, shared by the 8 chunks of the column
    table = pa.table({"body": pa.chunked_array([chunk] * 8)})
    pq.write_table(table, path, row_group_size=1 << 20, write_batch_size=4)  # pages of 4 bodies (pages are held)
    assert pq.ParquetFile(path).metadata.num_row_groups == 1
    proc = subprocess.run([sys.executable, "-c", _READ_HUGE, str(path)], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    got = json.loads(proc.stdout)
    assert got["rows"] == 236 and got["bytes"] == 236 * len(body)
    assert got["whole"] >= 256 << 20 and got["group"] > 200 << 20  # the measure sees a group held whole
    assert got["python_peak"] < 16 << 20, got  # one batch of bodies (4 MiB) as bytes, not the group
    assert got["arrow_peak"] < 40 << 20, got  # a batch, a page and the read buffer
