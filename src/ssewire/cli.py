"""Command line: ``ssewire [STREAM]`` prints a stream's unified events as JSON lines, as they arrive.

STREAM is a file, ``-`` for stdin, or nothing when stdin is a pipe (``curl -N ... | ssewire``). Input is read as
it becomes available (never whole) and each event is written and flushed as soon as it is complete, so a live
stream prints live. Exit status: 0 when the stream ended cleanly, 1 when it carried an ``error`` event (including
``stream_truncated``), 2 for unreadable input, a body that holds no stream at all (empty, an HTML page, a
non-streaming JSON response ...) or bad framing, 130 when interrupted (Ctrl-C).

``ssewire batch INPUT... --out FILE`` re-parses stored streams at archive scale: see :mod:`ssewire.batch_cli`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
from typing import Any, BinaryIO, Iterator, Optional, Sequence

from . import IMPLEMENTATION, __version__
from ._json import BACKEND
from .errors import SSEwireError
from .events import SSEEvent, Unified
from .framing import FRAMINGS, make_scanner
from .limits import DEFAULT_MAX_BUFFER
from .normalizers.registry import PROVIDERS
from .sniff import describe_body
from .stream import StreamDecoder
from .usage import Usage

__all__ = ["main"]

_READ = 64 * 1024
_HEAD = 64 * 1024  # bytes kept from the start of the input, to say what it is when it holds no stream
_SUFFIXES = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def byte_size(text: str) -> int:
    """A size argument (``--max-buffer``, ``--task-bytes``): bytes, or with a K/M/G (KiB/MiB/GiB) suffix."""
    value = text.strip().lower().removesuffix("ib").removesuffix("b")
    factor = _SUFFIXES.get(value[-1:], 1)
    number = value[:-1] if factor != 1 else value
    try:
        size = int(number) * factor
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (bytes, or with K, M or G)") from None
    if size <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return size


def _version() -> str:
    scanner = IMPLEMENTATION
    if IMPLEMENTATION == "cython":
        from . import _scanner_c

        scanner += f", SIMD {getattr(_scanner_c, 'SIMD', 'none')}"
    return f"ssewire {__version__} (scanner: {scanner}; JSON decoder: {BACKEND})"


def add_provider_options(parser: argparse.ArgumentParser, whose: str, provider_auto: str, framing_auto: str) -> None:
    """``--provider`` / ``-p`` and ``--framing`` / ``-f`` (default ``auto``: what the help says of each)."""
    providers = sorted(PROVIDERS)
    help_provider = f"{whose}: {', '.join(providers)} (default: auto, {provider_auto})"
    parser.add_argument("--provider", "-p", default="auto", choices=providers, metavar="NAME", help=help_provider)
    help_framing = f"{', '.join(FRAMINGS)} (default: auto, {framing_auto})"
    parser.add_argument("--framing", "-f", default="auto", choices=FRAMINGS, metavar="NAME", help=help_framing)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssewire",
        usage="ssewire [STREAM] [--provider NAME] [--framing NAME] [--with-raw] [--framed] [--usage] "
        "[--max-buffer BYTES]\n       ssewire batch INPUT... --out FILE [options]",
        description="Parse an LLM API stream and print its unified events as JSON lines, as they arrive.",
        epilog="Exit status: 0 clean end, 1 the stream carried an error (or was cut short), "
        "2 unreadable input or no stream at all, 130 interrupted. "
        "'ssewire batch INPUT... --out FILE' parses stored streams (files, directories, Parquet or JSONL tables) "
        "into one row each, in Parquet, JSONL or CSV: see 'ssewire batch --help'.",
    )
    parser.add_argument(
        "stream",
        nargs="?",
        metavar="STREAM",
        help="the response body: a file, or - for stdin (the default when stdin is a pipe)",
    )
    add_provider_options(parser, "whose stream it is", "detected from the payloads", "detected from the first bytes")
    parser.add_argument("--with-raw", action="store_true", help="include each event's raw provider payload")
    parser.add_argument("--framed", action="store_true", help="print the framed events instead (SSE fields)")
    parser.add_argument("--usage", action="store_true", help="print the normalised token usage at the end")
    parser.add_argument(
        "--max-buffer",
        type=byte_size,
        default=DEFAULT_MAX_BUFFER,
        metavar="BYTES",
        help=f"largest event accepted (default {DEFAULT_MAX_BUFFER >> 20}M; K, M, G suffixes)",
    )
    parser.add_argument("--version", action="version", version=_version())
    return parser


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    """What is available, as soon as it is: ``read1`` returns after one read of the pipe or file."""
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(_READ)
        if not chunk:
            return
        yield chunk


class _Output:
    """JSON lines to stdout as UTF-8 (non-ASCII written as is in every mode); flushed per line when live."""

    def __init__(self, live: bool) -> None:
        self.out = sys.stdout.buffer
        self.live = live

    def line(self, obj: Any) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n")
        if self.live:
            self.out.flush()


def _event_dict(event: Unified, with_raw: bool) -> dict[str, Any]:
    out = event.to_dict(with_raw=with_raw)
    if event.type == "raw":  # say what it was: the payload's own event name
        raw = event.raw
        if isinstance(raw, dict):
            name = raw.get("type") or raw.get("event_type") or raw.get("event")
            if isinstance(name, str):
                out["event"] = name
    return out


def _is_live(stream: BinaryIO) -> bool:
    """True unless input is a regular file (a pipe, a terminal or a socket delivers as it goes)."""
    try:
        return not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return True


def _no_stream(head: bytes) -> str:
    return f"ssewire: no stream in the input: it is {describe_body(head)}"


_NONE = object()


def _framed_fields(ev: SSEEvent) -> dict[str, Any]:
    """A framed event as printed: the SSE fields, and an event-stream message's type and content type."""
    fields: dict[str, Any] = {"event": ev.event, "data": ev.data, "id": ev.id, "retry": ev.retry}
    message_type = getattr(ev, "message_type", _NONE)
    if message_type is not _NONE:
        fields["message_type"] = message_type
        fields["content_type"] = getattr(ev, "content_type", None)
    return fields


