"""EventStreamParser (the AWS event-stream binary framing of Amazon Bedrock), on both implementations (the ``scanner``
fixture): botocore's encoded vectors, the recorded Bedrock streams at every split, each framing error with the
offset of its message, truncation, the header/payload/``max_buffer`` limits, the message types, the message type
itself (equality across implementations, repr, pickle), and ``framing="aws-eventstream"`` through the registry."""

from __future__ import annotations

import base64
import copy
import json
import pickle
import random
import struct
import uuid
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

import pytest

from helpers import COMPILED, CORPUS, chunked, load_manifest
from helpers.eventstream import encode_headers, encode_message, event, exception
from helpers.trace import as_buffer_type
from ssewire import FramingError, SSEBufferOverflow, SSEwireError, StreamTruncated, iter_events
from ssewire._scan import EventStreamParser  # the active implementation's
from ssewire._scan import scanner_py as _scanner_py
from ssewire.framing import AutoScanner, framing_for_content_type, make_scanner

BEDROCK = CORPUS / "more-providers" / "bedrock"
VECTORS_FILE = BEDROCK / "vectors" / "botocore-eventstream-vectors.json"
CAPTURES = [c for c in load_manifest() if c["framing"] == "aws-eventstream"]  # load_manifest: the corpus rules
VECTORS: list[dict[str, Any]] = (
    json.loads(VECTORS_FILE.read_text(encoding="utf-8"))["vectors"] if VECTORS_FILE.is_file() else []
)
needs_corpus = pytest.mark.skipif(not CAPTURES or not VECTORS, reason="../shared/corpus (bedrock) is not present")
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="compiled scanner not built")

KiB = 1024
MiB = 1024 * KiB
MAX_HEADERS = 128 * KiB
MAX_PAYLOAD = 16 * MiB


# --- helpers ----------------------------------------------------------------------------------------------------


def key(message: Any) -> tuple[Any, ...]:
    """Everything a message carries, header types included (``True == 1`` must not pass for a bool header)."""
    headers = tuple((name, type(value).__name__, value) for name, value in message.headers.items())
    return (
        message.event,
        message.data,
        message.id,
        message.retry,
        headers,
        message.payload,
        message.message_type,
        message.content_type,
    )


def parse(parser: Any, chunks: list[Any]) -> list[tuple[Any, ...]]:
    """The keys of every message ``parser`` frames from ``chunks``, then ``close()``; checks the counters."""
    out: list[Any] = []
    for chunk in chunks:
        out += parser.feed(chunk)
    out += parser.close()
    assert parser.events_parsed == len(out)
    assert parser.bytes_fed == sum(len(bytes(c)) for c in chunks)
    return [key(m) for m in out]


def at_every_split(scanner: ModuleType, data: bytes, cuts: Optional[list[int]] = None) -> list[tuple[Any, ...]]:
    """The messages of ``data``, checked to be the same fed split at every byte (or at each of ``cuts``) and fed a
    byte at a time."""
    whole = parse(scanner.EventStreamParser(), [data])
    for cut in range(len(data) + 1) if cuts is None else cuts:
        assert parse(scanner.EventStreamParser(), [data[:cut], data[cut:]]) == whole, f"split at {cut}"
    assert parse(scanner.EventStreamParser(), chunked(data, 1)) == whole
    return whole


def message_cuts(data: bytes, sampled: int = 64) -> list[int]:
    """The splits that matter in a stream of whole messages: around each message's start, its prelude, the prelude's
    CRC and its headers' start, and at ``sampled`` seeded offsets."""
    cuts = {len(data)}
    at = 0
    while at < len(data):
        cuts.update(at + d for d in (-1, 0, 1, 4, 8, 11, 12, 13))
        at += struct.unpack_from(">I", data, at)[0]
    rng = random.Random(len(data))
    cuts.update(rng.randrange(len(data) + 1) for _ in range(sampled))
    return sorted(c for c in cuts if 0 <= c <= len(data))


def prelude(total: int, headers: int) -> bytes:
    """A prelude with a valid CRC announcing ``total`` bytes in all, ``headers`` of them headers."""
    head = struct.pack(">II", total, headers)
    return head + struct.pack(">I", zlib.crc32(head))


def framed(block: bytes, payload: bytes = b"") -> bytes:
    """A message around a raw header block (valid lengths and CRCs, whatever the block holds)."""
    body = prelude(12 + len(block) + len(payload) + 4, len(block)) + block + payload
    return body + struct.pack(">I", zlib.crc32(body))


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1 :]


