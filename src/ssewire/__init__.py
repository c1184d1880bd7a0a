"""ssewire: fast, correct parsing of the streams LLM APIs send.

Scanners frame bytes into events (Server-Sent Events, Gemini's streamed JSON array, JSON lines, AWS event-stream);
normalisers turn each provider's events into one vocabulary (:class:`Unified`). See README.md.

``__all__`` is the core: the entry points, the result and event types, every error a user meets, the ``Literal``
names. The rest has its home in a module -- the normalisers in :mod:`ssewire.normalizers`, the HTTP readers in
:mod:`ssewire.adapters`, the scanners' registry in :mod:`ssewire.framing`, partial JSON in
:mod:`ssewire.partial_json` -- and the names this package exported before 0.2 stay importable from here (the
``from .module import name as name`` lines).
"""

from . import _twins as _twins  # first: its finder loads the compiled build of the modules it lists

# isort: split
from ._scan import IMPLEMENTATION, SSEEvent
from ._scan import EventStreamMessage as EventStreamMessage
from ._scan import EventStreamParser as EventStreamParser
from ._scan import JSONArrayStreamParser as JSONArrayStreamParser
from ._scan import NDJSONParser as NDJSONParser
from ._scan import SSEParser as SSEParser
from ._version import __version__
from .adapters import aiter_response as aiter_response
from .adapters import aiter_response_events as aiter_response_events
from .adapters import iter_response as iter_response
from .adapters import iter_response_events as iter_response_events
from .citations import Citation
from .content_encoding import UnsupportedEncodingError
from .encoders import Encoder
from .errors import (
    BodyTooLarge,
    ChunkTypeError,
    DetectionError,
    FramingError,
    ParserBusyError,
    ResponseStatusError,
    SSEBufferOverflowError,
    SSEwireError,
    StreamTruncatedError,
    UnknownFramingError,
    UnknownProviderError,
    UnsupportedResponseError,
)
from .errors import SSEBufferOverflow as SSEBufferOverflow
from .errors import StreamTruncated as StreamTruncated
from .events import UNIFIED_TYPES as UNIFIED_TYPES
from .events import Unified
from .names import FramingName, ProviderName, TargetName, UnifiedType
from .normalizers import PROVIDERS as PROVIDERS
from .normalizers import AnthropicNormalizer as AnthropicNormalizer
from .normalizers import BedrockAnthropicNormalizer as BedrockAnthropicNormalizer
from .normalizers import BedrockConverseNormalizer as BedrockConverseNormalizer
from .normalizers import ChatCompletionsNormalizer as ChatCompletionsNormalizer
from .normalizers import CohereNormalizer as CohereNormalizer
from .normalizers import GeminiInteractionsNormalizer as GeminiInteractionsNormalizer
from .normalizers import GeminiLiveNormalizer as GeminiLiveNormalizer
from .normalizers import GeminiNormalizer as GeminiNormalizer
from .normalizers import MistralNormalizer as MistralNormalizer
from .normalizers import Normalizer as Normalizer
from .normalizers import OllamaNormalizer as OllamaNormalizer
from .normalizers import OpenAINormalizer as OpenAINormalizer
from .normalizers import OpenAIRealtimeNormalizer as OpenAIRealtimeNormalizer
from .normalizers import XAINormalizer as XAINormalizer
from .normalizers import normalizer_for
from .partial_json import IncrementalJSON as IncrementalJSON
from .partial_json import PartialJSON as PartialJSON
from .partial_json import parse_partial_json as parse_partial_json
from .result import Accumulator as Accumulator
from .result import StreamResult, ToolCall, collect
from .resume import ResumeCursor as ResumeCursor
from .stream import StreamDecoder as StreamDecoder
from .stream import (
    aiter_events,
    aiter_resumable,
    aiter_unified,
    collect_text,
    iter_events,
    iter_resumable,
    iter_unified,
    parse_sse_bytes,
)
from .tap import StreamTap
from .tap import TapMetrics as TapMetrics
from .transcode import atranscode, render, transcode
from .usage import Usage

__all__ = [
    # entry points
    "aiter_events",
    "aiter_resumable",
    "aiter_unified",
    "collect",
    "collect_text",
    "iter_events",
    "iter_resumable",
    "iter_unified",
    "normalizer_for",
    "parse_sse_bytes",
    "StreamTap",
    # writing streams
    "atranscode",
    "Encoder",
    "render",
    "transcode",
    # what they give
    "Citation",
    "SSEEvent",
    "StreamResult",
    "ToolCall",
    "Unified",
    "Usage",
    # every error ssewire raises (all are SSEwireError, a ValueError)
    "BodyTooLarge",
    "ChunkTypeError",
    "DetectionError",
    "FramingError",
    "ParserBusyError",
    "ResponseStatusError",
    "SSEBufferOverflowError",
    "SSEwireError",
    "StreamTruncatedError",
    "UnknownFramingError",
    "UnknownProviderError",
    "UnsupportedEncodingError",
    "UnsupportedResponseError",
    # the names users type
    "FramingName",
    "ProviderName",
    "TargetName",
    "UnifiedType",
    # what is installed
    "IMPLEMENTATION",
    "__version__",
]