def _run_framed(chunks: Iterator[bytes], args: argparse.Namespace, out: _Output) -> int:
    scanner = make_scanner(args.framing, args.max_buffer)
    head = bytearray()
    count = 0
    for chunk in chunks:
        if len(head) < _HEAD:
            head += chunk[: _HEAD - len(head)]
        for ev in scanner.feed(chunk):
            count += 1
            out.line(_framed_fields(ev))
    for ev in scanner.close():
        count += 1
        out.line(_framed_fields(ev))
    if count == 0:
        print(_no_stream(bytes(head)), file=sys.stderr)
        return 2
    return 0


def _is_truncation(event: Unified) -> bool:
    return event.type == "error" and event.error is not None and event.error.get("type") == "stream_truncated"


def _run_unified(chunks: Iterator[bytes], args: argparse.Namespace, out: _Output) -> int:
    decoder = StreamDecoder(args.provider, args.framing, args.max_buffer)
    kinds: set[str] = set()
    usage: Optional[dict[str, Any]] = None

    def emit(events: list[Unified]) -> None:
        nonlocal usage
        for event in events:
            kinds.add("stream_truncated" if _is_truncation(event) else event.type)
            if event.usage is not None:
                usage = event.usage
            out.line(_event_dict(event, args.with_raw))

    for chunk in chunks:
        emit(decoder.feed(chunk))
    tail = decoder.close()
    kind = _error_kind(tail[-1]) if tail else None
    if kind == "not_a_stream":  # not one event in the input
        print(f"ssewire: no stream in the input: {tail[-1].error['message']}", file=sys.stderr)  # type: ignore[index]
        return 2
    emit(tail)
    if kind == "wrong_provider":
        detected = tail[-1].error["detected_provider"]  # type: ignore[index]
        print(
            f"ssewire: nothing in this stream is a {args.provider} event: it looks like {detected} "
            f"(try --provider {detected}, or --provider auto)",
            file=sys.stderr,
        )
    if args.usage:
        summary = None
        if usage is not None:
            partial = "done" not in kinds or "error" in kinds or "stream_truncated" in kinds
            summary = Usage.from_raw(usage, partial=partial).to_dict()
            if not args.with_raw:
                del summary["raw"]
        out.line({"usage": summary})
    return 1 if kinds & {"error", "stream_truncated"} else 0


def _error_kind(event: Unified) -> Optional[str]:
    """The ``type`` of an ``error`` event's error (None for any other event)."""
    if event.type != "error" or event.error is None:
        return None
    kind = event.error.get("type")
    return kind if isinstance(kind, str) else None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status. ``batch`` first: :func:`ssewire.batch_cli.main`."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "batch":
        from .batch_cli import main as batch

        return batch(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    name = args.stream
    if name is None:
        if sys.stdin.isatty():
            parser.print_usage(sys.stderr)
            print("ssewire: give a STREAM file, or pipe a stream in (STREAM - reads stdin)", file=sys.stderr)
            return 2
        name = "-"
    try:
        stream: BinaryIO = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"ssewire: {exc}", file=sys.stderr)
        return 2
    out = _Output(live=_is_live(stream))
    try:
        with stream:
            chunks = _chunks(stream)
            return _run_framed(chunks, args, out) if args.framed else _run_unified(chunks, args, out)
    except SSEwireError as exc:
        print(f"ssewire: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):  # e.g. piped into head: stop quietly
            _silence_stdout()
            return 0
        print(f"ssewire: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    finally:
        try:
            out.out.flush()
        except (BrokenPipeError, ValueError):
            _silence_stdout()


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's own final flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