def failure(parser: Any, data: bytes) -> SSEwireError:
    """The error ``parser`` raises for ``data`` fed whole (by the next call when messages came before it), checked
    to stay raised by every later call."""
    try:
        parser.feed(data)
    except SSEwireError as exc:
        error = exc
    else:
        with pytest.raises(SSEwireError) as info:
            parser.feed(b"")
        error = info.value
    for call in (lambda: parser.feed(b""), lambda: parser.feed(event("x", {})), parser.close):
        with pytest.raises(SSEwireError) as again:
            call()
        assert again.value is error
    return error


FIRST = event("messageStart", {"role": "assistant"})
SECOND = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}})


# --- botocore's vectors -----------------------------------------------------------------------------------------


def _expected_headers(headers: dict[str, Any]) -> tuple[tuple[str, str, Any], ...]:
    out = []
    for name, value in headers.items():
        if isinstance(value, dict):  # a byte array or a uuid, base64 in the JSON
            value = base64.b64decode(value["bytes_b64"])
        out.append((name, type(value).__name__, value))
    return tuple(out)


_VALID = [v for v in VECTORS if v["valid"]]
_INVALID = [v for v in VECTORS if not v["valid"]]
#: botocore's exception -> what ours says
_BOTOCORE_ERRORS = {
    "ChecksumMismatch": "CRC mismatch at offset 0",
    "DuplicateHeader": "appears twice",
    "InvalidHeadersLength": "corrupt length",
}


@needs_corpus
@pytest.mark.parametrize("vector", _VALID, ids=[v["name"] for v in _VALID])
def test_botocore_valid_vectors_decode_exactly(scanner: ModuleType, vector: dict[str, Any]) -> None:
    data = bytes.fromhex(vector["hex"])
    [message] = at_every_split(scanner, data)
    payload = base64.b64decode(vector["expected"]["payload_b64"])
    assert message[4] == _expected_headers(vector["expected"]["headers"])
    assert message[5] == payload and message[1] == payload.decode()
    assert message[2:4] == (None, None)  # no id, no retry


@needs_corpus
@pytest.mark.parametrize("vector", _INVALID, ids=[v["name"] for v in _INVALID])
def test_botocore_invalid_vectors_raise_framing_error(scanner: ModuleType, vector: dict[str, Any]) -> None:
    data = bytes.fromhex(vector["hex"])
    says = _BOTOCORE_ERRORS[vector["expected"]["botocore_exception"]]
    error = failure(scanner.EventStreamParser(), data)
    assert isinstance(error, FramingError) and says in str(error)
    for chunks in (chunked(data, 1), chunked(data, 7)):
        parser = scanner.EventStreamParser()
        with pytest.raises(FramingError) as info:
            parse(parser, chunks)
        assert str(info.value) == str(error) and parser.events_parsed == 0
    if "prelude CRC" in str(error) or "corrupt length" in str(error):
        with pytest.raises(FramingError, match=says):  # a bad prelude is refused from its 12 bytes alone
            scanner.EventStreamParser().feed(data[:12])


@needs_corpus
def test_botocore_vectors_in_one_stream_and_a_bad_one_names_its_offset(scanner: ModuleType) -> None:
    valid = [bytes.fromhex(v["hex"]) for v in _VALID]
    stream = b"".join(valid)
    assert len(at_every_split(scanner, stream)) == len(valid)
    for vector in _INVALID:
        says = _BOTOCORE_ERRORS[vector["expected"]["botocore_exception"]].replace("offset 0", f"offset {len(stream)}")
        parser = scanner.EventStreamParser()
        got = parser.feed(stream + bytes.fromhex(vector["hex"]))
        assert [key(m) for m in got] == parse(scanner.EventStreamParser(), [stream])  # the good ones first
        with pytest.raises(FramingError, match=says) as info:
            parser.feed(b"")
        assert f"offset {len(stream)}" in str(info.value)


