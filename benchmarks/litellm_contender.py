"""LiteLLM's own streaming translation run on raw recorded bytes: the contender ``transcode`` is timed against.

Contract (pure functions; LiteLLM is imported on the first call, so this module imports where it is absent):

- :func:`to_openai_chat` ``(body, provider) -> list[bytes]``. In: the raw HTTP response body a provider streams,
  whole (``"anthropic"``: Messages SSE; ``"gemini"``: ``streamGenerateContent?alt=sse``, Google AI Studio or Vertex;
  ``"bedrock-converse"``: ConverseStream AWS event-stream). Out: the frames LiteLLM's proxy writes on
  ``/chat/completions`` for it, ``data: <chunk JSON>\\n\\n`` per chunk (the client asked for the usage chunk), then
  ``data: [DONE]\\n\\n``.
- :func:`chat_to_anthropic` ``(body) -> list[bytes]``. In: an OpenAI Chat Completions SSE body. Out: the frames
  LiteLLM's ``/v1/messages`` route writes for it when the model behind the route speaks Chat Completions,
  ``event: <type>\\ndata: <json>\\n\\n`` each.

The path is LiteLLM's own and runs unmodified, asynchronously as in its proxy: the provider's stream iterator over
the body (fed as one network read; ``chunk_size`` cuts it) -> ``CustomStreamWrapper``, with a ``Logging`` object
set up as ``acompletion()`` sets one up -> for chat, the proxy's serialisation (``_serialize_chat_chunk`` and
``_format_streaming_sse_chunk`` of ``litellm/proxy/proxy_server.py``, restated here: importing the proxy needs
FastAPI and builds its app); for ``/v1/messages``, ``AnthropicStreamWrapper``'s own SSE frames. Each call also runs
what the stream leaves scheduled on the event loop (the success-logging dispatch), so its CPU time holds the whole
stream's work. Nothing reaches the network: no callbacks are registered, the model cost map is the bundled one
(``LITELLM_LOCAL_MODEL_COST_MAP``, ``LITELLM_OFFLINE_MODE``; set before LiteLLM is first imported, so import it
through here), and the ``LiteLLM`` logger is set to CRITICAL (its mid-stream error tracebacks went to stderr).

``python -m benchmarks.litellm_contender FILE PROVIDER [SECONDS]`` prints the CPU time per output chunk of
:func:`to_openai_chat` on FILE (PROVIDER ``openai-chat``: of :func:`chat_to_anthropic`) and the number of chunks.
"""

from __future__ import annotations

import asyncio
import codecs
import datetime
import functools
import importlib.util
import logging
import os
import sys
import time
import uuid
from typing import TYPE_CHECKING, Any, AsyncIterator, Coroutine, Optional

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["MODELS", "PROVIDERS", "available", "chat_to_anthropic", "to_openai_chat"]

#: The model each route is asked for (names LiteLLM's bundled cost map knows, so its end-of-stream usage and cost
#: bookkeeping takes its ordinary path).
MODELS = {
    "anthropic": "claude-sonnet-4-5-20250929",
    "gemini": "gemini-2.5-flash",
    "bedrock-converse": "anthropic.claude-3-sonnet-20240229-v1:0",
    "openai-chat": "gpt-4o",
}
#: ssewire's provider name -> LiteLLM's ``custom_llm_provider`` for the request.
PROVIDERS = {"anthropic": "anthropic", "gemini": "gemini", "bedrock-converse": "bedrock"}
_DONE = b"data: [DONE]\n\n"
#: The client asks for the usage chunk (``transcode`` writes one too).
_USAGE = {"include_usage": True}


def available() -> bool:
    """Whether LiteLLM is importable here."""
    return importlib.util.find_spec("litellm") is not None


