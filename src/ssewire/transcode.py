"""One provider's stream re-written in another API's wire format: :func:`transcode` and :func:`atranscode`; a
finished stream's result as another API's whole response body: :func:`render`.

Byte chunks of one HTTP body in (any chunking, any provider ssewire reads), the target's bytes out as they are made
(an encoder per stream, see :mod:`ssewire.encoders`): memory is one event of the source and what the target holds
(see each encoder). A source that fails or is cut off ends as the target's error, never as a clean stop.
"""

from __future__ import annotations

from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Optional, Union

from ._decoding import Piece
from .encoders import Encoder, encoder_class
from .encoders.base import dumps, utf8
from .errors import not_one_chunk
from .limits import DEFAULT_MAX_BUFFER, DEFAULT_MAX_INFLATED
from .names import FramingName, ProviderName, TargetName
from .normalizers.contract import Normalizer
from .result import StreamResult
from .stream import StreamDecoder

__all__ = ["atranscode", "render", "transcode"]


class _Writing:
    """One stream read by a decoder and written by an encoder: the pieces each source chunk makes, in order (the
    chunk's text, with the runs of pieces the target made as UTF-8 in their places), and those that end the
    stream."""

    __slots__ = ("decoder", "encoder", "write_all")

    def __init__(
        self,
        provider: Union[ProviderName, Normalizer],
        to: TargetName,
        framing: FramingName,
        max_buffer: int,
        content_encoding: Optional[str],
        max_inflated: int,
        options: dict[str, Any],
    ) -> None:
        self.decoder = StreamDecoder(
            provider, framing, max_buffer=max_buffer, content_encoding=content_encoding, max_inflated=max_inflated
        )
        options.setdefault("source", self.decoder.normalizer)
        self.encoder = encoder_class(to)(**options)
        self.write_all = self.encoder.write_all

    def chunk(self, chunk: Piece) -> Iterable[bytes]:
        """The non-empty pieces one source chunk makes (its text, and the pieces the target made as UTF-8), joined
        into one up to :data:`JOINED_UP_TO` bytes; a chunk the decoder reads in steps (a large or compressed one:
        :meth:`~ssewire.StreamDecoder.feed_steps`) gives them step by step."""
        decoder = self.decoder
        if decoder.stepped(chunk):
            return self._steps(chunk)
        texts = self.write_all(decoder.feed(chunk))
        if not texts:
            return []
        if len(texts) == 1 and not self.encoder.held:  # (one event's text, the most common chunk: no join)
            text = texts[0]
            return [utf8(text)] if text else []
        return few(utf8_pieces(self.encoder, texts))

    def _steps(self, chunk: Piece) -> Iterator[bytes]:
        for events in self.decoder.feed_steps(chunk):
            texts = self.write_all(events)
            if texts:
                yield from few(utf8_pieces(self.encoder, texts))

    def end(self) -> list[bytes]:
        """The non-empty pieces that end the stream (the decoder's last events, then the encoder's end), joined
        into one up to :data:`JOINED_UP_TO` bytes."""
        encoder = self.encoder
        texts = self.write_all(self.decoder.close())
        ending = utf8_pieces(encoder, texts) if texts else []
        return few(ending + encoder.close_pieces())


#: One chunk's pieces are joined into one up to this many bytes (fewer, larger writes); beyond it they are given as
#: they are (the pieces of a Responses done or final event share the bytes of the text they repeat: no copy).
JOINED_UP_TO = 64 * 1024


def few(pieces: list[bytes]) -> list[bytes]:
    """``pieces`` as one piece when there are several of at most :data:`JOINED_UP_TO` bytes in all."""
    if len(pieces) > 1 and sum(map(len, pieces)) <= JOINED_UP_TO:
        return [b"".join(pieces)]
    return pieces


def utf8_pieces(encoder: Encoder, texts: list[str]) -> list[bytes]:
    """The UTF-8 pieces of the texts one chunk's events made (``encoder.pieces`` of them joined; ``texts`` emptied):
    joined first where every one is ASCII (one text of their size), else each encoded on its own (see
    :meth:`~ssewire.encoders.base.Encoder.pieces_each`: one emoji would make the whole join four bytes a character)."""
    if len(texts) == 1 and not encoder.held:  # (one event's text, the most common chunk)
        text = texts.pop()
        return [utf8(text)] if text else []
    if all(map(str.isascii, texts)):
        text = texts[0] if len(texts) == 1 else "".join(texts)
        texts.clear()
        return encoder.pieces(text)
    out = encoder.pieces_each(texts)
    texts.clear()
    return out


def transcode(
    chunks: Iterable[Piece],
    provider: Union[ProviderName, Normalizer],
    to: TargetName,
    framing: FramingName = "auto",
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    content_encoding: Optional[str] = None,
    max_inflated: int = DEFAULT_MAX_INFLATED,
    **options: Any,
) -> Iterator[bytes]:
    """The stream ``chunks`` (read as ``provider`` with ``framing``, as :func:`~ssewire.iter_unified` reads it)
    written as target ``to`` (``openai-chat``, ``openai``, ``anthropic``, ``gemini``, ``vercel-ui``): the bytes each
    source chunk makes, in one piece (in several where they are over 64 KiB and the target made a large part as
    UTF-8: a long run of deltas written in compiled code, the Responses API's done events and final response, which
    share their text's bytes), never an empty one.
    ``options`` go to the target's encoder (``model``, ``response_id``, ``created``; ``include_usage`` for
    ``openai-chat`` ...). Reading errors (framing, over-large events) raise as in :func:`~ssewire.iter_unified`."""
    if isinstance(chunks, (bytes, bytearray, memoryview, str)):
        not_one_chunk(chunks, "transcode")
    writing = _Writing(provider, to, framing, max_buffer, content_encoding, max_inflated, options)
    for chunk in chunks:
        yield from writing.chunk(chunk)
    yield from writing.end()


async def atranscode(
    chunks: AsyncIterable[Piece],
    provider: Union[ProviderName, Normalizer],
    to: TargetName,
    framing: FramingName = "auto",
    *,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    content_encoding: Optional[str] = None,
    max_inflated: int = DEFAULT_MAX_INFLATED,
    **options: Any,
) -> AsyncIterator[bytes]:
    """The async twin of :func:`transcode`: the same bytes from an async iterable of byte chunks."""
    not_one_chunk(chunks, "atranscode")
    writing = _Writing(provider, to, framing, max_buffer, content_encoding, max_inflated, options)
    async for chunk in chunks:
        for piece in writing.chunk(chunk):
            yield piece
    for piece in writing.end():
        yield piece


def render(result: StreamResult, to: TargetName, **options: Any) -> bytes:
    """The non-streaming response body of target ``to`` for a finished stream's :class:`~ssewire.StreamResult`, as
    JSON (a ``chat.completion``, a Responses ``response``, a Messages ``message``, a ``GenerateContentResponse``, a
    UI ``UIMessage``): what a gateway answers ``stream: false`` with from a streaming upstream. A result that
    ended in an error (a cut stream included) gives the target's error body: answer it with an error status.
    ``options`` as for :func:`transcode` (the id and model default to the result's)."""
    return utf8(dumps(Encoder(to, **options).render(result)))