# --- the recorded Bedrock streams -------------------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_recorded_streams_are_framed_the_same_at_every_split(scanner: ModuleType, capture: dict[str, Any]) -> None:
    """Split at every byte on the compiled scanner; on the twin (quadratic there: ``slow`` below) at the splits
    around each message and sampled ones."""
    data = (CORPUS / capture["file"]).read_bytes()
    messages = at_every_split(scanner, data, message_cuts(data) if scanner is _scanner_py else None)
    assert len(messages) == capture["unit_count"]
    rng = random.Random(capture["file"])
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 40)))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
        kinds = [rng.randint(0, 3) for _ in chunks]
        assert parse(scanner.EventStreamParser(), [as_buffer_type(c, k) for c, k in zip(chunks, kinds)]) == messages
    reencoded = b""
    for name, data_, _, _, headers, payload, message_type, content_type in messages:
        assert (message_type, content_type) == ("event", "application/json")
        assert name == {n: v for n, _, v in headers}[":event-type"]
        assert data_ == payload.decode() and isinstance(json.loads(data_), dict)
        reencoded += encode_message([(n, v) for n, _, v in headers], payload)
    assert reencoded == data  # every header (name, type, value, order) and payload byte-exact


@pytest.mark.slow
@needs_corpus
@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_recorded_streams_split_at_every_byte_on_the_twin(capture: dict[str, Any]) -> None:
    data = (CORPUS / capture["file"]).read_bytes()
    assert len(at_every_split(_scanner_py, data)) == capture["unit_count"]


@needs_corpus
def test_the_corpus_holds_the_bedrock_recordings() -> None:
    assert len(CAPTURES) >= 8
    for capture in CAPTURES:
        assert (CORPUS / capture["file"]).is_file()
        assert Path(capture["file"]).parent.name == "bedrock"


# --- headers and payloads ---------------------------------------------------------------------------------------


def test_every_header_type_and_its_extremes(scanner: ModuleType) -> None:
    some_uuid = uuid.UUID("01234567-89ab-cdef-0123-456789abcdef")
    headers: list[tuple[str, Any]] = [
        ("t", True),
        ("f", False),
        ("b-", (2, -128)),
        ("b+", (2, 127)),
        ("s-", (3, -32768)),
        ("s+", (3, 32767)),
        ("i-", (4, -(2**31))),
        ("i+", (4, 2**31 - 1)),
        ("l-", (5, -(2**63))),
        ("l+", (5, 2**63 - 1)),
        ("ts", (8, 1_700_000_000_123)),
        ("ts-", (8, -1)),
        ("bytes", b"\x00\xff\x80"),
        ("no-bytes", b""),
        ("str", "h\u00e9 \U0001f642"),
        ("no-str", ""),
        ("uuid", some_uuid),
        ("", "an empty name"),
        ("n" * 255, "the longest name"),
    ]
    [message] = at_every_split(scanner, encode_message(headers, b"body"))
    assert message[4] == (
        ("t", "bool", True),
        ("f", "bool", False),
        ("b-", "int", -128),
        ("b+", "int", 127),
        ("s-", "int", -32768),
        ("s+", "int", 32767),
        ("i-", "int", -(2**31)),
        ("i+", "int", 2**31 - 1),
        ("l-", "int", -(2**63)),
        ("l+", "int", 2**63 - 1),
        ("ts", "int", 1_700_000_000_123),
        ("ts-", "int", -1),
        ("bytes", "bytes", b"\x00\xff\x80"),
        ("no-bytes", "bytes", b""),
        ("str", "str", "h\u00e9 \U0001f642"),
        ("no-str", "str", ""),
        ("uuid", "bytes", some_uuid.bytes),
        ("", "str", "an empty name"),
        ("n" * 255, "str", "the longest name"),
    )
    assert message[5] == b"body" and message[0] is None and message[6:] == (None, None)
    longest: dict[str, Any] = {"bytes": b"z" * 65535, "str": "\u00e9" * 30000 + "x"}
    for size in (None, 4093, 1000):
        [message] = parse(scanner.EventStreamParser(), chunked(encode_message(longest, b"body"), size))
        assert message[4] == (("bytes", "bytes", longest["bytes"]), ("str", "str", longest["str"]))


def test_invalid_utf8_is_replaced_in_data_and_strings_but_the_payload_is_exact(scanner: ModuleType) -> None:
    raw = b'{"t":"\xff\xe2\x82"}\xc3'
    block = b"\x02n\xff\x07\x00\x02\xe9x" + encode_headers({":event-type": "chunk"})
    [message] = scanner.EventStreamParser().feed(framed(block, raw))
    assert message.payload == raw
    assert message.data == raw.decode("utf-8", "replace") == '{"t":"\ufffd\ufffd"}\ufffd'
    assert message.headers == {"n\ufffd": "\ufffdx", ":event-type": "chunk"}
    assert message.event == "chunk"


