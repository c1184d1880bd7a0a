"""Command line: ``ssewire FILE --provider P`` prints a recorded stream's unified events as JSON lines.

Reads FILE (``-`` for stdin) in 64 KiB chunks, never whole. Exit status: 0 when the stream ended cleanly, 1 when
it carried an ``error`` event (including ``stream_truncated``), 2 on unreadable input or bad framing.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import BinaryIO, Iterator, Optional, Sequence

from . import IMPLEMENTATION, __version__
from .errors import SSEwireError
from .normalizers.registry import PROVIDERS
from .stream import FRAMINGS, iter_events, iter_unified

__all__ = ["main"]

_CHUNK = 64 * 1024


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            return
        yield chunk


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssewire",
        description="Parse a recorded LLM stream and print its unified events as JSON lines.",
    )
    parser.add_argument("file", help="the recorded response body (SSE or a Gemini JSON array); - for stdin")
    parser.add_argument(
        "--provider", "-p", default="auto", choices=sorted(PROVIDERS), help="whose stream it is (default: detect)"
    )
    parser.add_argument("--framing", "-f", default="auto", choices=FRAMINGS, help="default: detect from the body")
    parser.add_argument("--with-raw", action="store_true", help="include each event's raw provider payload")
    parser.add_argument("--framed", action="store_true", help="print the framed SSE events instead")
    parser.add_argument("--version", action="version", version=f"ssewire {__version__} ({IMPLEMENTATION} scanner)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    framing = args.framing
    out = sys.stdout
    dumps = json.dumps
    saw_error = False
    try:
        stream = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"ssewire: {exc}", file=sys.stderr)
        return 2
    try:
        with stream:
            if args.framed:
                for ev in iter_events(_chunks(stream), framing):
                    out.write(dumps({"event": ev.event, "data": ev.data, "id": ev.id, "retry": ev.retry}) + "\n")
            else:
                for unified in iter_unified(_chunks(stream), args.provider, framing):
                    saw_error = saw_error or unified.type == "error"
                    out.write(dumps(unified.to_dict(with_raw=args.with_raw), ensure_ascii=False) + "\n")
    except SSEwireError as exc:
        print(f"ssewire: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0
    return 1 if saw_error else 0
