"""An AWS event-stream encoder for tests and fixtures (the inverse of ``EventStreamParser``), written from the
format: prelude (total length, headers length, CRC32 of those 8 bytes), headers, payload, CRC32 of everything
before it; all big-endian."""

from __future__ import annotations

import json
import struct
import uuid
import zlib
from typing import Any, Union

__all__ = ["encode_headers", "encode_message", "event", "exception"]

HeaderValue = Union[bool, int, bytes, str, uuid.UUID, tuple[int, Any]]


def _header_value(value: HeaderValue) -> bytes:
    """One header value with its type byte: ``True``/``False`` (0/1), ``str`` (7), ``bytes`` (6), ``int`` (int32,
    4), a ``uuid.UUID`` (9), or ``(type, value)`` for the other integer types (2 byte, 3 short, 5 long,
    8 timestamp) and to force a type."""
    if isinstance(value, tuple):
        kind, raw = value
        if kind in (6, 7):
            data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
            return bytes([kind]) + struct.pack(">H", len(data)) + data
        if kind in (0, 1):
            return bytes([kind])
        fmt = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}.get(kind)
        if fmt is not None:
            return bytes([kind]) + struct.pack(fmt, raw)
        return bytes([kind]) + bytes(raw)  # a type that does not exist: the bytes as given
    if value is True or value is False:
        return bytes([0 if value else 1])
    if isinstance(value, uuid.UUID):
        return b"\x09" + value.bytes
    if isinstance(value, int):
        return b"\x04" + struct.pack(">i", value)
    if isinstance(value, str):
        data = value.encode("utf-8")
        return b"\x07" + struct.pack(">H", len(data)) + data
    return b"\x06" + struct.pack(">H", len(value)) + bytes(value)


def encode_headers(headers: Union[dict[str, HeaderValue], list[tuple[str, HeaderValue]]]) -> bytes:
    """The header block (a list of pairs may repeat a name)."""
    items = headers.items() if isinstance(headers, dict) else headers
    out = bytearray()
    for name, value in items:
        raw = name.encode("utf-8")
        out += bytes([len(raw)]) + raw + _header_value(value)
    return bytes(out)


def encode_message(
    headers: Union[dict[str, HeaderValue], list[tuple[str, HeaderValue]]], payload: bytes = b""
) -> bytes:
    """One whole message."""
    block = encode_headers(headers)
    total = 12 + len(block) + len(payload) + 4
    prelude = struct.pack(">II", total, len(block))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + block + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(name: str, payload: Any) -> bytes:
    """A Bedrock-style event message: ``:event-type`` ``name``, JSON ``payload`` (a dict is encoded)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return encode_message({":event-type": name, ":content-type": "application/json", ":message-type": "event"}, data)


def exception(name: str, message: str) -> bytes:
    """A Bedrock-style exception message (``:exception-type`` ``name``, payload ``{"message": ...}``)."""
    data = json.dumps({"message": message}).encode("utf-8")
    return encode_message(
        {":exception-type": name, ":content-type": "application/json", ":message-type": "exception"}, data
    )