def test_many_messages_sharing_header_blocks_keep_their_own_headers(scanner: ModuleType) -> None:
    """Header blocks and strings repeat from message to message (both twins keep the last few parsed): each message
    still gets its own headers dict, right after more distinct blocks than are kept."""
    names = [f"e{i}" for i in range(20)]
    stream = b"".join(event(name, {"i": i}) for i, name in enumerate(names * 3))
    messages = scanner.EventStreamParser().feed(stream)
    assert [m.event for m in messages] == names * 3
    assert [m.headers[":event-type"] for m in messages] == names * 3
    messages[0].headers["mine"] = 1
    assert "mine" not in messages[20].headers
    assert messages[20].headers == {":event-type": "e0", ":content-type": "application/json", ":message-type": "event"}


@pytest.mark.parametrize(
    ("headers", "name", "message_type", "content_type"),
    [
        (
            {":event-type": "chunk", ":message-type": "event", ":content-type": "text/plain"},
            "chunk",
            "event",
            "text/plain",
        ),
        ({":event-type": "chunk"}, "chunk", None, None),
        ({":exception-type": "throttled", ":message-type": "exception"}, "throttled", "exception", None),
        (
            {":event-type": "x", ":exception-type": "invalid", ":message-type": "exception"},
            "invalid",
            "exception",
            None,
        ),
        (
            {":error-code": "InternalFailure", ":error-message": "boom", ":message-type": "error"},
            "InternalFailure",
            "error",
            None,
        ),
        ({":exception-type": "e", ":message-type": "error"}, None, "error", None),  # an error is named by its code
        ({":event-type": "x", ":message-type": "other"}, "x", "other", None),
        ({":event-type": "x", ":message-type": ""}, "x", "", None),
        ({":event-type": "x", ":message-type": (4, 1)}, "x", None, None),  # not a string: no message type
        ({":event-type": b"chunk", ":content-type": (4, 7)}, None, None, None),  # nor a name, nor a content type
        ({}, None, None, None),
    ],
)
def test_the_message_type_names_the_event(
    scanner: ModuleType, headers: dict[str, Any], name: Optional[str], message_type: Any, content_type: Any
) -> None:
    [message] = scanner.EventStreamParser().feed(encode_message(headers, b"{}"))
    assert (message.event, message.message_type, message.content_type) == (name, message_type, content_type)
    assert message.id is None and message.retry is None and message.json() == {}


def test_the_test_encoders_exception_message(scanner: ModuleType) -> None:
    [message] = scanner.EventStreamParser().feed(exception("modelStreamErrorException", "bad model output"))
    assert (message.event, message.message_type, message.content_type) == (
        "modelStreamErrorException",
        "exception",
        "application/json",
    )
    assert message.json() == {"message": "bad model output"}


# --- framing errors ---------------------------------------------------------------------------------------------


def _overruns() -> list[bytes]:
    """Header blocks that run past their length, one per place a header can be cut."""
    good = encode_headers({"a": "b"})
    return [
        b"\x05ab",  # the name
        b"\x01a",  # the type byte
        b"\x01a\x02",  # a byte
        b"\x01a\x03\x00",  # a short
        b"\x01a\x04\x00\x00\x00",  # an integer
        b"\x01a\x05" + b"\x00" * 7,  # a long
        b"\x01a\x08" + b"\x00" * 7,  # a timestamp
        b"\x01a\x06\x00",  # a byte array's length
        b"\x01a\x06\x00\x05abcd",  # a byte array
        b"\x01a\x07\x00",  # a string's length
        good + b"\x01a\x07\x00\x03ab",  # a string, after a good header
        b"\x01a\x09" + b"\x00" * 15,  # a uuid
    ]


@pytest.mark.parametrize("block", _overruns())
def test_headers_that_overrun_their_length(scanner: ModuleType, block: bytes) -> None:
    error = failure(scanner.EventStreamParser(), FIRST + framed(block, b"payload"))
    assert isinstance(error, FramingError)
    assert str(error) == f"event-stream message at offset {len(FIRST)}: its headers run past their length"


@pytest.mark.parametrize("kind", [10, 11, 100, 255])
def test_a_header_type_that_does_not_exist(scanner: ModuleType, kind: int) -> None:
    bad = encode_message([("good", "x"), ("bad", (kind, b"\x00\x00\x00\x00"))], b"{}")
    error = failure(scanner.EventStreamParser(), FIRST + SECOND + bad)
    assert isinstance(error, FramingError)
    offset = len(FIRST) + len(SECOND)
    assert str(error) == f"event-stream message at offset {offset}: header 'bad' has type {kind}, which does not exist"


