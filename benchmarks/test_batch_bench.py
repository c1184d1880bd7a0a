"""The pieces of ``python -m benchmarks.batch``: the archive's plan and bad bodies, the written archive, the
baseline's accounting against :func:`ssewire.batch.result_row`, the ``--check`` floors and the report."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ssewire.batch import result_row

from . import batch
from .batch import BAD_KINDS, MIX, SSE_SOURCES, Item, baseline_row, body, plan
from .batch_recorded import build_recorded, recorded_bodies


def test_plan_is_the_requested_mix_with_bad_bodies() -> None:
    items = plan(2_000)
    assert plan(2_000) == items  # deterministic
    assert [item.index for item in items] == list(range(2_000))
    bad = Counter(item.bad for item in items if item.bad)
    assert sum(bad.values()) == 20  # 1%
    assert set(bad) == set(BAD_KINDS)
    assert max(bad.values()) - min(bad.values()) <= 1
    sources = Counter(item.source for item in items)
    for name, share in MIX:
        assert abs(sources[name] / 2_000 - share) < 0.04, (name, sources[name])
    large = [item for item in items if item.size >= batch.LARGE[0]]
    assert len(large) == 5 and all(item.size <= batch.LARGE[1] for item in large)
    small = [item for item in items if item.size <= batch.SMALL[1]]
    assert len(small) > 0.97 * 2_000


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_bad_bodies_are_error_rows(kind: str) -> None:
    item = Item(7, "openai-chat", 20_000, kind, 0.5)
    data = body(item)
    row = result_row(data)
    assert row["error_type"] is not None, row
    if kind == "empty":
        assert data == b""
    elif kind == "html":
        assert data.startswith(b"<!DOCTYPE html>")
    elif kind == "truncated":
        whole = body(Item(7, "openai-chat", 20_000))
        assert whole.startswith(data) and len(data) == len(whole) // 2
        assert row["error_type"] == "stream_truncated"
    assert body(item) == data  # deterministic
    assert baseline_row(data, "openai-chat")["error"] is not None  # the loop records, never raises


def test_archive_directory_and_parquet_hold_the_same_bodies(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    archive = batch.build(40, root=tmp_path, row_group_rows=8)
    files = sorted(p for p in archive.files.rglob("*") if p.is_file())
    table = pq.read_table(archive.parquet)
    assert len(files) == table.num_rows == archive.streams == 40
    assert pq.ParquetFile(archive.parquet).num_row_groups == 5
    assert [p.read_bytes() for p in files] == table.column("body").to_pylist()
    assert table.column("kind").to_pylist().count("stream") == 40 - archive.manifest["bad"] == 35
    assert archive.bytes == sum(p.stat().st_size for p in files)
    assert archive.largest == max(p.stat().st_size for p in files)
    stamp = archive.parquet.stat().st_mtime_ns
    again = batch.build(40, root=tmp_path, row_group_rows=8)  # cached: not written again
    assert again.manifest == archive.manifest and again.parquet.stat().st_mtime_ns == stamp
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize("source", sorted(SSE_SOURCES))
def test_baseline_accounting_agrees_with_result_row(source: str) -> None:
    text = 0
    for index, size in ((1, 5_000), (2, 40_000), (3, 150_000)):
        data = body(Item(index, source, size))
        theirs, ours = baseline_row(data, source), result_row(data)
        assert theirs["error"] is None and ours["error_type"] is None
        assert theirs["text_chars"] == ours["text_chars"]
        assert theirs["reasoning_chars"] == ours["reasoning_chars"]
        assert theirs["tool_calls"] == ours["tool_calls"]
        assert theirs["tool_call_names"] == ours["tool_call_names"]
        assert theirs["stop_reason"] == ours["raw_stop_reason"] is not None
        assert theirs["output_tokens"] == ours["output_tokens"] is not None
        assert theirs["input_tokens"] == ours["input_tokens"]
        assert theirs["model"] == ours["model"]
        text += ours["text_chars"]
    assert text > 0


def _doc() -> dict[str, Any]:
    run = {
        "input": "Parquet",
        "archive": "generated",
        "jobs": 1,
        "streams": 2_000,
        "bytes": 100_000_000,
        "scaling": 1.0,
        "streams_per_s": 1000.0,
        "mb_per_s": 50.0,
        "cli_seconds": 1.5,
        "peak_worker_rss": 50_000_000,
        "peak_parent_rss": 60_000_000,
        "returncodes": [0],
        "summary_streams": 2_000,
        "summary_errors": 20,
        "summary_errors_runs": [20],
        "summary_bytes": 100_000_000,
    }
    baseline = {
        "streams": 1_500,
        "bytes": 80_000_000,
        "skipped_streams": 500,
        "skipped_bytes": 20_000_000,
        "skipped_by_source": {"ollama-chat": 500},
        "baseline_streams_per_s": 1_000.0,
        "baseline_mb_per_s": 50.0,
        "ssewire_streams_per_s": 3_000.0,
        "ssewire_mb_per_s": 150.0,
        "ratio": 3.0,
        "per_source": {"openai-chat": {"ratio": 3.0}},
        "ssewire_all_bodies_mb_per_s": 160.0,
        "agreement": {"compared": 1_480, "text_chars": 1_480, "output_tokens": 1_480, "stop_reason": 1_480},
    }
    archive = {
        "streams": 2_000,
        "bytes": 100_000_000,
        "largest": 3_000_000,
        "bad": 20,
        "sources": {"openai-chat": 1_500, "ollama-chat": 500},
        "sizes": {"p50": 40_000},
        "within_5_120_kb": 0.9,
        "over_1_mb": 5,
    }
    two = {**run, "jobs": 2, "scaling": 1.6, "peak_worker_rss": 40_000_000}
    recorded_run = {
        **run,
        "input": "recorded, directory",
        "archive": "recorded",
        "streams": 3_000,
        "bytes": 75_000_000,
        "summary_streams": 3_000,
        "summary_bytes": 75_000_000,
        "summary_errors": 170,
        "summary_errors_runs": [170],
        "peak_worker_rss": 30_000_000,
    }
    recorded = {
        "origin": "corpus",
        "recordings": 60,
        "streams": 3_000,
        "bytes": 75_000_000,
        "largest": 256_000,
        "mean": 25_000,
        "sizes": {"p50": 7_000},
        "parquet_bytes": 20_000_000,
    }
    return {
        "quick": True,
        "repeats": 3,
        "cores": 2,
        "machine": "test",
        "archive": archive,
        "recorded": recorded,
        "cli": [run, two, recorded_run, {**recorded_run, "jobs": 2, "scaling": 1.5, "peak_worker_rss": None}],
        "baseline": baseline,
        "cost": {
            name: {
                "streams": 1_000,
                "bytes": 50_000_000,
                "priced_streams": 800,
                "with_cost_mb_per_s": 190.0,
                "without_cost_mb_per_s": 200.0,
                "us_per_stream": 13.2,
                "ratio": 1.05,
                "runs": 5,
            }
            for name in ("generated", "recorded")
        },
    }


def test_check_floors_are_same_run_ratios() -> None:
    doc = _doc()
    assert batch.failures(doc) == []
    slow = copy.deepcopy(doc)
    slow["baseline"]["ratio"] = 1.5
    assert batch.failures(slow) == ["ssewire/baseline 1.50x < 1.6x"]
    flat = copy.deepcopy(doc)
    flat["cli"][1]["scaling"] = 1.45
    assert batch.failures(flat) == []  # quick: its floor is 0.85x
    flat["cli"][1]["scaling"] = 0.84
    assert batch.failures(flat) == ["Parquet: --jobs 2 / --jobs 1 0.84x < 0.85x"]
    flat["cli"][1]["scaling"] = 1.45
    flat["quick"] = False
    assert batch.failures(flat) == ["Parquet: --jobs 2 / --jobs 1 1.45x < 1.5x"]
    flat["cli"][3]["scaling"] = 0.95
    assert batch.failures(flat)[1:] == ["recorded, directory: --jobs 2 / --jobs 1 0.95x < 1.0x"]
    flat["cores"] = 1  # no scaling to expect on one core
    assert batch.failures(flat) == []
    big = copy.deepcopy(doc)
    big["cli"][0]["peak_worker_rss"] = 60_000_000  # 0.6x the archive
    assert batch.failures(big) == []  # quick: the archive is too small to tell
    big["quick"] = False
    assert len(batch.failures(big)) == 1
    wrong = copy.deepcopy(doc)
    wrong["cli"][0]["summary_errors"] = 19
    assert batch.failures(wrong) == [
        "Parquet --jobs 1: 19 errors, not 20",
        "Parquet --jobs 2: [20] errors, --jobs 1: 19",
    ]
    differ = copy.deepcopy(doc)  # the recorded archive: no count of bad bodies, but the same with one job and two
    differ["cli"][3]["summary_errors_runs"] = [170, 171]
    assert batch.failures(differ) == ["recorded, directory --jobs 2: [170, 171] errors, --jobs 1: 170"]
    differ["cli"][2]["summary_bytes"] = 1
    assert batch.failures(differ)[0] == "recorded, directory --jobs 1: 1 bytes, not 75000000"
    costly = copy.deepcopy(doc)
    costly["cost"]["recorded"]["ratio"] = 1.11  # under its ceiling, 1.12x
    costly["cost"]["generated"]["ratio"] = 1.13
    assert batch.failures(costly) == ["generated: result_rows with / without the cost columns 1.130x > 1.12x"]


def test_a_missed_scaling_floor_is_measured_again(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _doc()
    doc["cli"][3]["scaling"] = 0.95  # recorded, directory: under its floor; Parquet's 1.6x is not timed again
    archive = batch.Archive(Path("a"), {"streams": 1000, "bytes": 75_000_000})
    inputs = [
        batch.Input("Parquet", "generated", archive, (Path("a.parquet"),), 3),
        batch.Input("recorded, directory", "recorded", archive, (Path("r"),), 5),
    ]
    timed: list[tuple[str, int]] = []

    def cli_runs(again: list[batch.Input], _log: Any) -> list[dict[str, Any]]:
        timed.extend((source.label, source.repeats) for source in again)
        return [{**doc["cli"][2], "runs": 10}, {**doc["cli"][3], "scaling": 1.2, "runs": 10}]

    monkeypatch.setattr(batch, "cli_runs", cli_runs)
    runs, labels = batch.remeasure_scaling(inputs, doc, lambda _msg: None)
    assert timed == [("recorded, directory", 5 * batch.REMEASURE_FACTOR)] and labels == ["recorded, directory"]
    assert runs[:2] == doc["cli"][:2] and [run["runs"] for run in runs[2:]] == [10, 10]
    assert batch.failures({**doc, "cli": runs}) == []
    doc["cli"][3]["scaling"] = 1.5  # nothing missed: nothing timed again
    assert batch.remeasure_scaling(inputs, doc, lambda _msg: None) == (doc["cli"], []) and len(timed) == 1


def test_report_says_how_it_was_measured() -> None:
    text = batch.report(_doc())
    assert "Measured by `python -m benchmarks.batch --quick`" in text
    assert "| Parquet, `--jobs 2` | 1,000 | 50 | 67 | 1.60x | 40 MB (13x, 0.40x) | 60 MB |" in text
    assert "| recorded, directory, `--jobs 1` | 1,000 | 50 | 50 | 1.00x | 30 MB (117x, 0.40x) | 60 MB |" in text
    assert "| recorded, directory, `--jobs 2` | 1,000 | 50 | 50 | 1.50x | n/a | 60 MB |" in text
    assert "Recorded archive: 3,000 bodies drawn at random from the 60 real recordings of the corpus" in text
    assert "| ssewire `result_rows` (provider detected) | 3,000 | 150 | 3.0x |" in text
    assert "| recorded archive | 1,000 (800) | 200 | 190 | 1.050x | 13.2 |" in text
    no_cli = {**_doc(), "cli": [], "cli_unavailable": "not built"}
    assert "`ssewire batch` not measured: not built." in batch.report(no_cli)


@pytest.mark.skipif(batch.cli_available() is not None, reason=str(batch.cli_available()))
def test_cli_runs_on_a_small_archive(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    archive = batch.build(40, root=tmp_path, row_group_rows=8)
    recorded = batch.Archive(*build_recorded(30, root=tmp_path))
    inputs = [
        batch.Input("Parquet", "generated", archive, (archive.parquet,), 1),
        batch.Input("recorded, directory", "recorded", recorded, (recorded.files,), 2),
    ]
    runs = batch.cli_runs(inputs, lambda _msg: None)
    assert [(run["input"], run["jobs"], run["runs"]) for run in runs] == [
        ("Parquet", 1, 1),
        ("Parquet", 2, 1),
        ("recorded, directory", 1, 2),
        ("recorded, directory", 2, 2),
    ]
    for run in runs:
        assert run["returncodes"] == [0]
        assert run["peak_parent_rss"] > 0
        if run["jobs"] == 1:  # the parent parses; with workers it may parse 40 bodies before one has started
            assert run["peak_worker_rss"] > 0
    assert [(run["summary_streams"], run["summary_errors"]) for run in runs[:2]] == [(40, archive.manifest["bad"])] * 2
    assert [(run["summary_streams"], run["summary_bytes"]) for run in runs[2:]] == [(30, recorded.bytes)] * 2
    assert batch.failures({"quick": True, "cores": 1, "archive": archive.manifest, "cli": runs}) == []


def test_the_recorded_archive_draws_real_recordings(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    origin, bodies = recorded_bodies()
    assert origin in ("corpus", "fixtures") and len(bodies) >= 20
    root, manifest = build_recorded(50, root=tmp_path)
    files = sorted(p for p in (root / "files").rglob("*") if p.is_file())
    table = pq.read_table(root / "archive.parquet")
    assert len(files) == table.num_rows == manifest["streams"] == 50
    assert pq.ParquetFile(root / "archive.parquet").metadata.num_row_groups == manifest["row_groups"] == 1
    drawn = [p.read_bytes() for p in files]
    assert drawn == table.column("body").to_pylist()
    known = dict(bodies)
    assert [known[name] for name in table.column("recording").to_pylist()] == drawn
    assert len(set(drawn)) > 10  # drawn at random, not one body over and over
    assert manifest["bytes"] == sum(map(len, drawn)) and manifest["origin"] == origin
    assert build_recorded(50, root=tmp_path) == (root, manifest)  # cached


def test_cost_overhead_times_rows_with_and_without_the_cost_columns(tmp_path: Path) -> None:
    archive = batch.build(60, root=tmp_path, log=lambda _msg: None)
    cost = batch.cost_overhead(archive, 2, 40, lambda _msg: None)
    assert cost["streams"] == 40 and cost["runs"] == 2 and cost["bytes"] > 0
    assert 0 <= cost["priced_streams"] <= 40
    assert cost["ratio"] > 0 and cost["with_cost_mb_per_s"] > 0 and cost["without_cost_mb_per_s"] > 0
