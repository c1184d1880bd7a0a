"""``python -m examples.gateway --upstream URL [--port N]``: the gateway in the foreground, with uvicorn.

Each finished request is logged as one JSON line (``--records``, to stderr): status, stop reason, usage and
provenance, timings. ``--otel-console`` prints spans and GenAI metrics with the OpenTelemetry SDK's console
exporters (``pip install opentelemetry-sdk``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional

from ssewire.names import ProviderName, literal_values

from .app import create_app
from .record import Record
from .serve import serve


def _print_record(record: Record) -> None:
    print(json.dumps(record.to_dict(), default=str), file=sys.stderr, flush=True)


def _console_telemetry() -> dict[str, Any]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    reader = PeriodicExportingMetricReader(ConsoleMetricExporter(), export_interval_millis=10_000)
    return {"tracer_provider": tracer_provider, "meter_provider": MeterProvider(metric_readers=[reader])}


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.gateway", description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="the upstream's base URL, e.g. https://api.openai.com")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument(
        "--provider", default="auto", choices=literal_values(ProviderName), help="default: from the path"
    )
    parser.add_argument("--records", action="store_true", help="log a JSON line per request to stderr")
    parser.add_argument("--otel-console", action="store_true", help="print spans and metrics (opentelemetry-sdk)")
    args = parser.parse_args(argv)
    telemetry = _console_telemetry() if args.otel_console else {}
    record = _print_record if args.records else None
    app = create_app(args.upstream, provider=args.provider, record=record, **telemetry)
    serve(app, args.host, args.port)


if __name__ == "__main__":
    main()
