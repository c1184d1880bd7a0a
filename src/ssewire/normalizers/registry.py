"""Provider name -> normaliser class."""

from __future__ import annotations

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
    """A fresh normaliser for one stream of ``provider`` (one of :data:`PROVIDERS`); ``ValueError`` otherwise."""
    try:
        cls = PROVIDERS[provider]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise ValueError(f"unknown provider {provider!r}; expected one of: {known}") from None
    return cls()