def test_a_header_given_twice(scanner: ModuleType) -> None:
    twice: list[list[tuple[str, Any]]] = [[("a", "x"), ("a", "x")], [("a", True), ("b", 1), ("a", (5, 2))]]
    for pairs in twice:
        error = failure(scanner.EventStreamParser(), FIRST + encode_message(pairs))
        assert isinstance(error, FramingError)
        assert str(error) == f"event-stream message at offset {len(FIRST)}: header 'a' appears twice"
    # two names whose invalid UTF-8 decodes to the same text are the same header
    block = b"\x01\xff\x00\x01\xfe\x00"
    assert "header '\ufffd' appears twice" in str(failure(scanner.EventStreamParser(), framed(block)))


def test_crc_mismatches_name_the_message_and_both_crcs(scanner: ModuleType) -> None:
    second = flip(SECOND, 8)  # the prelude CRC
    computed = zlib.crc32(second[:8])
    error = failure(scanner.EventStreamParser(), FIRST + second)
    assert str(error) == (
        f"event-stream prelude CRC mismatch at offset {len(FIRST)}: computed 0x{computed:08x}, "
        f"the message says 0x{struct.unpack('>I', second[8:12])[0]:08x}"
    )
    for at in (4, 12, len(SECOND) - 5, len(SECOND) - 1):  # headers length, headers, payload, message CRC
        second = flip(SECOND, at)
        error = failure(scanner.EventStreamParser(), FIRST + second)
        assert isinstance(error, FramingError)
        if at == 4:
            assert str(error).startswith(f"event-stream prelude CRC mismatch at offset {len(FIRST)}: ")
            continue
        computed = zlib.crc32(second[:-4])
        assert str(error) == (
            f"event-stream message CRC mismatch at offset {len(FIRST)}: computed 0x{computed:08x}, "
            f"the message says 0x{struct.unpack('>I', second[-4:])[0]:08x}"
        )


@pytest.mark.parametrize(("total", "headers"), [(0, 0), (15, 0), (16, 1), (30, 15), (0xFFFFFFFF, 0xFFFFFFF0)])
def test_a_corrupt_length_is_refused_from_the_prelude(scanner: ModuleType, total: int, headers: int) -> None:
    parser = scanner.EventStreamParser()
    assert parser.feed(FIRST + prelude(total, headers)[:11]) != []
    with pytest.raises(FramingError) as info:
        parser.feed(prelude(total, headers)[11:])
    assert str(info.value) == (
        f"event-stream message at offset {len(FIRST)} has a corrupt length: {total} bytes in all, "
        f"{headers} bytes of headers"
    )


def test_messages_before_a_bad_one_are_returned_and_the_error_comes_next(scanner: ModuleType) -> None:
    good = parse(scanner.EventStreamParser(), [FIRST + SECOND])
    bad = flip(SECOND, len(SECOND) - 1)
    for chunks in ([FIRST + SECOND + bad], [FIRST, SECOND + bad + FIRST], [FIRST + SECOND + bad[:20], bad[20:]]):
        parser = scanner.EventStreamParser()
        got: list[Any] = []
        error: Optional[Exception] = None
        for chunk in [*chunks, b""]:
            try:
                got += parser.feed(chunk)
            except FramingError as exc:
                error = exc
                break
        assert [key(m) for m in got] == good
        assert parser.events_parsed == 2
        assert str(error).startswith(f"event-stream message CRC mismatch at offset {len(FIRST) + len(SECOND)}:")
        with pytest.raises(FramingError) as again:
            parser.close()
        assert again.value is error


def test_the_offset_counts_every_message_before(scanner: ModuleType) -> None:
    stream = b"".join(event("e", {"i": i, "pad": "x" * i}) for i in range(50))
    bad = framed(b"\x01a\x0a")
    for size in (None, 1, 13, 4096):
        parser = scanner.EventStreamParser()
        with pytest.raises(FramingError, match=f"at offset {len(stream)}: header 'a' has type 10"):
            parse(parser, chunked(stream + bad, size))
        assert parser.events_parsed == 50


# --- limits -----------------------------------------------------------------------------------------------------


