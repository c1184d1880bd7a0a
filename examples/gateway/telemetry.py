"""OpenTelemetry for the gateway: one CLIENT span per proxied request and the GenAI client metrics, both from
:mod:`ssewire.otel` (imported only when a tracer or meter provider is given: ``pip install ssewire[otel]``)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Optional

from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from ssewire.cost import price
from ssewire.otel import GenAIMetrics, set_span_attributes

from .record import Record

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

__all__ = ["CLIENT_DISCONNECTED", "Telemetry"]

#: Set to True on the span of a request whose client left before the upstream body ended.
CLIENT_DISCONNECTED = "ssewire.gateway.client_disconnected"
_SCOPE = "examples.gateway"


class Telemetry:
    """Spans from ``tracer_provider`` and metrics into ``meter_provider`` (either may be None: not made)."""

    def __init__(
        self, tracer_provider: Optional[TracerProvider] = None, meter_provider: Optional[MeterProvider] = None
    ) -> None:
        self.tracer = None if tracer_provider is None else tracer_provider.get_tracer(_SCOPE)
        self.metrics = None if meter_provider is None else GenAIMetrics(meter_provider.get_meter(_SCOPE))

    def start(self, model: Optional[str], address: Optional[str], port: Optional[int]) -> Optional[Span]:
        """The span of a request that is being sent upstream now (named ``chat <model>``), or None without a
        tracer."""
        if self.tracer is None:
            return None
        attributes: dict[str, AttributeValue] = {"gen_ai.operation.name": "chat"}
        for key, value in (("gen_ai.request.model", model), ("server.address", address), ("server.port", port)):
            if value is not None:
                attributes[key] = value
        name = f"chat {model}" if model else "chat"
        return self.tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)

    def finish(self, span: Optional[Span], record: Record, address: Optional[str], port: Optional[int]) -> None:
        """End ``span`` with the record's ``gen_ai.*`` attributes and record its metrics. An upstream status of
        400 or more with no error in the body gets ``error.type`` = the status code."""
        provider = None if record.provider == "auto" else record.provider
        result = record.result
        error = result.error
        if record.stream is False and record.status < 400 and error is not None and error["type"] == "not_a_stream":
            # A whole JSON answer to a request that asked for none: a success the tap (a stream reader) cannot
            # read, never a failed operation (no usage or response model from it: the example reads streams only).
            result = copy.copy(result)
            result.error = None
        cost = price(result, provider=provider) or False  # priced once, for the span and the metrics
        if span is not None:
            set_span_attributes(
                span,
                result,
                record.metrics,
                provider=provider,
                request_stream=record.stream is not False,
                cost=cost,
            )
            span.set_attribute("http.response.status_code", record.status)
            if record.disconnected:
                span.set_attribute(CLIENT_DISCONNECTED, True)
            if record.status >= 400 and record.result.error is None:
                span.set_attribute("error.type", str(record.status))
                span.set_status(Status(StatusCode.ERROR))
            span.end()
        if self.metrics is not None:
            attributes: dict[str, AttributeValue] = {}
            for key, value in (
                ("gen_ai.request.model", record.model),
                ("server.address", address),
                ("server.port", port),
            ):
                if value is not None:
                    attributes[key] = value
            self.metrics.record(
                result,
                record.metrics,
                duration=record.duration,
                provider=provider,
                attributes=attributes,
                cost=cost,
            )
