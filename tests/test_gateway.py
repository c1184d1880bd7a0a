"""The gateway example (``examples/gateway``) end to end, on 127.0.0.1: a replay upstream serving the fixtures and
the shared recordings with random chunking and pauses, the gateway in front of it (uvicorn in a thread), and
clients reading from both. Through the gateway the bytes are the upstream's, the official SDKs parse what they
parse directly, the recorded result is ``collect()`` of the same bytes, a client that leaves closes the upstream,
OpenTelemetry gets a span and the four GenAI metrics, and a gzip body stays gzip."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import socket
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest

from helpers import CORPUS, FIXTURES, ROOT, load_manifest
from helpers.corpus import framing_for, provider_for
from ssewire import StreamResult, collect, iter_unified
from ssewire.names import FramingName, ProviderName

pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
sys.path.append(str(ROOT))  # examples/ is at the repository's root, on the path only under `python -m pytest`
pytest.importorskip("examples.gateway", reason="the gateway example is not here (tests copied out of the tree)")

import httpx
from examples.gateway import PATH_PROVIDERS, Record, Recorder, create_app
from examples.gateway.replay import ReplayServer
from examples.gateway.serve import BackgroundServer

from helpers.sdk import API_PATHS, APIS, read_with_sdk

TIMEOUT = 10.0


class Stream:
    """A recorded stream the replay server serves: ``name`` (``fixtures/...`` or ``corpus/...``) and how to read
    it."""

    def __init__(
        self, name: str, path: Path, provider: ProviderName, framing: FramingName, api: Optional[str] = None
    ) -> None:
        self.name, self.path, self.provider, self.framing = name, path, provider, framing
        self.api = api  # the SDK API (``chat``, ``responses``, ``messages``) whose stream this is, if any

    @functools.cached_property
    def data(self) -> bytes:
        return self.path.read_bytes()

    @functools.cached_property
    def expected(self) -> StreamResult:
        """``collect()`` of the bytes read in one piece."""
        return self.read_as(self.provider)

    @functools.cached_property
    def has_done(self) -> bool:
        """Whether the stream reaches its terminal event."""
        return any(e.type == "done" for e in iter_unified([self.data], self.provider, self.framing))

    def read_as(self, provider: ProviderName) -> StreamResult:
        """``collect()`` of the bytes read in one piece as ``provider``."""
        return collect(iter_unified([self.data], provider, self.framing))

    def __repr__(self) -> str:
        return self.name


def _fixture_streams() -> list[Stream]:
    out = []
    for expected in sorted(FIXTURES.glob("*.expected.json")):
        path = expected.with_name(expected.name[: -len(".expected.json")])
        spec = json.loads(expected.read_text(encoding="utf-8"))
        api = next((api for prefix, api in _FIXTURE_APIS.items() if path.name.startswith(prefix)), None)
        out.append(Stream(f"fixtures/{path.name}", path, spec["provider"], spec["framing"], api))
    return out


_FIXTURE_APIS = {
    "openai-chat-": "chat",
    "xai-chat-": "chat",
    "openai-responses-": "responses",
    "xai-responses-": "responses",
    "anthropic-messages-": "messages",
}
_CORPUS_APIS = {"chat-completions": "chat", "openai-responses": "responses", "anthropic-messages": "messages"}
FIXTURE_STREAMS = _fixture_streams()
CORPUS_STREAMS = [
    Stream(f"corpus/{c['file']}", CORPUS / c["file"], provider_for(c), framing_for(c), _CORPUS_APIS.get(c["api"]))
    for c in load_manifest()
]
STREAMS = FIXTURE_STREAMS + CORPUS_STREAMS
needs_corpus = pytest.mark.skipif(not CORPUS_STREAMS, reason="../shared/corpus is not present")

#: The streams each SDK call reads: what its API (or a compatible one: xAI, Groq, OpenRouter) sends.
SDK_STREAMS: dict[str, list[Stream]] = {api: [s for s in STREAMS if s.api == api] for api in APIS}
#: Every (API, stream) pair: the first stream of each API in the default run, the rest of the matrix ``slow``.
SDK_CASES = [
    pytest.param(api, stream, id=f"{api}-{stream.name}", marks=[pytest.mark.slow] if i else [])
    for api in APIS
    for i, stream in enumerate(SDK_STREAMS[api])
]

# Routes of the gateway under test: /as/<provider> reads the stream as that provider (a route per provider),
# then the default table (the SDKs' paths).
PROVIDERS = sorted({s.provider for s in STREAMS})
PATHS: tuple[tuple[str, ProviderName], ...] = tuple((f"/as/{p}", p) for p in PROVIDERS) + PATH_PROVIDERS


def _seed(name: str) -> int:
    return zlib.crc32(name.encode())


def _query(stream: Stream) -> dict[str, Any]:
    """The replay query for ``stream``, seeded by its name: writes of up to 512 bytes and a pause after 30 % of the
    events (fixtures); for the recordings, some of them 250 KB in 1,000 events, up to 4 KiB and 5 %."""
    query: dict[str, Any] = {"file": stream.name, "seed": _seed(stream.name)}
    if stream.name.startswith("fixtures/"):
        return {**query, "maxchunk": 512}
    return {**query, "maxchunk": 4096, "pause": 0.05}


def summary(result: StreamResult) -> dict[str, Any]:
    """Everything a record's result says, comparable with ``==``."""
    return result.to_dict()


