"""A real gateway built on ssewire (extra ``gateway``: Starlette, uvicorn, httpx2 or httpx; not in the wheel): an ASGI
reverse proxy that forwards LLM streams byte for byte while a :class:`ssewire.StreamTap` records each one's result,
usage and timings, optionally exported through :mod:`ssewire.otel`.

- :mod:`.app`: ``create_app(upstream_base_url, ...)``, the proxy;
- :mod:`.limits`: :class:`Limits`, the bounds on each connection and request (body, head, timeouts);
- :mod:`.errors`: the gateway's own errors, in the shape of the route's provider;
- :mod:`.record`: :class:`Record`, what is handed over after each request, and :class:`Recorder`, which keeps them;
- :mod:`.telemetry`: the span and GenAI metrics of each request (OpenTelemetry, only when asked for);
- :mod:`.serve`: uvicorn in the foreground or in a background thread;
- :mod:`.replay`: an upstream that replays recorded streams with realistic pacing, for tests;
- :mod:`.translate`: ``create_translating_app(upstream_base_url, upstream_provider)``, an OpenAI Chat Completions,
  Responses, Anthropic Messages, Gemini and AI SDK UI endpoint in front of an upstream of any provider;
- ``python -m examples.gateway --upstream URL --port N`` runs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import HOP_BY_HOP, PATH_PROVIDERS, create_app, provider_for_path
    from .limits import DEFAULT_LIMITS, Limits
    from .record import Record, RecordCallback, Recorder
    from .translate import create_translating_app

#: Where each name lives: imported when first used, so that ``examples.gateway.replay`` needs no Starlette.
_HOMES = {
    "HOP_BY_HOP": "app",
    "PATH_PROVIDERS": "app",
    "create_app": "app",
    "provider_for_path": "app",
    "DEFAULT_LIMITS": "limits",
    "Limits": "limits",
    "Record": "record",
    "RecordCallback": "record",
    "Recorder": "record",
    "create_translating_app": "translate",
}

__all__ = [
    "DEFAULT_LIMITS",
    "HOP_BY_HOP",
    "PATH_PROVIDERS",
    "Limits",
    "Record",
    "RecordCallback",
    "Recorder",
    "create_app",
    "create_translating_app",
    "provider_for_path",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{home}", __name__), name)