def test_headers_up_to_128_kib_and_not_one_byte_more(scanner: ModuleType) -> None:
    block = encode_headers({"a": b"x" * 65535, "b": b"y" * (MAX_HEADERS - 65535 - 10)})
    assert len(block) == MAX_HEADERS == scanner.MAX_HEADERS_LENGTH
    [message] = scanner.EventStreamParser().feed(framed(block, b"p"))
    assert len(message.headers["b"]) == MAX_HEADERS - 65545 and message.payload == b"p"
    parser = scanner.EventStreamParser()
    with pytest.raises(FramingError) as info:  # the prelude alone: nothing of the headers was sent
        parser.feed(prelude(16 + MAX_HEADERS + 1, MAX_HEADERS + 1))
    assert str(info.value) == (
        f"event-stream message at offset 0: {MAX_HEADERS + 1} bytes of headers exceed the limit ({MAX_HEADERS} bytes)"
    )
    assert parser.bytes_fed == 12


def test_a_payload_over_16_mib_is_refused_from_the_prelude(scanner: ModuleType) -> None:
    assert scanner.MAX_PAYLOAD_LENGTH == MAX_PAYLOAD
    parser = scanner.EventStreamParser()
    assert parser.feed(FIRST) != []
    with pytest.raises(FramingError) as info:
        parser.feed(prelude(16 + 10 + MAX_PAYLOAD + 1, 10))
    assert str(info.value) == (
        f"event-stream message at offset {len(FIRST)}: a payload of {MAX_PAYLOAD + 1} bytes exceeds the limit "
        f"({MAX_PAYLOAD} bytes)"
    )
    at_limit = scanner.EventStreamParser()  # exactly 16 MiB is allowed: the parser waits for the body
    assert at_limit.feed(prelude(16 + MAX_PAYLOAD, 0)) == []
    with pytest.raises(StreamTruncated, match=f"offset 0 \\(12 bytes of {16 + MAX_PAYLOAD} bytes\\)"):
        at_limit.close()


def test_a_message_over_max_buffer_is_refused_from_its_prelude(scanner: ModuleType) -> None:
    message = event("e", {"text": "x" * 60})
    parser = scanner.EventStreamParser(max_buffer=len(message))
    assert len(parser.feed(message + message)) == 2  # exactly max_buffer fits
    bigger = event("e", {"text": "x" * 61})
    says = f"an event-stream message exceeds max_buffer \\({len(message)} bytes\\)"
    parser = scanner.EventStreamParser(max_buffer=len(message))
    with pytest.raises(SSEBufferOverflow, match=says):
        parser.feed(bigger)
    with pytest.raises(SSEBufferOverflow, match=says):
        parser.feed(message)  # stays failed
    parser = scanner.EventStreamParser(max_buffer=len(message))
    assert [parser.feed(bigger[i : i + 1]) for i in range(11)] == [[]] * 11
    with pytest.raises(SSEBufferOverflow, match=says):  # refused from its prelude: the body never held
        parser.feed(bigger[11:12])
    assert parser.bytes_fed == 12
    parser = scanner.EventStreamParser(max_buffer=len(message))
    assert [m.event for m in parser.feed(message + bigger)] == ["e"]  # the message before is returned
    with pytest.raises(SSEBufferOverflow):
        parser.close()
    with pytest.raises(SSEwireError, match="positive"):
        scanner.EventStreamParser(0)


# --- the end of the stream --------------------------------------------------------------------------------------


def test_close_inside_a_prelude_or_a_message_raises_stream_truncated(scanner: ModuleType) -> None:
    for cut, says in (
        (5, "(5 bytes of its 12-byte prelude)"),
        (12, f"(12 bytes of {len(SECOND)} bytes)"),
        (len(SECOND) - 1, f"({len(SECOND) - 1} bytes of {len(SECOND)} bytes)"),
    ):
        for chunks in ([FIRST + SECOND[:cut]], chunked(FIRST + SECOND[:cut], 3)):
            parser = scanner.EventStreamParser()
            got: list[Any] = []
            for chunk in chunks:
                got += parser.feed(chunk)
            assert [m.event for m in got] == ["messageStart"]
            with pytest.raises(StreamTruncated) as info:
                parser.close()
            assert str(info.value) == (f"the body ended inside an event-stream message at offset {len(FIRST)} {says}")
            for call in (parser.close, lambda p=parser: p.feed(SECOND)):
                with pytest.raises(StreamTruncated) as again:
                    call()
                assert again.value is info.value


def test_a_clean_end_and_calls_after_close(scanner: ModuleType) -> None:
    parser = scanner.EventStreamParser()
    assert scanner.EventStreamParser().close() == []  # an empty body is a clean end
    assert len(parser.feed(FIRST + SECOND)) == 2
    assert parser.close() == []
    assert parser.close() == []
    with pytest.raises(SSEwireError, match=r"feed\(\) called after close\(\)"):
        parser.feed(FIRST)
    assert (parser.events_parsed, parser.bytes_fed) == (2, len(FIRST + SECOND))