# ------------------------------------------------------------------------------------------------------ servers


class Reply:
    """A response read whole: status, headers and the body as sent (still compressed when it was)."""

    def __init__(self, response: httpx.Response, content: bytes) -> None:
        self.status_code, self.headers, self.content = response.status_code, response.headers, content


class Harness:
    """The replay upstream and the gateway in front of it, with the gateway's recorder."""

    def __init__(self, upstream: ReplayServer, gateway: BackgroundServer, recorder: Recorder) -> None:
        self.upstream, self.gateway, self.recorder = upstream, gateway, recorder

    def last_record(self) -> Record:
        """The record of the request that just ended (requests here run one at a time)."""
        records = self.recorder.wait(1)
        return records[-1]

    @staticmethod
    def raw(base: str, path: str, query: dict[str, Any], headers: Optional[dict[str, str]] = None) -> Reply:
        """POST ``path`` at ``base`` (a JSON body naming model ``m``, ``stream`` true); the raw reply."""
        with httpx.Client(timeout=TIMEOUT) as client:
            body = {"model": "m", "stream": True}
            with client.stream("POST", base + path, params=query, json=body, headers=headers) as response:
                return Reply(response, b"".join(response.iter_raw()))


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    recorder = Recorder()
    with ReplayServer({"fixtures": FIXTURES, "corpus": CORPUS}) as upstream:
        gateway = BackgroundServer(create_app(upstream.url, paths=PATHS, record=recorder))
        with gateway:
            yield Harness(upstream, gateway, recorder)


@pytest.fixture(autouse=True)
def _fresh_records(request: pytest.FixtureRequest) -> None:
    if "harness" in request.fixturenames:
        request.getfixturevalue("harness").recorder.clear()


@functools.cache
def _through(harness: Harness, stream: Stream) -> tuple[Reply, Reply, Record]:
    """``stream`` read raw straight from the upstream and through the gateway (its ``/as/<provider>`` route),
    and the gateway's record of it."""
    path = f"/as/{stream.provider}"
    query = _query(stream)
    direct = harness.raw(harness.upstream.url, path, query)
    harness.recorder.clear()
    proxied = harness.raw(harness.gateway.url, path, {**query, "seed": query["seed"] + 1})
    return direct, proxied, harness.last_record()


# --------------------------------------------------------------------------------- 1, 3: bytes and the record


def _check_bytes(harness: Harness, stream: Stream) -> None:
    direct, proxied, record = _through(harness, stream)
    assert direct.content == stream.data  # the replay is faithful ...
    assert proxied.content == direct.content  # ... and so is the gateway
    assert proxied.status_code == direct.status_code == 200
    assert proxied.headers["content-type"] == direct.headers["content-type"]
    assert record.metrics.bytes == len(stream.data)


def _check_record(harness: Harness, stream: Stream) -> None:
    _, _, record = _through(harness, stream)
    assert (record.status, record.provider, record.disconnected, record.upstream_error) == (
        200,
        stream.provider,
        False,
        None,
    )
    assert record.model == "m" and record.stream is True
    assert summary(record.result) == summary(stream.expected)
    assert (record.metrics.time_to_done is not None) == stream.has_done


@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=repr)
def test_fixture_bytes_identical_through_gateway(harness: Harness, stream: Stream) -> None:
    _check_bytes(harness, stream)


