"""Progress display on stderr: one status line rewritten in place on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``progress(message)`` shows ``[elapsed] step/total message``; ``step()`` advances the counter."""

    def __init__(self, total: int, stream: TextIO = sys.stderr) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self._width = 0

    def step(self) -> None:
        self.done += 1

    def __call__(self, message: str) -> None:
        elapsed = time.monotonic() - self.start
        line = f"[{elapsed:6.1f}s {self.done}/{self.total}] {message}"
        if self.tty:
            pad = max(0, self._width - len(line))
            self.stream.write("\r" + line + " " * pad)
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        elapsed = time.monotonic() - self.start
        self.stream.write(f"benchmarks finished in {elapsed:.1f}s\n")
        self.stream.flush()