# --- chunks -----------------------------------------------------------------------------------------------------


def test_bytes_bytearray_and_memoryview_chunks(scanner: ModuleType) -> None:
    stream = FIRST + SECOND + exception("throttlingException", "slow down") + FIRST
    expected = parse(scanner.EventStreamParser(), [stream])
    assert [m[0] for m in expected] == ["messageStart", "contentBlockDelta", "throttlingException", "messageStart"]
    for kind in range(5):  # bytes, bytearray, memoryview, non-contiguous memoryview, memoryview cast to "H"
        for size in (None, 1, 2, 10, 12, 16, 64):
            chunks = [as_buffer_type(c, kind) for c in chunked(stream, size)]
            assert parse(scanner.EventStreamParser(), chunks) == expected, (kind, size)
    with pytest.raises(TypeError):
        scanner.EventStreamParser().feed("text")


def test_empty_chunks_change_nothing(scanner: ModuleType) -> None:
    stream = FIRST + SECOND
    parser = scanner.EventStreamParser()
    got: list[Any] = []
    for i in range(len(stream)):
        assert parser.feed(b"") == []
        got += parser.feed(stream[i : i + 1])
        got += parser.feed(bytearray())
    assert [key(m) for m in got] == parse(scanner.EventStreamParser(), [stream])
    assert parser.bytes_fed == len(stream)


def test_a_600_kb_message_in_chunks_over_256_kib(scanner: ModuleType) -> None:
    big = bytes(range(256)) * 2400  # 614,400 bytes: three 256 KiB windows
    stream = FIRST + encode_message({":event-type": "big", ":message-type": "event"}, big) + SECOND
    for size in (None, 300_000, 100_000, 4093):
        parser = scanner.EventStreamParser()
        messages: list[Any] = []
        for chunk in chunked(stream, size):
            messages += parser.feed(memoryview(chunk))
        messages += parser.close()
        assert [m.event for m in messages] == ["messageStart", "big", "contentBlockDelta"]
        assert messages[1].payload == big and messages[1].data == big.decode("utf-8", "replace")
        assert parser.bytes_fed == len(stream)
    parser = scanner.EventStreamParser()
    assert [m.event for m in parser.feed(FIRST + flip(stream[len(FIRST) :], 300_000))] == ["messageStart"]
    with pytest.raises(FramingError, match=f"message CRC mismatch at offset {len(FIRST)}"):
        parser.feed(b"")


# --- the message type -------------------------------------------------------------------------------------------


def test_message_repr_copy_and_pickle(scanner: ModuleType) -> None:
    [message] = scanner.EventStreamParser().feed(
        encode_message({":event-type": "chunk", ":message-type": "event", ":content-type": "json", "n": 3}, b'"x"')
    )
    assert repr(message) == "EventStreamMessage(event='chunk', message_type='event', content_type='json', data='\"x\"')"
    for clone in (copy.copy(message), copy.deepcopy(message), pickle.loads(pickle.dumps(message))):
        assert type(clone) is type(message)
        assert clone == message and key(clone) == key(message)
        assert hash(clone) == hash(message)
    headers = {":event-type": "chunk", ":message-type": "event", ":content-type": "json", "n": 3}
    built = scanner.EventStreamMessage("chunk", '"x"', headers, b'"x"', "event", "json")
    assert built == message and key(built) == key(message)
    default = scanner.EventStreamMessage()
    assert key(default) == (None, "", None, None, (), b"", None, None)
    for field, value in (("headers", {}), ("payload", b'"y"'), ("message_type", None), ("event", "other")):
        other = copy.copy(message)
        setattr(other, field, value)
        assert other != message and message != other


@needs_compiled
def test_messages_compare_equal_across_implementations() -> None:
    assert COMPILED is not None
    stream = FIRST + exception("throttlingException", "slow") + encode_message({"u": uuid.uuid4(), "t": True}, b"\xff")
    py = _scanner_py.EventStreamParser().feed(stream)
    c = COMPILED.EventStreamParser().feed(stream)
    assert len(py) == len(c) == 3
    for a, b in zip(py, c):
        assert type(a) is _scanner_py.EventStreamMessage and type(b) is COMPILED.EventStreamMessage
        assert a == b and b == a
        assert (a != b) is False and (b != a) is False
        assert hash(a) == hash(b) and repr(a) == repr(b) and key(a) == key(b)
        assert pickle.loads(pickle.dumps(b)) == a
    assert py[0] != c[1] and c[1] != py[0]
    assert len({*py, *c}) == 3