@pytest.mark.parametrize("stream", FIXTURE_STREAMS, ids=repr)
def test_fixture_record_equals_collect(harness: Harness, stream: Stream) -> None:
    _check_record(harness, stream)


@needs_corpus
@pytest.mark.parametrize("stream", CORPUS_STREAMS, ids=repr)
def test_corpus_bytes_identical_through_gateway(harness: Harness, stream: Stream) -> None:
    _check_bytes(harness, stream)


@needs_corpus
@pytest.mark.parametrize("stream", CORPUS_STREAMS, ids=repr)
def test_corpus_record_equals_collect(harness: Harness, stream: Stream) -> None:
    _check_record(harness, stream)


def test_streams_cover_every_sdk_api() -> None:
    assert all(SDK_STREAMS[api] for api in APIS)
    assert {s.framing for s in FIXTURE_STREAMS} >= {"sse", "json_array", "ndjson", "aws-eventstream"}


# ------------------------------------------------------------------------------------------- 2: the real SDKs


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(("api", "stream"), SDK_CASES)
def test_sdk_parses_the_same_through_gateway(harness: Harness, api: str, stream: Stream, use_async: bool) -> None:
    """``create(stream=True)``: the events the SDK parses (or the error it raises) through the gateway are the ones
    it parses straight from the upstream; the gateway's record of that request is ``collect()`` of the bytes."""
    query = _query(stream)
    direct = read_with_sdk(api, harness.upstream.url, query, use_async=use_async)
    assert direct["events"] or direct["error"]
    harness.recorder.clear()
    proxied = read_with_sdk(api, harness.gateway.url, query, use_async=use_async)
    assert proxied == direct
    record = harness.last_record()
    assert (record.path, record.status) == (API_PATHS[api], 200)
    if direct["error"] is not None:  # the SDK raised at an error event and closed: the rest may not have been read
        return
    assert not record.disconnected
    assert record.metrics.bytes == len(stream.data)
    assert summary(record.result) == summary(stream.read_as(record.provider))  # the provider the path names


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")  # the SDK's final-object unions
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(("api", "stream"), [c for c in SDK_CASES if c.values[0] != "chat"])
def test_sdk_stream_helper_final_object_through_gateway(
    harness: Harness, api: str, stream: Stream, use_async: bool
) -> None:
    """``responses.stream()`` / ``messages.stream()``: the same events and the same final response / message."""
    query = _query(stream)
    direct = read_with_sdk(api, harness.upstream.url, query, use_async=use_async, helper=True)
    proxied = read_with_sdk(api, harness.gateway.url, query, use_async=use_async, helper=True)
    assert proxied == direct
    assert direct["final"] is not None or direct["error"]


@pytest.mark.parametrize("api", APIS)
def test_sdk_error_status_forwarded(harness: Harness, api: str) -> None:
    """A 429 goes through as it is: the SDK raises the same error, and the record has the status and the error."""
    query = {"status": 429, "shape": "anthropic" if api == "messages" else "openai"}
    direct = read_with_sdk(api, harness.upstream.url, query, use_async=False)
    proxied = read_with_sdk(api, harness.gateway.url, query, use_async=False)
    assert proxied == direct
    assert direct["error"].startswith("RateLimitError")
    record = harness.last_record()
    assert record.status == 429
    assert record.result.error is not None
    assert record.result.error["type"] in ("rate_limit_exceeded", "rate_limit_error")


# -------------------------------------------------------------------------------- 4: the client goes away


def _assert_left(harness: Harness, token: str, started: float) -> Record:
    """The upstream saw the gateway close its connection (within 2 s) and the record says the client left."""
    assert harness.upstream.wait_outcome(token, 5) == "eof"
    assert time.monotonic() - started < 2.5
    record = harness.recorder.wait(1)[-1]
    assert record.disconnected and record.upstream_error is None
    assert record.metrics.done_at is None and record.result.stop_reason is None
    assert record.result.text.startswith("tick 0 tick 1 tick 2 ")
    return record


def test_disconnect_closes_upstream_httpx(harness: Harness) -> None:
    with httpx.Client(timeout=TIMEOUT) as client:
        query = {"endless": "chat", "token": "httpx-left"}
        with client.stream("POST", harness.gateway.url + "/v1/chat/completions", params=query, json={}) as response:
            seen = b""
            for chunk in response.iter_raw():
                seen += chunk
                if b"tick 3 " in seen:
                    break
        left = time.monotonic()
    record = _assert_left(harness, "httpx-left", left)
    assert record.result.usage is None and record.result.usage_provenance == "absent"
    assert record.result.error is not None and record.result.error["type"] == "stream_truncated"


