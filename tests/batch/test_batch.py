"""ssewire.batch: one row per stored body, equal to what collect() and StreamTap make of the same body; bad bodies
give error rows and never stop the batch."""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Optional

import pytest

import ssewire.batch
from helpers import CORPUS, FIXTURES, load_manifest
from helpers.corpus import framing_for, provider_for
from ssewire import PROVIDERS, StreamTap, collect, iter_unified
from ssewire.batch import COLUMNS, GROUP_STREAMS, SCHEMA_VERSION, result_row, result_rows

STREAMS = sorted(p for p in FIXTURES.iterdir() if p.is_file() and not p.name.endswith(".expected.json"))
NAMES = [name for name, _ in COLUMNS]
TOKENS = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "total_tokens",
)
# auto-detection never picks these: their streams have another provider's shape (see normalizers/providers.py)
DETECTED_AS = {"xai": {"openai", "openai-chat"}, "mistral": {"openai-chat"}}
PYTHON_TYPES = {"string": str, "int64": int, "bool": bool, "float64": float}

GOOD = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
HTML = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
JSON_ERROR = b'{"error": {"type": "overloaded_error", "message": "Overloaded"}}'
JUNK = random.Random(7).randbytes(512)  # seeded: the same junk every run


def _expected(stream: Path) -> dict[str, Any]:
    return dict(json.loads(stream.with_name(stream.name + ".expected.json").read_text(encoding="utf-8")))


def _row_from_collect(body: bytes, provider: str, framing: str) -> dict[str, Any]:
    """What the row must say, computed from collect(iter_unified(...)) and the events themselves."""
    events = list(iter_unified([body], provider, framing))  # type: ignore[arg-type]
    result = collect(iter_unified([body], provider, framing))  # type: ignore[arg-type]
    usage = result.usage
    tokens = {name: None if usage is None else getattr(usage, name) for name in TOKENS}
    cost = result.price()
    return {
        "response_id": result.response_id,
        "model": result.model,
        "stop_reason": result.stop_reason,
        "raw_stop_reason": result.raw_stop_reason,
        "error_type": None if result.error is None else result.error["type"],
        "error_message": None if result.error is None else result.error["message"],
        "truncated": any(e.type == "error" and e.error and e.error["type"] == "stream_truncated" for e in events),
        "text_chars": len(result.text),
        "reasoning_chars": len(result.reasoning),
        "tool_calls": len(result.tool_calls),
        "tool_call_names": [call.name for call in result.tool_calls],
        "incomplete_tool_calls": len(result.incomplete_tool_calls),
        **tokens,
        "usage_provenance": result.usage_provenance,
        "cost": result.cost,
        "cost_usd": None if cost is None else float(cost.total),
        "cost_computed_usd": None if cost is None or cost.computed is None else float(cost.computed),
        "cost_source": None if cost is None else cost.source,
        "price_version": None if cost is None else cost.price_version,
        "service_tier": result.service_tier,
        "events": len(events),
        "bytes": len(body),
        "schema_version": SCHEMA_VERSION,
    }


def _check_types(row: dict[str, Any]) -> None:
    assert list(row) == NAMES
    for name, kind in COLUMNS:
        value = row[name]
        if value is None:
            continue
        if kind == "list<string>":
            assert isinstance(value, list) and all(v is None or isinstance(v, str) for v in value), name
        else:
            assert type(value) is PYTHON_TYPES[kind], (name, value)
    json.dumps(row)  # plain JSON-ready values


def _check_error_row(row: dict[str, Any], error_type: Optional[str] = None) -> None:
    _check_types(row)
    assert isinstance(row["error_type"], str) and row["error_type"]
    assert isinstance(row["error_message"], str) and row["error_message"]
    if error_type is not None:
        assert row["error_type"] == error_type, row["error_message"]


