"""Provider normalisers: framed events in, :class:`~ssewire.Unified` events out."""

from .anthropic import AnthropicNormalizer
from .auto import AutoNormalizer
from .chat import ChatCompletionsNormalizer
from .contract import Normalizer
from .gemini import GeminiNormalizer
from .gemini_interactions import GeminiInteractionsNormalizer
from .gemini_live import GeminiLiveNormalizer
from .openai import OpenAINormalizer
from .registry import PROVIDERS, normalizer_for
from .xai import XAINormalizer

__all__ = [
    "PROVIDERS",
    "AnthropicNormalizer",
    "AutoNormalizer",
    "ChatCompletionsNormalizer",
    "GeminiInteractionsNormalizer",
    "GeminiLiveNormalizer",
    "GeminiNormalizer",
    "Normalizer",
    "OpenAINormalizer",
    "XAINormalizer",
    "normalizer_for",
]
