"""Common mistakes get a typed error that says what to do, and everything ssewire raises is an SSEwireError."""

from __future__ import annotations

import asyncio
import inspect
from types import ModuleType
from typing import Any

import pytest

import ssewire
from ssewire import errors
from ssewire.errors import (
    ChunkTypeError,
    SSEwireError,
    UnknownFramingError,
    UnknownProviderError,
    UnsupportedResponseError,
)
from ssewire.names import ProviderName

BODY = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'


def test_every_exception_class_derives_from_sseewire_error() -> None:
    classes = [obj for _, obj in inspect.getmembers(errors, inspect.isclass) if issubclass(obj, BaseException)]
    assert len(classes) >= 10
    for cls in classes:
        assert issubclass(cls, SSEwireError), cls
        assert issubclass(cls, ValueError), cls
    assert issubclass(ChunkTypeError, TypeError)
    assert issubclass(UnsupportedResponseError, TypeError)
    assert issubclass(errors.ParserBusyError, RuntimeError)


@pytest.mark.parametrize("chunk", ["data: x\n\n", 42, 3.5, None, ["b"]])
def test_a_chunk_that_is_not_bytes_says_what_to_pass(scanner: ModuleType, chunk: Any) -> None:
    for parser in (scanner.SSEParser(), scanner.JSONArrayStreamParser()):
        with pytest.raises(ChunkTypeError, match="bytes") as info:
            parser.feed(chunk)
        assert isinstance(info.value, TypeError)
    with pytest.raises(ChunkTypeError, match=r"iter_bytes\(\), not iter_text\(\)"):
        scanner.SSEParser().feed("data: x\n\n")


def test_text_chunks_through_iter_unified_name_iter_bytes() -> None:
    with pytest.raises(ChunkTypeError, match=r"iter_bytes\(\), not iter_text\(\)"):
        list(ssewire.iter_unified(["data: x\n\n"], "openai-chat"))  # type: ignore[list-item]


@pytest.mark.parametrize("whole", [BODY, bytearray(BODY), memoryview(BODY), BODY.decode()])
def test_one_body_instead_of_an_iterable_of_chunks_says_pass_a_list(whole: Any) -> None:
    for call in (
        lambda: list(ssewire.iter_unified(whole, "openai-chat")),
        lambda: list(ssewire.iter_events(whole)),
    ):
        with pytest.raises(ChunkTypeError, match=r"iterable of byte chunks") as info:
            call()
        assert "[" in str(info.value)  # the message shows the fix: [data] / [text.encode()]

    async def run() -> None:
        async for _ in ssewire.aiter_unified(whole, "openai-chat"):
            pass

    with pytest.raises(ChunkTypeError, match=r"iterable of byte chunks"):
        asyncio.run(run())


@pytest.mark.parametrize(
    ("name", "hint"),
    [("open-ai", "openai"), ("Anthropic", "anthropic"), ("gemeni", "gemini"), ("openai_chat", "openai-chat")],
)
def test_unknown_provider_lists_the_names_and_suggests_the_closest(name: str, hint: str) -> None:
    for call in (
        lambda: ssewire.normalizer_for(name),
        lambda: list(ssewire.iter_unified([BODY], name)),  # type: ignore[arg-type]
        lambda: ssewire.StreamTap(name),  # type: ignore[arg-type]
    ):
        with pytest.raises(UnknownProviderError) as info:
            call()
        assert isinstance(info.value, ValueError)
        assert f"did you mean {hint!r}" in str(info.value)
        assert "openai-chat" in str(info.value) and "gemini" in str(info.value)


@pytest.mark.parametrize(("name", "hint"), [("SSE", "sse"), ("json array", "json_array"), ("jsonarray", "json_array")])
def test_unknown_framing_lists_the_names_and_suggests_the_closest(name: str, hint: str) -> None:
    for call in (
        lambda: list(ssewire.iter_unified([BODY], "openai-chat", name)),  # type: ignore[arg-type]
        lambda: list(ssewire.iter_events([BODY], name)),  # type: ignore[arg-type]
    ):
        with pytest.raises(UnknownFramingError, match=f"did you mean {hint!r}"):
            call()


