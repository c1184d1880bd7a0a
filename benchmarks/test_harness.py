"""The harness itself (plain tests, skipped under ``--benchmark-only``): generated streams are deterministic and
valid for their provider, every contender reproduces ssewire's output, and the CI floors and README block work."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import ssewire

from .check import Floor, evaluate
from .contenders import FRAMING, REFERENCE, Outcome, contenders, prepare
from .generate import STREAMS, generate
from .measure import Settings, bench_stream, reference, same_output
from .readme import replace_block
from .report import README_END, README_START, _twin_table, update_readme

SMALL = 300_000


@pytest.mark.parametrize("name", list(STREAMS))
def test_generator_is_deterministic_and_sized(name: str) -> None:
    a, b = generate(name, SMALL), generate(name, SMALL)
    assert a.data == b.data
    assert a.sha256 == b.sha256
    assert generate(name, SMALL, seed=1).data != a.data
    big = generate(name, 3_000_000)
    assert abs(big.size - 3_000_000) < max(400_000, big.largest_event)  # sized to within an event


@pytest.mark.parametrize("name", list(STREAMS))
def test_generated_stream_is_complete_for_its_provider(name: str) -> None:
    """The real normaliser finds the whole text, every tool call and the terminal event, with no error."""
    stream = generate(name, SMALL)
    spec = STREAMS[name]
    chunks = [stream.data[i : i + 16384] for i in range(0, stream.size, 16384)]
    events = list(ssewire.iter_unified(chunks, spec.provider, framing=spec.framing))
    kinds = Counter(e.type for e in events)
    assert kinds["error"] == 0, [e.error for e in events if e.type == "error"]
    assert events[-1].type == "done"
    assert sum(len(e.text) for e in events if e.type == "text_delta") == stream.text_chars
    assert kinds["tool_call_done"] == stream.tool_calls


@pytest.mark.parametrize("name", list(STREAMS))
def test_every_contender_reproduces_ssewire_output(name: str) -> None:
    result = bench_stream(prepare(generate(name, SMALL)), contenders(), Settings(repeats=1, budget=0.1, memory=False))
    assert not result.notes
    bad = {row.contender: row.note for row in result.rows if row.status not in ("ok", "unavailable")}
    assert not bad
    assert all(row.median is not None for row in result.rows if row.status == "ok")


def test_floor_verdicts() -> None:
    result = bench_stream(
        prepare(generate("openai-chat", SMALL)), contenders(), Settings(repeats=1, budget=0.1, memory=False)
    )
    impossible = Floor("x", "floor: bytes.find scan", "sseclient-py", ("openai-chat",), 1e9)
    easy = Floor("y", "floor: bytes.find scan", "sseclient-py", ("openai-chat",), 1.0, geomean=True)
    absent = Floor("z", "floor: bytes.find scan", "sseclient-py", ("gemini-sse",), 1.0)
    verdicts = evaluate([result], (impossible, easy, absent))
    assert [v.status for v in verdicts] == ["fail", "pass"]


def test_readme_block_is_replaced_only_between_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{README_START}\nold\n{README_END}\noutro\n")
    block = f"{README_START}\nnew\n{README_END}"
    assert update_readme(readme, block)
    assert readme.read_text() == f"intro\n{block}\noutro\n"
    missing = tmp_path / "OTHER.md"
    missing.write_text("no markers\n")
    assert not update_readme(missing, block)
    assert missing.read_text() == "no markers\n"


def test_timed_runs_may_leave_out_the_character_count() -> None:
    checked = Outcome(5, 120)
    assert same_output(Outcome(5), checked)
    assert same_output(Outcome(5, 120), checked)
    assert not same_output(Outcome(4), checked)
    assert not same_output(Outcome(5, 119), checked)


def test_twin_table_gives_both_ratios_and_marks_a_missing_reference() -> None:
    def row(contender: str, mb: float) -> dict[str, object]:
        return {"group": FRAMING, "contender": contender, "median_s": 1.0, "mb_per_s": mb}

    doc = {
        "streams": [
            {"name": "a", "results": [row("ssewire[cython]", 1000), row("ssewire[python]", 100), row(REFERENCE, 50)]},
            {"name": "b", "results": [row("ssewire[cython]", 900), row("ssewire[python]", 300)]},
        ]
    }
    lines = _twin_table(doc)
    assert "| a | 1000 | 100 | 50 | 10.0x | 2.00x |" in lines
    assert "| b | 900 | 300 | — | 3.0x | — |" in lines


def test_twin_table_without_any_reference_has_no_reference_columns() -> None:
    def row(contender: str, mb: float) -> dict[str, object]:
        return {"group": FRAMING, "contender": contender, "median_s": 1.0, "mb_per_s": mb}

    doc = {"streams": [{"name": "a", "results": [row("ssewire[cython]", 1000), row("ssewire[python]", 100)]}]}
    lines = _twin_table(doc)
    assert "| a | 1000 | 100 | 10.0x |" in lines
    assert not any("reference" in line or "seeds" in line for line in lines)


def test_without_the_seed_reference_there_is_no_row_no_verdict_and_no_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from .check import FLOORS

    monkeypatch.setenv("SSEWIRE_REFERENCE", str(tmp_path / "absent.py"))
    names = [c.name for c in contenders()]
    assert REFERENCE not in names
    result = bench_stream(
        prepare(generate("openai-chat", SMALL)), contenders(), Settings(repeats=1, budget=0.1, memory=False)
    )
    verdicts = evaluate([result], FLOORS)
    assert not [v for v in verdicts if "seed" in v.label]
    assert not [v for v in verdicts if v.status == "skip" and "reference" in v.reason]


def test_help_is_plain_text_and_the_readme_is_rewritten_only_on_request() -> None:
    from .__main__ import parse_args

    root = Path(__file__).resolve().parent.parent
    run = subprocess.run
    text = run([sys.executable, "-m", "benchmarks", "--help"], capture_output=True, text=True, check=True, cwd=root)
    text = text.stdout
    assert "``" not in text and ":func:" not in text
    assert parse_args([]).readme is False
    assert parse_args(["--quick"]).readme is False
    assert parse_args(["--readme"]).readme is True


def test_decode_floor_is_the_fastest_decoder_and_the_readme_ratios_use_it() -> None:
    from .contenders import E2E
    from .report import _decode_ratio, _peak_ratio, decode_floor

    def row(contender: str, median: float, peak: object = None) -> dict[str, object]:
        return {"group": E2E, "contender": contender, "median_s": median, "mb_per_s": 1.0, "peak_bytes": peak}

    ssewire_row = row("ssewire[cython]", 3.0, 600_000)
    stream = {
        "largest_event_bytes": 200_000,
        "results": [
            ssewire_row,
            row("floor: json.loads payloads", 6.0),
            row("floor: orjson payloads", 2.5),
            row("floor: msgspec payloads", 2.0),
        ],
    }
    floor = decode_floor(stream)
    assert floor is not None and floor["contender"] == "floor: msgspec payloads"
    assert _decode_ratio(stream, ssewire_row) == "1.50x (msgspec)"
    assert _peak_ratio(stream, ssewire_row) == "3.0x"
    assert _peak_ratio(stream, row("ssewire[cython]", 3.0)) == "n/a"
    assert _peak_ratio({**stream, "largest_event_bytes": 1000}, ssewire_row) == "—"  # small events: no meaning


@pytest.mark.parametrize("name", [n for n, spec in STREAMS.items() if spec.framing == "aws-eventstream"])
def test_event_stream_bodies_read_the_same_with_botocore(name: str) -> None:
    """The generated Bedrock bodies are valid AWS event-stream as botocore reads it: the same messages, headers and
    payloads as ssewire's twin, fed the same chunks."""
    from botocore.eventstream import EventStreamBuffer

    from ssewire._scan.scanner_py import EventStreamMessage, EventStreamParser

    stream = generate(name, SMALL)
    chunks = [stream.data[i : i + 16384] for i in range(0, stream.size, 16384)]
    buf, parser = EventStreamBuffer(), EventStreamParser()
    theirs: list[Any] = []
    ours: list[Any] = []
    for chunk in chunks:
        buf.add_data(chunk)
        theirs += [(m.headers, m.payload) for m in buf]
        ours += [(ev.headers, ev.payload) for ev in parser.feed(chunk) if isinstance(ev, EventStreamMessage)]
    assert not parser.close()
    assert theirs == ours
    assert len(ours) == stream.events
    assert {h[":event-type"] for h, _ in ours} <= (
        {"chunk"}
        if name == "bedrock-anthropic"
        else {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
    )


def test_decode_floors_unwrap_invoke_model_chunks() -> None:
    """On InvokeModel (``bedrock-anthropic``) the payload floors decode the ``chunk`` wrapper, its base64 and the
    Anthropic event inside, as a client must; other streams' payloads are decoded as they are."""
    import json

    from .contenders import _loads_for

    case = prepare(generate("bedrock-anthropic", SMALL))
    reference(case)  # frames the payloads
    first = _loads_for(case, json.loads)(case.payloads[0])
    assert first["type"] == "message_start"
    plain = prepare(generate("bedrock-converse", SMALL))
    assert _loads_for(plain, json.loads) is json.loads


def test_provider_scoped_contenders_run_only_on_their_provider() -> None:
    by_name = {c.name: c for c in contenders()}
    sdk = by_name["anthropic SDK Bedrock decoder + json.loads"]
    assert sdk.applies_to(generate("bedrock-anthropic", SMALL))
    assert not sdk.applies_to(generate("bedrock-converse", SMALL))
    assert by_name["boto3 EventStream"].applies_to(generate("bedrock-converse", SMALL))
    assert not by_name["botocore EventStreamBuffer"].applies_to(generate("ollama-chat", SMALL))


def test_every_stream_has_a_framing_floor() -> None:
    from .check import FLOORS

    gated = {name for floor in FLOORS if floor.group == FRAMING for name in floor.streams}
    assert set(STREAMS) <= gated


def test_sdk_table_lists_only_streams_where_an_sdk_reader_ran() -> None:
    from .contenders import E2E
    from .report import _sdk_table

    def row(contender: str, median: float, impl: object = None) -> dict[str, object]:
        return {
            "group": E2E,
            "contender": contender,
            "implementation": impl,
            "median_s": median,
            "mb_per_s": 10 / median,
            "vs_ssewire": 1 / median,
        }

    ours = row("ssewire[cython]", 1.0, "cython")
    doc = {
        "streams": [
            {"name": "bedrock-converse", "results": [ours, row("boto3 EventStream", 20.0)]},
            {"name": "openai-chat", "results": [ours]},
        ]
    }
    lines = _sdk_table(doc)
    assert "| bedrock-converse | 10 | 20.0x | — |" in lines
    assert not any(line.startswith("| openai-chat") for line in lines)
    assert _sdk_table({"streams": doc["streams"][1:]}) == []


def test_named_readme_block_is_replaced_between_its_own_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- x:start -->\nold\n<!-- x:end -->\n<!-- y:start -->\nkept\n<!-- y:end -->\n")
    assert replace_block("x", "new\nlines", readme)
    expected = "a\n<!-- x:start -->\nnew\nlines\n<!-- x:end -->\n<!-- y:start -->\nkept\n<!-- y:end -->\n"
    assert readme.read_text() == expected
    assert not replace_block("z", "nothing", readme) and not replace_block("x", "-", tmp_path / "none.md")


def test_a_failing_ratio_is_measured_again_longer_and_only_with_check() -> None:
    import argparse

    from .__main__ import _remeasure_failures
    from .check import Verdict

    settings = Settings(repeats=1, budget=0.1, min_time=0.01, memory=False)
    results = [
        bench_stream(prepare(generate(name, SMALL)), contenders(), settings) for name in ("openai-chat", "xai-chat")
    ]
    for row in results[0].rows:
        row.peak = 123
    before = results[1]
    failing = [
        Verdict("a floor", "openai-chat", 0.1, 1.0, "fail"),
        Verdict("b", "xai-chat", None, 1.0, "fail", "error"),
    ]
    size_mb = SMALL / 1_000_000
    assert _remeasure_failures(argparse.Namespace(check=False), results, failing, contenders(), settings, size_mb) == []
    names = _remeasure_failures(argparse.Namespace(check=True), results, failing, contenders(), settings, size_mb)
    assert names == ["openai-chat"]  # the unmeasurable ratio is a failure as it stands: nothing to measure again
    again = results[0]
    assert any("re-measured" in note for note in again.notes)
    assert results[1] is before
    timed = [row for row in again.rows if row.status == "ok"]
    assert timed and all(len(row.times) >= 3 and row.peak == 123 for row in timed)