# --- the framing registry ---------------------------------------------------------------------------------------


def test_the_framing_is_registered() -> None:
    for content_type in (
        "application/vnd.amazon.eventstream",
        "Application/VND.Amazon.EventStream; charset=binary",
        " application/vnd.amazon.eventstream ;x=y",
    ):
        assert framing_for_content_type(content_type) == "aws-eventstream"
    scanner = make_scanner("aws-eventstream", max_buffer=1000)
    assert type(scanner) is EventStreamParser and scanner.max_buffer == 1000  # type: ignore[attr-defined]
    stream = FIRST + SECOND
    assert [e.event for e in iter_events([stream], "aws-eventstream")] == ["messageStart", "contentBlockDelta"]


def test_auto_recognises_an_event_stream_at_any_split() -> None:
    stream = FIRST + SECOND + exception("throttlingException", "slow")
    expected = [key(m) for m in EventStreamParser().feed(stream)]
    for cut in [*range(30), len(FIRST), len(FIRST) + 5, len(stream)]:
        auto = AutoScanner()
        got = auto.feed(stream[:cut])
        if cut < 12:
            assert auto.framing is None and got == []  # not yet told: the prelude's CRC decides
        got += auto.feed(stream[cut:]) + auto.close()
        assert auto.framing == "aws-eventstream"
        assert [key(m) for m in got] == expected
    auto = AutoScanner()
    got = []
    for chunk in chunked(stream, 1):
        got += auto.feed(chunk)
    assert auto.framing == "aws-eventstream" and [key(m) for m in got] == expected


@pytest.mark.parametrize(
    ("body", "framing"),
    [
        (b"data: {}\n\n", "sse"),
        (b'{"a":1}\n{"b":2}\n', "ndjson"),
        (b"[{}]", "json_array"),
        (b"\x00\x00\x00\x10" + b"\x00" * 12, "sse"),  # a binary start whose prelude CRC is wrong is not claimed
    ],
)
def test_auto_does_not_claim_other_bodies(body: bytes, framing: str) -> None:
    auto = AutoScanner()
    for chunk in chunked(body, 1):
        auto.feed(chunk)
    auto.close()
    assert auto.framing == framing


@needs_corpus
@pytest.mark.parametrize("capture", CAPTURES[:3], ids=[c["file"] for c in CAPTURES[:3]])
def test_auto_recognises_the_recordings(capture: dict[str, Any]) -> None:
    data = (CORPUS / capture["file"]).read_bytes()
    expected = [key(m) for m in EventStreamParser().feed(data)]
    for cut in range(40):
        auto = AutoScanner()
        got = auto.feed(data[:cut]) + auto.feed(data[cut:]) + auto.close()
        assert auto.framing == "aws-eventstream" and [key(m) for m in got] == expected


@needs_compiled
@pytest.mark.parametrize("clmul", [True, False], ids=["clmul", "tables"])
def test_the_compiled_crc32_is_zlibs_on_both_paths(clmul: bool) -> None:
    """The carry-less multiply path (where the CPU has it) and the table path give ``zlib.crc32`` for every
    length, alignment and starting value, and messages parse the same on either."""
    assert COMPILED is not None
    rng = random.Random(7)
    data = bytes(rng.getrandbits(8) for _ in range(1200))
    body = b"".join(event("contentBlockDelta", {"delta": {"text": "x" * n}}) for n in range(0, 300, 7))
    try:
        COMPILED._select_crc(clmul)
        for n in range(1100):
            start = n % 5
            assert COMPILED._crc32(data[start : start + n]) == zlib.crc32(data[start : start + n]), n
            assert COMPILED._crc32(data[:n], n) == zlib.crc32(data[:n], n), n
        messages = COMPILED.EventStreamParser().feed(body)
        assert [m.data for m in messages] == [m.data for m in _scanner_py.EventStreamParser().feed(body)]
        corrupt = bytearray(body)
        corrupt[200] ^= 1
        parser = COMPILED.EventStreamParser()
        assert parser.feed(bytes(corrupt))  # the messages before the corrupt one come first
        with pytest.raises(FramingError, match="CRC mismatch"):
            parser.close()
    finally:
        COMPILED._select_crc(True)
