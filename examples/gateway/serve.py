"""Running the gateway with uvicorn: in the foreground (:func:`serve`) or in a background thread
(:class:`BackgroundServer`, what the tests use: a free port on 127.0.0.1, started and stopped by them).

uvicorn's own ``Server`` and ``Date`` headers are off: the gateway forwards the upstream's. The server side of
:class:`~examples.gateway.limits.Limits` (``limits=``, else the app's ``app.state.limits``, else the defaults)
bounds each connection: its request head in bytes (``max_head``, h11's incomplete-event bound) and in time
(``head_timeout``, :class:`HeadTimeoutProtocol`: uvicorn has no such timeout), its idle time between requests
(``keep_alive_timeout``) and the connections at once (``max_connections``: uvicorn's ``limit_concurrency``)."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any, Optional

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import DEFAULT_LIMITS, Limits

__all__ = ["BackgroundServer", "HeadTimeoutProtocol", "config", "serve"]


class HeadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a bound on the time a request head takes: ``head_timeout`` seconds from the
    connection's start (its first request) or from the first byte of a later one (between requests uvicorn's
    keep-alive timeout applies); a head not complete by then has its connection closed. One timer per connection,
    armed and cancelled as data arrives (nothing per body chunk)."""

    head_timeout: float = DEFAULT_LIMITS.head_timeout
    _head_timer: Optional[asyncio.TimerHandle] = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        waiting = self.conn.their_state is h11.IDLE  # no complete request head yet
        if waiting and self._head_timer is None and not self.transport.is_closing():
            self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)
        elif not waiting and self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.logger.info("closing a connection whose request head took over %s s", self.head_timeout)
            self.transport.close()


def _protocol(head_timeout: float) -> type[HeadTimeoutProtocol]:
    """:class:`HeadTimeoutProtocol` with ``head_timeout``."""
    return type("HeadTimeoutProtocol", (HeadTimeoutProtocol,), {"head_timeout": head_timeout})


def _limits_of(app: Any, limits: Optional[Limits]) -> Limits:
    """``limits``, else the ones ``create_app`` kept on the app, else the defaults."""
    if limits is not None:
        return limits
    kept = getattr(getattr(app, "state", None), "limits", None)
    return kept if isinstance(kept, Limits) else DEFAULT_LIMITS


def config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8080,
    log_level: str = "info",
    own_logging: bool = True,
    limits: Optional[Limits] = None,
) -> uvicorn.Config:
    """The uvicorn configuration the gateway runs with (``own_logging``: uvicorn sets up the process's logging;
    ``limits``: see the module docstring)."""
    bounds = _limits_of(app, limits)
    settings: dict[str, Any] = {} if own_logging else {"log_config": None}
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        server_header=False,
        date_header=False,
        lifespan="on",
        http=_protocol(bounds.head_timeout),
        h11_max_incomplete_event_size=bounds.max_head,
        timeout_keep_alive=bounds.keep_alive_timeout,  # type: ignore[arg-type]  # a float works (call_later)
        limit_concurrency=bounds.max_connections,
        **settings,
    )


def serve(
    app: Any, host: str = "127.0.0.1", port: int = 8080, log_level: str = "info", limits: Optional[Limits] = None
) -> None:
    """Serve ``app`` in the foreground until interrupted."""
    uvicorn.Server(config(app, host, port, log_level, limits=limits)).run()


class BackgroundServer:
    """``with BackgroundServer(app) as server``: ``app`` served on ``server.url`` (127.0.0.1, a free port) from a
    thread of its own until the block ends (then it shuts down: open connections are waited for, 5 s at most).
    The process's logging is left as it is."""

    def __init__(
        self, app: Any, host: str = "127.0.0.1", log_level: str = "warning", limits: Optional[Limits] = None
    ) -> None:
        self.host = host
        # IPPROTO_TCP, not 0: asyncio turns Nagle off only on sockets whose proto says TCP (else 40 ms stalls)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, 0))
        self.port: int = self._socket.getsockname()[1]
        settings = config(app, host, self.port, log_level, own_logging=False, limits=limits)
        settings.timeout_graceful_shutdown = 5
        self.server = uvicorn.Server(settings)  # off the main thread it installs no signal handlers
        self._thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        """``http://host:port`` (no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> BackgroundServer:
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._socket]}, name="gateway", daemon=True
        )
        self._thread.start()
        for _ in range(1000):
            if self.server.started or not self._thread.is_alive():
                break
            self._thread.join(0.01)
        if not self.server.started:
            raise RuntimeError("the gateway did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self._socket.close()
