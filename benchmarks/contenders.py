"""The contenders: ssewire (compiled and pure twin) and what users run today, each as ``run(case) -> Outcome``.

Every contender gets the same :class:`Case` (the same bytes in the same 16 KiB chunks, or the same payload texts
for the JSON floors), consumes every event it produces (counting events and data characters, the same cheap work
for all) and returns an :class:`Outcome` that ``measure`` checks against ssewire's before any time counts.
Groups: ``framing`` (bytes -> events) and ``end-to-end`` (bytes -> decoded payloads / unified events).
"""

from __future__ import annotations

import binascii
import functools
import importlib
import importlib.util
import io
import json
import operator
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Optional

from ssewire._config import env_flag

from .generate import Stream

__all__ = [
    "CHUNK_SIZE",
    "E2E",
    "FRAMING",
    "MAX_BUFFER",
    "REFERENCE",
    "Case",
    "Contender",
    "Outcome",
    "compiled_scanner",
    "contenders",
    "prepare",
    "seed_reference",
    "ssewire_e2e",
    "scanner_for",
    "ssewire_framing",
]

CHUNK_SIZE = 16 * 1024
MAX_BUFFER = 8 << 20
FRAMING = "framing"
E2E = "end-to-end"
REFERENCE = "seed reference (pure Python)"
_data = operator.attrgetter("data")


@dataclass
class Case:
    """One stream ready to run: its bytes cut into ``chunk_size`` chunks (cut once, outside any timing), and the
    data text of every framed event (filled by the reference run; used by the JSON-decoding floors)."""

    stream: Stream
    chunks: list[bytes]
    payloads: list[str] = field(default_factory=list)
    checking: bool = True  # this run's output is checked in full (ssewire's scanners skip the data sums otherwise)

    @property
    def data(self) -> bytes:
        return self.stream.data


def prepare(stream: Stream, chunk_size: int = CHUNK_SIZE) -> Case:
    """A :class:`Case` for ``stream`` fed in ``chunk_size`` chunks."""
    data = stream.data
    return Case(stream, [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)])


@dataclass(frozen=True)
class Outcome:
    """What a contender produced. ``chars`` is ``None`` for contenders that yield decoded objects (then ``last``
    holds the last object); ``unified`` counts :class:`ssewire.Unified` events (ssewire end to end only)."""

    events: int
    chars: Optional[int] = None
    unified: Optional[int] = None
    last: Any = None


@dataclass(frozen=True)
class Contender:
    """A named way of doing one group's work on streams of the given framings."""

    name: str
    group: str
    framings: tuple[str, ...]
    run: Callable[[Case], Outcome]
    floor: bool = False  # a lower bound on the cost, not a parser anyone would use
    implementation: Optional[str] = None  # "cython" / "python" for ssewire rows
    unavailable: Optional[str] = None  # why it cannot run here
    providers: Optional[tuple[str, ...]] = None  # only streams of these providers (None: every one)

    @property
    def is_ssewire(self) -> bool:
        return self.implementation is not None

    def applies_to(self, stream: Stream) -> bool:
        """Whether this contender runs on ``stream``: its framing, and its provider when ``providers`` says."""
        return stream.framing in self.framings and (self.providers is None or stream.provider in self.providers)


def compiled_scanner() -> tuple[Optional[ModuleType], Optional[str]]:
    """``(ssewire._scan.scanner_c, None)``, or ``(None, reason)`` when the compiled module is not built (or
    ``SSEWIRE_NO_EXTENSIONS`` asks for the pure twin only)."""
    if env_flag("SSEWIRE_NO_EXTENSIONS"):
        return None, "compiled scanner disabled by SSEWIRE_NO_EXTENSIONS"
    try:
        return importlib.import_module("ssewire._scan.scanner_c"), None
    except ImportError as exc:
        return None, f"compiled scanner not built ({exc})"


def compiled_or_told() -> Optional[ModuleType]:
    """:func:`compiled_scanner`'s module, or None once the reason it is missing was printed to stderr (a small
    benchmark that needs it then exits 2)."""
    compiled, why = compiled_scanner()
    if compiled is None:
        print(f"the compiled scanner is not built: {why}", file=sys.stderr)
    return compiled