def test_disconnect_while_upstream_silent_closes_upstream(harness: Harness) -> None:
    """No byte flows when the client leaves: the gateway learns it from the server (``http.disconnect``), not
    from a failed write, and still closes the upstream."""
    with httpx.Client(timeout=TIMEOUT) as client:
        query: dict[str, Any] = {"endless": "chat", "events": 4, "token": "silent-left"}
        with client.stream("POST", harness.gateway.url + "/v1/chat/completions", params=query, json={}) as response:
            seen = b""
            for chunk in response.iter_raw():
                seen += chunk
                if b"tick 3 " in seen:
                    break
            time.sleep(0.05)  # the upstream has gone quiet
        left = time.monotonic()
    _assert_left(harness, "silent-left", left)


def test_disconnect_anthropic_sdk_keeps_partial_usage(harness: Harness) -> None:
    import anthropic

    with anthropic.Anthropic(base_url=harness.gateway.url, api_key="x", max_retries=0, timeout=TIMEOUT) as client:
        query = {"endless": "anthropic", "token": "anthropic-left"}
        messages = [{"role": "user", "content": "hi"}]
        with client.messages.stream(model="m", max_tokens=5, messages=messages, extra_query=query) as stream:  # type: ignore[arg-type]
            for i, _ in enumerate(stream.text_stream):
                if i == 3:
                    break
        left = time.monotonic()
    record = _assert_left(harness, "anthropic-left", left)
    usage = record.result.usage
    assert usage is not None and usage.partial and record.result.usage_provenance == "partial"
    assert usage.input_tokens == 12


def test_disconnect_async_openai_sdk(harness: Harness) -> None:
    import openai

    async def leave() -> float:
        async with openai.AsyncOpenAI(
            base_url=harness.gateway.url + "/v1", api_key="x", max_retries=0, timeout=TIMEOUT
        ) as client:
            query = {"endless": "chat", "token": "async-left"}
            chunks = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                extra_query=query,
            )
            n = 0
            async for _ in chunks:
                n += 1
                if n == 4:
                    break
            await chunks.close()
            return time.monotonic()

    _assert_left(harness, "async-left", asyncio.run(leave()))


