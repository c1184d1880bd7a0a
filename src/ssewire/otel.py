"""OpenTelemetry output in the GenAI semantic conventions: a stream's result on a span, its numbers in metrics.

Extra ``otel`` (``pip install ssewire[otel]``); needs ``opentelemetry-api`` only, and only this module imports it
(``import ssewire`` never does). :func:`set_span_attributes` puts a :class:`~ssewire.StreamResult` (and its
:class:`~ssewire.TapMetrics`) on a span; :class:`GenAIMetrics` records them into the convention's histograms.
Both take a :class:`~ssewire.StreamTap` in place of the result (its ``result`` and ``metrics``).

Only what the stream said is set: a count the provider did not report, a model it did not name, a timing never
seen is left out, never 0. Usage from a stream that ended early (``Usage.partial``) is marked
``ssewire.usage.partial`` = True: the convention has no such flag, so the name is ssewire's own, not ``gen_ai.*``.
A result with an ``error`` gets ``error.type`` (the error's ``type``: ``stream_truncated``, the provider's code
such as ``overloaded_error`` or ``throttlingException``; ``_OTHER`` without one) and, on a span, status ERROR.

``gen_ai.provider.name`` comes from ``provider_name=`` (taken as is: a gateway that knows better, e.g.
``azure.ai.openai`` or ``gcp.vertex_ai``), else from ``provider=``, the ssewire provider the stream was read as:

- ``openai``, ``openai-chat``, ``openai-realtime``: ``openai``;
- ``anthropic``: ``anthropic``; ``xai``: ``x_ai``; ``mistral``: ``mistral_ai``; ``cohere``: ``cohere``;
- ``gemini``, ``gemini-live``: ``gcp.gen_ai`` (any Google endpoint: the stream does not say whether AI Studio's,
  ``gcp.gemini``, or Vertex AI's, ``gcp.vertex_ai``);
- ``bedrock-converse``, ``bedrock-anthropic``: ``aws.bedrock``;
- ``ollama``: ``ollama`` (not among the convention's well-known values).

Neither given (or ``auto``): left out, as the stream's shape does not name who served it (xAI, Mistral and many
gateways send OpenAI's shapes; Bedrock wraps Anthropic's). The convention requires it: say it.

Timings are :class:`~ssewire.TapMetrics`' (seconds from the tap's creation: create it when the request is sent):
``time_to_first_chunk`` is ``time_to_first_content``, the time to the first chunk that carried output (text,
reasoning, a tool call; not a keep-alive, a ping or ``response.created``), and each gap between two such chunks is
one ``time_per_output_chunk``.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

try:
    from opentelemetry.metrics import Histogram, Meter
    from opentelemetry.trace import Span, Status, StatusCode
    from opentelemetry.util.types import Attributes, AttributeValue
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without it
    raise ImportError(
        "ssewire.otel needs opentelemetry-api: install it with pip install 'ssewire[otel]'", name="opentelemetry"
    ) from exc

from .result import StreamResult
from .tap import StreamTap, TapMetrics

__all__ = [
    "DURATION_BUCKETS",
    "PROVIDER_NAMES",
    "TOKEN_BUCKETS",
    "USAGE_PARTIAL",
    "GenAIMetrics",
    "set_span_attributes",
]

#: ``gen_ai.provider.name`` for each ssewire provider (see the module docstring).
PROVIDER_NAMES: dict[str, str] = {
    "openai": "openai",
    "openai-chat": "openai",
    "openai-realtime": "openai",
    "anthropic": "anthropic",
    "xai": "x_ai",
    "gemini": "gcp.gen_ai",
    "gemini-live": "gcp.gen_ai",
    "mistral": "mistral_ai",
    "cohere": "cohere",
    "bedrock-converse": "aws.bedrock",
    "bedrock-anthropic": "aws.bedrock",
    "ollama": "ollama",
    "vercel-ui": "vercel",  # no convention value: the stream is an AI SDK front end's, whatever model is behind it
}

#: The convention's advised bucket boundaries: ``gen_ai.client.token.usage``, 1, 4, 16 ... 67108864 ...
TOKEN_BUCKETS: tuple[float, ...] = tuple(float(4**n) for n in range(14))
#: ... and the three time histograms, 0.01, 0.02, 0.04 ... 81.92 seconds.
DURATION_BUCKETS: tuple[float, ...] = tuple(round(0.01 * 2**n, 2) for n in range(14))

#: Set to True beside ``gen_ai.usage.*`` values (and on token-usage points) when the counts are partial.
USAGE_PARTIAL = "ssewire.usage.partial"

Source = Union[StreamResult, StreamTap]


def _unpack(source: Source, metrics: Optional[TapMetrics]) -> tuple[StreamResult, Optional[TapMetrics]]:
    if isinstance(source, StreamTap):
        return source.result, source.metrics if metrics is None else metrics
    return source, metrics


def _provider_name(provider: Optional[str], provider_name: Optional[str]) -> Optional[str]:
    if provider_name is not None:
        return provider_name
    if provider is None or provider == "auto":
        return None
    try:
        return PROVIDER_NAMES[provider]
    except KeyError:
        raise ValueError(f"unknown provider {provider!r} (pass provider_name= for a name of your own)") from None


def _error_type(result: StreamResult) -> Optional[str]:
    error = result.error
    if error is None:
        return None
    kind = error.get("type")
    return kind if isinstance(kind, str) and kind else "_OTHER"


def _common(
    result: StreamResult, provider: Optional[str], provider_name: Optional[str], operation_name: str
) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {"gen_ai.operation.name": operation_name}
    name = _provider_name(provider, provider_name)
    if name is not None:
        attributes["gen_ai.provider.name"] = name
    if result.model is not None:
        attributes["gen_ai.response.model"] = result.model
    return attributes


def set_span_attributes(
    span: Span,
    result: Source,
    metrics: Optional[TapMetrics] = None,
    *,
    provider: Optional[str] = None,
    provider_name: Optional[str] = None,
    operation_name: str = "chat",
    request_stream: bool = True,
) -> None:
    """Set the convention's attributes of ``result`` (and ``metrics``) on ``span``: operation and provider name,
    response id and model, finish reasons (the provider's own stop reason, else the unified one), token usage
    (input cached included; cache read and write; output; reasoning), time to first chunk (``request_stream``
    only), ``gen_ai.request.stream`` when ``request_stream``; ``error.type`` and status ERROR for a failed stream.
    What is unknown is not set; nothing is done for a span that is not recording."""
    if not span.is_recording():
        return
    result, metrics = _unpack(result, metrics)
    attributes = _common(result, provider, provider_name, operation_name)
    if result.response_id is not None:
        attributes["gen_ai.response.id"] = result.response_id
    finish_reason = result.raw_stop_reason or result.stop_reason
    if finish_reason is not None:
        attributes["gen_ai.response.finish_reasons"] = [finish_reason]
    if request_stream:
        attributes["gen_ai.request.stream"] = True
        if metrics is not None and metrics.time_to_first_content is not None:
            attributes["gen_ai.response.time_to_first_chunk"] = metrics.time_to_first_content
    usage = result.usage
    if usage is not None:
        counted = False
        for key, value in (
            ("gen_ai.usage.input_tokens", usage.input_tokens),
            ("gen_ai.usage.output_tokens", usage.output_tokens),
            ("gen_ai.usage.cache_read.input_tokens", usage.cached_input_tokens),
            ("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens),
            ("gen_ai.usage.reasoning.output_tokens", usage.reasoning_tokens),
        ):
            if value is not None:
                attributes[key] = value
                counted = True
        if counted and usage.partial:
            attributes[USAGE_PARTIAL] = True
    error_type = _error_type(result)
    if error_type is not None:
        attributes["error.type"] = error_type
    span.set_attributes(attributes)
    if result.error is not None:
        message = result.error.get("message")
        span.set_status(Status(StatusCode.ERROR, message if isinstance(message, str) else None))


def _histogram(meter: Meter, name: str, unit: str, description: str, buckets: Sequence[float]) -> Histogram:
    """A histogram with the advised bucket boundaries, where the API takes them (opentelemetry-api 1.30 on)."""
    try:
        return meter.create_histogram(name, unit, description, explicit_bucket_boundaries_advisory=buckets)
    except TypeError:
        return meter.create_histogram(name, unit, description)


class GenAIMetrics:
    """The convention's client metrics, created once on ``meter``; :meth:`record` adds one stream's points."""

    __slots__ = ("operation_duration", "time_per_output_chunk", "time_to_first_chunk", "token_usage")

    def __init__(self, meter: Meter) -> None:
        self.token_usage = _histogram(
            meter, "gen_ai.client.token.usage", "{token}", "Number of input and output tokens used.", TOKEN_BUCKETS
        )
        self.operation_duration = _histogram(
            meter, "gen_ai.client.operation.duration", "s", "GenAI operation duration.", DURATION_BUCKETS
        )
        self.time_to_first_chunk = _histogram(
            meter,
            "gen_ai.client.operation.time_to_first_chunk",
            "s",
            "Time to receive the first chunk of a streamed response.",
            DURATION_BUCKETS,
        )
        self.time_per_output_chunk = _histogram(
            meter,
            "gen_ai.client.operation.time_per_output_chunk",
            "s",
            "Time between output chunks of a streamed response, for each chunk after the first.",
            DURATION_BUCKETS,
        )

    def record(
        self,
        result: Source,
        metrics: Optional[TapMetrics] = None,
        *,
        duration: Optional[float] = None,
        provider: Optional[str] = None,
        provider_name: Optional[str] = None,
        operation_name: str = "chat",
        attributes: Attributes = None,
    ) -> None:
        """Record one stream: an ``input`` and an ``output`` token-usage point (each only when reported; partial
        counts carry ``ssewire.usage.partial``), the operation's duration (``duration`` seconds, else the time to
        the terminal event; with ``error.type`` when the stream failed), the time to first chunk and one
        time-per-output-chunk point per gap. Every point carries the operation and provider name, the response
        model when known, and ``attributes`` (e.g. ``gen_ai.request.model``, ``server.address``)."""
        result, metrics = _unpack(result, metrics)
        common = _common(result, provider, provider_name, operation_name)
        if attributes:
            common.update(attributes)
        usage = result.usage
        if usage is not None:
            tokens = dict(common)
            if usage.partial:
                tokens[USAGE_PARTIAL] = True
            for kind, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
                if count is not None:
                    self.token_usage.record(count, {**tokens, "gen_ai.token.type": kind})
        if duration is None and metrics is not None:
            duration = metrics.time_to_done
        if duration is not None:
            error_type = _error_type(result)
            outcome = common if error_type is None else {**common, "error.type": error_type}
            self.operation_duration.record(duration, outcome)
        if metrics is not None:
            if metrics.time_to_first_content is not None:
                self.time_to_first_chunk.record(metrics.time_to_first_content, common)
            for gap in metrics.gaps:
                self.time_per_output_chunk.record(gap, common)
