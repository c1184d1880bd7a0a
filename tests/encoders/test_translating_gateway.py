"""The example gateway's translation routes over real HTTP, read by the official clients: every fixture and
recording, replayed upstream as its own provider, is read through the Chat Completions route by the ``openai`` SDK
(the stream and its ``.stream()`` helper's final completion), through the Responses route (the helper's final
response), through the Messages route by ``anthropic`` (``messages.stream().get_final_message()``), through the
Gemini route by ``google-genai`` (``generate_content_stream``) and through the UI stream route by the Vercel AI
SDK's own parser (npm package ``ai``, run by node). Each says what ``collect()`` of the source says: text,
reasoning, client calls (ids, names, arguments), usage counts, stop reason -- or, for a source that failed or was
cut, an error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from helpers import CORPUS, FIXTURES, ROOT, load_manifest
from helpers.corpus import framing_for, provider_for
from ssewire import StreamResult, collect, iter_unified
from ssewire.normalizers.anthropic import ANTHROPIC_STOP
from ssewire.normalizers.chat import CHAT_STOP
from ssewire.normalizers.common import client_stop
from ssewire.normalizers.gemini import GEMINI_STOP
from ssewire.normalizers.openai import INCOMPLETE_STOP, RESPONSES_STOP
from ssewire.normalizers.vercel_ui import VERCEL_STOP

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
from examples.gateway.replay import ReplayServer
from examples.gateway.serve import BackgroundServer
from examples.gateway.translate import create_translating_app

JS = ROOT / "tests" / "js"
TIMEOUT = 20.0


def _streams() -> list[tuple[str, Path, Any, Any]]:
    """``(replay name, file, provider, framing)`` of every fixture and recording."""
    out = []
    for expected_file in sorted(FIXTURES.glob("*.expected.json")):
        spec = json.loads(expected_file.read_text(encoding="utf-8"))
        stream = expected_file.with_name(expected_file.name[: -len(".expected.json")])
        out.append((f"fixtures/{stream.name}", stream, spec["provider"], spec["framing"]))
    for capture in load_manifest():
        out.append((f"corpus/{capture['file']}", CORPUS / capture["file"], provider_for(capture), framing_for(capture)))
    return out


STREAMS = _streams()
IDS = [s[0] for s in STREAMS]


class Gateways:
    """One translating gateway per upstream provider, in front of one replay upstream (made when first asked)."""

    def __init__(self, stack: ExitStack) -> None:
        self.stack = stack
        self.upstream = stack.enter_context(ReplayServer({"fixtures": FIXTURES, "corpus": CORPUS}))
        self.by_provider: dict[str, str] = {}

    def url(self, provider: str) -> str:
        if provider not in self.by_provider:
            app = create_translating_app(self.upstream.url, provider)  # type: ignore[arg-type]
            self.by_provider[provider] = self.stack.enter_context(BackgroundServer(app)).url
        return self.by_provider[provider]


@pytest.fixture(scope="module")
def gateways() -> Iterator[Gateways]:
    with ExitStack() as stack:
        yield Gateways(stack)


View = dict[str, Any]


def _view(
    text: str,
    reasoning: str,
    calls: list[tuple[Any, Any, Any]],
    usage: Optional[tuple[int, int, int]],
    stop: Optional[str],
) -> View:
    return {"text": text, "reasoning": reasoning, "calls": calls, "usage": usage, "stop": stop}


def _expected(result: StreamResult) -> View:
    usage = result.usage
    counts = None
    if usage is not None and usage.source is not None:
        counts = (usage.input_tokens or 0, usage.output_tokens or 0, usage.cached_input_tokens or 0)
    calls = [(c.id, c.name, c.arguments) for c in result.client_tool_calls]
    return _view(result.text, result.reasoning, calls, counts, result.stop_reason)


def _failed(result: StreamResult) -> bool:
    return result.error is not None or result.stop_reason in ("failed", "cancelled")


def _compare(got: View, want: View, stop_carried: bool) -> None:
    assert got["text"] == want["text"]
    assert got["reasoning"] == want["reasoning"]
    assert got["calls"] == want["calls"]
    if want["usage"] is not None:
        assert got["usage"] == want["usage"]
    if stop_carried:
        assert got["stop"] == want["stop"]


def _carried(stop: Optional[str], table: dict[str, str], answered_calls: bool = False) -> bool:
    """Whether a target whose reader's stop table is ``table`` can say ``stop`` (else the encoder counted it)."""
    return stop in set(table.values()) and not answered_calls


