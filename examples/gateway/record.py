"""What the gateway hands over after each proxied request: a :class:`Record`, to any callable or a :class:`Recorder`."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ssewire import StreamResult, TapMetrics
from ssewire.names import ProviderName

__all__ = ["Record", "RecordCallback", "Recorder"]


@dataclass
class Record:
    """One proxied request, once its response has ended (or the client left).

    ``result`` and ``metrics`` are the tap's (the parsed stream and its timings, seconds from when the request was
    sent upstream); ``disconnected`` is True when the client went away before the stream ended, neither the
    upstream body nor the stream's terminal event had arrived (the upstream was closed then: ``result`` is what had
    arrived, without ``done``; a client that closes right after the terminal event, as the OpenAI SDK does after
    ``[DONE]``, has not left early); ``upstream_error`` names the
    transport error that cut the upstream body (or that kept the gateway from reaching it, ``status`` 502).
    ``provider`` is the ssewire provider the body was read as; ``model`` and ``stream`` come from the request
    body when it is JSON; ``duration`` is the seconds from sending the request upstream to the end."""

    method: str
    path: str
    provider: ProviderName
    status: int
    content_type: Optional[str]
    result: StreamResult
    metrics: TapMetrics
    disconnected: bool
    upstream_error: Optional[str]
    model: Optional[str]
    stream: Optional[bool]
    duration: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (the result's main fields and the metrics)."""
        result = self.result
        return {
            "method": self.method,
            "path": self.path,
            "provider": self.provider,
            "status": self.status,
            "model": self.model,
            "disconnected": self.disconnected,
            "upstream_error": self.upstream_error,
            "duration": self.duration,
            "stop_reason": result.stop_reason,
            "usage": None if result.usage is None else result.usage.to_dict(),
            "usage_provenance": result.usage_provenance,
            "tool_calls": len(result.tool_calls),
            "error": result.error,
            "metrics": self.metrics.to_dict(),
        }


#: What ``create_app(record=...)`` takes: called once per request, on the server's event loop (keep it quick).
RecordCallback = Callable[[Record], None]


class Recorder:
    """A :data:`RecordCallback` that keeps every record; :meth:`wait` blocks (in another thread) until some came."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self._cond = threading.Condition()

    def __call__(self, record: Record) -> None:
        with self._cond:
            self.records.append(record)
            self._cond.notify_all()

    def wait(self, count: int = 1, timeout: float = 5.0) -> list[Record]:
        """The records once there are at least ``count`` of them; raises TimeoutError after ``timeout`` seconds."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.records) >= count, timeout):
                raise TimeoutError(f"{len(self.records)} records after {timeout} s, expected {count}")
            return list(self.records)

    def clear(self) -> None:
        """Forget the records kept so far."""
        with self._cond:
            self.records.clear()
