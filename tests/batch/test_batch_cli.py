"""``ssewire batch``: files, directories and tables in, one row per stream out, each equal to ``result_row`` of its
body and in input order whatever ``--jobs``; bad bodies are error rows and the batch completes; usage errors exit
2 with a message; the summary adds up the rows; memory follows a task, not the archive."""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
import multiprocessing
import os
import random
import subprocess
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Optional

import pytest

from helpers import FIXTURES
from ssewire.batch import COLUMNS, SCHEMA_VERSION, result_row, result_rows
from ssewire.batch.command import main
from ssewire.batch.inputs import DirectoryInput
from ssewire.batch.items import Payload, ReadFile, TableColumns, Unreadable
from ssewire.batch.pool import INPUT_ERROR, TASK_ITEMS, Workers, parse_work, run, tasks
from ssewire.batch.progress import Progress
from ssewire.cli import main as ssewire_main

NAMES = [name for name, _ in COLUMNS]
KINDS = dict(COLUMNS)
FILES = sorted(p for p in FIXTURES.iterdir() if p.is_file() and not p.name.startswith("."))
GOOD = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
OPENAI = (FIXTURES / "openai-responses-tool-call.sse").read_bytes()
HTML = b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>\n"
JSON_ERROR = b'{"error": {"type": "overloaded_error", "message": "Overloaded"}}'
JUNK = random.Random(11).randbytes(2048)  # seeded: the same junk every run
POSIX = sys.platform != "win32"  # peak RSS comes from the resource module

#: The README's DuckDB query over ``ssewire batch``'s output, run verbatim below.
README_HEADING = "### Re-parsing stored streams: `ssewire batch`"
README_QUERY = """\
SELECT provider, model, count(*) AS streams, count(error_type) AS errors,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       count(cost_usd) AS priced, round(sum(cost_usd), 6) AS cost_usd,
       round(sum(cost_usd - cost_computed_usd), 6) AS reported_minus_computed
FROM 'results.parquet'
GROUP BY ALL
ORDER BY cost_usd DESC NULLS LAST, streams DESC;
"""


def _expected(paths: list[Path]) -> list[dict[str, Any]]:
    return [{"source": str(path), **result_row(path.read_bytes())} for path in paths]


def _cell(name: str, text: str) -> Any:
    """A CSV cell back as the value the row holds (empty: None)."""
    kind = KINDS.get(name, "string")
    if text == "" and name != "source":
        return None
    if kind == "int64":
        return int(text)
    if kind == "bool":
        return {"true": True, "false": False}[text]
    if kind == "float64":
        return float(text)
    if kind == "list<string>":
        return json.loads(text)
    return text