def test_upstream_cut_is_passed_on(harness: Harness) -> None:
    """The upstream's connection drops mid-body: the client's is cut too (no clean end), and the record names the
    transport error and the truncation."""
    stream = next(s for s in FIXTURE_STREAMS if s.name == "fixtures/anthropic-messages-tool-use.sse")
    query: dict[str, Any] = {"file": stream.name, "cut": len(stream.data) // 2, "token": "cut"}
    url = harness.gateway.url + "/v1/messages"
    got: list[bytes] = []
    with httpx.Client(timeout=TIMEOUT) as client, client.stream("POST", url, params=query, json={}) as response:
        chunks = response.iter_raw()
        with pytest.raises(httpx.RemoteProtocolError):
            got.extend(chunks)  # what arrived before the cut is kept
    assert harness.upstream.wait_outcome("cut") == "cut"
    record = harness.last_record()
    assert not record.disconnected and record.upstream_error is not None
    received = b"".join(got)
    assert stream.data.startswith(received) and 0 < len(received) <= len(stream.data) // 2
    assert record.metrics.bytes == len(received)
    assert record.result.error is not None and record.result.error["type"] == "stream_truncated"
    assert record.result.text and stream.expected.text.startswith(record.result.text)


# -------------------------------------------------------------------------------------- forwarding, gzip


def test_request_forwarded_as_sent(harness: Harness) -> None:
    """Method, raw path and query, body and end-to-end headers reach the upstream; hop-by-hop headers and Host do
    not (Host is the upstream's); a client that asks for no encoding gets ``identity`` asked for it."""
    body = b'{"model": "m", "stream": true, "input": "5 \xe2\x82\xac"}'
    target = "/v1/responses?file=fixtures%2Fopenai-responses-tool-call.sse&a=1&a=2&b=x%2Fy"
    with httpx.Client(timeout=TIMEOUT) as client:
        del client.headers["accept-encoding"]
        headers = {
            "x-test": "kept",
            "x-hop": "dropped",
            "connection": "keep-alive, x-hop",
            "content-type": "application/json",
        }
        response = client.post(harness.gateway.url + target, content=body, headers=headers)
    assert response.status_code == 200
    seen = harness.upstream.requests[-1]
    assert (seen.method, seen.target, seen.body) == ("POST", target, body)
    assert seen.headers["x-test"] == "kept" and "x-hop" not in seen.headers
    assert seen.headers["host"] == f"127.0.0.1:{harness.upstream.port}"
    assert seen.headers["accept-encoding"] == "identity"
    assert seen.headers["content-length"] == str(len(body))


@pytest.mark.parametrize(
    "name",
    [
        "fixtures/openai-responses-tool-call.sse",
        "fixtures/anthropic-messages-tool-use.sse",
        "fixtures/bedrock-converse-max-tokens-cache.eventstream",
    ],
)
def test_gzip_forwarded_compressed_and_recorded(harness: Harness, name: str) -> None:
    stream = next(s for s in STREAMS if s.name == name)
    query = {"file": name, "gzip": 1, "seed": 7}
    path = f"/as/{stream.provider}"
    headers = {"accept-encoding": "gzip"}
    direct = harness.raw(harness.upstream.url, path, query, headers)
    proxied = harness.raw(harness.gateway.url, path, query, headers)
    assert proxied.headers["content-encoding"] == direct.headers["content-encoding"] == "gzip"
    assert proxied.content[:2] == b"\x1f\x8b" and proxied.content == direct.content  # still compressed
    assert zlib.decompress(proxied.content, wbits=31) == stream.data
    record = harness.last_record()
    assert record.metrics.bytes == len(proxied.content)
    assert summary(record.result) == summary(stream.expected)


def test_gzip_through_gateway_with_sdk(harness: Harness) -> None:
    query = {"file": "fixtures/anthropic-messages-tool-use.sse", "gzip": 1}
    direct = read_with_sdk("messages", harness.upstream.url, query, use_async=False, helper=True)
    proxied = read_with_sdk("messages", harness.gateway.url, query, use_async=False, helper=True)
    assert proxied == direct and direct["final"] is not None
    assert harness.last_record().result.stop_reason == "tool_use"


def test_concurrent_streams_each_recorded(harness: Harness) -> None:
    """Eight streams at once through the gateway: each arrives whole, and each record is its own stream's."""
    streams = [s for s in FIXTURE_STREAMS if s.framing == "sse"][:8]

    async def read_all() -> list[bytes]:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:

            async def read(stream: Stream) -> bytes:
                url = f"{harness.gateway.url}/as/{stream.provider}"
                async with client.stream("POST", url, params={"file": stream.name, "seed": 3}, json={}) as response:
                    return b"".join([chunk async for chunk in response.aiter_raw()])

            return await asyncio.gather(*(read(s) for s in streams))

    assert asyncio.run(read_all()) == [s.data for s in streams]
    records = harness.recorder.wait(len(streams))
    by_bytes = sorted((r.metrics.bytes, r.result.text) for r in records)
    assert by_bytes == sorted((len(s.data), s.expected.text) for s in streams)


def test_unreachable_upstream_is_502() -> None:
    recorder = Recorder()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # held, never listening: refused, and no other test's server can take the port
        port = sock.getsockname()[1]
        with BackgroundServer(create_app(f"http://127.0.0.1:{port}", record=recorder)) as gateway:
            response = httpx.post(gateway.url + "/v1/messages", json={"model": "m"}, timeout=TIMEOUT)
    assert response.status_code == 502
    body = response.json()  # in the shape of the route's provider (Anthropic's ``api_error``)
    assert body["type"] == "error" and body["error"]["type"] == "api_error" and "reached" in body["error"]["message"]
    (record,) = recorder.wait(1)
    assert record.status == 502 and record.upstream_error is not None and "ConnectError" in record.upstream_error
    assert record.provider == "anthropic" and record.model == "m"


def test_gateway_connections_send_without_nagle() -> None:
    # With Nagle on, an event written right after another waits for the client's delayed ACK (40 ms on Linux).
    # asyncio turns it off on the connections a listening socket accepts only when that socket's proto says TCP.
    gateway = BackgroundServer(create_app("http://127.0.0.1:9"))  # not started: its listening socket is enough

    async def accept_one() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=gateway._socket)
        _, writer = await asyncio.open_connection(gateway.host, gateway.port)
        try:
            return await asyncio.wait_for(accepted, TIMEOUT)
        finally:
            writer.close()
            server.close()

    assert asyncio.run(accept_one())


