"""Every recorded stream (../shared/corpus and fixtures/) served over real HTTP with random chunking and pauses
gives, through httpx (sync and async), aiohttp and requests, the same events as the stream parsed in memory and
the result the corpus / fixture tests expect; cut mid-event, it ends in ``stream_truncated``."""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from helpers.checks import check_corpus_result, check_fixture_result
from helpers.corpus import framing_for, provider_for
from helpers.http_server import CLIENTS, StreamServer, fetch
from ssewire import Unified, collect, iter_unified

for _client_module in ("httpx", "aiohttp", "requests"):
    pytest.importorskip(_client_module)

CAPTURES = load_manifest()
FIXTURE_EXPECTED = sorted(FIXTURES.glob("*.expected.json"))
# How each client gets the body, rotated per stream: chunked, gzip-encoded, Content-Length, close-delimited.
VARIANTS: list[dict[str, Any]] = [{}, {"gzip": 1}, {"mode": "length"}, {"mode": "close"}]


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as srv:
        yield srv


def _seed(name: str, client: str) -> int:
    return zlib.crc32(f"{name}|{client}".encode())


def _dicts(events: list[Unified]) -> list[dict[str, Any]]:
    return [e.to_dict(with_raw=True) for e in events]


@functools.cache
def _over_http(port: int, path: str, provider: str) -> dict[str, list[Unified]]:
    """The unified events of ``path`` through every client (the framing comes from Content-Type)."""
    out = {}
    for i, client in enumerate(CLIENTS):
        variant = VARIANTS[(i + zlib.crc32(path.encode())) % len(VARIANTS)]
        url = f"http://127.0.0.1:{port}{path}?" + "&".join(
            f"{k}={v}" for k, v in {"seed": _seed(path, client), **variant}.items()
        )
        out[client] = fetch(client, url, provider)
    return out


def _fixture_stream(expected_file: Path) -> Path:
    return expected_file.with_name(expected_file.name[: -len(".expected.json")])


# ------------------------------------------------------------------------------------------------------ corpus

corpus_params = pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
needs_corpus = pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")


@needs_corpus
@corpus_params
def test_corpus_events_over_http_equal_in_memory(server: StreamServer, capture: dict[str, Any]) -> None:
    data = (CORPUS / capture["file"]).read_bytes()
    want = _dicts(list(iter_unified([data], provider_for(capture), framing_for(capture))))
    for client, events in _over_http(server.port, f"/file/corpus/{capture['file']}", provider_for(capture)).items():
        assert _dicts(events) == want, client


@needs_corpus
@corpus_params
def test_corpus_result_over_http(server: StreamServer, capture: dict[str, Any]) -> None:
    for client, events in _over_http(server.port, f"/file/corpus/{capture['file']}", provider_for(capture)).items():
        try:
            check_corpus_result(collect(events), capture)
        except AssertionError as exc:
            raise AssertionError(f"through {client}: {exc}") from exc


@needs_corpus
@corpus_params
def test_corpus_cut_mid_stream_ends_in_truncation(server: StreamServer, capture: dict[str, Any]) -> None:
    data = (CORPUS / capture["file"]).read_bytes()
    full_text = collect(iter_unified([data], provider_for(capture), framing_for(capture))).text
    rotate = zlib.crc32(capture["file"].encode())
    # Every client sees the connection drop inside an HTTP chunk (one of them by a TCP reset); one more reads a
    # close-delimited body that simply ends early.
    runs = [(client, "chunked", i == rotate % 4) for i, client in enumerate(CLIENTS)]
    runs.append((CLIENTS[(rotate // 4) % 4], "close", False))
    for client, mode, reset in runs:
        url = server.url(
            f"/file/corpus/{capture['file']}",
            seed=_seed(capture["file"], client),
            cut=len(data) // 2,
            mode=mode,
            abort=1 if reset else None,
        )
        events = fetch(client, url, provider_for(capture))
        last = events[-1]
        where = (client, mode, reset)
        assert last.type == "error", where
        assert last.error is not None, where
        assert last.error["type"] == "stream_truncated", where
        if mode == "chunked":  # the client saw the connection drop; a close-delimited body just ends
            assert "connection lost" in last.error["message"], where
        assert not any(e.type == "done" for e in events), where
        assert full_text.startswith(collect(events).text), where


@needs_corpus
@pytest.mark.parametrize("client", CLIENTS)
def test_corpus_framed_events_over_http(server: StreamServer, client: str) -> None:
    """iter_response_events / aiter_response_events give the scanner's events, for SSE and JSON-array bodies."""
    from ssewire import iter_events

    for capture in CAPTURES[:: max(1, len(CAPTURES) // 8)] + [c for c in CAPTURES if c["framing"] == "json-array"]:
        data = (CORPUS / capture["file"]).read_bytes()
        url = server.url(f"/file/corpus/{capture['file']}", seed=_seed(capture["file"], client))
        got = fetch(client, url)
        want = list(iter_events([data], framing_for(capture)))
        assert [(e.event, e.data, e.id, e.retry) for e in got] == [(e.event, e.data, e.id, e.retry) for e in want]


# ---------------------------------------------------------------------------------------------------- fixtures


@pytest.mark.parametrize("expected_file", FIXTURE_EXPECTED, ids=[_fixture_stream(p).name for p in FIXTURE_EXPECTED])
def test_fixture_over_http(server: StreamServer, expected_file: Path) -> None:
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    data = _fixture_stream(expected_file).read_bytes()
    want = list(iter_unified([data], expected["provider"], expected["framing"]))
    path = f"/file/fixtures/{_fixture_stream(expected_file).name}"
    for client, events in _over_http(server.port, path, expected["provider"]).items():
        assert _dicts(events) == _dicts(want), client
        try:
            check_fixture_result(collect(events), events, expected)
        except AssertionError as exc:
            raise AssertionError(f"through {client}: {exc}") from exc
