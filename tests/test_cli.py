"""The ``ssewire`` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from ssewire.cli import main

RESPONSES = (
    b'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1",'
    b'"status":"in_progress"}}\n\n'
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,'
    b'"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}\n\n'
    b'event: response.completed\ndata: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_1",'
    b'"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}}\n\n'
)


def test_prints_unified_events_as_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = tmp_path / "s.sse"
    stream.write_bytes(RESPONSES)
    assert main([str(stream), "--provider", "openai"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    types = [line["type"] for line in lines]
    assert "text_delta" in types and types[-1] == "done"
    assert [line["text"] for line in lines if line["type"] == "text_delta"] == ["Hi"]
    assert all("raw" not in line for line in lines)


def test_with_raw_and_framed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = tmp_path / "s.sse"
    stream.write_bytes(RESPONSES)
    assert main([str(stream), "-p", "openai", "--with-raw"]) == 0
    assert all("raw" in json.loads(line) for line in capsys.readouterr().out.splitlines() if '"done"' not in line)
    assert main([str(stream), "-p", "openai", "--framed"]) == 0
    framed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [f["event"] for f in framed] == ["response.created", "response.output_text.delta", "response.completed"]


def test_truncated_stream_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = tmp_path / "s.sse"
    stream.write_bytes(RESPONSES[: RESPONSES.index(b"event: response.completed")])
    assert main([str(stream), "-p", "openai"]) == 1
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["type"] == "error" and last["error"]["type"] == "stream_truncated"


def test_bad_framing_and_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "page.json"
    page.write_bytes(b"<html>502</html>")
    assert main([str(page), "-p", "gemini", "--framing", "json_array"]) == 2
    assert "FramingError" in capsys.readouterr().err
    assert main([str(page)]) == 1  # auto: not an array, so SSE, which holds no event: a truncated stream
    assert main([str(tmp_path / "missing.sse"), "-p", "gemini"]) == 2


def test_python_dash_m_reads_stdin() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ssewire", "-", "--provider", "openai"],
        input=RESPONSES,
        capture_output=True,
        check=True,
    )
    assert json.loads(proc.stdout.splitlines()[-1])["type"] == "done"


def test_readme_command_fixture_exists() -> None:
    readme = (FIXTURES.parent / "README.md").read_text(encoding="utf-8")
    assert "fixtures/openai-responses-tool-call.sse --provider openai" in readme
    assert (FIXTURES / "openai-responses-tool-call.sse").is_file()