@functools.cache
def _litellm() -> Any:
    """LiteLLM, imported once with everything that would reach the network or log turned off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    import litellm

    litellm.suppress_debug_info = True
    litellm.success_callback = []
    litellm.failure_callback = []
    litellm.callbacks = []
    logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)  # its tracebacks for mid-stream errors, on stderr
    return litellm


def _logging_obj(model: str, provider: str, stream_options: Optional[dict[str, Any]] = None) -> Any:
    """A ``Logging`` object as ``litellm.acompletion(..., stream=True)`` builds one (``function_setup``, then
    ``update_environment_variables`` with the request's ``litellm_params``)."""
    from litellm.litellm_core_utils.get_litellm_params import get_litellm_params
    from litellm.litellm_core_utils.litellm_logging import Logging

    call_id = str(uuid.uuid4())
    logging_obj = Logging(
        model=model,
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        call_type="acompletion",
        start_time=datetime.datetime.now(),
        litellm_call_id=call_id,
        function_id="",
    )
    logging_obj.update_environment_variables(
        model=model,
        user=None,
        optional_params={"stream": True},
        litellm_params=get_litellm_params(custom_llm_provider=provider, litellm_call_id=call_id, acompletion=True),
        custom_llm_provider=provider,
        stream_options=stream_options,
    )
    return logging_obj


@functools.cache
def _loop() -> asyncio.AbstractEventLoop:
    """The event loop every call runs on, kept as a proxy keeps its own (worker threads stay warm)."""
    return asyncio.new_event_loop()


def _run(stream: Coroutine[Any, Any, list[bytes]]) -> list[bytes]:
    """Run ``stream`` to its end, then whatever it left scheduled (the success-logging dispatch LiteLLM starts at
    the end of a stream, async-generator cleanup), so a call's CPU time holds all the work of its stream."""
    loop = _loop()
    try:
        return loop.run_until_complete(stream)
    finally:
        while pending := asyncio.all_tasks(loop):
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _first_data(body: bytes) -> bytes:
    """The first ``data:`` line of an SSE body (empty when no line starts with ``data:``)."""
    start = 0 if body.startswith(b"data:") else body.find(b"\ndata:") + 1
    if start == 0 and not body.startswith(b"data:"):
        return b""
    end = body.find(b"\n", start)
    return body[start : end if end >= 0 else len(body)]


def _pieces(body: bytes, chunk_size: Optional[int]) -> list[bytes]:
    if not chunk_size:
        return [body]
    return [body[i : i + chunk_size] for i in range(0, len(body), chunk_size)]


async def _bytes(pieces: list[bytes]) -> AsyncIterator[bytes]:
    """``httpx.Response.aiter_bytes()`` over the body."""
    for piece in pieces:
        yield piece


async def _text(pieces: list[bytes]) -> AsyncIterator[str]:
    """``httpx.Response.aiter_text()`` over the body (an incremental UTF-8 decoder, ``errors="replace"``)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for piece in pieces:
        text = decoder.decode(piece)
        if text:
            yield text
    tail = decoder.decode(b"", True)
    if tail:
        yield tail


def _chat_stream(pieces: list[bytes], provider: str) -> Any:
    """LiteLLM's ``CustomStreamWrapper`` over the provider's own stream iterator, as its handler returns it."""
    litellm = _litellm()
    from litellm.llms.custom_httpx.sse_lines import aiter_sse_lines

    model = MODELS[provider]
    logging_obj = _logging_obj(model, PROVIDERS[provider], _USAGE)
    if provider == "anthropic":  # litellm/llms/anthropic/chat/handler.py: make_call
        from litellm.llms.anthropic.chat.handler import ModelResponseIterator
        from litellm.llms.anthropic.common_utils import process_anthropic_headers

        stream: Any = ModelResponseIterator(streaming_response=aiter_sse_lines(_text(pieces)), sync_stream=False)
        headers: Any = process_anthropic_headers({"content-type": "text/event-stream"})
        wrapper_provider = "anthropic"
    elif provider == "gemini":  # litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py: make_call
        from litellm.llms.vertex_ai.gemini.vertex_and_google_ai_studio_gemini import ModelResponseIterator as Gemini

        headers = {"content-type": "text/event-stream"}
        stream = Gemini(
            streaming_response=aiter_sse_lines(_text(pieces)),
            sync_stream=False,
            logging_obj=logging_obj,
            response_headers=headers,
        )
        wrapper_provider = "vertex_ai_beta"
    elif provider == "bedrock-converse":  # litellm/llms/bedrock/chat/invoke_handler.py: make_call
        from litellm.llms.bedrock.chat.invoke_handler import AWSEventStreamDecoder

        headers = {"content-type": "application/vnd.amazon.eventstream"}
        stream = AWSEventStreamDecoder(model=model, json_mode=False).aiter_bytes(
            _bytes(pieces), response_headers=headers
        )
        wrapper_provider = "bedrock"
    else:
        raise ValueError(f"LiteLLM route not wired here: {provider!r} (one of {sorted(PROVIDERS)})")
    return litellm.CustomStreamWrapper(
        completion_stream=stream,
        model=model,
        custom_llm_provider=wrapper_provider,
        logging_obj=logging_obj,
        stream_options=_USAGE,
        _response_headers=headers,
    )


def _chat_frame(chunk: BaseModel) -> bytes:
    """One chunk as the proxy's ``async_data_generator`` writes it (``_serialize_chat_chunk`` +
    ``_format_streaming_sse_chunk``)."""
    data: str = chunk.model_dump_json(exclude_none=True, exclude_unset=True)
    return b"data: " + data.encode() + b"\n\n"


async def _to_openai_chat(pieces: list[bytes], provider: str) -> list[bytes]:
    out = [_chat_frame(chunk) async for chunk in _chat_stream(pieces, provider)]
    out.append(_DONE)
    return out


def to_openai_chat(body: bytes, provider: str, *, chunk_size: Optional[int] = None) -> list[bytes]:
    """The ``/chat/completions`` SSE frames LiteLLM's proxy sends for ``provider``'s raw stream ``body``.

    Raises ``ValueError`` for a body LiteLLM's route never receives (a Gemini Interactions or JSON-array body: LiteLLM
    asks Gemini for ``streamGenerateContent?alt=sse``) and whatever LiteLLM raises on the stream (its proxy would
    write that as an error frame)."""
    if provider not in PROVIDERS:
        raise ValueError(f"LiteLLM route not wired here: {provider!r} (one of {sorted(PROVIDERS)})")
    first = _first_data(body)
    if provider == "gemini" and (not first or b'"event_type"' in first):  # a JSON array, Interactions events
        raise ValueError("not a streamGenerateContent?alt=sse body: LiteLLM's Gemini route never reads it")
    return _run(_to_openai_chat(_pieces(body, chunk_size), provider))


@functools.cache
def _openai_client() -> Any:
    """The OpenAI SDK client LiteLLM streams Chat Completions with (never sends a request here)."""
    import openai

    return openai.AsyncOpenAI(api_key="sk-benchmark", base_url="http://127.0.0.1:9/v1")


async def _chat_to_anthropic(pieces: list[bytes]) -> list[bytes]:
    litellm = _litellm()
    import httpx2
    import openai
    from litellm.llms.anthropic.messages.adapters.handler import ANTHROPIC_ADAPTER
    from openai.types.chat import ChatCompletionChunk

    model = MODELS["openai-chat"]
    # What the adapter asks of the chat model (adapters/handler.py), and what litellm/llms/openai/openai.py gets
    # back from the SDK: an AsyncStream of ChatCompletionChunk over the HTTP response.
    logging_obj = _logging_obj(model, "openai", _USAGE)
    logging_obj.call_type = "anthropic_messages"
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    headers = {"content-type": "text/event-stream"}
    response = httpx2.Response(200, headers=headers, content=_bytes(pieces), request=request)
    sdk_stream = openai.AsyncStream(cast_to=ChatCompletionChunk, response=response, client=_openai_client())
    chat = litellm.CustomStreamWrapper(
        completion_stream=sdk_stream,
        model=model,
        custom_llm_provider="openai",
        logging_obj=logging_obj,
        stream_options=_USAGE,
        _response_headers=headers,
    )
    frames: Any = ANTHROPIC_ADAPTER.translate_completion_output_params_streaming(  # an AnthropicSSEStream
        chat,
        model=model,
        is_async=True,
        completion_request={"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True},
        litellm_logging_obj=logging_obj,
    )
    return [frame async for frame in frames]


def chat_to_anthropic(body: bytes, *, chunk_size: Optional[int] = None) -> list[bytes]:
    """The Anthropic Messages SSE frames LiteLLM's ``/v1/messages`` sends for an OpenAI Chat Completions ``body``.

    A stream LiteLLM fails on ends in an ``event: error`` frame, as the route sends it. Raises ``ValueError`` for a
    legacy Completions body (``"object": "text_completion"``), which LiteLLM's chat path never reads."""
    if b'"text_completion"' in _first_data(body):
        raise ValueError("a legacy Completions body: LiteLLM's chat adapter never reads one")
    return _run(_chat_to_anthropic(_pieces(body, chunk_size)))


def main(argv: Optional[list[str]] = None) -> int:
    """``FILE PROVIDER [SECONDS]``: CPU time per output chunk over repeats filling about SECONDS (default 3)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print("usage: python -m benchmarks.litellm_contender FILE PROVIDER [SECONDS]", file=sys.stderr)
        return 2
    with open(args[0], "rb") as f:
        body = f.read()
    provider, budget = args[1], float(args[2]) if len(args) == 3 else 3.0
    run = chat_to_anthropic if provider == "openai-chat" else functools.partial(to_openai_chat, provider=provider)
    chunks = [frame for frame in run(body) if frame != _DONE]  # the first run imports LiteLLM and warms its caches
    repeats, spent, start = 0, 0.0, time.process_time()
    while spent < budget or repeats < 5:
        run(body)
        repeats, spent = repeats + 1, time.process_time() - start
    stream = spent / repeats
    print(f"{args[0]}: {len(body)} bytes ({provider}) -> {len(chunks)} chunks")
    print(f"{stream / len(chunks) * 1e6:.0f} us CPU per chunk, {stream * 1e3:.2f} ms per stream ({repeats} repeats)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