def test_replay_send_log_counts_body_bytes_as_written() -> None:
    stream = FIXTURE_STREAMS[0]
    with ReplayServer({"fixtures": FIXTURES}, log_sends=True) as upstream:
        reply = Harness.raw(upstream.url, "/", {"file": stream.name, "token": "log", "maxchunk": 64})
        # the client may read the last byte before the server thread notes its last write and the outcome
        assert upstream.wait_outcome("log") == "complete"
        sends = upstream.take_sends()["log"]
        assert upstream.take_sends() == {} and upstream.take_outcomes() == {"log": "complete"}
    assert reply.content == stream.data
    offsets = [sent for sent, _ in sends]
    assert offsets == sorted(set(offsets)) and offsets[-1] == len(stream.data) and len(offsets) > 1
    assert offsets[0] <= 64 and all(b - a <= 64 for a, b in zip(offsets, offsets[1:]))
    times = [at for _, at in sends]
    assert times == sorted(times)


def test_load_latency_matches_each_write_to_the_read_that_completes_it() -> None:
    from examples.gateway.load import _latencies, _Tally

    tally = _Tally()
    tally.received["t"] = [(5, 1.0), (12, 2.0), (20, 3.5)]  # bytes received so far, when
    sends = {"t": [(3, 0.5), (5, 0.75), (10, 1.5), (20, 3.0)], "other": [(1, 0.0)]}
    assert _latencies(sends, tally) == [0.5, 0.25, 0.5, 0.5]


@pytest.mark.slow  # ~13 s, most of it starting processes; .ci/run's benchmark gate also runs the load run --check
def test_load_run_quick_form(tmp_path: Path) -> None:
    # The load run end to end at a small size: every count it checks holds (the ratios are for the benchmark).
    from examples.gateway import load

    args = argparse.Namespace(streams=6, duration=2.0, delay=0.02, disconnect=0.2)
    doc = load.run(args)
    summary = doc["summary"]
    assert summary["failed"] == 0 and summary["bytes_altered"] == 0
    assert summary["abandoned_not_closed"] == 0 and summary["held_after"] == 0
    assert summary["records_differing"] == 0
    for phase in doc["phases"].values():
        assert phase["streams_completed"] > 0 and phase["chunks_timed"] > 0
        assert phase["chunk_latency_s"]["p50"] is not None
    on = doc["phases"]["tap_on"]
    assert on["records"] >= on["streams_completed"] and on["cpu_s_per_mb"] > 0 and on["rss"]["start"]


# ------------------------------------------------------------------------------------------ 5: OpenTelemetry