def test_a_name_nothing_resembles_gets_the_list_only() -> None:
    with pytest.raises(UnknownProviderError) as info:
        ssewire.normalizer_for("zzzz")  # type: ignore[arg-type]
    assert "did you mean" not in str(info.value)
    assert "expected one of: anthropic, auto," in str(info.value)


def test_max_buffer_must_be_a_positive_int_on_both_scanners(scanner: ModuleType) -> None:
    # (a float, even inf or nan, or a bool would be no limit; a str a bare TypeError)
    for parser in (scanner.SSEParser, scanner.JSONArrayStreamParser, scanner.NDJSONParser, scanner.EventStreamParser):
        for value in (0, -1, float("nan"), float("inf"), 1024.0, "1024", True):
            with pytest.raises(SSEwireError, match=r"max_buffer must be a positive int \(bytes\), got "):
                parser(value)
        assert parser(1024).max_buffer == 1024


def test_an_object_that_is_no_response_is_an_unsupported_response_error() -> None:
    from ssewire.adapters import iter_response

    with pytest.raises(UnsupportedResponseError, match="expected an httpx or httpx2 Response"):
        list(iter_response(object(), "openai"))  # type: ignore[arg-type]


def test_error_types_for_error_fields() -> None:
    assert errors.error_type(errors.FramingError("x")) == "framing_error"
    assert errors.error_type(errors.SSEBufferOverflowError("x")) == "buffer_overflow"
    assert errors.error_type(errors.SSEBufferOverflow("x")) == "buffer_overflow"
    assert errors.error_type(errors.StreamTruncatedError("x")) == "stream_truncated"
    assert errors.error_type(errors.DetectionError("x")) == "detection_error"
    assert errors.error_type(ValueError("x")) == "parse_error"


def test_the_error_suffixed_names_and_the_old_names_are_the_same_classes(scanner: ModuleType) -> None:
    assert errors.SSEBufferOverflow is errors.SSEBufferOverflowError is ssewire.SSEBufferOverflowError
    assert errors.StreamTruncated is errors.StreamTruncatedError is ssewire.StreamTruncatedError
    assert ssewire.SSEBufferOverflow is errors.SSEBufferOverflowError
    assert ssewire.StreamTruncated is errors.StreamTruncatedError
    with pytest.raises(errors.SSEBufferOverflow) as overflow:
        scanner.SSEParser(8).feed(b"data: " + b"x" * 20)
    assert type(overflow.value) is errors.SSEBufferOverflowError
    parser = scanner.JSONArrayStreamParser()
    parser.feed(b'[{"a": 1}')
    with pytest.raises(errors.StreamTruncated) as cut:
        parser.close()
    assert type(cut.value) is errors.StreamTruncatedError


def test_every_error_class_a_user_meets_is_exported_from_the_package() -> None:
    from ssewire.content_encoding import UnsupportedEncodingError

    raised = [obj for _, obj in inspect.getmembers(errors, inspect.isclass) if issubclass(obj, BaseException)]
    for cls in {*raised, UnsupportedEncodingError}:
        assert getattr(ssewire, cls.__name__) is cls and cls.__name__ in ssewire.__all__, cls


