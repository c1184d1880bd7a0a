"""What bounds the gateway's time and memory per connection and per request: one :class:`Limits`, read by the app
(request body, upstream timeouts, the tap's inflation bound) and by the server (:mod:`.serve`: request head,
keep-alive, connections).

Every bound is in bytes or seconds; ``None`` turns a timeout (or the connection cap) off."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ssewire.limits import DEFAULT_MAX_INFLATED

__all__ = ["DEFAULT_LIMITS", "Limits"]


@dataclass(frozen=True)
class Limits:
    """The gateway's bounds (defaults fit LLM traffic: large prompts, long silent reasoning, long streams).

    App side (``create_app(limits=...)``):

    - ``max_body``: request body bytes; over it 413 (a ``Content-Length`` over it before a byte is read, a chunked
      upload as soon as the count passes it). Memory per request is bounded by about twice this.
    - ``body_timeout``: seconds to receive the whole request body once its head is in; past it 408.
    - ``idle_timeout``: seconds the upstream may stay silent (waiting for its response head, or between two chunks
      of its body); ``total_timeout``: seconds from sending the request upstream to the end of its body. Past
      either before the head: 504; during the body: the client's stream ends with an error event in the provider's
      shape, and the upstream connection is closed.
    - ``max_inflated``: bytes a compressed upstream body may inflate to in the tap (past it the tap stops parsing
      with a ``body_too_large`` error; the bytes are still forwarded).

    Server side (:mod:`.serve`):

    - ``head_timeout``: seconds a connection may take to send a request head (from its first byte, or from the
      connection's start for the first request); past it the connection is closed.
    - ``keep_alive_timeout``: seconds an idle connection is kept between requests.
    - ``max_head``: bytes of a request head (request line and headers) buffered while it is incomplete (h11's
      bound: a head that arrives whole in one read is bounded by that read); over it 400 and closed.
    - ``max_connections``: connections (and requests) at once; past it uvicorn answers 503.
    """

    max_body: int = 16 << 20
    body_timeout: Optional[float] = 60.0
    idle_timeout: Optional[float] = 120.0
    total_timeout: Optional[float] = 900.0
    max_inflated: int = DEFAULT_MAX_INFLATED
    head_timeout: float = 10.0
    keep_alive_timeout: float = 5.0
    max_head: int = 32 << 10
    max_connections: Optional[int] = 2048


#: The defaults, as one value (what ``create_app`` and :mod:`.serve` use unless given others).
DEFAULT_LIMITS = Limits()
