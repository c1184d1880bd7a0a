"""Selects the per-stream machinery at import: ``_decoding_c`` (the same source, compiled) when it is built, else
``_decoding_py``; ``SSEWIRE_NO_EXTENSIONS=1`` (and any interpreter but CPython) takes the Python one.
``IMPLEMENTATION`` says which: ``"cython"`` or ``"python"``. Both give the same results; a decoder takes only the
accumulator of its own implementation (the public ones, :class:`ssewire.StreamDecoder`, :class:`ssewire.Accumulator`
and :class:`ssewire.StreamTap`, are always of one implementation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

from ._config import twin
from .framing import Chunk

__all__ = [
    "IMPLEMENTATION",
    "PARSE_EVERY",
    "PARSE_FROM",
    "Accumulator",
    "Piece",
    "StreamDecoder",
    "UnifiedEvents",
    "collect",
    "normalize_decoding",
    "normalize_events",
    "normalize_into",
    "normalize_reading",
    "read_deltas_into",
    "read_run",
    "StreamTap",
    "TapMetrics",
    "service_tier",
]

#: What the unified iterators take: byte chunks of a body, or events an SDK already decoded (dicts, e.g. boto3's
#: Bedrock events), each given to the normaliser's ``frame()``.
Piece = Union[Chunk, dict[str, Any]]


if TYPE_CHECKING:  # what type checkers see: the Python classes, whose stub the compiled module matches
    from ._decoding_py import (
        PARSE_EVERY,
        PARSE_FROM,
        Accumulator,
        StreamDecoder,
        StreamTap,
        TapMetrics,
        UnifiedEvents,
        collect,
        normalize_decoding,
        normalize_events,
        normalize_into,
        normalize_reading,
        read_deltas_into,
        read_run,
        service_tier,
    )

    IMPLEMENTATION = "python"
else:
    _module, IMPLEMENTATION = twin("ssewire", "_decoding")  # the compiled module unless switched off or not built
    Accumulator = _module.Accumulator
    StreamDecoder = _module.StreamDecoder
    UnifiedEvents = _module.UnifiedEvents
    collect = _module.collect
    normalize_decoding = _module.normalize_decoding  # the normaliser's reading loop (see Normalizer.normalize_into)
    normalize_events = _module.normalize_events
    normalize_into = _module.normalize_into
    normalize_reading = _module.normalize_reading
    read_deltas_into = _module.read_deltas_into
    read_run = _module.read_run
    service_tier = _module.service_tier
    StreamTap = _module.StreamTap  # the gateway's tap (public home: ssewire.tap)
    TapMetrics = _module.TapMetrics
    PARSE_EVERY = _module.PARSE_EVERY
    PARSE_FROM = _module.PARSE_FROM
