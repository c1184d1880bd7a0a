"""Every Python example in README.md runs, against a local server serving the streams in fixtures/.

The preamble below is all the examples get: ``url`` (a fixture of the provider the example names), ``body``,
``headers``, ``run_tool``, ``chunks`` (that fixture's bytes in pieces), ``log``, and for the gateway example an
``upstream`` (gzip-compressed, as ``aiter_raw()`` gives it) and a ``downstream``. Examples with ``async``/``await``
at top level run inside ``asyncio.run``, all of them from the repository's root (the OpenTelemetry example opens a
fixture; it must print what its comments say).
"""

from __future__ import annotations

import asyncio
import gzip
import importlib.util
import logging
import re
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from helpers import FIXTURES
from helpers.http_server import StreamServer

README = FIXTURES.parent / "README.md"
_FENCE = re.compile(r"^( *)```python\n(.*?)^\1```", re.S | re.M)
_PROVIDER = re.compile(r'"(openai-chat|openai|anthropic|xai|gemini)"')
_ASYNC = re.compile(r"^(async |await |.*\bawait )", re.M)

#: The fixture each provider's examples read.
FIXTURE_FOR = {
    "openai": "openai-responses-tool-call.sse",
    "openai-chat": "xai-chat-reasoning-tool-call.sse",
    "anthropic": "anthropic-messages-tool-use.sse",
    "xai": "xai-responses-reasoning-function.sse",
    "gemini": "gemini-stream-thought-signature.sse",
}


def _blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    out = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        out.append((line, textwrap.dedent(match.group(2))))
    return out


BLOCKS = _blocks()


class Upstream:
    """What a gateway reads: an upstream response whose raw bytes are gzip-compressed."""

    def __init__(self, data: bytes) -> None:
        self.headers = {"content-encoding": "gzip", "content-type": "text/event-stream"}
        self.raw = gzip.compress(data)

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        for i in range(0, len(self.raw), 100):
            yield self.raw[i : i + 100]


class Downstream:
    """What a gateway writes to: keeps every byte it was sent."""

    def __init__(self) -> None:
        self.sent = bytearray()

    async def send(self, chunk: bytes) -> None:
        self.sent += chunk


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as srv:
        yield srv


def _preamble(server: StreamServer, code: str) -> dict[str, Any]:
    import ssewire

    try:
        import httpx
    except ImportError:  # an extra: the examples that use it are skipped
        httpx = None  # type: ignore[assignment]

    found = _PROVIDER.search(code)
    name = FIXTURE_FOR[found.group(1) if found else "openai"]
    data = (FIXTURES / name).read_bytes()
    calls: list[tuple[Any, Any]] = []
    return {
        "__name__": "readme_example",
        "httpx": httpx,
        "ssewire": ssewire,
        "url": server.url(f"/file/fixtures/{name}", maxchunk=300),
        "body": {"model": "any", "stream": True, "messages": [{"role": "user", "content": "Hi"}]},
        "headers": {"authorization": "Bearer test-key"},
        "run_tool": lambda name, arguments: calls.append((name, arguments)),
        "tool_calls_run": calls,
        "chunks": [data[i : i + 500] for i in range(0, len(data), 500)],
        "log": logging.getLogger("readme"),
        "upstream": Upstream(data),
        "downstream": Downstream(),
    }


def test_the_readme_has_examples_of_every_entry_point() -> None:
    code = "\n".join(block for _, block in BLOCKS)
    for name in ("iter_response", "iter_unified", "aiter_response", "collect", "StreamTap", "iter_resumable"):
        assert name in code, name


@pytest.mark.parametrize(("line", "code"), BLOCKS, ids=[f"line-{line}" for line, _ in BLOCKS])
def test_readme_example_runs(
    server: StreamServer, line: int, code: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES.parent)  # examples that open a fixture name it from the repository's root
    if "aclosing" in code and sys.version_info < (3, 10):
        pytest.skip("contextlib.aclosing is Python 3.10+, as the example says")
    for client in ("httpx", "aiohttp", "requests"):
        if re.search(rf"^\s*import {client}\b|\b{client}\.", code, re.M):
            pytest.importorskip(client)  # the examples' HTTP clients are extras
    if "ssewire.otel" in code:
        pytest.importorskip("opentelemetry")  # the otel extra
    if "opentelemetry.sdk" in code:
        pytest.importorskip("opentelemetry.sdk")  # what the OpenTelemetry example shows its output with
    if re.search(r"ssewire(\.batch)?\.arrow|^import pyarrow", code, re.M):
        pytest.importorskip("pyarrow")  # the arrow extra
    namespace = _preamble(server, code)
    if _ASYNC.search(code):
        source = "async def _example():\n" + textwrap.indent(code, "    ") + "\n    return locals()\n"
        exec(compile(source, f"README.md:{line}", "exec"), namespace)
        namespace.update(asyncio.run(namespace["_example"]()))
    else:
        exec(compile(code, f"README.md:{line}", "exec"), namespace)
    if "run_tool(" in code:  # the example reached its tool call, with whole arguments
        assert namespace["tool_calls_run"], "run_tool was never called"
        assert all(isinstance(arguments, dict) for _, arguments in namespace["tool_calls_run"])
    if "InMemorySpanExporter" in code:  # the OpenTelemetry example prints what it recorded, as its comments say
        printed = capsys.readouterr().out.splitlines()
        assert printed[0] == "412 ('tool_use',)"
        assert printed[1:11] == [
            "gen_ai.client.inference.usage.input_tokens {token}",
            "gen_ai.client.inference.usage.output_tokens {token}",
            "gen_ai.client.inference.usage.cache_read.input_tokens {token}",
            "gen_ai.client.inference.usage.cache_write.input_tokens {token}",
            "gen_ai.client.inference.usage.reasoning.output_tokens {token}",
            "gen_ai.client.inference.operation.input_tokens {token}",
            "gen_ai.client.inference.operation.output_tokens {token}",
            "gen_ai.client.inference.duration s",
            "gen_ai.client.inference.time_to_first_chunk s",
            "gen_ai.client.inference.time_per_output_chunk s",
        ]
        priced = importlib.util.find_spec("genai_prices") is not None  # the cost counter needs the price table
        assert printed[11:] == (["ssewire.client.inference.cost {USD}"] if priced else [])
    if "result.price()" in code:  # the cost example prints what its comments say
        printed = capsys.readouterr().out.splitlines()
        priced = importlib.util.find_spec("genai_prices") is not None  # the computed figure needs the price table
        assert printed == ["0.000136525 reported", "0.000136525 0.0001240" if priced else "None None"]
    if "downstream.send" in code:
        assert bytes(namespace["downstream"].sent) == namespace["upstream"].raw  # forwarded untouched
        assert namespace["result"].stop_reason is not None  # the tap parsed the compressed upstream to its end