def read_rows(path: Path, fmt: Optional[str] = None) -> list[dict[str, Any]]:
    """The rows of an output file of ``fmt`` (default: from its suffix), as dicts."""
    fmt = fmt or path.suffix.lstrip(".")
    if fmt == "parquet":
        pq = pytest.importorskip("pyarrow.parquet")
        return list(pq.read_table(path).to_pylist())
    if fmt == "jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    with path.open(newline="", encoding="utf-8") as file:
        return [{name: _cell(name, text) for name, text in row.items()} for row in csv.DictReader(file)]


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _batch(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``python -m ssewire batch ...`` in a real subprocess."""
    return subprocess.run([sys.executable, "-m", "ssewire", "batch", *args], capture_output=True, timeout=120)


# --- files and directories -------------------------------------------------------------------------------------


def test_a_directory_gives_the_result_row_of_each_file_in_order(
    tmp_path: Path, out_format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"results.{out_format}"
    assert main([str(FIXTURES), "--out", str(out), "--jobs", "1"]) == 0
    assert read_rows(out) == _expected(FILES)
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # the partial file became the output
    said = capsys.readouterr()
    assert f"{len(FILES)} streams" in said.out and f"wrote {out} ({out_format})" in said.out
    assert said.err == ""  # no progress bar: stderr is no terminal


def test_glob_and_exclude_choose_the_files_of_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.jsonl"
    streams = [path for path in FILES if not path.name.endswith(".expected.json")]
    assert len(streams) < len(FILES)
    assert main([str(FIXTURES), "--out", str(out), "-j", "1", "--exclude", "*.expected.json"]) == 0
    assert read_rows(out) == _expected(streams)
    assert f"{len(streams)} streams" in capsys.readouterr().out  # the progress total counts the same files
    eventstreams = [path for path in FILES if path.suffix == ".eventstream"]
    assert main([str(FIXTURES), "--out", str(out), "-q", "--glob", "*.eventstream"]) == 0
    assert read_rows(out) == _expected(eventstreams)
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    for name in ("a.sse", "a.sse.expected.json", "sub/b.sse", "sub/c.json", "notes.txt"):
        (tree / name).write_bytes(GOOD)
    excluded = ["--exclude", "*.expected.json", "--exclude", "notes.*"]
    assert main([str(tree), "--out", str(out), "-q", "--glob", "*.s*", *excluded]) == 0
    assert [row["source"] for row in read_rows(out)] == [str(tree / "a.sse"), str(tree / "sub" / "b.sse")]
    assert main([str(tree), "--out", str(out), "-q", "--glob", "sub/*"]) == 0  # the path inside the directory
    assert [row["source"] for row in read_rows(out)] == [str(tree / "sub" / "b.sse"), str(tree / "sub" / "c.json")]
    given = tree / "a.sse.expected.json"  # a file given itself is read, whatever the patterns
    assert main([str(given), "--out", str(out), "-q", "--exclude", "*.expected.json"]) == 0
    assert [row["source"] for row in read_rows(out)] == [str(given)]


def test_the_parquet_output_has_the_arrow_schema_after_source(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from ssewire.batch.arrow import SCHEMA

    out = tmp_path / "results.parquet"
    assert main([str(FIXTURES / "openai-responses-tool-call.sse"), "--out", str(out), "--quiet"]) == 0
    schema = pq.read_schema(out)
    assert schema.names == ["source", *NAMES]
    assert [field.type for field in schema][1:] == [field.type for field in SCHEMA]
    assert schema.metadata[b"ssewire.schema_version"] == str(SCHEMA_VERSION).encode()


def test_jobs_1_and_2_give_the_same_rows_in_the_same_order(tmp_path: Path) -> None:
    inputs = [str(FIXTURES), str(FIXTURES / "openai-responses-tool-call.sse"), str(FIXTURES)]
    common = [*inputs, "--task-bytes", "3K", "--quiet"]  # many small tasks: several in flight, done out of order
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main([*common, "--out", str(one), "--jobs", "1"]) == 0
    assert main([*common, "--out", str(two), "--jobs", "2", "--summary-json", str(tmp_path / "s.json")]) == 0
    expected = _expected(FILES) + _expected([FIXTURES / "openai-responses-tool-call.sse"]) + _expected(FILES)
    assert read_rows(one) == read_rows(two) == expected
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert summary["jobs"] == 2
    if POSIX:  # the workers that parsed
        assert 1 <= len(summary["peak_rss_per_worker"]) <= 2


def test_with_workers_the_parent_parses_nothing_not_even_before_they_have_started() -> None:
    files = DirectoryInput(str(FIXTURES), TableColumns("body", None, ()))
    workers = Workers(2)  # not waited for: the first tasks are sent before any worker is up
    try:
        done = list(run(tasks(files.items(), task_bytes=3_000, jobs=2), "auto", "auto", workers))
    finally:
        workers.close()
    assert len(done) > 4 and os.getpid() not in {d.worker for d in done}
    assert [row for d in done for row in d.rows] == [tuple(r.values())[1:] for r in _expected(FILES)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forks of the parent on Linux only")
def test_workers_are_forks_of_a_parent_that_runs_one_thread_never_of_one_that_runs_more() -> None:
    script = (
        "import threading; from ssewire.batch.pool import Workers; "
        "w = Workers(2); w.wait(); print(w.executor._mp_context.get_start_method()); w.close(); "
        "stop = threading.Event(); t = threading.Thread(target=stop.wait); t.start(); "
        "w = Workers(2); w.wait(); print(w.executor._mp_context.get_start_method()); w.close(); stop.set(); t.join()"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    # (with another thread: a forkserver, where this interpreter's pool can use one; Debian's PyPy 3.9 can only fork)
    usable = "forkserver" in multiprocessing.get_all_start_methods() and hasattr(
        ProcessPoolExecutor, "_adjust_process_count"
    )
    threaded = b"forkserver" if usable else b"fork"
    assert proc.stdout.split() == [b"fork", threaded], proc.stderr.decode()


_NUMPY_THREADS = """
import os
from ssewire.batch.pool import Workers

def threads():
    import numpy  # (what pyarrow imports where it is installed)
    return len(os.listdir("/proc/self/task"))

if __name__ == "__main__":
    workers = Workers(2)
    print(workers.executor.submit(threads).result(), os.environ.get("OPENBLAS_NUM_THREADS"))
    workers.close()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2, reason="threads seen in /proc")
def test_a_worker_loads_numpys_blas_without_threads_of_its_own(tmp_path: Path) -> None:
    """OpenBLAS starts a thread per core that spins while it waits (three processes' of them on two cores slowed a
    batch run by ~7%): a worker says how many it may start, unless the environment already did."""
    pytest.importorskip("numpy")
    script = tmp_path / "numpy_threads.py"
    script.write_text(_NUMPY_THREADS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120, env=env)
    assert proc.stdout.split() == [b"1", b"None"], proc.stderr.decode()  # (the parent's own environment untouched)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, timeout=120, env={**env, "OPENBLAS_NUM_THREADS": "2"}
    )
    assert proc.stdout.split() == [b"2", b"2"], proc.stderr.decode()


