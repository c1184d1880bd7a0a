"""The ``ssewire`` command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from helpers import FIXTURES
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


def test_a_response_its_provider_stopped_as_failed_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    """Mistral's ``finish_reason: "error"`` (Cohere's ``ERROR`` alike) carries no error object: the stop reason
    ``failed`` says the response failed, which is no clean end (exit 0)."""
    from helpers import FIXTURES

    assert main([str(FIXTURES / "mistral-chat-finish-error.sse"), "-p", "mistral"]) == 1
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["type"] == "done" and last["stop_reason"] == "failed"


def test_bad_framing_and_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "page.json"
    page.write_bytes(b"<html>502</html>")
    assert main([str(page), "-p", "gemini", "--framing", "json_array"]) == 2
    assert "FramingError" in capsys.readouterr().err
    assert main([str(page)]) == 2  # auto: not an array, so SSE, which holds no event at all
    assert "an HTML page" in capsys.readouterr().err
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


def _cli(*args: str, stdin: bytes = b"", env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess[bytes]:
    environ = None if env is None else {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-m", "ssewire", *args], input=stdin, capture_output=True, timeout=60, env=environ
    )


def test_a_live_pipe_prints_each_event_before_the_writer_finishes() -> None:
    import select

    proc = subprocess.Popen(  # no STREAM: stdin is a pipe, so it is read
        [sys.executable, "-m", "ssewire", "--provider", "openai"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    first, rest = RESPONSES.split(b"\n\n", 1)
    proc.stdin.write(first + b"\n\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    assert ready, "the first event was not printed while the stream was still open"
    line = json.loads(proc.stdout.readline())
    assert line["type"] == "raw" and line["event"] == "response.created"
    assert proc.poll() is None  # still reading: the writer has not finished
    proc.stdin.write(rest)
    proc.stdin.close()
    out = proc.stdout.read()
    assert proc.wait(30) == 0
    assert json.loads(out.splitlines()[-1])["type"] == "done"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"", "it is empty"),
        (bytes(range(256)) * 8, "binary data"),
        (b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>\n", "an HTML page"),
        (
            b'{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": '
            b'"assistant", "content": "Hi"}, "finish_reason": "stop"}]}',
            "a JSON object, not a stream",
        ),
        (b"hello there\nthis is plain text\n", "text without any Server-Sent Events"),
    ],
    ids=["empty", "random-bytes", "html", "json-response", "plain-text"],
)
def test_input_without_a_stream_exits_2_and_says_what_it_is(tmp_path: Path, body: bytes, says: str) -> None:
    file = tmp_path / "body"
    file.write_bytes(body)
    for args in ([str(file)], [str(file), "--provider", "openai"], [str(file), "--framed"]):
        proc = _cli(*args)
        assert proc.returncode == 2, args
        assert proc.stdout == b""
        err = proc.stderr.decode()
        assert "no stream" in err and says in err, err
        assert "stream_truncated" not in err and "Traceback" not in err


def test_a_non_streaming_json_response_suggests_streaming(tmp_path: Path) -> None:
    file = tmp_path / "response.json"
    file.write_bytes(b'{"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "Hi"}]}')
    err = _cli(str(file)).stderr.decode()
    assert "a JSON object, not a stream (a non-streaming response body?" in err


def test_a_wrong_provider_is_named_with_the_one_that_fits(tmp_path: Path) -> None:
    file = tmp_path / "s.sse"
    file.write_bytes(RESPONSES)
    proc = _cli(str(file), "--provider", "anthropic")
    assert proc.returncode == 1
    assert "looks like openai" in proc.stderr.decode() and "--provider openai" in proc.stderr.decode()
    assert "looks like" not in _cli(str(file), "--provider", "openai").stderr.decode()


def test_max_buffer_limits_one_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "s.sse"
    file.write_bytes(RESPONSES)
    assert main([str(file), "-p", "openai", "--max-buffer", "100"]) == 2
    assert "SSEBufferOverflow" in capsys.readouterr().err
    assert main([str(file), "-p", "openai", "--max-buffer", "1K"]) == 0
    with pytest.raises(SystemExit):
        main([str(file), "--max-buffer", "lots"])
    assert "not a size" in capsys.readouterr().err


def test_ctrl_c_exits_130_without_a_traceback() -> None:
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "ssewire", "-", "-p", "openai"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # Ctrl-C as in a terminal, even when this suite runs where SIGINT is ignored (a background job)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'data: {"type":"response.output_text.delta","delta":"hi","sequence_number":1}\n\n')
    proc.stdin.flush()
    assert b"text_delta" in proc.stdout.readline()  # running: it printed the first event, now it waits for more
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err


def test_raw_events_show_their_event_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "s.sse"
    file.write_bytes(RESPONSES)
    main([str(file), "-p", "openai"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0] == {"type": "raw", "sequence": 0, "event": "response.created"}


def test_usage_prints_the_normalised_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "s.sse"
    file.write_bytes(RESPONSES)
    assert main([str(file), "-p", "openai", "--usage"]) == 0
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["usage"]["input_tokens"] == 1 and last["usage"]["total_tokens"] == 2
    assert last["usage"]["partial"] is False and "raw" not in last["usage"]
    cut = tmp_path / "cut.sse"
    cut.write_bytes(RESPONSES[: RESPONSES.index(b"event: response.completed")])
    assert main([str(cut), "-p", "openai", "--usage"]) == 1
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"usage": None}


def test_non_ascii_is_written_the_same_way_in_both_modes(tmp_path: Path) -> None:
    file = tmp_path / "s.sse"
    file.write_bytes(RESPONSES.replace(b'"delta":"Hi"', '"delta":"Olá — 日本"'.encode()))
    for args in ([], ["--framed"]):
        out = _cli(str(file), "-p", "openai", *args).stdout
        assert "Olá — 日本".encode() in out, args
        assert b"\\u" not in out, args


def test_version_names_the_scanner_and_the_decoder() -> None:
    from ssewire import IMPLEMENTATION, __version__
    from ssewire._json import BACKEND
    from ssewire._twins import COMPILED, runs_compiled

    out = " ".join(_cli("--version").stdout.decode().split())  # (argparse wraps it to the terminal's width)
    assert __version__ in out and IMPLEMENTATION in out and BACKEND in out
    assert f"; {len(runs_compiled())}/{len(COMPILED)} modules compiled;" in out
    if IMPLEMENTATION == "cython":
        from ssewire._scan import scanner_c as _scanner_c

        assert f"SIMD {_scanner_c.SIMD}" in out
    off = " ".join(_cli("--version", env={"SSEWIRE_NO_EXTENSIONS": "1"}).stdout.decode().split())
    assert f"(scanner: python; 0/{len(COMPILED)} modules compiled;" in off


def test_usage_line_says_stream() -> None:
    proc = _cli("--help")
    assert proc.stdout.decode().startswith("usage: ssewire [STREAM]")


def test_a_cut_tool_call_is_an_incomplete_call_not_a_done_one(tmp_path: Path) -> None:
    body = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
    file = tmp_path / "cut.sse"
    file.write_bytes(body[: body.index(b'nt\\": 250') + 3])
    proc = _cli(str(file), "-p", "anthropic")
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert "tool_call_done" not in [line["type"] for line in lines]
    assert lines[-1]["error"]["incomplete_tool_calls"][0]["name"] == "convert_currency"


def test_binary_bedrock_bodies_are_read_by_auto_detection(capsys: pytest.CaptureFixture[str]) -> None:
    fine = FIXTURES / "bedrock-converse-max-tokens-cache.eventstream"
    assert main([str(fine), "--usage"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["text"] for line in lines if line.get("type") == "text_delta"] == ["The capital of France is"]
    throttled = FIXTURES / "bedrock-converse-throttled.eventstream"
    assert main([str(throttled), "--framing", "aws-eventstream", "--provider", "bedrock-converse"]) == 1
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["error"]["type"] == "throttlingException"
    assert main([str(throttled), "--framed"]) == 0
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (last["event"], last["message_type"], last["content_type"]) == (
        "throttlingException",
        "exception",
        "application/json",
    )


def test_framed_usage_prints_the_usage_after_the_framed_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "s.sse"
    file.write_bytes(RESPONSES)
    assert main([str(file), "-p", "openai", "--framed", "--usage"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["event"] for line in lines[:-1]] == [
        "response.created",
        "response.output_text.delta",
        "response.completed",
    ]
    assert lines[-1]["usage"]["input_tokens"] == 1 and lines[-1]["usage"]["partial"] is False
    cut = tmp_path / "cut.sse"
    cut.write_bytes(RESPONSES[: RESPONSES.index(b"event: response.completed")])
    assert main([str(cut), "-p", "openai", "--framed", "--usage"]) == 0  # framed: the framing was fine
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"usage": None}
    bedrock = FIXTURES / "bedrock-converse-max-tokens-cache.eventstream"
    assert main([str(bedrock), "--framed", "--usage"]) == 0  # auto-detected, as without --framed
    framed_usage = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert main([str(bedrock), "--usage"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == framed_usage
    assert framed_usage["usage"]["input_tokens"] > 0


def test_a_directory_points_to_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path} is a directory: use `ssewire batch {tmp_path} --out FILE`" in err


@pytest.mark.parametrize(
    ("provider", "body", "names"),
    [
        (
            "bedrock-converse",
            (FIXTURES / "bedrock-converse-max-tokens-cache.eventstream").read_bytes(),
            {"messageStart", "contentBlockDelta", "contentBlockStop", "messageStop"},
        ),
        ("gemini", (FIXTURES / "gemini-stream-code-execution.sse").read_bytes(), {"GenerateContentResponse"}),
        (
            "ollama",
            b'{"model":"m","message":{"role":"assistant","content":""},"done":false}\n'
            b'{"model":"m","message":{"role":"assistant","content":"Hi"},"done":true,"done_reason":"stop"}\n',
            {"ChatResponse"},
        ),
        (
            "ollama",
            b'{"model":"m","response":"","done":false}\n{"model":"m","response":"Hi","done":true,"done_reason":"stop"}\n',
            {"GenerateResponse"},
        ),
    ],
)
def test_raw_events_of_providers_without_event_names_say_what_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: str, body: bytes, names: set[str]
) -> None:
    file = tmp_path / "s"
    file.write_bytes(body)
    for given in (provider, "auto"):
        main([str(file), "-p", given])
        raws = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"type": "raw"' in line]
        assert raws, given
        assert {raw.get("event") for raw in raws} == names, given


@pytest.mark.parametrize("to", ["openai-chat", "openai", "anthropic", "gemini", "vercel-ui"])
def test_to_writes_the_stream_in_another_apis_format(to: str) -> None:
    from ssewire import collect, iter_unified

    source = FIXTURES / "anthropic-messages-tool-use.sse"
    proc = _cli(str(source), "--provider", "anthropic", "--to", to)
    assert proc.returncode == 0, proc.stderr
    back = collect(iter_unified([proc.stdout], to))  # type: ignore[arg-type]
    want = collect(iter_unified([source.read_bytes()], "anthropic"))
    assert (back.text, [c.name for c in back.tool_calls], back.stop_reason) == (
        want.text,
        [c.name for c in want.tool_calls],
        want.stop_reason,
    )


def test_to_with_a_failed_or_cut_stream_exits_1_and_writes_the_targets_error() -> None:
    data = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
    proc = _cli("-", "--provider", "anthropic", "--to", "openai-chat", stdin=data[: len(data) // 2])
    assert proc.returncode == 1
    assert b'"type":"stream_truncated"' in proc.stdout and b"[DONE]" not in proc.stdout
    assert _cli(str(FIXTURES / "anthropic-messages-tool-use.sse"), "--to", "nope").returncode == 2


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors")
@pytest.mark.parametrize(
    ("args", "closed", "says"),
    [
        ([str(FIXTURES / "openai-chat-deepseek-cache-resource.sse")], 1, "stdout is closed"),
        ([], 0, "stdin is closed"),
        (["-"], 0, "stdin is closed"),
    ],
)
def test_a_closed_stdout_or_stdin_exits_2_with_a_message(args: list[str], closed: int, says: str) -> None:
    # started with the descriptor closed (`ssewire FILE >&-`, `ssewire <&-`): Python's sys.stdout / sys.stdin are None
    command = [sys.executable, "-m", "ssewire", *args]
    script = f"import os, subprocess, sys; os.close({closed}); sys.exit(subprocess.run({command!r}).returncode)"
    proc = subprocess.run([sys.executable, "-c", script], stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr and says.encode() in proc.stderr


def test_to_with_usage_is_a_usage_error() -> None:
    # the usage line would be written into the target's own stream (which carries the usage already)
    proc = _cli(str(FIXTURES / "openai-chat-deepseek-cache-resource.sse"), "--to", "anthropic", "--usage")
    assert proc.returncode == 2 and proc.stdout == b""
    assert b"--usage" in proc.stderr and b"Traceback" not in proc.stderr
