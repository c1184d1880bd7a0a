"""``ssewire batch`` on hostile inputs: every stream ends in a typed row, in bounded memory, and the batch goes on.

A body over ``--max-buffer`` is a ``body_too_large`` row and is never read whole (a file: not past the limit and a
byte; a JSONL line too long to hold such a body: never held); what cannot be read (a broken link, a directory that
cannot be listed, a file that vanished or became a FIFO, a file that is not Parquet, a row group that cannot be
decoded, a JSONL line that is not JSON) is an ``unreadable_input`` row; dictionary-encoded Parquet columns are read.
"""

from __future__ import annotations

import base64
import csv
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from helpers import FIXTURES, peak_traced
from ssewire.batch import COLUMNS, result_row
from ssewire.batch.command import main
from ssewire.batch.inputs import DirectoryInput
from ssewire.batch.items import INPUT_ERROR, TOO_LARGE, TableColumns, Unreadable
from ssewire.batch.pool import parse_work, read_file
from ssewire.batch.tables import JSONL_LINE_FACTOR, JSONL_LINE_SLACK
from ssewire.limits import DEFAULT_MAX_BUFFER

NAMES = [name for name, _ in COLUMNS]
GOOD = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
OPENAI = (FIXTURES / "openai-responses-tool-call.sse").read_bytes()
POSIX = sys.platform != "win32"
MIB = 1 << 20


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _run(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    """``ssewire batch ARGS --out`` a JSONL file in this process (one job): its rows; the batch must complete."""
    out = tmp_path / "results.jsonl"
    assert main([*args, "--out", str(out), "--jobs", "1", "--quiet"]) == 0
    return _rows(out)


def _sparse(path: Path, size: int) -> Path:
    """A file of ``size`` zero bytes that takes no disk space (and no time) to make."""
    with path.open("wb") as file:
        file.truncate(size)
    return path


def _is_error(row: dict[str, Any], kind: str, *says: str) -> None:
    assert row["error_type"] == kind, row
    assert all(text in row["error_message"] for text in says), row["error_message"]
    assert row["events"] is None and row["provider"] is None  # not parsed


# --- 5: a body over --max-buffer -------------------------------------------------------------------------------------


def test_a_file_over_max_buffer_is_a_body_too_large_row_never_read(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.sse").write_bytes(GOOD)
    _sparse(folder / "b-huge.sse", 256 * MIB)  # read whole, it would take 256 MiB
    (folder / "c.sse").write_bytes(OPENAI)
    rows: list[dict[str, Any]] = []
    peak = peak_traced(lambda: rows.extend(_run(tmp_path, str(folder), "--max-buffer", "1M")))
    assert peak < 8 * MIB, peak
    assert rows[0] == {"source": str(folder / "a.sse"), **result_row(GOOD)}
    assert rows[2] == {"source": str(folder / "c.sse"), **result_row(OPENAI)}
    _is_error(rows[1], TOO_LARGE, "--max-buffer", "1,048,576 bytes", "268,435,456 bytes", "b-huge.sse")
    assert rows[1]["bytes"] == 256 * MIB


def test_the_default_limit_is_default_max_buffer(tmp_path: Path) -> None:
    over = _sparse(tmp_path / "over.sse", DEFAULT_MAX_BUFFER + 1)
    rows: list[dict[str, Any]] = []
    peak = peak_traced(lambda: rows.extend(_run(tmp_path, str(over))))
    assert peak < 8 * MIB, peak
    _is_error(rows[0], TOO_LARGE, f"{DEFAULT_MAX_BUFFER:,} bytes")
    at = _sparse(tmp_path / "at.sse", 2 * MIB)  # within the limit: read and parsed (zeros: no stream)
    assert _run(tmp_path, str(at))[0]["error_type"] not in (TOO_LARGE, INPUT_ERROR)


def test_a_file_that_grows_after_stat_is_read_no_further_than_the_limit_and_a_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fstat says 10 bytes, the file holds 4 MiB: no more than limit + 1 bytes are read, and it is too large."""
    path = _sparse(tmp_path / "grows.sse", 4 * MIB)
    real = os.fstat

    def small(fd: int) -> os.stat_result:
        found = list(real(fd))
        found[6] = 10  # st_size
        return os.stat_result(found)

    monkeypatch.setattr(os, "fstat", small)  # the module's os is this one
    got: list[Any] = []
    peak = peak_traced(lambda: got.append(read_file(str(path), MIB)))
    monkeypatch.undo()
    assert isinstance(got[0], Unreadable) and got[0].kind == TOO_LARGE, got[0]
    assert 1 * MIB < peak < 3 * MIB, peak  # the limit and a byte were read, not the 4 MiB
    assert read_file(str(path), 8 * MIB) == bytes(4 * MIB)  # a bigger limit: all of it


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_file_replaced_by_a_fifo_is_an_error_row_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "was-a-file.sse"
    os.mkfifo(fifo)
    got: list[Any] = []
    reader = threading.Thread(target=lambda: got.append(read_file(str(fifo), MIB)), daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # blocked in open(): a writer releases it, then fail
        with open(fifo, "wb"):
            pass
        reader.join(5)
        pytest.fail("reading a FIFO blocked")
    assert isinstance(got[0], Unreadable) and "not a regular file" in got[0].message


def test_a_parquet_body_over_the_limit_is_a_body_too_large_row(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    big = b"data: " + b"x" * (2 * MIB) + b"\n\n"
    for kind in (pa.binary(), pa.string(), pa.large_string()):
        path = tmp_path / "t.parquet"
        pq.write_table(pa.table({"body": pa.array([GOOD, big, None, OPENAI], kind)}), path)
        rows = _run(tmp_path, str(path), "--max-buffer", "1M")
        assert rows[0] == {"source": f"{path}#0", **result_row(GOOD)}
        _is_error(rows[1], TOO_LARGE, "1,048,576 bytes", f"{len(big):,} bytes")
        assert rows[1]["bytes"] == len(big) and rows[1]["source"] == f"{path}#1"
        assert rows[2]["error_type"] == "missing_body"
        assert rows[3] == {"source": f"{path}#3", **result_row(OPENAI)}


def test_a_jsonl_body_over_the_limit_is_a_body_too_large_row(tmp_path: Path) -> None:
    limit = 64 << 10
    big = "data: " + "x" * (2 * limit) + "\n\n"
    lines = [
        {"body": GOOD.decode()},
        {"body": big},
        {"body_base64": base64.b64encode(big.encode()).decode()},
        {"body": OPENAI.decode()},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    rows = _run(tmp_path, str(path), "--body-column", "body", "--max-buffer", str(limit))
    assert rows[0] == {"source": f"{path}#0", **result_row(GOOD)}
    for row in rows[1:3]:
        _is_error(row, TOO_LARGE, f"{limit:,} bytes", f"{len(big):,} bytes")
    assert rows[3] == {"source": f"{path}#3", **result_row(OPENAI)}


def test_a_jsonl_line_too_long_for_any_body_within_the_limit_is_never_held(tmp_path: Path) -> None:
    limit = 64 << 10
    longest = JSONL_LINE_FACTOR * limit + JSONL_LINE_SLACK
    path = tmp_path / "t.jsonl"
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps({"body": GOOD.decode()}) + "\n")
        file.write('{"body": "' + "x" * (16 * MIB) + '"}\n')  # 16 MiB: read whole, it would be held (twice)
        file.write(" " * (3 * MIB) + "\n")  # a long blank line is skipped, as a short one
        file.write(json.dumps({"body": OPENAI.decode()}) + "\n")
    rows: list[dict[str, Any]] = []
    peak = peak_traced(lambda: rows.extend(_run(tmp_path, str(path), "--body-column", "b", "--max-buffer", "64K")))
    assert peak < longest + 4 * MIB < 16 * MIB, peak
    assert [row["source"] for row in rows] == [f"{path}#0", f"{path}#1", f"{path}#3"]
    _is_error(rows[1], TOO_LARGE, f"a line of {16 * MIB + 13:,} bytes", f"--max-buffer ({limit:,} bytes")
    # a body within the limit is read whatever its escaping: 6 bytes of JSON per byte of body
    escaped = json.dumps({"body": "\x00" * limit})
    assert len(escaped) > 6 * limit
    path.write_text(escaped + "\n", encoding="utf-8")
    rows = _run(tmp_path, str(path), "--body-column", "body", "--max-buffer", "64K")
    assert rows == [{"source": f"{path}#0", **result_row(b"\x00" * limit)}]


# --- 9a: links, directories, files that go away --------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "symlink") or not POSIX, reason="symbolic links")
def test_a_broken_symbolic_link_is_an_unreadable_input_row(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.sse").write_bytes(GOOD)
    os.symlink(folder / "gone.sse", folder / "b-dangling.sse")
    os.symlink(folder / "c-loop.sse", folder / "c-loop.sse")  # a link to itself
    os.symlink(folder, folder / "d-dir")  # to a directory: not followed, no row
    rows = _run(tmp_path, str(folder))
    assert [row["source"] for row in rows] == [str(folder / name) for name in ("a.sse", "b-dangling.sse", "c-loop.sse")]
    assert rows[0] == {"source": str(folder / "a.sse"), **result_row(GOOD)}
    _is_error(rows[1], INPUT_ERROR, "broken symbolic link", "gone.sse", "b-dangling.sse")
    _is_error(rows[2], INPUT_ERROR, "broken symbolic link", "c-loop.sse")


def test_a_directory_that_cannot_be_listed_is_an_unreadable_input_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "in"
    (folder / "locked").mkdir(parents=True)
    (folder / "a.sse").write_bytes(GOOD)
    (folder / "locked" / "x.sse").write_bytes(GOOD)
    real = os.scandir
    locked = str(folder / "locked")

    def scandir(path: Any) -> Any:  # as chmod 000 would (the tests may run as root, whom no mode stops)
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)  # the module's os is this one
    rows = _run(tmp_path, str(folder))
    assert [row["source"] for row in rows] == [str(folder / "a.sse"), locked]
    _is_error(rows[1], INPUT_ERROR, "Permission denied", "locked")


def test_a_file_that_vanishes_between_listing_and_reading_is_an_unreadable_input_row(tmp_path: Path) -> None:
    (tmp_path / "a.sse").write_bytes(GOOD)
    (tmp_path / "b.sse").write_bytes(GOOD)
    items = list(DirectoryInput(str(tmp_path), TableColumns()).items())
    (tmp_path / "b.sse").unlink()
    rows, _, _ = parse_work([(item.payload, item.provider) for item in items], "auto", "auto")
    first, second = (dict(zip(NAMES, row)) for row in rows)
    assert first == result_row(GOOD)
    assert second["error_type"] == INPUT_ERROR and "b.sse" in second["error_message"]


def test_a_directory_tree_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    limit = sys.getrecursionlimit()
    depth = 500  # deeper than the (lowered) recursion limit, quick to make
    if len(str(tmp_path)) + 2 * depth + 10 >= 4096:
        pytest.skip("the path would be longer than PATH_MAX")
    levels = [os.path.join(tmp_path, "d")]  # strings: pathlib takes seconds over such paths
    for _ in range(depth - 1):
        levels.append(os.path.join(levels[-1], "d"))
    deep = Path(levels[-1])
    try:
        for level in levels:  # not mkdir(parents=True): it recurses
            os.mkdir(level)
        (deep / "a.sse").write_bytes(GOOD)
        (tmp_path / "z.sse").write_bytes(OPENAI)
        sys.setrecursionlimit(depth - 100)
        rows = _run(tmp_path, str(tmp_path / "d"), str(tmp_path / "z.sse"))
        sys.setrecursionlimit(limit)
        assert rows == [
            {"source": str(deep / "a.sse"), **result_row(GOOD)},
            {"source": str(tmp_path / "z.sse"), **result_row(OPENAI)},
        ]
    finally:  # bottom up: pytest's cleanup (shutil.rmtree, recursive before Python 3.12) could fail on a deep tree
        sys.setrecursionlimit(limit)
        (deep / "a.sse").unlink(missing_ok=True)
        for level in reversed(levels):
            if os.path.isdir(level):
                os.rmdir(level)


# --- 9b and tables that are not what they say -------------------------------------------------------------------------


def test_dictionary_encoded_parquet_columns_are_read(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    bodies = [GOOD, OPENAI, GOOD, None]
    path = tmp_path / "dict.parquet"
    table = pa.table(
        {
            "body": pa.array(bodies, pa.binary()).dictionary_encode(),
            "text": pa.array([None if b is None else b.decode() for b in bodies]).dictionary_encode(),
            "provider": pa.array(["anthropic", "openai", None, None]).dictionary_encode(),
            "team": pa.array(["a", "b", "a", "b"]).dictionary_encode(),
        }
    )
    pq.write_table(table, path, use_dictionary=True)
    schema = pq.ParquetFile(path).schema_arrow
    assert all(pa.types.is_dictionary(field.type) for field in schema)  # read back as dictionaries
    expected = [result_row(GOOD, "anthropic"), result_row(OPENAI, "openai"), result_row(GOOD), result_row(None)]
    for body in ("body", "text"):
        args = ["--body-column", body, "--provider-column", "provider", "--keep-columns", "team"]
        rows = _run(tmp_path, str(path), *args)
        assert rows == [{"source": f"{path}#{i}", **row, "team": "ab"[i % 2]} for i, row in enumerate(expected)]
    out = tmp_path / "r.parquet"  # a kept dictionary column is written as its values' type
    assert main([str(path), "--out", str(out), "--keep-columns", "team", "--quiet", "--jobs", "1"]) == 0
    written = pq.read_table(out)
    assert written.schema.field("team").type == pa.string() and written.column("team").to_pylist() == list("abab")


def test_a_file_that_is_not_parquet_is_an_unreadable_input_row(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 this is not a table at all" * 10)
    (tmp_path / "empty.parquet").write_bytes(b"")
    (tmp_path / "ok.sse").write_bytes(GOOD)
    rows = _run(tmp_path, str(tmp_path / "junk.parquet"), str(tmp_path / "empty.parquet"), str(tmp_path / "ok.sse"))
    assert [row["source"] for row in rows] == [
        str(tmp_path / name) for name in ("junk.parquet", "empty.parquet", "ok.sse")
    ]
    for row in rows[:2]:
        _is_error(row, INPUT_ERROR, "not a Parquet file")
    assert rows[2] == {"source": str(tmp_path / "ok.sse"), **result_row(GOOD)}


def test_a_row_group_that_cannot_be_decoded_gives_an_error_row_per_row_and_the_next_group_is_read(
    tmp_path: Path,
) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"body": [GOOD, GOOD, OPENAI, OPENAI, GOOD]}), path, row_group_size=2)
    column = pq.ParquetFile(path).metadata.row_group(1).column(0)  # rows 2 and 3
    with path.open("r+b") as file:  # overwrite the group's pages (headers included) with junk; the footer stays
        file.seek(column.data_page_offset if column.dictionary_page_offset is None else column.dictionary_page_offset)
        file.write(b"\xff" * column.total_compressed_size)
    rows = _run(tmp_path, str(path))
    assert [row["source"] for row in rows] == [f"{path}#{i}" for i in range(5)]
    assert [rows[i] for i in (0, 1, 4)] == [{"source": f"{path}#{i}", **result_row(GOOD)} for i in (0, 1, 4)]
    for row in rows[2:4]:
        _is_error(row, INPUT_ERROR, "row group 1 cannot be decoded")


def test_jsonl_lines_that_are_not_rows_are_unreadable_input_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        b"{not json",
        b'{"body": "\xff\xfe"}',  # not UTF-8
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the JSON parser goes
        b'{"body": 42}',  # a body holding a number
        b'{"body": {"a": 1}}',
        b"17",
        json.dumps({"body": GOOD.decode()}).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    rows = _run(tmp_path, str(path), "--body-column", "body")
    says = ["not JSON", "not JSON", "nested too deeply", "a number, not a string", "an object", "not a JSON object"]
    for row, text in zip(rows, says):
        _is_error(row, INPUT_ERROR, text)
    assert rows[-1] == {"source": f"{path}#6", **result_row(GOOD)}


def test_a_parquet_body_column_of_numbers_is_a_usage_error_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"body": pa.array([1, 2], pa.int64())}), path)
    assert main([str(path), "--out", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "the body column 'body' must be binary or string" in err and "Traceback" not in err


def test_a_parquet_string_body_that_is_not_utf8_is_parsed_as_its_bytes(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    bad = GOOD.replace(b"data: ", b"data: \xff", 1)
    path = tmp_path / "t.parquet"
    team = pa.array([b"a\xffb", b"c"], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"body": pa.array([bad, OPENAI], pa.binary()).view(pa.string()), "team": team}), path)
    assert pq.read_schema(path).field("body").type == pa.string()
    rows = _run(tmp_path, str(path), "--keep-columns", "team")  # a str of each cell: UnicodeDecodeError
    assert rows == [
        {"source": f"{path}#0", **result_row(bad), "team": "a\\xffb"},  # a kept value: the bad byte escaped
        {"source": f"{path}#1", **result_row(OPENAI), "team": "c"},
    ]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_kept_dates_and_times_python_cannot_hold(tmp_path: Path, fmt: str, jobs: str) -> None:
    # a timestamp to the nanosecond (what pandas writes), a year past 9999 (a "never expires" value), a date, a
    # time and a duration in nanoseconds: each kept as it was (Parquet) or as Arrow writes it (text), every row parsed
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    kept = {
        "at": pa.array([1_735_732_800_123_456_789, None], pa.timestamp("ns")),
        "until": pa.array([253_402_300_800_000, 0], pa.timestamp("ms", tz="UTC")),
        "day": pa.array([3_000_000, 1], pa.date32()),
        "clock": pa.array([5, 86_399_999_999_999], pa.time64("ns")),
        "took": pa.array([7, None], pa.duration("ns")),
    }
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"body": [GOOD, GOOD], **kept}), path)
    out = tmp_path / f"out.{fmt}"
    args = [str(path), "--out", str(out), "--jobs", jobs, "--quiet", "--keep-columns", ",".join(kept)]
    assert main(args) == 0
    if fmt == "parquet":
        table = pq.read_table(out)
        for name, column in kept.items():
            assert table.column(name).combine_chunks().equals(column), name
        errors = table.column("error_type").to_pylist()
    else:
        if fmt == "jsonl":
            rows = _rows(out)
        else:
            with out.open(newline="", encoding="utf-8") as file:
                rows = list(csv.DictReader(file))
        for name, column in kept.items():
            texts = column.cast(pa.string()).to_pylist()
            if fmt == "csv":
                texts = ["" if text is None else text for text in texts]
            assert [row[name] for row in rows] == texts, name
        errors = [row["error_type"] or None for row in rows]
    assert errors == [None, None]


@pytest.mark.skipif(not hasattr(os, "mkfifo") or sys.platform == "win32", reason="POSIX links, FIFOs and rlimits")
def test_an_output_that_cannot_be_written_is_said_so_without_a_traceback(tmp_path: Path, out_format: str) -> None:
    # the output's file may not grow past 3 KB (a full disk alike): the run stops with a message, never a
    # traceback, and never says a partial file it could not finish holds its rows whole
    fmt = out_format
    inputs = tmp_path / "in"
    inputs.mkdir()
    for index in range(60):
        (inputs / f"{index}.sse").write_bytes(GOOD)
    script = (
        "import resource, signal, sys\n"
        "from ssewire.batch.command import main\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    out = tmp_path / f"out.{fmt}"
    done = subprocess.run(
        [sys.executable, "-c", script, str(inputs), "--out", str(out), "-q", "-j", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith("ssewire batch: OSError")
    assert "rows written so far are in" not in done.stderr  # (what an interrupted run says of a closed file)
    assert ("could not be closed" in done.stderr or "the last possibly cut" in done.stderr) and not out.exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX links and FIFOs")
def test_an_output_that_is_a_link_or_a_fifo_is_written_not_replaced(tmp_path: Path) -> None:
    source = tmp_path / "one.sse"
    source.write_bytes(GOOD)
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "results.jsonl"
    target.write_text("old\n")
    link = tmp_path / "results.jsonl"
    link.symlink_to(target)
    assert main([str(source), "--out", str(link), "-q", "-j", "1"]) == 0
    assert link.is_symlink() and json.loads(target.read_text())["stop_reason"] == "tool_use"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["results.jsonl"]  # no partial file left
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()))
    reader.start()
    assert main([str(source), "--out", str(fifo), "--format", "jsonl", "-q", "-j", "1"]) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a FIFO
    assert json.loads(read[0])["stop_reason"] == "tool_use"
