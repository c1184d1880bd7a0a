"""Provider normalisers: framed events in, :class:`~ssewire.Unified` events out."""

from .anthropic import AnthropicNormalizer
from .auto import AutoNormalizer
from .bedrock import BedrockAnthropicNormalizer, BedrockConverseNormalizer
from .chat import ChatCompletionsNormalizer
from .cohere import CohereNormalizer
from .contract import Normalizer
from .gemini import GeminiNormalizer
from .gemini_interactions import GeminiInteractionsNormalizer
from .gemini_live import GeminiLiveNormalizer
from .mistral import MistralNormalizer
from .ollama import OllamaNormalizer
from .openai import OpenAINormalizer
from .realtime import OpenAIRealtimeNormalizer
from .registry import PROVIDERS, normalizer_for
from .vercel_ui import VercelUINormalizer
from .xai import XAINormalizer, XAIResponsesNormalizer

__all__ = [
    "PROVIDERS",
    "AnthropicNormalizer",
    "AutoNormalizer",
    "BedrockAnthropicNormalizer",
    "BedrockConverseNormalizer",
    "ChatCompletionsNormalizer",
    "CohereNormalizer",
    "GeminiInteractionsNormalizer",
    "GeminiLiveNormalizer",
    "GeminiNormalizer",
    "MistralNormalizer",
    "Normalizer",
    "OllamaNormalizer",
    "OpenAINormalizer",
    "OpenAIRealtimeNormalizer",
    "VercelUINormalizer",
    "XAINormalizer",
    "XAIResponsesNormalizer",
    "normalizer_for",
]
