"""A one-line progress bar (standard library only): streams done of the total, MB done, MB/s and an estimate of
the time left, redrawn in place on a text stream (stderr) at most every ``interval`` seconds.

The estimate follows bytes when the total size is known (files), else streams (tables); without either total the
line shows what is done and the rate.
"""

from __future__ import annotations

import time
from typing import Callable, Optional, TextIO

__all__ = ["Progress"]


class Progress:
    """Call :meth:`update` with the running totals as often as convenient, :meth:`close` at the end."""

    def __init__(
        self,
        out: TextIO,
        total_streams: Optional[int],
        total_bytes: Optional[int],
        interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out = out
        self.total_streams = total_streams
        self.total_bytes = total_bytes
        self.interval = interval
        self.clock = clock
        self.start = clock()
        self.drawn_at: Optional[float] = None
        self.width = 0

    def update(self, streams: int, size: int) -> None:
        """Redraw for ``streams`` streams and ``size`` bytes done, unless the last redraw was too recent."""
        now = self.clock()
        if self.drawn_at is not None and now - self.drawn_at < self.interval:
            return
        self.drawn_at = now
        self._draw(self.line(streams, size, now - self.start))

    def close(self, streams: int, size: int) -> None:
        """The final line, and the end of it."""
        self._draw(self.line(streams, size, self.clock() - self.start))
        self.out.write("\n")
        self.out.flush()

    def line(self, streams: int, size: int, seconds: float) -> str:
        """What the bar says after ``seconds``."""
        parts = [f"{streams:,}" + ("" if self.total_streams is None else f"/{self.total_streams:,}") + " streams"]
        done = _fraction(streams, self.total_streams)
        by_bytes = _fraction(size, self.total_bytes)
        fraction = by_bytes if by_bytes is not None else done
        if fraction is not None:
            parts.append(f"{100 * fraction:.1f}%")
        parts.append(f"{size / 1e6:,.1f} MB")
        if seconds > 0:
            parts.append(f"{size / seconds / 1e6:,.1f} MB/s")
        if fraction is not None and 0 < fraction < 1 and seconds > 0:
            parts.append(f"ETA {_clock(seconds * (1 - fraction) / fraction)}")
        return "ssewire batch: " + "  ".join(parts)

    def _draw(self, line: str) -> None:
        self.out.write("\r" + line.ljust(self.width))
        self.out.flush()
        self.width = len(line)


def _fraction(done: int, total: Optional[int]) -> Optional[float]:
    if total is None or total <= 0:
        return None
    return min(done / total, 1.0)


def _clock(seconds: float) -> str:
    whole = int(seconds + 0.5)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
