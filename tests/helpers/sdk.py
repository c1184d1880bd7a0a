"""The official ``openai`` and ``anthropic`` SDKs reading a stream from a base URL, sync and async, reduced to what
can be compared: every event's ``model_dump()``, the stream helper's final object, and the exception raised (its
type and message), if any: an SDK error, or the ``RuntimeError`` of a stream helper that saw no final event. The
stream to replay is named in the query (``extra_query``), as the replay server of ``examples/gateway`` expects."""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import pytest

__all__ = ["API_PATHS", "APIS", "Outcome", "read_with_sdk"]

Outcome = dict[str, Any]

#: The SDK calls, by the API they stream from, and the path each posts to.
API_PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}
APIS = tuple(API_PATHS)
_MESSAGES = [{"role": "user", "content": "hi"}]
TIMEOUT = 10.0


def _outcome(events: list[Any], final: Any = None, error: Optional[BaseException] = None) -> Outcome:
    return {
        "events": [e.model_dump(warnings=False) for e in events],  # (pydantic warns about the SDKs' own unions)
        "final": None if final is None else final.model_dump(warnings=False),
        "error": None if error is None else f"{type(error).__name__}: {error}",
    }


def read_with_sdk(api: str, base_url: str, query: dict[str, Any], *, use_async: bool, helper: bool = False) -> Outcome:
    """What the SDK for ``api`` (``chat``, ``responses``, ``messages``) makes of the stream at ``base_url``:
    ``create(stream=True)``, or with ``helper`` the SDK's stream helper (``responses.stream`` /
    ``messages.stream``) and its final object. Retries are off. Skips the test where the SDK is not installed."""
    pytest.importorskip("anthropic" if api == "messages" else "openai")
    if use_async:
        return asyncio.run(_read_async(api, base_url, query, helper))
    if api == "messages":
        import anthropic

        with anthropic.Anthropic(base_url=base_url, api_key="x", max_retries=0, timeout=TIMEOUT) as client:
            kwargs: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": _MESSAGES}
            events: list[Any] = []
            try:
                if helper:
                    with client.messages.stream(**kwargs, extra_query=query) as stream:
                        events.extend(stream)
                        return _outcome(events, stream.get_final_message())
                events.extend(client.messages.create(**kwargs, stream=True, extra_query=query))
            except Exception as exc:  # the SDK's errors, and its stream helpers' RuntimeError
                return _outcome(events, error=exc)
            return _outcome(events)
    import openai

    with openai.OpenAI(base_url=base_url + "/v1", api_key="x", max_retries=0, timeout=TIMEOUT) as oai:
        events = []
        try:
            if api == "chat":
                events.extend(
                    oai.chat.completions.create(model="gpt-test", messages=_MESSAGES, stream=True, extra_query=query)  # type: ignore[arg-type]
                )
            elif helper:
                with oai.responses.stream(model="gpt-test", input="hi", extra_query=query) as stream:
                    events.extend(stream)
                    return _outcome(events, stream.get_final_response())
            else:
                events.extend(oai.responses.create(model="gpt-test", input="hi", stream=True, extra_query=query))
        except Exception as exc:  # the SDK's errors, and its stream helpers' RuntimeError
            return _outcome(events, error=exc)
        return _outcome(events)


async def _read_async(api: str, base_url: str, query: dict[str, Any], helper: bool) -> Outcome:
    events: list[Any] = []
    if api == "messages":
        import anthropic

        async with anthropic.AsyncAnthropic(base_url=base_url, api_key="x", max_retries=0, timeout=TIMEOUT) as client:
            kwargs: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "messages": _MESSAGES}
            try:
                if helper:
                    async with client.messages.stream(**kwargs, extra_query=query) as stream:
                        events.extend([e async for e in stream])
                        return _outcome(events, await stream.get_final_message())
                async for event in await client.messages.create(**kwargs, stream=True, extra_query=query):
                    events.append(event)
            except Exception as exc:  # the SDK's errors, and its stream helpers' RuntimeError
                return _outcome(events, error=exc)
            return _outcome(events)
    import openai

    async with openai.AsyncOpenAI(base_url=base_url + "/v1", api_key="x", max_retries=0, timeout=TIMEOUT) as oai:
        try:
            if api == "chat":
                chunks = await oai.chat.completions.create(
                    model="gpt-test",
                    messages=_MESSAGES,  # type: ignore[arg-type]
                    stream=True,
                    extra_query=query,
                )
                events.extend([c async for c in chunks])
            elif helper:
                async with oai.responses.stream(model="gpt-test", input="hi", extra_query=query) as stream:
                    events.extend([e async for e in stream])
                    return _outcome(events, await stream.get_final_response())
            else:
                responses = await oai.responses.create(model="gpt-test", input="hi", stream=True, extra_query=query)
                events.extend([e async for e in responses])
        except Exception as exc:  # the SDK's errors, and its stream helpers' RuntimeError
            return _outcome(events, error=exc)
        return _outcome(events)
