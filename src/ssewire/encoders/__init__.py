"""Encoders: unified events in, one target API's wire bytes out (see :mod:`.base` for the contract).

One module per target, named after the normaliser that reads the same API (``chat``, ``openai``, ``anthropic``,
``gemini``, ``vercel_ui``); :data:`ENCODERS` is the one ordered list of targets, by the provider name ``to=`` takes.
``Encoder(to, **options)`` makes the target's encoder; :func:`ssewire.transcode` drives one from a byte stream.
"""

from __future__ import annotations

from .anthropic import AnthropicEncoder
from .base import Encoder
from .chat import ChatEncoder
from .gemini import GeminiEncoder
from .openai import ResponsesEncoder
from .vercel_ui import VercelUIEncoder

__all__ = [
    "ENCODERS",
    "TARGETS",
    "AnthropicEncoder",
    "ChatEncoder",
    "Encoder",
    "GeminiEncoder",
    "ResponsesEncoder",
    "VercelUIEncoder",
    "encoder_class",
]

#: Every target, by the name ``to=`` takes (the provider name of the API it writes).
ENCODERS: dict[str, type[Encoder]] = {
    cls.to: cls for cls in (ChatEncoder, ResponsesEncoder, AnthropicEncoder, GeminiEncoder, VercelUIEncoder)
}
#: The target names, in order.
TARGETS = tuple(ENCODERS)


def encoder_class(to: str) -> type[Encoder]:
    """The encoder class of target ``to``; ``ValueError`` naming the targets for any other name."""
    cls = ENCODERS.get(to)
    if cls is None:
        raise ValueError(f"no encoder writes {to!r}; the targets are {', '.join(TARGETS)}")
    return cls