REFERENCE_PATH = Path(__file__).resolve().parent.parent.parent / "shared" / "seeds" / "reference_sse_parser.py"


def seed_reference() -> tuple[Optional[ModuleType], Optional[str]]:
    """The design documents' pure-Python reference scanners (``SSEWIRE_REFERENCE``, else
    ``../shared/seeds/reference_sse_parser.py``), which the pure twin must not be slower than; ``(None, reason)``
    when the file is not there (it is not part of the repository)."""
    path = Path(os.environ.get("SSEWIRE_REFERENCE", REFERENCE_PATH))
    if not path.is_file():
        return None, f"seed reference not found at {path}"
    spec = importlib.util.spec_from_file_location("ssewire_seed_reference", path)
    if spec is None or spec.loader is None:
        return None, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module, None


_SCANNERS = {
    "sse": "SSEParser",
    "json_array": "JSONArrayStreamParser",
    "ndjson": "NDJSONParser",
    "aws-eventstream": "EventStreamParser",
}


def scanner_for(module: ModuleType, framing: str) -> Any:
    """A scanner of ``module`` (an implementation) for ``framing``."""
    return getattr(module, _SCANNERS[framing])(MAX_BUFFER)


def ssewire_framing(module: ModuleType) -> Callable[[Case], Outcome]:
    """Framing alone with one scanner implementation: ``feed()`` every chunk, then ``close()``. Each call returns
    its events as a list, with their data already decoded; the checked run sums the data lengths, the timed runs
    only count the events, so no per-event Python work blurs how fast the scanners themselves are."""

    def run(case: Case) -> Outcome:
        parser = scanner_for(module, case.stream.framing)
        feed = parser.feed
        n = 0
        if not case.checking:
            for chunk in case.chunks:
                n += len(feed(chunk))
            return Outcome(n + len(parser.close()))
        chars = 0
        for chunk in case.chunks:
            events = feed(chunk)
            n += len(events)
            chars += sum(map(len, map(_data, events)))
        events = parser.close()
        return Outcome(n + len(events), chars + sum(map(len, map(_data, events))))

    return run


def ssewire_e2e(module: ModuleType) -> Callable[[Case], Outcome]:
    """``iter_unified`` built by hand on one scanner implementation, as :class:`~ssewire.StreamDecoder` does it:
    each chunk's events through the normaliser's ``normalize``, then ``finish()``; the checked run also sums the
    data lengths."""
    from ssewire.normalizers import normalizer_for

    def run(case: Case) -> Outcome:
        parser = scanner_for(module, case.stream.framing)
        norm = normalizer_for(case.stream.provider)
        feed = parser.feed
        n = unified = 0
        chars: Optional[int] = 0 if case.checking else None  # (a held event's text is built when it is read)
        normalize = norm.normalize
        for chunk in case.chunks:
            events = feed(chunk)
            n += len(events)
            if chars is not None:
                chars += sum(map(len, map(_data, events)))
            unified += len(normalize(events))
        events = parser.close()
        n += len(events)
        if chars is not None:
            chars += sum(map(len, map(_data, events)))
        unified += len(normalize(events))
        unified += len(norm.finish())
        return Outcome(n, chars, unified)

    return run


def _result_outcome(case: Case, result: Any) -> Outcome:
    """A finished :class:`ssewire.StreamResult` as an outcome: the framed event count when the result holds the
    stream's whole text and every tool call without an error (what the generator wrote), else -1."""
    stream = case.stream
    whole = (
        len(result.text) == stream.text_chars and len(result.tool_calls) == stream.tool_calls and result.error is None
    )
    return Outcome(len(case.payloads) if whole else -1)


def ssewire_collect(case: Case) -> Outcome:
    """``collect(iter_unified(chunks, provider, framing))``: the finished result, as an application gets it."""
    from ssewire import collect, iter_unified

    result = collect(iter_unified(case.chunks, case.stream.provider, case.stream.framing, max_buffer=MAX_BUFFER))
    return _result_outcome(case, result)