def test_the_command_line_says_numpys_blas_starts_no_threads(tmp_path: Path) -> None:
    script = (
        "import os, sys; from ssewire.cli import console; "
        f"sys.argv = ['ssewire', 'batch', {str(FIXTURES)!r}, '--out', {str(tmp_path / 'rows.csv')!r}, '--quiet']; "
        "status = console(); print(status, os.environ.get('OPENBLAS_NUM_THREADS'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, env=env)
    assert proc.stdout.split() == [b"0", b"1"], proc.stderr.decode()


def test_python_dash_m_ssewire_batch_in_a_subprocess(tmp_path: Path) -> None:
    out, summary = tmp_path / "results.csv", tmp_path / "summary.json"
    proc = _batch(str(FIXTURES), "--out", str(out), "--jobs", "2", "--summary-json", str(summary))
    assert proc.returncode == 0, proc.stderr.decode()
    assert read_rows(out) == _expected(FILES)
    assert f"{len(FILES)} streams".encode() in proc.stdout and proc.stderr == b""
    assert json.loads(summary.read_text(encoding="utf-8"))["streams"] == len(FILES)


def test_the_command_writes_parquet_without_importing_pandas_in_its_own_process(tmp_path: Path) -> None:
    pytest.importorskip("pandas")  # (installed: pyarrow's first conversion would import it)
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "rows.parquet"
    script = (
        "import sys; from ssewire.cli import console; "
        f"sys.argv = ['ssewire', 'batch', {str(FIXTURES)!r}, '--out', {str(out)!r}, '--jobs', '1', '--quiet']; "
        "status = console(); print(status, 'pandas' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.stdout.split() == [b"0", b"False"], proc.stderr.decode()
    assert pq.read_table(out).num_rows == len(FILES)
    pytest.importorskip("pandas")  # in a process that runs more than the command, pyarrow still converts to pandas

    assert main([str(FIXTURES / "openai-responses-tool-call.sse"), "--out", str(out), "--quiet"]) == 0
    assert pq.read_table(out).to_pandas().shape[0] == 1


def test_bad_bodies_give_error_rows_and_the_batch_completes(tmp_path: Path) -> None:
    bodies = tmp_path / "bodies"
    (bodies / "sub").mkdir(parents=True)
    files = {
        "cut.sse": GOOD[: len(GOOD) // 2],
        "empty.sse": b"",
        "gzip-junk.sse.gz": gzip.compress(JUNK),
        "json-error.json": JSON_ERROR,
        "junk.bin": JUNK,
        "page.html": HTML,
        "sub/ok.sse": GOOD,
    }
    for name, data in files.items():
        (bodies / name).write_bytes(data)
    (bodies / ".hidden.sse").write_bytes(GOOD)  # hidden files and directories are skipped
    (bodies / ".cache").mkdir()
    (bodies / ".cache" / "x.sse").write_bytes(GOOD)
    out = tmp_path / "results.jsonl"
    assert main([str(bodies), "--out", str(out), "--jobs", "2", "--quiet"]) == 0
    rows = read_rows(out)
    assert rows == _expected([bodies / name for name in files])
    assert [row["error_type"] is None for row in rows] == [False] * 6 + [True]
    by_name = {Path(row["source"]).name: row for row in rows}
    assert by_name["empty.sse"]["error_type"] == "not_a_stream" and "empty" in by_name["empty.sse"]["error_message"]
    assert "HTML" in by_name["page.html"]["error_message"]
    assert by_name["json-error.json"]["error_type"] == "overloaded_error"
    assert by_name["cut.sse"]["truncated"] is True and by_name["cut.sse"]["provider"] == "anthropic"


@pytest.mark.skipif(not hasattr(os, "symlink") or not POSIX, reason="symbolic links")
def test_links_to_files_are_read_links_to_directories_are_not(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.sse").write_bytes(GOOD)
    os.symlink(folder / "sub", folder / "b-dir")
    os.symlink(folder / "sub" / "a.sse", folder / "c.sse")
    out = tmp_path / "r.jsonl"
    assert main([str(folder), "--out", str(out), "--quiet"]) == 0
    assert [row["source"] for row in read_rows(out)] == [str(folder / "c.sse"), str(folder / "sub" / "a.sse")]


def test_the_output_is_never_read_as_an_input(tmp_path: Path) -> None:
    (tmp_path / "a.sse").write_bytes(GOOD)
    out = tmp_path / "results.jsonl"
    for _ in range(2):  # the second run finds the first one's output in the directory
        assert main([str(tmp_path), "--out", str(out), "--quiet", "--jobs", "1"]) == 0
        assert [row["source"] for row in read_rows(out)] == [str(tmp_path / "a.sse")]


SURROGATE_MODEL = (
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-\\ud83d","choices":[{"index":0,'
    b'"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)  # a model name with half an emoji: a lone surrogate once decoded


def test_lone_surrogates_and_undecodable_file_names_are_written_escaped(tmp_path: Path, out_format: str) -> None:
    fmt = out_format
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.sse").write_bytes(SURROGATE_MODEL)
    names = ["a.sse"]
    if sys.platform.startswith("linux"):  # any bytes make a file name there
        names.append(os.fsdecode(b"b-\xff.sse"))
        (folder / names[1]).write_bytes(GOOD)
    out = tmp_path / f"results.{fmt}"
    assert main([str(folder), "--out", str(out), "--quiet", "--jobs", "1"]) == 0
    rows = read_rows(out)
    assert result_row(SURROGATE_MODEL)["model"] == "gpt-\\ud83d"  # the row holds the escape, as text
    assert rows[0]["model"] == "gpt-\\ud83d"
    escaped = [str(folder / "a.sse"), str(folder) + os.sep + "b-\\udcff.sse"]  # the file name's byte 0xff
    assert [row["source"] for row in rows] == escaped[: len(names)]
    assert [row["model"] for row in rows[1:]] == [result_row(GOOD)["model"]] * (len(names) - 1)


def test_a_jsonl_file_without_body_column_is_one_stream(tmp_path: Path) -> None:
    stream = FIXTURES / "openai-realtime-cut-mid-call.jsonl"
    out = tmp_path / "r.jsonl"
    assert main([str(stream), "--out", str(out), "--quiet"]) == 0
    assert read_rows(out) == _expected([stream])


# --- tables ------------------------------------------------------------------------------------------------------

TABLE_BODIES = [GOOD, OPENAI, None, HTML, GOOD, OPENAI[: len(OPENAI) // 2], b""]
TABLE_PROVIDERS = ["anthropic", None, None, "openai", "nope", "openai", None]  # "nope": an unknown_provider row


@pytest.mark.parametrize("body_type", ["binary", "string", "large_binary"])
def test_a_parquet_table_with_a_provider_column_and_kept_columns(tmp_path: Path, body_type: str) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    bodies = [*TABLE_BODIES, gzip.compress(GOOD)] if body_type != "string" else TABLE_BODIES
    providers = TABLE_PROVIDERS + [None] * (len(bodies) - len(TABLE_PROVIDERS))
    values: list[Any] = list(bodies) if body_type != "string" else [None if b is None else b.decode() for b in bodies]
    ids = list(range(100, 100 + len(bodies)))
    table = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "payload": pa.array(values, getattr(pa, body_type)()),
            "who": pa.array(providers, pa.string()),
        }
    )
    path = tmp_path / "archive.parquet"
    pq.write_table(table, path, row_group_size=3)
    out = tmp_path / "results.parquet"
    args = ["--body-column", "payload", "--provider-column", "who", "--keep-columns", "id", "--quiet"]
    assert main([str(path), "--out", str(out), *args, "--jobs", "2", "--task-bytes", "2K"]) == 0
    rows = read_rows(out)
    expected = list(result_rows(zip(bodies, providers)))
    assert rows == [{"source": f"{path}#{i}", "id": ids[i], **row} for i, row in enumerate(expected)]
    assert pq.read_schema(out).field("id").type == pa.int64()
    assert rows[2]["error_type"] == "missing_body" and rows[4]["error_type"] == "unknown_provider"
    assert rows[0]["provider"] == "anthropic" and rows[1]["provider"] == "openai"  # named, and detected


def test_a_jsonl_table(tmp_path: Path) -> None:
    lines = [
        {"id": 1, "body": GOOD.decode(), "provider": "anthropic"},
        {"id": "two", "body_base64": base64.b64encode(gzip.compress(OPENAI)).decode()},  # bytes: base64
        None,  # a blank line: skipped
        {"id": 3, "body": None},
        "not json",
        [1, 2],
        {"id": 6, "body": 42},
        {"id": 7, "body_base64": "%%%"},
        {"id": {"x": 1}, "body": HTML.decode(), "provider": "gemini"},
    ]
    path = tmp_path / "archive.jsonl"
    text = [("" if line is None else line if isinstance(line, str) else json.dumps(line)) for line in lines]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    out = tmp_path / "results.jsonl"
    args = ["--body-column", "body", "--provider-column", "provider", "--keep-columns", "id", "--quiet"]
    assert main([str(path), "--out", str(out), *args]) == 0
    rows = read_rows(out)
    assert [row["source"] for row in rows] == [f"{path}#{i}" for i in (0, 1, 3, 4, 5, 6, 7, 8)]
    assert [row["id"] for row in rows] == ["1", "two", "3", None, None, "6", "7", '{"x": 1}']
    results = [{k: v for k, v in row.items() if k not in ("source", "id")} for row in rows]
    assert results[0] == result_row(GOOD, "anthropic")
    assert results[1] == result_row(gzip.compress(OPENAI))
    assert {**results[1], "bytes": len(OPENAI)} == result_row(OPENAI)  # gzip undone
    assert results[2] == result_row(None)
    assert results[7] == result_row(HTML, "gemini")
    for row, says in zip(results[3:7], ("not JSON", "an array, not a JSON object", "a number", "not base64")):
        assert row["error_type"] == INPUT_ERROR and says in row["error_message"], row
        assert row["schema_version"] == SCHEMA_VERSION and row["bytes"] is None


def test_a_table_missing_its_body_column_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "archive.parquet"
    pq.write_table(pa.table({"response": [b"x"], "n": [1]}), path)
    out = tmp_path / "r.jsonl"
    assert main([str(path), "--out", str(out)]) == 2
    assert "no body column 'body'" in capsys.readouterr().err
    assert main([str(path), "--out", str(out), "--body-column", "n"]) == 2
    assert "must be binary or string" in capsys.readouterr().err
    assert main([str(path), "--out", str(out), "--body-column", "response", "--keep-columns", "other"]) == 2
    assert "no table input has that column" in capsys.readouterr().err
    assert not out.exists()


# --- usage errors, the summary, progress ---------------------------------------------------------------------------


def test_usage_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    cases = [
        ([str(tmp_path / "missing.sse"), "--out", str(out)], "no such file or directory"),
        ([str(FIXTURES), "--out", str(tmp_path / "r.txt")], "--format"),
        ([str(FIXTURES), "--out", str(out), "--keep-columns", "id"], "table inputs"),
        ([str(FIXTURES), "--out", str(out), "--keep-columns", "model", "--body-column", "b"], "output column"),
        ([str(FIXTURES), "--out", str(tmp_path / "no" / "r.jsonl")], "cannot write"),
    ]
    for args, says in cases:
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("ssewire batch: ") and says in err, err
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SystemExit) as exit_:
        main([str(FIXTURES), "--out", str(out), "--provider", "nope"])
    assert exit_.value.code == 2 and "invalid choice" in capsys.readouterr().err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device every write to fails, full)")
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_full_output_device_is_a_failure_never_a_usage_error(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Parquet writes as it opens its file: a full disk then was exit 2 (a usage error) where JSONL and CSV,
    failing at their first write, were 1; the path is right, the run failed: 1 for every format."""
    if fmt == "parquet" and not _has("pyarrow"):
        pytest.skip("Parquet needs pyarrow")
    assert main([str(FIXTURES), "--out", "/dev/full", "--format", fmt, "--quiet"]) == 1
    assert "No space left on device" in capsys.readouterr().err


def test_kept_nan_and_infinite_floats_are_null_in_jsonl(tmp_path: Path) -> None:
    """JSONL is JSON a line: a kept float column's NaN or infinity (Parquet holds them) is null, never ``NaN``."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    body = (FIXTURES / "openai-chat-deepseek-cache-resource.sse").read_bytes()
    path = tmp_path / "in.parquet"
    nan, inf = float("nan"), float("inf")
    table = {"body": [body] * 3, "score": [nan, inf, 0.5], "scores": [[1.0, nan], [inf], []]}
    pq.write_table(pa.table(table), path)
    out = tmp_path / "r.jsonl"
    args = [str(path), "--out", str(out), "--body-column", "body", "--provider", "openai-chat"]
    assert main([*args, "--keep-columns", "score,scores", "--quiet"]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()

    def strict(text: str) -> Any:
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"not JSON: {name}"))

    assert [strict(line)["score"] for line in lines] == [None, None, 0.5]
    assert [strict(line)["scores"] for line in lines] == [[1.0, None], [None], []]


def test_usage_errors_exit_2_in_a_subprocess(tmp_path: Path) -> None:
    missing = _batch(str(tmp_path / "missing"), "--out", str(tmp_path / "r.jsonl"))
    assert missing.returncode == 2 and b"no such file or directory" in missing.stderr
    unknown = _batch(str(FIXTURES), "--out", str(tmp_path / "r.jsonl"), "--provider", "nope")
    assert unknown.returncode == 2 and b"invalid choice" in unknown.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_summary_adds_up_the_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad").mkdir()
    for name, data in {"cut.sse": GOOD[:700], "junk.bin": JUNK, "page.html": HTML}.items():
        (tmp_path / "bad" / name).write_bytes(data)
    out, path = tmp_path / "r.jsonl", tmp_path / "summary.json"
    args = [str(FIXTURES), str(tmp_path / "bad"), "--out", str(out), "--jobs", "2", "--summary-json", str(path)]
    assert main(args) == 0
    rows, summary = read_rows(out), json.loads(path.read_text(encoding="utf-8"))
    assert summary["streams"] == len(rows) == len(FILES) + 3
    errors = Counter(row["error_type"] for row in rows if row["error_type"] is not None)
    assert summary["errors"] == sum(errors.values()) and summary["errors_by_type"] == dict(errors)
    assert summary["bytes"] == sum(row["bytes"] or 0 for row in rows)
    groups: dict[tuple[Any, Any], dict[str, Any]] = {}
    for row in rows:
        group = groups.setdefault((row["provider"], row["model"]), Counter())
        group.update(streams=1, errors=row["error_type"] is not None)
        for name in ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens"):
            group[name] += row[name] or 0
        if row["cost_usd"] is not None:
            group.update(priced_streams=1, cost_usd=row["cost_usd"])
    got = {(g["provider"], g["model"]): g for g in summary["by_provider_model"]}
    assert got.keys() == groups.keys()
    assert any(group["priced_streams"] for group in groups.values())
    for key, group in groups.items():
        summed = got[key]
        assert summed["cost_usd"] == pytest.approx(group["cost_usd"], rel=1e-12, abs=1e-15)
        assert {k: v for k, v in summed.items() if k not in ("provider", "model", "cost_usd")} == {
            "streams": group["streams"],
            "errors": group["errors"],
            **{name: group[name] for name in ("input_tokens", "output_tokens", "cached_input_tokens")},
            "reasoning_tokens": group["reasoning_tokens"],
            "priced_streams": group["priced_streams"],
        }
    assert [g["streams"] for g in summary["by_provider_model"]] == sorted(
        (g["streams"] for g in got.values()), reverse=True
    )
    assert summary["seconds"] > 0  # rounded to ms; the rates come from the unrounded time
    slow, fast = summary["seconds"] + 0.0005, max(summary["seconds"] - 0.0005, 1e-9)  # the unrounded time lies here
    assert summary["bytes"] / slow / 1e6 - 0.005 <= summary["mb_per_s"] <= summary["bytes"] / fast / 1e6 + 0.005
    assert summary["streams"] / slow - 0.05 <= summary["streams_per_s"] <= summary["streams"] / fast + 0.05
    assert summary["jobs"] == 2 and summary["format"] == "jsonl" and summary["output"] == str(out)
    assert summary["schema_version"] == SCHEMA_VERSION
    if POSIX:
        peaks = summary["peak_rss_per_worker"]
        assert len(peaks) <= 2 and all(isinstance(p, int) and p > 1 << 20 for p in peaks)
        assert summary["peak_rss_parent"] > 1 << 20
    text = capsys.readouterr().out
    assert f"{len(rows)} streams" in text and f"{summary['errors']} errors" in text
    assert all(f"{kind} {count}" in text for kind, count in errors.items())


def test_the_progress_bar_redraws_at_most_every_interval() -> None:
    out, now = io.StringIO(), [0.0]
    bar = Progress(out, 10, 1_000_000, interval=0.1, clock=lambda: now[0])
    bar.update(0, 0)
    now[0] = 0.05
    bar.update(5, 500_000)  # too soon after the last redraw
    assert out.getvalue().count("\r") == 1
    now[0] = 1.0
    bar.update(5, 500_000)
    line = out.getvalue().split("\r")[-1]
    assert "5/10 streams" in line and "50.0%" in line and "0.5 MB/s" in line and "ETA 0:00:01" in line
    bar.close(10, 1_000_000)
    last = out.getvalue().split("\r")[-1]
    assert last.endswith("\n") and "10/10 streams" in last and "100.0%" in last and "ETA" not in last


def test_progress_and_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    assert main([str(FIXTURES), "--out", str(out), "--progress", "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert f"{len(FILES)}/{len(FILES)} streams" in err and "100.0%" in err and err.endswith("\n")
    assert main([str(FIXTURES), "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_parquet_without_pyarrow_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    assert main([str(FIXTURES), "--out", str(tmp_path / "r.parquet")]) == 2
    err = capsys.readouterr().err
    assert "needs pyarrow: pip install 'ssewire[arrow]'" in err and "--format jsonl" in err
    table = tmp_path / "t.parquet"
    table.write_bytes(b"PAR1")
    assert main([str(table), "--out", str(tmp_path / "r.jsonl")]) == 2
    assert "reading a Parquet input needs pyarrow" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]
    assert main([str(FIXTURES), "--out", str(tmp_path / "r.jsonl"), "--quiet", "--jobs", "1"]) == 0


def test_an_interrupted_batch_keeps_its_rows_in_the_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ssewire.batch import outputs as _batch_outputs

    write = _batch_outputs._Jsonl.write
    calls: list[int] = []

    def once_then_ctrl_c(self: Any, *args: Any) -> None:
        if calls:
            raise KeyboardInterrupt
        calls.append(1)
        write(self, *args)

    monkeypatch.setattr(_batch_outputs._Jsonl, "write", once_then_ctrl_c)
    out = tmp_path / "r.jsonl"
    assert main([str(FIXTURES), "--out", str(out), "--jobs", "1", "--task-bytes", "4K", "--quiet"]) == 130
    partial = tmp_path / ".r.jsonl.partial"
    assert not out.exists()
    rows = read_rows(partial, "jsonl")
    assert rows and rows == _expected(FILES)[: len(rows)]
    err = capsys.readouterr().err
    assert "interrupted" in err and str(partial) in err


@pytest.mark.skipif(not POSIX, reason="signals to a process group")
def test_ctrl_c_stops_the_pool_and_exits_130_without_a_traceback(tmp_path: Path) -> None:
    import signal
    import time

    out = tmp_path / "r.parquet" if _has("pyarrow") else tmp_path / "r.jsonl"
    command = [sys.executable, "-m", "ssewire", "batch", *[str(FIXTURES)] * 2000, "--out", str(out)]
    proc = subprocess.Popen(
        [*command, "--jobs", "2", "--progress", "--task-bytes", "16K"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # Ctrl-C as in a terminal (to the whole process group), even where this suite runs with SIGINT ignored
        preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_DFL), os.setpgrp()),
    )
    assert proc.stderr is not None
    seen, deadline = b"", time.monotonic() + 60
    while b" 0/" in seen.rsplit(b"\r", 1)[-1] or b"/" not in seen:  # until some streams are done
        seen += os.read(proc.stderr.fileno(), 4096)
        assert time.monotonic() < deadline and proc.poll() is None, seen
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    err = seen + err
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err
    assert b"interrupted: the " in err and not out.exists()
    assert read_rows(tmp_path / f".{out.name}.partial", out.suffix.lstrip("."))  # readable, some rows


def test_help_names_the_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        ssewire_main(["--help"])
    assert exit_.value.code == 0 and "ssewire batch INPUT... --out FILE" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        ssewire_main(["batch", "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and "--out" in out and "--jobs" in out and "--summary-json" in out


# --- the pieces ----------------------------------------------------------------------------------------------------


def test_tasks_group_items_by_size_in_order() -> None:
    from ssewire.batch.items import Item

    items = [Item(f"s{i}", b"x" * size, None, size, ()) for i, size in enumerate([10, 10, 30, 5, 100, 1, 1])]
    got = [task.sources for task in tasks(items, task_bytes=20)]
    assert got == [["s0", "s1"], ["s2"], ["s3", "s4"], ["s5", "s6"]]
    many = [Item(str(i), b"", None, 0, ()) for i in range(TASK_ITEMS + 1)]
    assert [len(task.work) for task in tasks(many)] == [TASK_ITEMS, 1]


def test_an_unreadable_input_is_an_error_row(tmp_path: Path) -> None:
    work: list[tuple[Payload, Optional[str]]] = [
        (ReadFile(str(tmp_path / "gone.sse")), None),
        (Unreadable("why"), None),
        (GOOD, "anthropic"),
    ]
    rows, pid, _ = parse_work(work, "auto", "auto")
    assert pid == os.getpid()
    first, second, good = (dict(zip(NAMES, row)) for row in rows)
    assert first["error_type"] == second["error_type"] == INPUT_ERROR
    assert "gone.sse" in first["error_message"] and second["error_message"] == "why"
    assert first["bytes"] is None and first["schema_version"] == SCHEMA_VERSION
    assert good == result_row(GOOD, "anthropic")


# --- the README's DuckDB query, memory ------------------------------------------------------------------------------


def test_the_readme_duckdb_query_runs_over_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    monkeypatch.chdir(tmp_path)
    args = [str(FIXTURES), "--out", "results.parquet", "--summary-json", "summary.json", "--quiet", "--jobs", "1"]
    assert main(args) == 0
    got = duckdb.sql(README_QUERY).fetchall()
    summary = json.loads(Path("summary.json").read_text(encoding="utf-8"))
    groups = summary["by_provider_model"]
    counted = ("streams", "errors", "input_tokens", "output_tokens", "priced_streams")
    want = {(g["provider"], g["model"]): tuple(g[name] for name in counted) for g in groups}
    assert {(p, m): (s, e, i or 0, o or 0, n) for p, m, s, e, i, o, n, *_ in got} == want  # SUM of only nulls: NULL
    costs = {(g["provider"], g["model"]): g["cost_usd"] for g in groups}
    assert all(c == (round(costs[p, m], 6) if n else None) for p, m, *_, n, c, _ in got)
    priced = [row[-2] for row in got if row[-2] is not None]
    assert priced and priced == sorted(priced, reverse=True)  # the costliest models first
    audited = [row[-1] for row in got if row[-1] is not None]  # where both figures exist: the audit's column
    assert bool(audited) is _has("genai_prices")  # without the price table, only the providers' own figures


def test_the_readme_shows_the_tested_query() -> None:
    readme = (FIXTURES.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split(README_HEADING, 1)[1].split("\n### ", 1)[0]
    assert f"```sql\n{README_QUERY}```" in section


def _big_body(index: int, size: int) -> bytes:
    """A distinct OpenAI Responses stream of about ``size`` bytes, in 64 KiB text deltas."""
    delta = b'data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"m","delta":"%s"}\n\n'
    pieces = [b'data: {"type":"response.created","response":{"id":"r%d"}}\n\n' % index]
    pieces += [delta % (b"%08d" % (index * 1000 + k) * 8192) for k in range(size // 65536)]
    pieces.append(b'data: {"type":"response.completed","response":{"id":"r","status":"completed"}}\n\n')
    return b"".join(pieces)


@pytest.mark.slow
@pytest.mark.skipif(not POSIX, reason="peak RSS comes from the resource module")
def test_memory_follows_a_task_not_the_archive(tmp_path: Path) -> None:
    """200 MB of bodies take no more memory than 2 MB, in the workers and (within a generous margin) the parent."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    peaks = {}
    for streams in (2, 200):
        path = tmp_path / f"archive-{streams}.parquet"
        with pq.ParquetWriter(path, pa.schema([("body", pa.binary())]), compression="none") as writer:
            for start in range(0, streams, 10):
                bodies = [_big_body(i, 1 << 20) for i in range(start, min(streams, start + 10))]
                writer.write_table(pa.table({"body": pa.array(bodies, pa.binary())}))
        summary = tmp_path / f"summary-{streams}.json"
        proc = _batch(str(path), "--out", str(tmp_path / f"r-{streams}.jsonl"), "--jobs", "2", "--quiet",
                      "--summary-json", str(summary))  # fmt: skip
        assert proc.returncode == 0, proc.stderr.decode()
        peaks[streams] = json.loads(summary.read_text(encoding="utf-8"))
        assert peaks[streams]["streams"] == streams and peaks[streams]["errors"] == 0
        path.unlink()
    small, big = peaks[2], peaks[200]
    assert big["bytes"] > 200 * 10**6
    # 2 MB may all be parsed by the parent before a worker has started: then its peak is the one of a parser
    parsed_small = small["peak_rss_per_worker"] or [small["peak_rss_parent"]]
    assert max(big["peak_rss_per_worker"]) - max(parsed_small) < 32 << 20
    assert big["peak_rss_parent"] - small["peak_rss_parent"] < 128 << 20


def _one_event_over_the_default_limit() -> tuple[bytes, str]:
    """A Chat Completions body whose one text delta is bigger than the default limit on one event, and that text."""
    from ssewire.limits import DEFAULT_MAX_BUFFER

    text = "x" * (DEFAULT_MAX_BUFFER + 1024)
    chunk = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": text}}]}
    end = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    body = b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in (chunk, end)) + b"data: [DONE]\n\n"
    return body, text


def test_max_buffer_lets_in_a_body_and_every_event_it_holds() -> None:
    # --max-buffer is the largest body read: a body let in is not refused for an event it holds
    body, text = _one_event_over_the_default_limit()
    let_in, _, _ = parse_work([(body, "openai-chat")], "auto", "auto", len(body))
    row = dict(zip(NAMES, let_in[0]))
    assert (row["error_type"], row["text_chars"], row["stop_reason"]) == (None, len(text), "end")
    default, _, _ = parse_work([(body, "openai-chat")], "auto", "auto")
    assert dict(zip(NAMES, default[0]))["error_type"] == "buffer_overflow"


def test_the_command_reads_with_its_max_buffer(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "big.sse").write_bytes(_one_event_over_the_default_limit()[0])
    out = tmp_path / "out.jsonl"
    assert main([str(tmp_path / "in"), "--out", str(out), "-j", "1", "-q", "--max-buffer", "70M"]) == 0
    (row,) = read_rows(out)
    assert (row["error_type"], row["stop_reason"]) == (None, "end")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux keeps ru_maxrss across exec")
def test_a_command_started_by_a_large_process_reports_its_own_peak_rss() -> None:
    """The summary's peaks are the process's own: Linux's ru_maxrss kept the peak of the 300 MB process that ran
    the command (every run of the batch benchmark read that process's size as the CLI's)."""
    child = "from ssewire.batch.worker import peak_rss; print(peak_rss())"
    parent = (
        "import subprocess, sys; block = bytearray(300 << 20); block[::4096] = b'x' * len(block[::4096]); "
        f"print(subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, text=True).stdout)"
    )
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, check=True).stdout
    assert 1 << 20 < int(out) < 150 << 20, out
