"""ssewire: fast, correct parsing of the streams LLM APIs send.

Scanners frame bytes into events (Server-Sent Events, Gemini's streamed JSON array, JSON lines, AWS event-stream);
normalisers turn each provider's events into one vocabulary (:class:`Unified`). See README.md.
"""

from ._scanner import (
    IMPLEMENTATION,
    EventStreamMessage,
    EventStreamParser,
    JSONArrayStreamParser,
    NDJSONParser,
    SSEEvent,
    SSEParser,
)
from .adapters import aiter_response, aiter_response_events, iter_response, iter_response_events
from .citations import Citation
from .errors import (
    BodyTooLarge,
    DetectionError,
    FramingError,
    ResponseStatusError,
    SSEBufferOverflow,
    SSEwireError,
    StreamTruncated,
)
from .events import UNIFIED_TYPES, Unified
from .normalizers import (
    PROVIDERS,
    AnthropicNormalizer,
    BedrockAnthropicNormalizer,
    BedrockConverseNormalizer,
    ChatCompletionsNormalizer,
    CohereNormalizer,
    GeminiInteractionsNormalizer,
    GeminiLiveNormalizer,
    GeminiNormalizer,
    MistralNormalizer,
    Normalizer,
    OllamaNormalizer,
    OpenAINormalizer,
    OpenAIRealtimeNormalizer,
    XAINormalizer,
    normalizer_for,
)
from .partial_json import IncrementalJSON, PartialJSON, parse_partial_json
from .result import Accumulator, StreamResult, ToolCall, collect
from .resume import ResumeCursor
from .stream import (
    StreamDecoder,
    aiter_events,
    aiter_unified,
    collect_text,
    iter_events,
    iter_resumable,
    iter_unified,
    parse_sse_bytes,
)
from .tap import StreamTap, TapMetrics
from .usage import Usage

__version__ = "0.1.0"

__all__ = [
    "IMPLEMENTATION",
    "PROVIDERS",
    "UNIFIED_TYPES",
    "Accumulator",
    "AnthropicNormalizer",
    "BedrockAnthropicNormalizer",
    "BedrockConverseNormalizer",
    "ChatCompletionsNormalizer",
    "CohereNormalizer",
    "DetectionError",
    "EventStreamMessage",
    "EventStreamParser",
    "FramingError",
    "GeminiInteractionsNormalizer",
    "GeminiLiveNormalizer",
    "GeminiNormalizer",
    "IncrementalJSON",
    "JSONArrayStreamParser",
    "MistralNormalizer",
    "NDJSONParser",
    "Normalizer",
    "OllamaNormalizer",
    "OpenAINormalizer",
    "OpenAIRealtimeNormalizer",
    "PartialJSON",
    "ResumeCursor",
    "ResponseStatusError",
    "BodyTooLarge",
    "Citation",
    "SSEBufferOverflow",
    "SSEEvent",
    "SSEParser",
    "SSEwireError",
    "StreamResult",
    "StreamTap",
    "StreamTruncated",
    "TapMetrics",
    "ToolCall",
    "Unified",
    "Usage",
    "XAINormalizer",
    "__version__",
    "StreamDecoder",
    "aiter_events",
    "aiter_response",
    "aiter_response_events",
    "aiter_unified",
    "collect",
    "collect_text",
    "iter_events",
    "iter_response",
    "iter_response_events",
    "iter_resumable",
    "iter_unified",
    "normalizer_for",
    "parse_partial_json",
    "parse_sse_bytes",
]