def test_columns_are_a_versioned_schema() -> None:
    assert SCHEMA_VERSION == 2
    assert len(set(NAMES)) == len(NAMES)
    assert {kind for _, kind in COLUMNS} <= {*PYTHON_TYPES, "list<string>"}
    _check_types(result_row(GOOD))
    assert result_row(GOOD)["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "typed-off"])
@pytest.mark.parametrize("stream", STREAMS, ids=[p.name for p in STREAMS])
def test_fixture_row_equals_collect(stream: Path, typed: bool, request: pytest.FixtureRequest) -> None:
    if not typed:
        request.getfixturevalue("typed_decoding_off")
    expected = _expected(stream)
    body = stream.read_bytes()
    row = result_row(body, expected["provider"], expected["framing"])
    _check_types(row)
    assert row == {
        "provider": expected["provider"],
        "framing": expected["framing"],
        **_row_from_collect(body, expected["provider"], expected["framing"]),
    }
    # and what the fixture file itself says
    assert row["truncated"] is expected["truncated"]
    assert row["stop_reason"] == expected["unified_stop"]
    assert row["raw_stop_reason"] == expected["stop"]
    assert row["error_type"] == (None if expected["error"] is None else expected["error"]["type"])
    assert row["text_chars"] == len(expected["text"])
    client = [call["name"] for call in expected["tool_calls"]]
    assert [name for name in row["tool_call_names"] if name in client] == client
    assert row["tool_calls"] == len(client) + len(expected.get("server_tool_calls", []))
    assert (row["usage_provenance"] == "absent") is (expected["usage"] is None)


@pytest.mark.parametrize("stream", STREAMS, ids=[p.name for p in STREAMS])
def test_fixture_row_detects_provider_and_framing(stream: Path) -> None:
    expected = _expected(stream)
    body = stream.read_bytes()
    row = result_row(body)
    _check_types(row)
    assert row["framing"] == expected["framing"]
    assert row["provider"] in DETECTED_AS.get(expected["provider"], {expected["provider"]})
    assert row["provider"] in PROVIDERS
    assert {k: v for k, v in row.items() if k != "provider"} == {
        "framing": expected["framing"],
        **_row_from_collect(body, "auto", "auto"),
    }


@pytest.mark.parametrize("stream", STREAMS, ids=[p.name for p in STREAMS])
def test_fixture_row_equals_stream_tap(stream: Path) -> None:
    expected = _expected(stream)
    body = stream.read_bytes()
    tap = StreamTap(expected["provider"], expected["framing"])
    tap.feed(body)
    result = tap.close()
    row = result_row(body, expected["provider"], expected["framing"])
    assert row["events"] == tap.metrics.events
    assert row["bytes"] == tap.metrics.bytes
    assert row["text_chars"] == len(result.text)
    assert row["tool_call_names"] == [call.name for call in result.tool_calls]
    assert row["error_type"] == (result.error and result.error["type"])
    assert row["stop_reason"] == result.stop_reason
    assert row["usage_provenance"] == result.usage_provenance
    assert row["total_tokens"] == (result.usage and result.usage.total_tokens)


def test_hand_checked_rows() -> None:
    anthropic = result_row(GOOD)
    assert anthropic["provider"] == "anthropic" and anthropic["framing"] == "sse"
    assert anthropic["response_id"] == "msg_01HqZ7xYk3VbN9cR2tLw5PdE"
    assert anthropic["model"] == "claude-sonnet-4-5-20250929"
    assert (anthropic["stop_reason"], anthropic["raw_stop_reason"]) == ("tool_use", "tool_use")
    assert (anthropic["error_type"], anthropic["error_message"], anthropic["truncated"]) == (None, None, False)
    assert anthropic["text_chars"] == len("I'll convert that for you.")
    assert (anthropic["tool_calls"], anthropic["tool_call_names"]) == (1, ["convert_currency"])
    assert (anthropic["input_tokens"], anthropic["output_tokens"], anthropic["total_tokens"]) == (412, 78, 490)
    assert anthropic["reasoning_tokens"] is None  # Anthropic does not report it
    assert (anthropic["usage_provenance"], anthropic["cost"]) == ("reported", None)
    assert anthropic["bytes"] == len(GOOD)

    bedrock = result_row((FIXTURES / "bedrock-converse-max-tokens-cache.eventstream").read_bytes())
    assert (bedrock["provider"], bedrock["framing"]) == ("bedrock-converse", "aws-eventstream")
    assert (bedrock["stop_reason"], bedrock["raw_stop_reason"]) == ("max_tokens", "max_tokens")
    # inputTokens 12 + cacheReadInputTokens 1024 + cacheWriteInputTokens 488; totalTokens 1532
    assert (bedrock["input_tokens"], bedrock["cached_input_tokens"], bedrock["cache_write_tokens"]) == (1524, 1024, 488)
    assert (bedrock["output_tokens"], bedrock["total_tokens"]) == (8, 1532)
    assert bedrock["reasoning_chars"] == len("Short answer")

    openai = result_row((FIXTURES / "openai-responses-tool-call.sse").read_bytes())
    assert (openai["provider"], openai["stop_reason"], openai["raw_stop_reason"]) == ("openai", "tool_use", "completed")
    assert (openai["input_tokens"], openai["output_tokens"], openai["reasoning_tokens"]) == (78, 94, 64)
    assert (openai["cached_input_tokens"], openai["total_tokens"]) == (0, 172)
    assert openai["tool_call_names"] == ["get_weather"] and openai["text_chars"] == 0

    cut = result_row((FIXTURES / "openai-chat-truncated.sse").read_bytes(), "openai-chat")
    assert (cut["error_type"], cut["truncated"], cut["stop_reason"]) == ("stream_truncated", True, None)
    assert cut["usage_provenance"] == "absent"
    assert all(cut[name] is None for name in (*TOKENS, "cost", "cost_usd", "cost_source"))  # absent, never 0

    failed = result_row((FIXTURES / "anthropic-messages-overloaded.sse").read_bytes())
    assert (failed["error_type"], failed["error_message"], failed["truncated"]) == (
        "overloaded_error",
        "Overloaded",
        False,
    )
    assert failed["usage_provenance"] == "partial"


def test_bad_bodies_give_error_rows_and_the_batch_completes() -> None:
    half = GOOD[: len(GOOD) // 2]
    bodies = [GOOD, b"", JUNK, b"\x00" + JUNK, b"<html>502 Bad Gateway</html>", HTML, half, JSON_ERROR, None, GOOD]
    rows = list(result_rows(bodies))
    assert len(rows) == len(bodies)
    assert rows[0] == rows[-1] == result_row(GOOD)
    for row in rows[1:-1]:
        _check_error_row(row)
    empty, junk, junk0, html, html2, cut, json_error, missing = rows[1:-1]
    for row in (empty, junk, junk0, html, html2):
        assert row["error_type"] == "not_a_stream" and row["truncated"] is False  # no stream: nothing to retry
        assert row["provider"] is None and row["framing"] is None
        assert row["events"] == 1 and row["usage_provenance"] == "absent"
    assert "empty" in empty["error_message"]
    assert "binary" in junk["error_message"]
    assert "HTML" in html["error_message"] and "HTML" in html2["error_message"]
    assert (cut["error_type"], cut["truncated"], cut["provider"]) == ("stream_truncated", True, "anthropic")
    assert cut["stop_reason"] is None and cut["usage_provenance"] == "partial"
    assert cut["bytes"] == len(half)
    assert (json_error["error_type"], json_error["error_message"]) == ("overloaded_error", "Overloaded")
    assert json_error["truncated"] is False
    assert missing["error_type"] == "missing_body"
    assert all(missing[name] is None for name in NAMES if name not in ("error_type", "error_message", "schema_version"))


@pytest.mark.parametrize("stream", STREAMS, ids=[p.name for p in STREAMS])
def test_every_fixture_cut_in_half_is_an_error_row(stream: Path) -> None:
    expected = _expected(stream)
    body = stream.read_bytes()[: stream.stat().st_size // 2]
    row = result_row(body, expected["provider"], expected["framing"])
    _check_error_row(row)
    assert row["stop_reason"] is None
    assert row == {
        "provider": expected["provider"],
        "framing": expected["framing"],
        **_row_from_collect(body, expected["provider"], expected["framing"]),
    }


def test_a_stream_cut_after_an_in_stream_error_is_truncated() -> None:
    """The first error is the row's error; ``truncated`` still says the terminal event never came."""
    lines = (FIXTURES / "openai-realtime-incomplete-after-error.jsonl").read_bytes().splitlines(keepends=True)
    whole = result_row(b"".join(lines))
    cut = result_row(b"".join(lines[:-1]))
    assert (whole["error_type"], whole["truncated"], whole["stop_reason"]) == (
        "invalid_request_error",
        False,
        "max_tokens",
    )
    assert (cut["error_type"], cut["truncated"], cut["stop_reason"]) == ("invalid_request_error", True, None)


@pytest.mark.parametrize(
    ("body", "framing", "error_type"),
    [
        (b'[{"candidates": []}] trailing', "json_array", "framing_error"),
        (b'data: {"neither": "provider"}\n\n', "auto", "detection_error"),
        (b"\x1f\x8b" + JUNK, "auto", "unsupported_encoding"),  # gzip magic, not gzip
        ("a str, not bytes", "auto", "parse_error"),
    ],
    ids=["framing", "detection", "bad-gzip", "str"],
)
def test_parse_failures_are_typed_error_rows(body: Any, framing: Any, error_type: str) -> None:
    row = result_row(body, framing=framing)
    _check_error_row(row, error_type)
    assert row["truncated"] is True


def test_compressed_bodies_are_decoded() -> None:
    plain = result_row(GOOD)
    packed = gzip.compress(GOOD)
    assert result_row(packed) == {**plain, "bytes": len(packed)}  # gzip recognised by its magic bytes
    assert result_row(packed, content_encoding="gzip") == {**plain, "bytes": len(packed)}
    deflated = zlib.compress(GOOD)
    assert result_row(deflated, content_encoding="deflate") == {**plain, "bytes": len(deflated)}
    assert list(result_rows([packed], content_encoding="gzip")) == [{**plain, "bytes": len(packed)}]
    assert result_row(deflated) == {**plain, "bytes": len(deflated)}  # zlib-wrapped deflate recognised too
    _check_error_row(result_row(GOOD, content_encoding="br"), "unsupported_encoding")


def test_bytes_like_bodies() -> None:
    plain = result_row(GOOD)
    assert result_row(bytearray(GOOD)) == plain
    assert result_row(memoryview(GOOD)) == plain


def test_per_row_providers() -> None:
    mistral = (FIXTURES / "mistral-chat-model-length.sse").read_bytes()
    rows = list(
        result_rows([(mistral, "mistral"), (mistral, None), mistral, (GOOD, "not-a-provider"), (None, "openai")])
    )
    assert rows[0] == result_row(mistral, "mistral")
    assert (rows[0]["provider"], rows[0]["stop_reason"]) == ("mistral", "max_tokens")
    assert rows[1] == rows[2] == result_row(mistral)  # None: the default provider
    _check_error_row(rows[3], "unknown_provider")
    assert "not-a-provider" in rows[3]["error_message"] and rows[3]["bytes"] == len(GOOD)
    _check_error_row(rows[4], "missing_body")
    assert list(result_rows([(mistral, None)], "mistral")) == [rows[0]]


def test_unknown_argument_names_raise_before_any_body_is_read() -> None:
    read: list[bytes] = []

    def bodies() -> Any:
        read.append(GOOD)
        yield GOOD

    with pytest.raises(ValueError, match="provider"):
        result_rows(bodies(), "openai-responses")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="framing"):
        result_rows(bodies(), framing="SSE")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="provider"):
        result_row(GOOD, "nope")  # type: ignore[arg-type]
    assert read == []


def test_an_unexpected_exception_is_an_internal_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from ssewire.stream import StreamDecoder as real

    def broken(normalizer: Any, *args: Any, **options: Any) -> Any:
        if normalizer.provider == "openai":
            raise RuntimeError("a bug")
        return real(normalizer, *args, **options)

    monkeypatch.setattr("ssewire.batch.StreamDecoder", broken)
    rows = list(result_rows([GOOD, (GOOD, "openai"), GOOD]))
    _check_error_row(rows[1], "internal")
    assert rows[1]["error_message"] == "RuntimeError: a bug" and rows[1]["bytes"] == len(GOOD)
    assert rows[0] == rows[2] and rows[0]["error_type"] is None


def _bodies_then_fail(n: int) -> Any:
    yield from [GOOD] * n
    raise AssertionError(f"read past body {n}")


def test_result_rows_reads_one_pricing_group_ahead_at_most() -> None:
    assert next(result_rows(_bodies_then_fail(GROUP_STREAMS)))["stop_reason"] == "tool_use"
    with pytest.raises(AssertionError, match=f"read past body {GROUP_STREAMS - 1}"):
        next(result_rows(_bodies_then_fail(GROUP_STREAMS - 1)))
    rows = result_rows(_bodies_then_fail(2 * GROUP_STREAMS))
    assert len([next(rows) for _ in range(2 * GROUP_STREAMS)]) == 2 * GROUP_STREAMS


def test_result_rows_unpriced_is_lazy_body_by_body() -> None:
    assert next(result_rows(_bodies_then_fail(1), priced=False))["stop_reason"] == "tool_use"


def test_a_pricing_bug_becomes_an_internal_row_and_the_batch_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ssewire.batch.figures  # type: ignore[attr-defined]
    calls = []

    def broken(*args: Any, **options: Any) -> Any:
        calls.append(args)
        if len(calls) == 2:
            raise RuntimeError("a pricing bug")
        return real(*args, **options)

    monkeypatch.setattr("ssewire.batch.figures", broken)
    rows = list(result_rows([GOOD, GOOD, GOOD]))
    _check_error_row(rows[1], "internal")
    assert rows[1]["error_message"] == "RuntimeError: a pricing bug" and rows[1]["bytes"] == len(GOOD)
    assert rows[0] == rows[2] and rows[0]["error_type"] is None


def test_both_scanner_implementations_give_the_same_rows() -> None:
    """The rows of every fixture and bad body, from a process on the pure-Python twin, equal this process's."""
    bodies = [p.read_bytes() for p in STREAMS] + [b"", JUNK, HTML, JSON_ERROR, GOOD[:300]]
    code = (
        "import json, sys; from ssewire import IMPLEMENTATION; from ssewire.batch import result_rows; "
        "bodies = [bytes.fromhex(h) for h in json.load(sys.stdin)]; "
        "print(json.dumps([IMPLEMENTATION, list(result_rows(bodies))]))"
    )
    env = dict(os.environ, SSEWIRE_NO_EXTENSIONS="1")
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps([b.hex() for b in bodies]),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    implementation, rows = json.loads(done.stdout)
    assert implementation == "python"
    assert rows == list(result_rows(bodies))


CAPTURES = load_manifest()


@pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")
@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_corpus_row_equals_collect(capture: dict[str, Any]) -> None:
    body = (CORPUS / capture["file"]).read_bytes()
    provider, framing = provider_for(capture), framing_for(capture)
    row = result_row(body, provider, framing)
    _check_types(row)
    assert row == {"provider": provider, "framing": framing, **_row_from_collect(body, provider, framing)}


def test_lone_surrogates_from_the_stream_become_escapes() -> None:
    # JSON may spell out half a surrogate pair: the row stays valid UTF-8 for every writer (Arrow, Parquet, CSV).
    chunk = {"id": "c\\ud83d", "object": "chat.completion.chunk", "model": "m\\udc00", "choices": []}
    body = ("data: " + json.dumps(chunk).replace("\\\\", "\\") + "\n\ndata: [DONE]\n\n").encode()
    row = result_row(body, "openai-chat")
    assert row["response_id"] == "c\\ud83d" and row["model"] == "m\\udc00"
    for value in row.values():
        if isinstance(value, str):
            value.encode("utf-8")  # raises on a lone surrogate
    assert result_row(body.replace(b"m\\udc00", "m\u00e9".encode()), "openai-chat")["model"] == "m\u00e9"


def test_cost_columns_price_at_the_given_time_or_not_at_all() -> None:
    pytest.importorskip("genai_prices", reason="the price table needs Python 3.11+ (extra prices)")
    from datetime import datetime, timezone

    body = (FIXTURES / "openai-chat-deepseek-cache-resource.sse").read_bytes()
    result = collect(iter_unified([body], "openai-chat"))
    costs = {}
    for hour in (1, 20):  # DeepSeek's discount hours (00:30-16:30 UTC in the table) and outside them
        at = datetime(2026, 11, 2, hour, tzinfo=timezone.utc)
        row = result_row(body, "openai-chat", priced_at=at)
        expected = result.price(at=at)
        assert expected is not None and row["cost_source"] == "computed" == expected.source
        assert row["cost_usd"] == row["cost_computed_usd"] == float(expected.total)
        assert row["price_version"] == expected.price_version and row["price_version"].startswith("genai-prices ")
        costs[hour] = row["cost_usd"]
    assert costs[1] != costs[20]
    unpriced = result_row(body, "openai-chat", priced=False)
    assert all(unpriced[name] is None for name in ("cost_usd", "cost_computed_usd", "cost_source", "price_version"))
    assert {k: v for k, v in unpriced.items() if not k.startswith(("cost_", "price_"))} == {
        k: v for k, v in result_row(body, "openai-chat").items() if not k.startswith(("cost_", "price_"))
    }