def ssewire_tap(case: Case) -> Outcome:
    """A :class:`ssewire.StreamTap` fed every chunk, then closed: what a gateway runs beside forwarding."""
    from ssewire import StreamTap

    tap = StreamTap(case.stream.provider, case.stream.framing, max_buffer=MAX_BUFFER)
    feed = tap.feed
    for chunk in case.chunks:
        feed(chunk)
    return _result_outcome(case, tap.close())


# --- what users run today ---------------------------------------------------------------------------------------


def _count(events: Iterator[Any], decode: Optional[Callable[[str], Any]] = None) -> Outcome:
    n = chars = 0
    for ev in events:
        data = ev.data
        n += 1
        chars += len(data)
        if decode is not None and data != "[DONE]":
            decode(data)
    return Outcome(n, chars)


def _httpx_events(case: Case) -> Iterator[Any]:
    import httpx
    from httpx_sse import EventSource

    class Chunks(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            return iter(case.chunks)

    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Chunks())
    return EventSource(response).iter_sse()


def _httpx_sse(case: Case) -> Outcome:
    return _count(_httpx_events(case))


def _httpx_sse_json(case: Case) -> Outcome:
    return _count(_httpx_events(case), json.loads)


def _openai_sdk(case: Case) -> Outcome:
    from openai._streaming import SSEDecoder

    return _count(SSEDecoder().iter_bytes(iter(case.chunks)))


def _openai_sdk_json(case: Case) -> Outcome:
    from openai._streaming import SSEDecoder

    return _count(SSEDecoder().iter_bytes(iter(case.chunks)), json.loads)


def _anthropic_sdk(case: Case) -> Outcome:
    from anthropic._streaming import SSEDecoder

    return _count(SSEDecoder().iter_bytes(iter(case.chunks)))


def _sseclient(case: Case) -> Outcome:
    from sseclient import SSEClient

    class Source:
        def __iter__(self) -> Iterator[bytes]:
            return iter(case.chunks)

        def close(self) -> None:
            pass

    return _count(SSEClient(Source()).events())


