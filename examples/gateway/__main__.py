"""``python -m examples.gateway --upstream URL [--port N]``: the gateway in the foreground, with uvicorn
(``--translate-from PROVIDER``: the translation routes instead, see :mod:`examples.gateway.translate`).

Each finished request is logged as one JSON line (``--records``, to stderr): status, stop reason, usage and
provenance, timings. ``--otel-console`` prints spans and GenAI metrics with the OpenTelemetry SDK's console
exporters (``pip install opentelemetry-sdk``). Each field of :class:`~examples.gateway.limits.Limits` is an option
(``--max-body BYTES``, ``--idle-timeout SECONDS`` ...; ``none`` turns a timeout off)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any, Callable, Optional

from ssewire.names import ProviderName, literal_values

from .app import create_app
from .limits import DEFAULT_LIMITS, Limits
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


def _optional(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type: ``kind(text)``, or None for ``none`` (a bound turned off)."""

    def parse(text: str) -> Any:
        return None if text.lower() == "none" else kind(text)

    return parse


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.gateway", description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", required=True, help="the upstream's base URL, e.g. https://api.openai.com")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument(
        "--provider", default="auto", choices=literal_values(ProviderName), help="default: from the path"
    )
    parser.add_argument(
        "--translate-from",
        choices=[name for name in literal_values(ProviderName) if name != "auto"],
        help="serve the translation routes (examples.gateway.translate) over an upstream of this provider",
    )
    parser.add_argument("--upstream-path", help="with --translate-from: the upstream path requests go to")
    parser.add_argument("--records", action="store_true", help="log a JSON line per request to stderr")
    parser.add_argument("--otel-console", action="store_true", help="print spans and metrics (opentelemetry-sdk)")
    for field in dataclasses.fields(Limits):
        default = getattr(DEFAULT_LIMITS, field.name)
        kind = int if isinstance(default, int) else float
        parser.add_argument(
            "--" + field.name.replace("_", "-"), type=_optional(kind), default=default, help=f"default: {default}"
        )
    args = parser.parse_args(argv)
    limits = Limits(**{field.name: getattr(args, field.name) for field in dataclasses.fields(Limits)})
    telemetry = _console_telemetry() if args.otel_console else {}
    record = _print_record if args.records else None
    if args.translate_from is not None:
        from .translate import create_translating_app

        upstream_path = args.upstream_path
        app = create_translating_app(args.upstream, args.translate_from, upstream_path=upstream_path, limits=limits)
    else:
        app = create_app(args.upstream, provider=args.provider, record=record, limits=limits, **telemetry)
    serve(app, args.host, args.port, limits=limits)


if __name__ == "__main__":
    main()