# -- the readers -------------------------------------------------------------------------------------------------
def _openai(url: str) -> Any:
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=TIMEOUT)


def _chat_stream(url: str, name: str) -> View:
    with _openai(url) as client:
        stream = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
            extra_query={"file": name, "pause": 0},
        )
        text, reasoning, finish, usage = "", "", None, None
        calls: dict[int, list[Any]] = {}
        for chunk in stream:
            if chunk.usage is not None:
                details = chunk.usage.prompt_tokens_details
                cached = details.cached_tokens if details is not None and details.cached_tokens else 0
                usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens, cached)
            for choice in chunk.choices:
                delta = choice.delta
                text += delta.content or ""
                reasoning += getattr(delta, "reasoning_content", None) or ""
                for call in delta.tool_calls or ():
                    entry = calls.setdefault(call.index, [None, None, ""])
                    entry[0] = call.id or entry[0]
                    if call.function is not None:
                        entry[1] = call.function.name or entry[1]
                        entry[2] += call.function.arguments or ""
                finish = choice.finish_reason or finish
    made = [(i, n, json.loads(a or "{}")) for i, n, a in calls.values()]
    return _view(text, reasoning, made, usage, client_stop(CHAT_STOP.get(finish or "", "other"), bool(made)))


def _chat_helper(url: str, name: str) -> View:
    import openai

    with (
        _openai(url) as client,
        client.chat.completions.stream(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            stream_options={"include_usage": True},
            extra_query={"file": name, "pause": 0},
        ) as stream,
    ):
        for _ in stream:
            pass
        try:
            final = stream.get_final_completion()
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError):
            final = stream.current_completion_snapshot  # the helper's way of saying "length" / "content_filter"
    choice = final.choices[0]
    message = choice.message
    made = [(c.id, c.function.name, json.loads(c.function.arguments or "{}")) for c in message.tool_calls or ()]
    usage = None
    if final.usage is not None:
        details = final.usage.prompt_tokens_details
        cached = details.cached_tokens if details is not None and details.cached_tokens else 0
        usage = (final.usage.prompt_tokens, final.usage.completion_tokens, cached)
    reasoning = getattr(message, "reasoning_content", None) or ""
    stop = client_stop(CHAT_STOP.get(choice.finish_reason or "", "other"), bool(made))
    return _view(message.content or "", reasoning, made, usage, stop)


def _responses(url: str, name: str) -> View:
    query = {"file": name, "pause": 0}
    with _openai(url) as client, client.responses.stream(model="m", input="hi", extra_query=query) as stream:
        events = list(stream)
        ends = ("response.completed", "response.incomplete", "response.failed")
        # the helper's final response comes only with response.completed: an incomplete one is read off its event
        final = stream.get_final_response() if events and events[-1].type == "response.completed" else None
    errors = [event for event in events if event.type == "error"]  # events the helper hands over, never raises
    final = final or next((e.response for e in reversed(events) if e.type in ends), None)
    if final is None:
        raise RuntimeError("no terminal event")
    if errors:
        raise RuntimeError(f"error events: {errors}")
    text = reasoning = ""
    made = []
    for item in final.output:
        if item.type == "message":
            text += "".join(part.text for part in item.content if part.type == "output_text")
        elif item.type == "reasoning":
            reasoning += "".join(part.text for part in item.summary)
        elif item.type == "function_call":
            made.append((item.call_id, item.name, json.loads(item.arguments or "{}")))
    stop = RESPONSES_STOP.get(final.status or "", "other")
    if stop == "incomplete" and final.incomplete_details is not None:
        stop = INCOMPLETE_STOP.get(final.incomplete_details.reason or "", "incomplete")
    usage = None
    if final.usage is not None:
        usage = (final.usage.input_tokens, final.usage.output_tokens, final.usage.input_tokens_details.cached_tokens)
    if final.status == "failed":
        raise RuntimeError(f"response failed: {final.error}")
    return _view(text, reasoning, made, usage, client_stop(stop, bool(made)))