def _httpx_lines(case: Case) -> Iterator[Any]:
    """NDJSON as the Ollama client reads it: httpx's ``iter_lines()``, blank lines skipped."""
    import httpx

    class Chunks(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            return iter(case.chunks)

    class Line:
        __slots__ = ("data",)

        def __init__(self, data: str) -> None:
            self.data = data

    response = httpx.Response(200, headers={"content-type": "application/x-ndjson"}, stream=Chunks())
    return (Line(line) for line in response.iter_lines() if line.strip(" \t"))


def _httpx_iter_lines(case: Case) -> Outcome:
    return _count(_httpx_lines(case))


def _httpx_iter_lines_json(case: Case) -> Outcome:
    return _count(_httpx_lines(case), json.loads)


def _loads_for(case: Case, loads: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``loads`` for one payload of ``case``'s stream; for Bedrock InvokeModel (``bedrock-anthropic``) the payload
    is ``{"bytes": "<base64>"}`` around the event, so decoding it means that, the base64, and the event inside."""
    if case.stream.provider != "bedrock-anthropic":
        return loads
    a2b = binascii.a2b_base64

    def unwrap(data: Any) -> Any:
        return loads(a2b(loads(data)["bytes"]))

    return unwrap


def _botocore(case: Case) -> Outcome:
    """AWS event-stream as boto3, the Anthropic SDK's Bedrock client and LiteLLM read it: botocore's
    ``EventStreamBuffer`` fed every chunk and drained after each (both CRCs, the headers, one
    ``EventStreamMessage`` per event). The checked run decodes each payload to count its characters."""
    from botocore.eventstream import EventStreamBuffer

    buf = EventStreamBuffer()
    add = buf.add_data
    n = 0
    if not case.checking:
        for chunk in case.chunks:
            add(chunk)
            for _message in buf:
                n += 1
        return Outcome(n)
    chars = 0
    for chunk in case.chunks:
        add(chunk)
        for message in buf:
            n += 1
            chars += len(message.payload.decode("utf-8", "replace"))
    return Outcome(n, chars)


def _botocore_json(case: Case) -> Outcome:
    """A hand-written Bedrock client: botocore's ``EventStreamBuffer``, then ``json.loads`` of every payload (and of
    the base64 event inside an InvokeModel ``chunk``)."""
    from botocore.eventstream import EventStreamBuffer

    buf = EventStreamBuffer()
    add = buf.add_data
    loads = _loads_for(case, json.loads)
    n = chars = 0
    checking = case.checking
    for chunk in case.chunks:
        add(chunk)
        for message in buf:
            payload = message.payload
            n += 1
            loads(payload)
            if checking:
                chars += len(payload.decode("utf-8", "replace"))
    return Outcome(n, chars if checking else None)


@functools.cache
def _bedrock_stream_shape(operation: str) -> Any:
    """The event-stream member of a bedrock-runtime operation's output, from the model botocore ships."""
    from botocore.loaders import Loader
    from botocore.model import ServiceModel

    output = ServiceModel(Loader().load_service_model("bedrock-runtime", "service-2")).operation_model(operation)
    members = output.output_shape.members.values()
    return next(m for m in members if m.serialization.get("eventstream"))


def _boto3_stream(case: Case) -> Outcome:
    """What ``boto3``'s ``converse_stream()["stream"]`` / ``invoke_model_with_response_stream()["body"]`` iterate:
    botocore's ``EventStream`` over the chunks (``EventStreamBuffer``, then its shape-driven JSON parser into event
    dicts); for InvokeModel, ``json.loads`` of each ``chunk``'s bytes as the caller does."""
    from botocore.eventstream import EventStream
    from botocore.parsers import EventStreamJSONParser

    anthropic = case.stream.provider == "bedrock-anthropic"

    class Raw:
        def stream(self) -> Iterator[bytes]:
            return iter(case.chunks)

        def close(self) -> None:
            pass

    operation = "InvokeModelWithResponseStream" if anthropic else "ConverseStream"
    stream = EventStream(Raw(), _bedrock_stream_shape(operation), EventStreamJSONParser(), operation)
    n = 0
    for event in stream:
        n += 1
        if anthropic:
            json.loads(event["chunk"]["bytes"])
    return Outcome(n)


def _anthropic_bedrock_sdk(case: Case) -> Outcome:
    """The Anthropic SDK's Bedrock client (``AnthropicBedrock``): its ``AWSEventStreamDecoder.iter_bytes`` (botocore's
    buffer and parser, the ``chunk`` bytes as server-sent events), then ``json.loads`` of each event, as its
    ``Stream`` does."""
    from anthropic.lib.bedrock._stream_decoder import AWSEventStreamDecoder

    n = 0
    for sse in AWSEventStreamDecoder().iter_bytes(iter(case.chunks)):
        n += 1
        json.loads(sse.data)
    return Outcome(n)


def _ijson_c(case: Case) -> Outcome:
    import ijson

    backend = ijson.get_backend("yajl2_c")
    n, last = 0, None
    for obj in backend.items(io.BytesIO(case.data), "item", buf_size=CHUNK_SIZE, use_float=True):
        n += 1
        last = obj
    return Outcome(n, None, last=last)


# --- floors -----------------------------------------------------------------------------------------------------


def _prelude_walk(case: Case) -> Outcome:
    """Count AWS event-stream messages by jumping from one total-length prefix to the next: no CRC, no headers."""
    data = case.data
    end, pos, n = len(data), 0, 0
    while pos < end:
        pos += int.from_bytes(data[pos : pos + 4], "big")
        n += 1
    return Outcome(n)


def _memchr(case: Case) -> Outcome:
    """Count event separators with ``bytes.find``: no parsing at all."""
    data = case.data
    if case.stream.framing == "json_array":
        sep, n = b"\n,\n", (1 if data.strip() not in (b"", b"[]") else 0)
    elif case.stream.framing == "ndjson":
        sep, n = b"\n", 0
    else:
        sep, n = (b"\r\n\r\n" if b"\r\n" in data[:4096] else b"\n\n"), 0
    find, step, pos = data.find, len(sep), 0
    while True:
        pos = find(sep, pos)
        if pos < 0:
            return Outcome(n)
        n += 1
        pos += step


def _decode_all(plain: Callable[[str], Any]) -> Callable[[Case], Outcome]:
    def run(case: Case) -> Outcome:
        chars = 0
        loads = _loads_for(case, plain)
        for data in case.payloads:
            chars += len(data)
            if data != "[DONE]":
                loads(data)
        return Outcome(len(case.payloads), chars)

    return run


def _orjson_body(case: Case) -> Outcome:
    import orjson

    items = orjson.loads(case.data)
    return Outcome(len(items), None, last=items[-1] if items else None)


def contenders() -> list[Contender]:
    """Every contender, in table order; the compiled rows carry ``unavailable`` when it is not built. Imports
    every library up front, so no import lands inside a measurement."""
    modules = ("httpx", "httpx_sse", "openai._streaming", "anthropic._streaming", "sseclient", "ijson")
    for module in (*modules, "botocore.eventstream", "botocore.parsers", "anthropic.lib.bedrock._stream_decoder"):
        importlib.import_module(module)
    import msgspec
    import orjson

    from ssewire._scan import scanner_py as _scanner_py

    compiled, why = compiled_scanner()
    sse, arr, lines, both = ("sse",), ("json_array",), ("ndjson",), ("sse", "json_array", "ndjson")
    aws = ("aws-eventstream",)
    every = (*both, *aws)
    out: list[Contender] = []
    for group, make in ((FRAMING, ssewire_framing), (E2E, ssewire_e2e)):
        if compiled is not None:
            out.append(Contender("ssewire[cython]", group, every, make(compiled), implementation="cython"))
        else:
            out.append(
                Contender("ssewire[cython]", group, every, _unavailable, implementation="cython", unavailable=why)
            )
        out.append(Contender("ssewire[python]", group, every, make(_scanner_py), implementation="python"))
        if group == FRAMING:
            reference, _why_not = seed_reference()
            if reference is not None:  # absent outside this workspace: no row at all, not an "unavailable" one
                out.append(Contender(REFERENCE, FRAMING, sse + arr, ssewire_framing(reference)))
            out += [
                Contender("httpx-sse", FRAMING, sse, _httpx_sse),
                Contender("openai SDK SSEDecoder", FRAMING, sse, _openai_sdk),
                Contender("anthropic SDK SSEDecoder", FRAMING, sse, _anthropic_sdk),
                Contender("sseclient-py", FRAMING, sse, _sseclient),
                Contender("httpx iter_lines", FRAMING, lines, _httpx_iter_lines),
                Contender("botocore EventStreamBuffer", FRAMING, aws, _botocore),
                Contender("floor: bytes.find scan", FRAMING, both, _memchr, floor=True),
                Contender("floor: prelude length walk", FRAMING, aws, _prelude_walk, floor=True),
            ]
        else:
            active = "cython" if compiled is not None else "python"
            out += [
                Contender("ssewire collect()", E2E, every, ssewire_collect, implementation=active),
                Contender("ssewire StreamTap", E2E, every, ssewire_tap, implementation=active),
                Contender("httpx-sse + json.loads", E2E, sse, _httpx_sse_json),
                Contender("openai SDK + json.loads", E2E, sse, _openai_sdk_json),
                Contender("ijson yajl2_c items", E2E, arr, _ijson_c),
                Contender("httpx iter_lines + json.loads", E2E, lines, _httpx_iter_lines_json),
                Contender("botocore EventStreamBuffer + json.loads", E2E, aws, _botocore_json),
                Contender("boto3 EventStream", E2E, aws, _boto3_stream),
                Contender(
                    "anthropic SDK Bedrock decoder + json.loads",
                    E2E,
                    aws,
                    _anthropic_bedrock_sdk,
                    providers=("bedrock-anthropic",),
                ),
                Contender("floor: json.loads payloads", E2E, every, _decode_all(json.loads), floor=True),
                Contender("floor: orjson payloads", E2E, every, _decode_all(orjson.loads), floor=True),
                Contender(
                    "floor: msgspec payloads", E2E, every, _decode_all(msgspec.json.Decoder().decode), floor=True
                ),
                Contender("floor: orjson whole body", E2E, arr, _orjson_body, floor=True),
            ]
    return out


def _unavailable(case: Case) -> Outcome:
    raise RuntimeError("contender unavailable")