def test_opentelemetry_span_and_metrics() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from examples.gateway.telemetry import CLIENT_DISCONNECTED
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, StatusCode

    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[reader])
    recorder = Recorder()
    stream = next(s for s in FIXTURE_STREAMS if s.name == "fixtures/anthropic-messages-tool-use.sse")
    with ReplayServer({"fixtures": FIXTURES}) as upstream:
        app = create_app(upstream.url, record=recorder, tracer_provider=tracer_provider, meter_provider=meter_provider)
        with BackgroundServer(app) as gateway:
            outcome = read_with_sdk("messages", gateway.url, {"file": stream.name, "pause": 1}, use_async=False)
            assert outcome["error"] is None
            with httpx.Client(timeout=TIMEOUT) as client:
                query = {"endless": "anthropic", "token": "otel-left"}
                with client.stream("POST", gateway.url + "/v1/messages", params=query, json={}) as response:
                    next(response.iter_raw())
            assert upstream.wait_outcome("otel-left") == "eof"
            records = recorder.wait(2)
    usage = stream.expected.usage
    assert usage is not None
    ok, left = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    attributes = dict(ok.attributes or {})
    assert ok.name == "chat claude-test" and ok.kind == SpanKind.CLIENT
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.request.model"] == "claude-test"
    assert attributes["gen_ai.response.model"] == stream.expected.model
    assert attributes["gen_ai.response.id"] == stream.expected.response_id
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert attributes["gen_ai.usage.input_tokens"] == usage.input_tokens
    assert attributes["gen_ai.usage.output_tokens"] == usage.output_tokens
    assert attributes["gen_ai.response.time_to_first_chunk"] == records[0].metrics.time_to_first_content
    assert attributes["server.address"] == "127.0.0.1" and attributes["server.port"] == upstream.port
    assert attributes["http.response.status_code"] == 200
    assert "error.type" not in attributes and ok.status.status_code != StatusCode.ERROR
    left_attributes = dict(left.attributes or {})
    assert left_attributes[CLIENT_DISCONNECTED] is True and left_attributes["error.type"] == "stream_truncated"
    assert left_attributes["ssewire.usage.partial"] is True and left.status.status_code == StatusCode.ERROR

    data = reader.get_metrics_data()
    assert data is not None
    metrics: dict[str, Any] = {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert set(metrics) >= {
        "gen_ai.client.inference.usage.input_tokens",
        "gen_ai.client.inference.usage.output_tokens",
        "gen_ai.client.inference.duration",
        "gen_ai.client.inference.time_to_first_chunk",
        "gen_ai.client.inference.time_per_output_chunk",
    }
    tokens = {
        (kind, bool(p.attributes.get("ssewire.usage.partial"))): p.value
        for kind in ("input", "output")
        for p in metrics[f"gen_ai.client.inference.usage.{kind}_tokens"].data.data_points
    }
    assert tokens[("input", False)] == usage.input_tokens and tokens[("output", False)] == usage.output_tokens
    assert tokens[("input", True)] == 12
    durations = metrics["gen_ai.client.inference.duration"].data.data_points
    assert sum(p.count for p in durations) == 2
    assert {p.attributes.get("error.type") for p in durations} == {None, "stream_truncated"}
    assert {(p.attributes or {}).get("gen_ai.request.model") for p in durations} == {"claude-test", None}
    gaps = metrics["gen_ai.client.inference.time_per_output_chunk"].data.data_points
    assert sum(p.count for p in gaps) == len(records[0].metrics.gaps) + len(records[1].metrics.gaps) > 0


# ---------------------------------------------------------------------------------------------------- the CLI


def test_command_line_gateway(harness: Harness) -> None:
    """``python -m examples.gateway --upstream URL --port N --records`` serves, forwards and logs a record."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "examples.gateway", "--upstream", harness.upstream.url, "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--records"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            with contextlib.suppress(httpx.TransportError):
                response = harness.raw(url, "/v1/messages", {"file": "fixtures/anthropic-messages-tool-use.sse"})
                break
            time.sleep(0.05)
        else:
            pytest.fail("the gateway did not start")
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert response.content == (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    assert [(r["path"], r["status"], r["stop_reason"], r["disconnected"]) for r in lines] == [
        ("/v1/messages", 200, "tool_use", False)
    ]


def test_a_whole_json_answer_to_a_non_streaming_request_is_no_failed_span(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode

    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi!"}, "finish_reason": "stop"}],
    }
    (tmp_path / "completion.json").write_text(json.dumps(completion))
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    recorder = Recorder()
    with ReplayServer({"files": tmp_path}) as upstream:
        app = create_app(upstream.url, record=recorder, tracer_provider=tracer_provider)
        with BackgroundServer(app) as gateway:
            response = httpx.post(
                gateway.url + "/v1/chat/completions",
                params={"file": "files/completion.json"},
                json={"model": "gpt-4o-mini", "stream": False},
                timeout=TIMEOUT,
            )
            recorder.wait(1)
    assert response.status_code == 200 and response.json() == completion
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code != StatusCode.ERROR
    assert "error.type" not in (span.attributes or {})


def test_a_client_of_httpx_is_used_with_httpxs_own_timeout_and_errors() -> None:
    recorder = Recorder()
    stream = FIXTURE_STREAMS[0]

    async def run(url: str) -> bytes:
        import httpx as plain_httpx  # (not httpx2, which the gateway sends with by default where installed)

        class TracingClient(plain_httpx.AsyncClient):  # (a client of the caller's own class, httpx's underneath)
            pass

        async with TracingClient() as upstream_client:
            app = create_app(url, record=recorder, client=upstream_client)
            async with plain_httpx.AsyncClient(transport=plain_httpx.ASGITransport(app=app), base_url="http://gw") as c:
                response = await c.post("/v1/chat/completions", params={"file": stream.name}, json={})
                assert response.status_code == 200
                return response.content

    with ReplayServer({"fixtures": FIXTURES}) as upstream:
        assert asyncio.run(run(upstream.url)) == stream.data
