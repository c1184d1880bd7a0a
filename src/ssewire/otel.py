"""OpenTelemetry output in the GenAI semantic conventions: a stream's result on a span, its numbers in metrics.

Extra ``otel`` (``pip install ssewire[otel]``); needs ``opentelemetry-api`` only, and only this module imports it
(``import ssewire`` never does). :func:`set_span_attributes` puts a :class:`~ssewire.StreamResult` (and its
:class:`~ssewire.TapMetrics`) on a span; :class:`GenAIMetrics` records them into the convention's instruments.
Both take a :class:`~ssewire.StreamTap` in place of the result (its ``result`` and ``metrics``).

Two sets of names, chosen with ``conventions=`` (anything else raises :class:`UnknownConventionsError`):

- ``"genai-0.1"`` (the default): **semantic-conventions-genai v0.1.0**, the first standalone release of the GenAI
  conventions (repository ``open-telemetry/semantic-conventions-genai``, on core semantic-conventions v1.45.0).
  Cache writes are ``gen_ai.usage.cache_write.input_tokens``; the metrics are the five ``{token}`` counters
  ``gen_ai.client.inference.usage.input_tokens`` (cached included), ``.output_tokens`` (reasoning included),
  ``.cache_read.input_tokens``, ``.cache_write.input_tokens`` and ``.reasoning.output_tokens``, the two
  per-operation histograms ``gen_ai.client.inference.operation.input_tokens`` / ``.output_tokens``, and the
  histograms ``gen_ai.client.inference.duration``, ``gen_ai.client.inference.time_to_first_chunk`` and
  ``gen_ai.client.inference.time_per_output_chunk``.
- ``"previous"``: core **semantic-conventions v1.41.0**, the last release that held the GenAI conventions (v1.42.0
  to v1.44.0 keep these names, deprecated as moved to the GenAI repository): cache writes are
  ``gen_ai.usage.cache_creation.input_tokens``; the metrics are the ``gen_ai.client.token.usage`` histogram by
  ``gen_ai.token.type`` (``input``, ``output``), ``gen_ai.client.operation.duration``,
  ``gen_ai.client.operation.time_to_first_chunk`` and ``gen_ai.client.operation.time_per_output_chunk``.

The other span attributes are the same in both. On a span only what the stream said is set: a count the provider
did not report, a model it did not name, a timing never seen is left out, never 0; so are ``previous``' token
points. v0.1.0's token instruments are recorded for every operation, failed ones included, with the provider's
count or ``0`` when it reported none, as the convention asks (a 0 adds nothing to a sum): one point on each usage
counter and on each per-operation histogram, the histograms' with ``error.type`` when the stream failed. ssewire's
usage has no per-modality split, so every counter point has ``gen_ai.token.modality`` = ``unknown``, the value the
convention prescribes when the provider does not break usage down by modality. Usage from a stream that ended
early (``Usage.partial``) is marked ``ssewire.usage.partial`` = True on the span and on the token points: the
convention has no such flag, so the name is ssewire's own, not ``gen_ai.*``. A result with an ``error`` gets
``error.type`` (the error's ``type``: ``stream_truncated``, the provider's code such as ``overloaded_error`` or
``throttlingException``; ``_OTHER`` without one) and, on a span, status ERROR.

Cost (no GenAI convention names one, hence ``ssewire.*``, in both sets): with ``cost=`` left None the stream is
priced with :func:`ssewire.cost.price` (``provider=`` passed on); a :class:`~ssewire.cost.Cost` given is used as
is, and ``cost=False`` skips it. A priced stream's span gets ``ssewire.cost.usd`` (``Cost.total`` as a float),
``ssewire.cost.source`` (``reported``: the provider's own figure; ``computed``: from the price table) and, when it
is a partial stream's cost, ``ssewire.cost.partial`` = True. :class:`GenAIMetrics` adds ``Cost.total`` to the
counter ``ssewire.client.inference.cost`` with the token counters' attributes but the modality, plus the source
and the partial flag. Its unit is ``{USD}``: UCUM, which OTel units follow, has no currency unit (``USD`` is not
one), and OTel writes a count of what UCUM does not name as an annotation, like ``{token}``. A stream that
cannot be priced (unknown model, no usage, ``genai-prices`` missing), or any error while pricing, has no cost:
pricing never breaks telemetry. To record a stream on a span and in metrics, price it once and pass ``cost=`` to
both.

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

import logging
from decimal import Decimal
from typing import Literal, NamedTuple, Optional, Protocol, Sequence, Union

try:
    from opentelemetry.metrics import Counter, Histogram, Meter
    from opentelemetry.trace import Span, Status, StatusCode
    from opentelemetry.util.types import Attributes, AttributeValue
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without it
    raise ImportError(
        "ssewire.otel needs opentelemetry-api: install it with pip install 'ssewire[otel]'", name="opentelemetry"
    ) from exc

from .errors import SSEwireError, unknown_name
from .result import StreamResult
from .tap import StreamTap, TapMetrics
from .usage import Usage

__all__ = [
    "CONVENTIONS",
    "COST_METRIC",
    "COST_PARTIAL",
    "COST_SOURCE",
    "COST_USD",
    "DURATION_BUCKETS",
    "PROVIDER_NAMES",
    "TOKEN_BUCKETS",
    "USAGE_PARTIAL",
    "Conventions",
    "GenAIMetrics",
    "UnknownConventionsError",
    "set_span_attributes",
]

_log = logging.getLogger(__name__)

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

#: The convention's advised bucket boundaries for token histograms, 1, 4, 16, 64 ... 67108864 ...
TOKEN_BUCKETS: tuple[float, ...] = tuple(float(4**n) for n in range(14))
#: ... and for the three time histograms, 0.01, 0.02, 0.04 ... 81.92 seconds.
DURATION_BUCKETS: tuple[float, ...] = tuple(round(0.01 * 2**n, 2) for n in range(14))

#: Set to True beside ``gen_ai.usage.*`` values (and on token points) when the counts are partial.
USAGE_PARTIAL = "ssewire.usage.partial"
#: The span attributes of a priced stream: ``Cost.total`` in USD (a float), ``reported`` or ``computed``, and True
#: when the cost is a partial stream's.
COST_USD = "ssewire.cost.usd"
COST_SOURCE = "ssewire.cost.source"
COST_PARTIAL = "ssewire.cost.partial"
#: The counter of what the recorded streams cost, in USD.
COST_METRIC = "ssewire.client.inference.cost"

#: The names to follow: semantic-conventions-genai v0.1.0, or core semantic-conventions v1.41.0 (v1.42-v1.44).
Conventions = Literal["genai-0.1", "previous"]
#: Every ``conventions=`` value, the default first.
CONVENTIONS: tuple[str, ...] = ("genai-0.1", "previous")

Source = Union[StreamResult, StreamTap]


class UnknownConventionsError(SSEwireError):
    """A ``conventions=`` value that is not one of :data:`CONVENTIONS` (the message lists them)."""


class _CostLike(Protocol):
    """What is read from a :class:`ssewire.cost.Cost`."""

    partial: bool

    @property
    def total(self) -> Decimal: ...

    @property
    def source(self) -> str: ...


CostArgument = Union[_CostLike, None, Literal[False]]


class _Names(NamedTuple):
    """The names that differ between two sets of conventions."""

    cache_write: str
    duration: str
    time_to_first_chunk: str
    time_per_output_chunk: str


_NAMES: dict[str, _Names] = {
    "genai-0.1": _Names(
        "gen_ai.usage.cache_write.input_tokens",
        "gen_ai.client.inference.duration",
        "gen_ai.client.inference.time_to_first_chunk",
        "gen_ai.client.inference.time_per_output_chunk",
    ),
    "previous": _Names(
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.client.operation.duration",
        "gen_ai.client.operation.time_to_first_chunk",
        "gen_ai.client.operation.time_per_output_chunk",
    ),
}

#: semantic-conventions-genai v0.1.0's usage counters: (name, the ssewire ``Usage`` field, description).
_USAGE_COUNTERS = (
    (
        "gen_ai.client.inference.usage.input_tokens",
        "input_tokens",
        "The number of input (prompt) tokens used, including cached tokens.",
    ),
    (
        "gen_ai.client.inference.usage.output_tokens",
        "output_tokens",
        "The number of output (completion) tokens used, including reasoning tokens.",
    ),
    (
        "gen_ai.client.inference.usage.cache_read.input_tokens",
        "cached_input_tokens",
        "The number of input tokens served from a provider-managed cache.",
    ),
    (
        "gen_ai.client.inference.usage.cache_write.input_tokens",
        "cache_write_tokens",
        "The number of input tokens written to a provider-managed cache.",
    ),
    (
        "gen_ai.client.inference.usage.reasoning.output_tokens",
        "reasoning_tokens",
        "The number of output tokens used for reasoning.",
    ),
)
#: ... and its per-operation histograms.
_OPERATION_HISTOGRAMS = (
    (
        "gen_ai.client.inference.operation.input_tokens",
        "input_tokens",
        "The number of input (prompt) tokens used per inference operation.",
    ),
    (
        "gen_ai.client.inference.operation.output_tokens",
        "output_tokens",
        "The number of output (completion) tokens used per inference operation.",
    ),
)


def _names(conventions: str) -> _Names:
    try:
        return _NAMES[conventions]
    except (KeyError, TypeError):
        raise UnknownConventionsError(unknown_name("conventions", conventions, _NAMES)) from None


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
    """The ``error.type`` of a failed operation: its error's type; ``failed`` for a response the provider stopped
    as failed without an error object (Cohere's ``ERROR``, a Chat ``finish_reason: "error"``); None otherwise."""
    error = result.error
    if error is None:
        return "failed" if result.stop_reason == "failed" else None
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


def _priced(
    result: StreamResult, cost: CostArgument, provider: Optional[str]
) -> Optional[tuple[float, dict[str, AttributeValue]]]:
    """``cost`` (priced here when None) as its USD total and its other ``ssewire.cost.*`` attributes, or None: when
    it is False, when the stream cannot be priced, or when pricing fails in any way (logged at debug level, never
    raised)."""
    if cost is False:
        return None
    try:
        if cost is None:
            from .cost import price

            cost = price(result, provider=None if provider == "auto" else provider)
            if cost is None:
                return None
        total = cost.total
        if total is None:
            return None
        attributes: dict[str, AttributeValue] = {COST_SOURCE: str(cost.source)}
        if cost.partial:
            attributes[COST_PARTIAL] = True
        return float(total), attributes
    except Exception:  # a pricing failure must never break the caller's telemetry
        _log.debug("ssewire.otel: the stream's cost is left out", exc_info=True)
        return None


def set_span_attributes(
    span: Span,
    result: Source,
    metrics: Optional[TapMetrics] = None,
    *,
    provider: Optional[str] = None,
    provider_name: Optional[str] = None,
    operation_name: str = "chat",
    request_stream: bool = True,
    conventions: Conventions = "genai-0.1",
    cost: CostArgument = None,
) -> None:
    """Set the convention's attributes of ``result`` (and ``metrics``) on ``span``: operation and provider name,
    response id and model, finish reasons (the provider's own stop reason, else the unified one), token usage
    (input cached included; cache read and write; output; reasoning), time to first chunk (``request_stream``
    only), ``gen_ai.request.stream`` when ``request_stream``; ``error.type`` and status ERROR for a failed stream;
    ``ssewire.cost.*`` when the stream is priced (see the module docstring for ``conventions`` and ``cost``).
    What is unknown is not set; nothing is done for a span that is not recording. Raises
    :class:`UnknownConventionsError` for an unknown ``conventions``."""
    names = _names(conventions)
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
            (names.cache_write, usage.cache_write_tokens),
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
    priced = _priced(result, cost, provider)
    if priced is not None:
        attributes[COST_USD] = priced[0]
        attributes.update(priced[1])
    span.set_attributes(attributes)
    if result.error is not None:
        message = result.error.get("message")
        span.set_status(Status(StatusCode.ERROR, message if isinstance(message, str) else None))
    elif error_type is not None:
        span.set_status(
            Status(StatusCode.ERROR, f"the provider stopped the response as failed ({result.raw_stop_reason})")
        )


def _histogram(meter: Meter, name: str, unit: str, description: str, buckets: Sequence[float]) -> Histogram:
    """A histogram with the advised bucket boundaries, where the API takes them (opentelemetry-api 1.30 on)."""
    try:
        return meter.create_histogram(name, unit, description, explicit_bucket_boundaries_advisory=buckets)
    except TypeError:
        return meter.create_histogram(name, unit, description)


class GenAIMetrics:
    """The convention's client metrics (``conventions``: see the module docstring) and ssewire's cost counter,
    created once on ``meter``; :meth:`record` adds one stream's points. Raises :class:`UnknownConventionsError`
    for an unknown ``conventions``.

    ``usage`` (the five counters by ``Usage`` field) and ``operation_tokens`` (the two histograms) are filled for
    ``genai-0.1``, ``token_usage`` for ``previous``."""

    __slots__ = (
        "conventions",
        "cost",
        "duration",
        "operation_tokens",
        "time_per_output_chunk",
        "time_to_first_chunk",
        "token_usage",
        "usage",
    )

    def __init__(self, meter: Meter, conventions: Conventions = "genai-0.1") -> None:
        names = _names(conventions)
        self.conventions = conventions
        self.usage: dict[str, Counter] = {}
        self.operation_tokens: dict[str, Histogram] = {}
        self.token_usage: Optional[Histogram] = None
        if conventions == "previous":
            self.token_usage = _histogram(
                meter, "gen_ai.client.token.usage", "{token}", "Number of input and output tokens used.", TOKEN_BUCKETS
            )
        else:
            for name, field, description in _USAGE_COUNTERS:
                self.usage[field] = meter.create_counter(name, "{token}", description)
            for name, field, description in _OPERATION_HISTOGRAMS:
                self.operation_tokens[field] = _histogram(meter, name, "{token}", description, TOKEN_BUCKETS)
        self.duration = _histogram(meter, names.duration, "s", "GenAI inference operation duration.", DURATION_BUCKETS)
        self.time_to_first_chunk = _histogram(
            meter,
            names.time_to_first_chunk,
            "s",
            "Time to receive the first chunk of a streamed response.",
            DURATION_BUCKETS,
        )
        self.time_per_output_chunk = _histogram(
            meter,
            names.time_per_output_chunk,
            "s",
            "Time between output chunks of a streamed response, for each chunk after the first.",
            DURATION_BUCKETS,
        )
        self.cost = meter.create_counter(COST_METRIC, "{USD}", "What the recorded GenAI inference operations cost.")

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
        cost: CostArgument = None,
    ) -> None:
        """Record one stream: its tokens (``genai-0.1``: a point on each usage counter and per-operation
        histogram, the count or 0; ``previous``: an ``input`` and an ``output`` token-usage point, each only when
        reported), the operation's duration (``duration`` seconds, else the time to the stream's end: its terminal
        event, or the tap's close of a failed one), the time to first chunk, one time-per-output-chunk point per
        gap, and its cost when priced (``cost``: see the module docstring). Every point carries the operation and
        provider name, the response model when known and ``attributes`` (e.g. ``gen_ai.request.model``,
        ``server.address``); token points of partial usage carry ``ssewire.usage.partial``; the duration and
        per-operation token points of a failed stream ``error.type``."""
        result, metrics = _unpack(result, metrics)
        common = _common(result, provider, provider_name, operation_name)
        if attributes:
            common.update(attributes)
        error_type = _error_type(result)
        outcome = common if error_type is None else {**common, "error.type": error_type}
        self._record_tokens(result, common, outcome)
        if duration is None and metrics is not None:  # (a failed or cut stream's too: it carries error.type)
            duration = metrics.time_to_end
        if duration is not None:
            self.duration.record(duration, outcome)
        if metrics is not None:
            if metrics.time_to_first_content is not None:
                self.time_to_first_chunk.record(metrics.time_to_first_content, common)
            for gap in metrics.gaps:
                self.time_per_output_chunk.record(gap, common)
        priced = _priced(result, cost, provider)
        if priced is not None:
            self.cost.add(priced[0], {**common, **priced[1]})

    def _record_tokens(
        self, result: StreamResult, common: dict[str, AttributeValue], outcome: dict[str, AttributeValue]
    ) -> None:
        usage = result.usage
        partial = {USAGE_PARTIAL: True} if usage is not None and usage.partial else {}
        if self.token_usage is not None:  # previous: only the counts reported
            if usage is not None:
                for kind, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
                    if count is not None:
                        self.token_usage.record(count, {**common, **partial, "gen_ai.token.type": kind})
            return
        counted = {**common, **partial, "gen_ai.token.modality": "unknown"}
        for field, counter in self.usage.items():
            counter.add(_count(usage, field), counted)
        measured = {**outcome, **partial}
        for field, histogram in self.operation_tokens.items():
            histogram.record(_count(usage, field), measured)


def _count(usage: Optional[Usage], field: str) -> int:
    """The ``Usage`` count ``field`` of ``usage``, 0 when there is no usage or the provider did not report it."""
    value = getattr(usage, field, None)
    return value if isinstance(value, int) else 0
