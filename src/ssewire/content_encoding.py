"""Undo an HTTP ``Content-Encoding`` on a body read raw (a gateway forwarding ``aiter_raw()`` bytes), chunk by
chunk, with output bounded per step: a small compressed chunk never becomes one huge decompressed piece.

``gzip`` (also several members back to back), ``deflate`` (zlib-wrapped or raw, as servers send both) and
``identity`` are decoded with the standard library; ``None`` recognises gzip and zlib-wrapped deflate by their
first two bytes (no text stream starts with them) and passes anything else through. Any other encoding (``br``,
``zstd``) raises :class:`UnsupportedEncodingError`.
"""

from __future__ import annotations

import zlib
from typing import Iterator, Optional, Union

from .errors import SSEwireError

__all__ = ["BodyDecoder", "UnsupportedEncodingError"]

#: Largest decompressed piece produced per step.
PIECE = 64 * 1024
#: Compressed bytes given to the decompressor per step: what it copies back (the input it has not used yet, the
#: bytes after each gzip member) is never more, so a large chunk or one of many members costs time in proportion
#: to its size.
STEP = 4 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_ZLIB_FIRST = b"\x78"  # a zlib stream with a 32 KiB window, then one of its four check bytes (RFC 1950)
_ZLIB_SECOND = frozenset((0x01, 0x5E, 0x9C, 0xDA))
_Chunk = Union[bytes, bytearray, memoryview]


class UnsupportedEncodingError(SSEwireError):
    """A ``Content-Encoding`` the standard library cannot decode (``br``, ``zstd`` ...), or bytes that are not
    what the encoding says."""


class BodyDecoder:
    """Decodes one body's chunks: ``decode(chunk)`` yields the decoded bytes, ``flush()`` the rest at the end.

    ``encoding`` is the ``Content-Encoding`` header (``None``: gzip and zlib-wrapped deflate are recognised by their
    first bytes, anything else passes through unchanged).
    """

    __slots__ = ("_held", "_mode", "_zlib")

    def __init__(self, encoding: Optional[str] = None) -> None:
        name = (encoding or "").strip().lower()
        if name in ("", "identity"):
            self._mode = "sniff" if encoding is None else "identity"
        elif name in ("gzip", "x-gzip"):
            self._mode = "gzip"
        elif name == "deflate":
            self._mode = "deflate"
        else:
            raise UnsupportedEncodingError(f"content encoding {encoding!r} cannot be decoded (gzip, deflate only)")
        self._zlib: Optional[zlib._Decompress] = None
        self._held = b""

    @property
    def encoding(self) -> Optional[str]:
        """``"gzip"``, ``"deflate"`` or ``"identity"``; ``None`` while gzip is still being sniffed."""
        return None if self._mode == "sniff" else self._mode

    def decode(self, chunk: _Chunk) -> Iterator[bytes]:
        """The decoded bytes of ``chunk``, in pieces of at most 64 KiB."""
        if self._mode == "identity":
            if chunk:
                yield bytes(chunk)
            return
        data = self._held + bytes(chunk)
        self._held = b""
        if self._zlib is None:
            if not self._choose(data):
                self._held = data
                return
            if self._mode == "identity":
                if data:
                    yield data
                return
        yield from self._inflate(data)

    def flush(self) -> bytes:
        """What is left at the end of the body (an identity body's held bytes)."""
        held, self._held = self._held, b""
        return held

    def _choose(self, data: bytes) -> bool:
        """Pick the decompressor from the first bytes; False when more bytes are needed."""
        mode = self._mode
        if mode == "sniff":
            if not data or (len(data) < 2 and data[:1] in (_GZIP_MAGIC[:1], _ZLIB_FIRST)):
                return False
            if data.startswith(_GZIP_MAGIC):
                mode = self._mode = "gzip"
            elif data[:1] == _ZLIB_FIRST and data[1] in _ZLIB_SECOND:
                mode = self._mode = "deflate"
            else:
                self._mode = "identity"
                return True
        if mode == "gzip":
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
            return True
        if len(data) < 2:  # deflate: zlib-wrapped (RFC 1950 header) or raw (what some servers send)
            return False
        wrapped = data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return True

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        if len(data) <= STEP:
            yield from self._inflate_step(data)
            return
        view = memoryview(data)
        for start in range(0, len(data), STEP):
            yield from self._inflate_step(view[start : start + STEP])

    def _inflate_step(self, data: _Chunk) -> Iterator[bytes]:
        inflater = self._zlib
        assert inflater is not None
        while True:
            try:
                piece = inflater.decompress(data, PIECE)
            except zlib.error as exc:
                raise UnsupportedEncodingError(f"body is not valid {self._mode} data: {exc}") from None
            if piece:
                yield piece
            if inflater.eof:  # a gzip member ended: another may follow
                data = inflater.unused_data
                if not data:
                    return
                if self._mode != "gzip":  # (bytes after a deflate stream: never read as if they were not there)
                    raise UnsupportedEncodingError(f"body is not valid {self._mode} data: bytes after its end")
                inflater = self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
                continue
            data = inflater.unconsumed_tail
            if not data and len(piece) < PIECE:  # input used up and no output held back
                return
