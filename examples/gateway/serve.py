"""Running the gateway with uvicorn: in the foreground (:func:`serve`) or in a background thread
(:class:`BackgroundServer`, what the tests use: a free port on 127.0.0.1, started and stopped by them).

uvicorn's own ``Server`` and ``Date`` headers are off: the gateway forwards the upstream's."""

from __future__ import annotations

import socket
import threading
from typing import Any, Optional

import uvicorn

__all__ = ["BackgroundServer", "config", "serve"]


def config(
    app: Any, host: str = "127.0.0.1", port: int = 8080, log_level: str = "info", own_logging: bool = True
) -> uvicorn.Config:
    """The uvicorn configuration the gateway runs with (``own_logging``: uvicorn sets up the process's logging)."""
    settings: dict[str, Any] = {} if own_logging else {"log_config": None}
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        server_header=False,
        date_header=False,
        lifespan="on",
        **settings,
    )


def serve(app: Any, host: str = "127.0.0.1", port: int = 8080, log_level: str = "info") -> None:
    """Serve ``app`` in the foreground until interrupted."""
    uvicorn.Server(config(app, host, port, log_level)).run()


class BackgroundServer:
    """``with BackgroundServer(app) as server``: ``app`` served on ``server.url`` (127.0.0.1, a free port) from a
    thread of its own until the block ends (then it shuts down: open connections are waited for, 5 s at most).
    The process's logging is left as it is."""

    def __init__(self, app: Any, host: str = "127.0.0.1", log_level: str = "warning") -> None:
        self.host = host
        # IPPROTO_TCP, not 0: asyncio turns Nagle off only on sockets whose proto says TCP (else 40 ms stalls)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, 0))
        self.port: int = self._socket.getsockname()[1]
        settings = config(app, host, self.port, log_level, own_logging=False)
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