def _messages(url: str, name: str) -> View:
    anthropic = pytest.importorskip("anthropic")
    query = {"file": name, "pause": 0}
    messages = [{"role": "user", "content": "hi"}]
    with anthropic.Anthropic(base_url=url, api_key="x", max_retries=0, timeout=TIMEOUT) as client:  # noqa: SIM117
        with client.messages.stream(model="m", max_tokens=64, messages=messages, extra_query=query) as stream:  # type: ignore[arg-type]
            final = stream.get_final_message()
    text = "".join(b.text for b in final.content if b.type == "text")
    reasoning = "".join(b.thinking for b in final.content if b.type == "thinking")
    made = [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"]
    u = final.usage
    read, written = u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0
    usage = (u.input_tokens + read + written, u.output_tokens, read)
    return _view(text, reasoning, made, usage, ANTHROPIC_STOP.get(final.stop_reason or "", "other"))


def _gemini(url: str, name: str) -> View:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    options = types.HttpOptions(base_url=url, api_version="v1beta", headers={"x-replay-file": name})
    client = genai.Client(api_key="x", http_options=options)
    text = reasoning = ""
    made = []
    finish, usage = None, None
    for chunk in client.models.generate_content_stream(model="gemini-test", contents="hi"):
        for candidate in chunk.candidates or ():
            finish = candidate.finish_reason or finish
            for part in (candidate.content.parts if candidate.content is not None else None) or ():
                if part.function_call is not None:
                    made.append((part.function_call.id, part.function_call.name, part.function_call.args or {}))
                elif part.thought:
                    reasoning += part.text or ""
                else:
                    text += part.text or ""
        if chunk.usage_metadata is not None:
            m = chunk.usage_metadata
            thoughts = m.thoughts_token_count or 0
            usage = (
                (m.prompt_token_count or 0),
                (m.candidates_token_count or 0) + thoughts,
                m.cached_content_token_count or 0,
            )
    stop = GEMINI_STOP.get(finish.value if finish is not None else "", "other")
    return _view(text, reasoning, made, usage, client_stop(stop, bool(made)))


def _ui_readings(url: str, names: list[str]) -> list[dict[str, Any]]:
    """What the AI SDK's parser makes of each stream (one node process for all of them)."""
    node = shutil.which("node")
    if node is None or not (JS / "node_modules" / "ai").is_dir():
        if os.environ.get("SSEWIRE_REQUIRE_NODE"):
            raise RuntimeError("SSEWIRE_REQUIRE_NODE is set but node or tests/js/node_modules/ai is missing")
        pytest.skip("node and the npm package ai (npm ci --prefix tests/js) are needed")
    from urllib.parse import urlencode

    lines = "".join(f"{url}/api/chat?{urlencode({'file': n, 'pause': 0})}\n" for n in names)
    done = subprocess.run(
        [node, str(JS / "read_ui_stream.mjs")], input=lines, capture_output=True, text=True, timeout=600, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def _ui_view(reading: dict[str, Any]) -> View:
    assert reading["failure"] is None, reading["failure"]
    assert reading["status"] == 200 and reading["header"] == "v1"
    message = reading["message"] or {"parts": [], "metadata": None}
    parts = message["parts"]
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    reasoning = "".join(p["text"] for p in parts if p["type"] == "reasoning")
    made = [
        (p["toolCallId"], p["type"][5:], p["input"])
        for p in parts
        if p["type"].startswith("tool-") and not p.get("providerExecuted") and p["state"] == "input-available"
    ]
    usage = None
    metadata = message.get("metadata") or {}
    if "usage" in metadata:
        u = metadata["usage"]
        usage = (u["inputTokens"], u["outputTokens"], u["inputTokenDetails"]["cacheReadTokens"])
    stop = VERCEL_STOP.get(reading["finishReason"] or "", "other") if reading["finishReason"] else None
    return _view(text, reasoning, made, usage, stop)


READERS: dict[str, tuple[Callable[[str, str], View], dict[str, str]]] = {
    "chat": (_chat_stream, CHAT_STOP),
    "chat-helper": (_chat_helper, CHAT_STOP),
    "responses": (_responses, {**RESPONSES_STOP, **INCOMPLETE_STOP}),
    "messages": (_messages, ANTHROPIC_STOP),
    "gemini": (_gemini, GEMINI_STOP),
}


def _sdk_errors() -> tuple[type[BaseException], ...]:
    """What the SDKs raise for an error in a stream (and the readers for a response that never completed)."""
    errors: list[type[BaseException]] = [RuntimeError]
    for module, name in (("openai", "APIError"), ("anthropic", "APIError"), ("google.genai.errors", "APIError")):
        try:
            errors.append(getattr(__import__(module, fromlist=[name]), name))
        except ImportError:
            continue
    return tuple(errors)


def _source(path: Path, provider: Any, framing: Any) -> StreamResult:
    return collect(iter_unified([path.read_bytes()], provider, framing))


def _answered_calls(result: StreamResult) -> bool:
    """A stream whose calls were answered in a later response (Realtime): its end is ``end`` after client calls,
    which no single-response target can say."""
    return result.stop_reason == "end" and bool(result.client_tool_calls)


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("stream", STREAMS, ids=IDS)
def test_an_sdk_reads_the_translated_stream_as_the_source_said(
    gateways: Gateways, stream: tuple[str, Path, Any, Any], reader: str
) -> None:
    name, path, provider, framing = stream
    source = _source(path, provider, framing)
    read, table = READERS[reader]
    url = gateways.url(provider)
    if _failed(source):
        with pytest.raises(_sdk_errors()):  # the SDK's error (a stream error, or a helper's missing final event)
            read(url, name)
        return
    got = read(url, name)
    _compare(got, _expected(source), _carried(source.stop_reason, table, _answered_calls(source)))


def test_the_ai_sdk_reads_every_translated_stream_as_the_source_said(gateways: Gateways) -> None:
    by_provider: dict[str, list[tuple[str, Path, Any, Any]]] = {}
    for stream in STREAMS:
        by_provider.setdefault(stream[2], []).append(stream)
    for provider, streams in by_provider.items():
        readings = _ui_readings(gateways.url(provider), [s[0] for s in streams])
        assert len(readings) == len(streams)
        for (name, path, _, framing), reading in zip(streams, readings):
            source = _source(path, provider, framing)
            if _failed(source):  # an error chunk, or the finish reason that says it failed
                assert reading["errors"] or reading["failure"] or reading["finishReason"] in ("error", "interrupted"), (
                    name
                )
                continue
            assert not reading["errors"], (name, reading["errors"])
            _compare(
                _ui_view(reading), _expected(source), _carried(source.stop_reason, VERCEL_STOP, _answered_calls(source))
            )


def test_a_request_that_asks_for_no_stream_gets_the_whole_body(gateways: Gateways) -> None:
    import httpx

    from ssewire import render

    name = "fixtures/anthropic-messages-tool-use.sse"
    source = _source(FIXTURES / "anthropic-messages-tool-use.sse", "anthropic", "sse")
    url = gateways.url("anthropic") + "/v1/chat/completions"
    answer = httpx.post(url, params={"file": name, "pause": 0}, json={"model": "m", "stream": False}, timeout=TIMEOUT)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    expected = json.loads(render(source, "openai-chat", model="m"))
    assert body["choices"] == expected["choices"] and body["usage"] == expected["usage"]


def test_upstream_errors_and_bad_requests_come_back_in_the_routes_shape(gateways: Gateways) -> None:
    import httpx

    base = gateways.url("anthropic")
    answer = httpx.post(base + "/v1/messages", params={"status": 529}, json={"stream": True}, timeout=TIMEOUT)
    assert answer.status_code == 529 and answer.json()["type"] == "error"
    answer = httpx.post(base + "/v1/chat/completions", content=b"{" * 100_000, timeout=TIMEOUT)
    assert answer.status_code == 400 and "error" in answer.json()


def test_a_request_body_over_the_limit_is_refused_unread() -> None:
    import httpx
    from examples.gateway.limits import Limits

    with ReplayServer({"fixtures": FIXTURES}) as upstream:
        app = create_translating_app(upstream.url, "anthropic", limits=Limits(max_body=1000))
        with BackgroundServer(app) as gateway:
            answer = httpx.post(gateway.url + "/v1/messages", content=b"x" * 5000, timeout=TIMEOUT)
            assert answer.status_code == 413 and answer.json()["type"] == "error"
            assert not upstream.requests  # never sent upstream


@pytest.mark.parametrize(
    ("upstream_provider", "route", "upstream_path", "asked"),
    [
        ("openai-chat", "/v1/chat/completions", "/v1/chat/completions", {"stream": True, "include_usage": True}),
        ("anthropic", "/v1/messages", "/v1/messages", {"stream": True}),
        ("gemini", "/v1beta/models/g:generateContent", "/v1beta/models/g:streamGenerateContent", {"alt": "sse"}),
    ],
)
def test_a_whole_answer_asks_the_upstream_for_the_stream_it_is_built_from(
    upstream_provider: str, route: str, upstream_path: str, asked: dict[str, Any]
) -> None:
    """A real API answers a request without ``stream: true`` (Gemini: ``:generateContent``) with whole JSON, which
    no stream reader reads: the gateway asks for the stream, then renders the answer."""
    import httpx

    with ReplayServer({"fixtures": FIXTURES}) as upstream:
        app = create_translating_app(upstream.url, upstream_provider)  # type: ignore[arg-type]
        with BackgroundServer(app) as gateway:
            answer = httpx.post(
                gateway.url + route,
                params={"file": "fixtures/anthropic-messages-tool-use.sse", "pause": 0},
                json={"model": "m", "messages": []},
                timeout=TIMEOUT,
            )
        (sent,) = upstream.requests
    assert answer.status_code in (200, 502) and answer.headers["content-type"].startswith("application/json")
    assert sent.path == upstream_path
    fields = json.loads(sent.body)
    if "stream" in asked:
        assert fields["stream"] is True and fields["messages"] == []
    if "include_usage" in asked:
        assert fields["stream_options"] == {"include_usage": True}
    if "alt" in asked:
        assert sent.query["alt"] == "sse" and "stream" not in fields


@pytest.mark.parametrize("wants_stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("upstream_does", ["stall", "cut"])
def test_an_upstream_that_stalls_or_is_cut_ends_in_the_routes_error_in_time(
    wants_stream: bool, upstream_does: str
) -> None:
    """Silent past ``idle_timeout`` (or cut mid-stream): the client gets the route's error (an error event, or a
    502 error body for a whole answer) within the bound, never a hang of the client library's own timeout, an
    aborted connection or a plain-text 500."""
    import time

    import httpx
    from examples.gateway.limits import Limits

    if upstream_does == "stall":
        query: dict[str, Any] = {"endless": "anthropic", "events": 2}
    else:
        query = {"file": "fixtures/anthropic-messages-tool-use.sse", "pause": 0, "cut": 700}
    with ReplayServer({"fixtures": FIXTURES}) as upstream:
        app = create_translating_app(upstream.url, "anthropic", limits=Limits(idle_timeout=1.0, total_timeout=20))
        with BackgroundServer(app) as gateway:
            started = time.monotonic()
            answer = httpx.post(
                gateway.url + "/v1/messages", params=query, json={"stream": wants_stream}, timeout=TIMEOUT
            )
            took = time.monotonic() - started
    assert took < 10
    if wants_stream:
        assert answer.status_code == 200
        last = [line for line in answer.text.splitlines() if line.startswith("data: ")][-1]
        assert json.loads(last[len("data: ") :])["error"]["type"] == "stream_truncated"
    else:
        assert answer.status_code == 502 and answer.json()["error"]["type"] == "stream_truncated"


def test_the_command_line_limits_bound_the_translation_routes_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx
    from examples.gateway import __main__ as command

    apps: list[Any] = []
    monkeypatch.setattr(command, "serve", lambda app, *args, **kwargs: apps.append(app))
    with ReplayServer({"fixtures": FIXTURES}) as upstream:
        command.main(["--upstream", upstream.url, "--translate-from", "anthropic", "--max-body", "1000"])
        with BackgroundServer(apps[0]) as gateway:
            answer = httpx.post(gateway.url + "/v1/messages", content=b"x" * 5000, timeout=TIMEOUT)
        assert answer.status_code == 413 and not upstream.requests
