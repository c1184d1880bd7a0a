"""Chunks of any size, as the scanners read them: in windows of at most 256 KiB, so a 100 MB chunk is never
copied whole. Shared by both scanner implementations (the compiled one uses it only for buffers it cannot read in
place, such as non-contiguous memoryviews), so both raise the same :class:`~ssewire.errors.ChunkTypeError`.
"""

from __future__ import annotations

from typing import Iterator, Union

from ..errors import chunk_type_error

__all__ = ["WINDOW", "windows"]

#: Bytes processed per step of one ``feed()`` call.
WINDOW = 256 * 1024

BytesLike = Union[bytes, bytearray, memoryview]


def _as_bytes(data: BytesLike) -> bytes:
    if type(data) is bytes:
        return data
    if isinstance(data, memoryview) and (data.format != "B" or data.ndim != 1):
        data = data.cast("B")
    return bytes(data)


def windows(data: BytesLike) -> Iterator[bytes]:
    """``data`` as bytes, in pieces of at most ``WINDOW`` bytes, copied one at a time (:class:`ChunkTypeError`,
    saying what to pass, for a chunk that is not bytes-like: one without the buffer protocol, such as a str or a
    list of ints)."""
    if type(data) is bytes and len(data) <= WINDOW:  # (the bulk of a stream)
        yield data
        return
    try:
        view = memoryview(data)
    except TypeError:
        raise chunk_type_error(data) from None
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    n = view.nbytes
    if n <= WINDOW:
        yield _as_bytes(data)
        return
    for i in range(0, n, WINDOW):
        yield bytes(view[i : i + WINDOW])