@pytest.mark.parametrize(
    ("provider", "body", "kind"),
    [
        (
            "anthropic",
            b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
            "rate_limit_error",
        ),
        ("openai", b'{"error":{"message":"quota","type":"insufficient_quota","code":null}}', "insufficient_quota"),
        ("openai-chat", b'{"error":{"message":"quota","type":"insufficient_quota"}}', "insufficient_quota"),
        ("xai", b'{"error":{"message":"bad key","type":"invalid_request_error"}}', "invalid_request_error"),
        ("gemini", b'{"error":{"code":429,"message":"q","status":"RESOURCE_EXHAUSTED"}}', "RESOURCE_EXHAUSTED"),
        ("auto", b'{"error":{"code":429,"message":"q","status":"RESOURCE_EXHAUSTED"}}', "RESOURCE_EXHAUSTED"),
    ],
)
def test_an_http_error_body_read_as_a_stream_keeps_its_cause(provider: str, body: bytes, kind: str) -> None:
    for chunks in ([body], [body[:7], body[7:]], [b"\n" + body + b"\n"]):
        events = list(ssewire.iter_unified(chunks, provider))  # type: ignore[arg-type]
        assert [e.type for e in events] == ["error"]
        assert events[0].error is not None and events[0].error["type"] == kind


def test_a_body_without_events_is_not_a_stream_and_says_what_it_is() -> None:
    (event,) = ssewire.iter_unified([b"<!doctype html><html>502 Bad Gateway</html>"], "openai")
    assert event.error is not None and event.error["type"] == "not_a_stream"
    assert "the body holds no stream: it is an HTML page" in event.error["message"]


@pytest.mark.parametrize(
    "body",
    [b'data: {"type":"response.created","response":{"id":"r"', b'{"model":"llama3","message":{"role":"assistant"'],
    ids=["sse", "ndjson"],
)
def test_a_body_cut_inside_its_first_event_is_truncated_not_a_non_stream(body: bytes) -> None:
    events = list(ssewire.iter_unified([body], "auto"))
    assert events[-1].error is not None and events[-1].error["type"] == "stream_truncated"


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai-realtime", b'{"type":"session.created","event_id":"event_C1","session":{"type":"realtime","o'),
        ("gemini-live", b'{"setupCompl'),
    ],
)
def test_a_session_cut_inside_its_first_event_is_truncated_never_clean(provider: ProviderName, body: bytes) -> None:
    """A session owes nothing at its end between responses, but a body cut inside its first event read nothing:
    a truncation, as every other provider says (it was no error at all, and a batch row a clean one)."""
    for chunks in ([body], [body[:5], body[5:]]):
        result = ssewire.collect(ssewire.iter_unified(chunks, provider, "ndjson"))
        assert result.error is not None and result.error["type"] == "stream_truncated"


def test_a_429_through_a_plain_byte_iterator_is_the_provider_error_not_a_truncation() -> None:
    httpx = pytest.importorskip("httpx")

    from helpers.http_server import StreamServer

    with StreamServer() as server, httpx.stream("POST", server.url("/status/429")) as response:
        events = list(ssewire.iter_unified(response.iter_bytes(), "openai-chat"))
    assert [e.type for e in events] == ["error"]
    assert events[0].error is not None
    assert (events[0].error["type"], events[0].error["message"]) == ("test_error", "rate limited")


@pytest.mark.parametrize("provider", ["ollama", "auto"])
def test_an_ollama_stream_cut_after_its_first_line_is_read_then_cut(provider: ProviderName) -> None:
    """One ``"done": false`` line and the end: a stream's first chunk (its text kept), cut after it; never a
    whole JSON body (``not_a_stream``, which says retrying will not help). A whole answer (``"done": true``) is."""
    line = b'{"model":"llama3.2","created_at":"t","message":{"role":"assistant","content":"Hello"},"done":false}'
    for body in (line + b"\n", line):
        result = ssewire.collect(ssewire.iter_unified([body], provider))
        assert result.text == "Hello"
        assert result.error is not None and result.error["type"] == "stream_truncated"
    whole = line.replace(b'"done":false', b'"done":true')
    (event,) = ssewire.iter_unified([whole], provider)
    assert event.error is not None and event.error["type"] == "not_a_stream"
    for other in ("openai-chat", "anthropic"):  # another provider named: Ollama's chunk is no stream of it
        (event,) = ssewire.iter_unified([line], other)
        assert event.error is not None and event.error["type"] == "not_a_stream"
