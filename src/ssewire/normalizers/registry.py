"""Provider name -> normaliser class."""

from __future__ import annotations

from ..errors import UnknownProviderError, unknown_name
from ._base import Normalizer
from .anthropic import AnthropicNormalizer
from .auto import AutoNormalizer
from .chat import ChatCompletionsNormalizer
from .gemini import GeminiNormalizer
from .gemini_live import GeminiLiveNormalizer
from .openai import OpenAINormalizer
from .xai import XAINormalizer

__all__ = ["PROVIDERS", "normalizer_for"]

#: Every provider name ``normalizer_for`` accepts, with the class it builds.
PROVIDERS: dict[str, type[Normalizer]] = {
    "openai": OpenAINormalizer,
    "openai-chat": ChatCompletionsNormalizer,
    "anthropic": AnthropicNormalizer,
    "xai": XAINormalizer,
    "gemini": GeminiNormalizer,
    "gemini-live": GeminiLiveNormalizer,
    "auto": AutoNormalizer,
}


def normalizer_for(provider: str) -> Normalizer:
    """A fresh normaliser for one stream of ``provider`` (one of :data:`PROVIDERS`); otherwise
    :class:`~ssewire.errors.UnknownProviderError` (a ``ValueError``) naming the closest known name."""
    try:
        cls = PROVIDERS[provider]
    except (KeyError, TypeError):
        raise UnknownProviderError(unknown_name("provider", provider, PROVIDERS)) from None
    return cls()
