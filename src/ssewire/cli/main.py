"""Command line: ``ssewire [STREAM]`` prints a stream's unified events as JSON lines, as they arrive (``--to TARGET``:
the stream written in another API's wire format instead, see :mod:`ssewire.encoders`).

STREAM is a file, ``-`` for stdin, or nothing when stdin is a pipe (``curl -N ... | ssewire``). Input is read as
it becomes available (never whole) and each event is written and flushed as soon as it is complete, so a live
stream prints live. Exit status: 0 when the stream ended cleanly, 1 when it carried an ``error`` event (including
``stream_truncated``), 2 for unreadable input, a body that holds no stream at all (empty, an HTML page, a
non-streaming JSON response ...) or bad framing, 130 when interrupted (Ctrl-C).

``ssewire batch INPUT... --out FILE`` re-parses stored streams at archive scale: see :mod:`ssewire.batch.command`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
from typing import Any, BinaryIO, Iterator, Optional, Sequence

from .._scan.sniff import describe_body
from ..errors import SSEBufferOverflow, SSEwireError
from ..events import SSEEvent, Unified
from ..framing import make_scanner
from ..limits import DEFAULT_MAX_BUFFER
from ..names import TargetName, literal_values
from ..stream import StreamDecoder
from ..usage import Usage
from .options import add_provider_options, byte_size, version_line

__all__ = ["main"]

_READ = 64 * 1024
_HEAD = 64 * 1024  # bytes kept from the start of the input, to say what it is when it holds no stream


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssewire",
        usage="ssewire [STREAM] [--provider NAME] [--framing NAME] [--with-raw] [--framed] [--usage] "
        "[--to TARGET] [--max-buffer BYTES]\n       ssewire batch INPUT... --out FILE [options]",
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
    parser.add_argument(
        "--to",
        choices=literal_values(TargetName),
        metavar="TARGET",
        help="write the stream in another API's wire format instead: " + ", ".join(literal_values(TargetName)),
    )
    parser.add_argument(
        "--usage", action="store_true", help="print the normalised token usage at the end (with --framed too)"
    )
    parser.add_argument(
        "--max-buffer",
        type=byte_size,
        default=DEFAULT_MAX_BUFFER,
        metavar="BYTES",
        help=f"largest event accepted (default {DEFAULT_MAX_BUFFER >> 20}M; K, M, G suffixes)",
    )
    parser.add_argument("--version", action="version", version=version_line())
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


#: Bedrock Converse's event-stream ``:event-type`` names, told by the member only that event has (the payload is
#: the event's body, without its name).
_CONVERSE_EVENTS = (
    ("role", "messageStart"),
    ("start", "contentBlockStart"),
    ("delta", "contentBlockDelta"),
    ("stopReason", "messageStop"),
    ("metrics", "metadata"),
    ("usage", "metadata"),
    ("contentBlockIndex", "contentBlockStop"),
)


def _raw_name(raw: dict[str, Any], provider: Optional[str]) -> Optional[str]:
    """What a ``raw`` payload is: its own event name (``type``, ``event_type``, ``event``), else for the providers
    whose payloads carry none, the name of what they are: Bedrock Converse's event type, Gemini's
    ``GenerateContentResponse``, Ollama's ``ChatResponse`` / ``GenerateResponse``, Gemini Live's message kind."""
    name = raw.get("type") or raw.get("event_type") or raw.get("event")
    if isinstance(name, str):
        return name
    if provider == "bedrock-converse":
        return next((event for key, event in _CONVERSE_EVENTS if key in raw), None)
    if provider == "gemini":
        return "GenerateContentResponse"
    if provider == "ollama":
        return "ChatResponse" if "message" in raw else "GenerateResponse" if "response" in raw else None
    if provider == "gemini-live":  # a server message is keyed by its kind (setupComplete, serverContent ...)
        return next((key for key in raw if key != "usageMetadata"), None)
    return None


def _provider(decoder: StreamDecoder) -> Optional[str]:
    """The provider the stream is read as (``auto``'s once it has recognised one)."""
    normalizer: Any = decoder.normalizer
    delegate = getattr(normalizer, "delegate", None) if normalizer.provider == "auto" else None
    name = normalizer.provider if delegate is None else delegate.provider
    return name if isinstance(name, str) else None


def _event_dict(event: Unified, with_raw: bool, provider: Optional[str] = None) -> dict[str, Any]:
    out = event.to_dict(with_raw=with_raw)
    if event.type == "raw" and isinstance(event.raw, dict):  # say what it was
        name = _raw_name(event.raw, provider)
        if name is not None:
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
    scanner = make_scanner(args.framing, max_buffer=args.max_buffer)
    usage = _UsageWatch(args) if args.usage else None  # the same bytes through the normaliser, for --usage
    head = bytearray()
    count = 0
    for chunk in chunks:
        if len(head) < _HEAD:
            head += chunk[: _HEAD - len(head)]
        for ev in scanner.feed(chunk):
            count += 1
            out.line(_framed_fields(ev))
        if usage is not None:
            usage.feed(chunk)
    for ev in scanner.close():
        count += 1
        out.line(_framed_fields(ev))
    if count == 0:
        print(_no_stream(bytes(head)), file=sys.stderr)
        return 2
    if usage is not None:
        usage.close()
        out.line({"usage": usage.summary()})
    return 0


class _UsageWatch:
    """A stream's unified events as seen: the kinds (for the exit status) and the last usage (for ``--usage``).
    With ``--framed`` it is fed the same bytes as the framed scanner, and its events are not printed."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.decoder = StreamDecoder(args.provider, args.framing, max_buffer=args.max_buffer)
        self.with_raw: bool = args.with_raw
        self.kinds: set[str] = set()
        self.usage: Optional[dict[str, Any]] = None

    def feed(self, chunk: bytes) -> None:
        self.seen(self.decoder.feed(chunk))

    def close(self) -> None:
        self.seen(self.decoder.close())

    def seen(self, events: list[Unified]) -> None:
        for event in events:
            self.kinds.add("stream_truncated" if _is_truncation(event) else event.type)
            if event.type == "done" and event.stop_reason == "failed":  # (the provider says so, without an error)
                self.kinds.add("failed")
            if event.usage is not None:
                self.usage = event.usage

    def summary(self) -> Optional[dict[str, Any]]:
        """The last usage seen as a :class:`~ssewire.Usage` dict (``partial`` unless the stream ended cleanly;
        without ``raw`` unless ``--with-raw``), or None when the stream reported none."""
        if self.usage is None:
            return None
        kinds = self.kinds
        partial = "done" not in kinds or "error" in kinds or "stream_truncated" in kinds
        summary = Usage.from_raw(self.usage, partial=partial).to_dict()
        if not self.with_raw:
            del summary["raw"]
        return summary


def _is_truncation(event: Unified) -> bool:
    return event.type == "error" and event.error is not None and event.error.get("type") == "stream_truncated"


def _run_unified(chunks: Iterator[bytes], args: argparse.Namespace, out: _Output) -> int:
    watch = _UsageWatch(args)
    decoder = watch.decoder

    def emit(events: list[Unified]) -> None:
        watch.seen(events)
        provider = _provider(decoder)
        for event in events:
            out.line(_event_dict(event, args.with_raw, provider))

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
        out.line({"usage": watch.summary()})
    return 1 if watch.kinds & {"error", "stream_truncated", "failed"} else 0


def _run_transcode(chunks: Iterator[bytes], args: argparse.Namespace, out: _Output) -> int:
    """``--to TARGET``: the stream written as ``TARGET`` (:class:`~ssewire.Encoder`), each chunk's bytes as soon
    as they are made; the exit status as for the events (1 when the stream carried an error or was cut)."""
    from ..encoders import Encoder

    watch = _UsageWatch(args)
    decoder = watch.decoder
    encoder = Encoder(args.to, source=decoder.normalizer)

    def emit(events: list[Unified], end: bytes = b"") -> None:
        watch.seen(events)
        data = b"".join([encoder.encode(event) for event in events]) + end
        if data:
            out.out.write(data)
            if out.live:
                out.out.flush()

    for chunk in chunks:
        emit(decoder.feed(chunk))
    tail = decoder.close()
    if tail and _error_kind(tail[-1]) == "not_a_stream":
        print(f"ssewire: no stream in the input: {tail[-1].error['message']}", file=sys.stderr)  # type: ignore[index]
        return 2
    emit(tail, b"")
    emit([], encoder.close())
    return 1 if watch.kinds & {"error", "stream_truncated", "failed"} else 0


def _error_kind(event: Unified) -> Optional[str]:
    """The ``type`` of an ``error`` event's error (None for any other event)."""
    if event.type != "error" or event.error is None:
        return None
    kind = event.error.get("type")
    return kind if isinstance(kind, str) else None


def console() -> int:
    """The ``ssewire`` command in a process of its own (the console script, ``python -m ssewire``): :func:`main`."""
    return main(own_process=True)


def main(argv: Optional[Sequence[str]] = None, *, own_process: bool = False) -> int:
    """Run the command line; returns the exit status. ``batch`` first: :func:`ssewire.batch.command.main`
    (``own_process``: see there)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "batch":
        from ..batch.command import main as batch

        return batch(argv[1:], own_process=own_process)
    parser = _parser()
    args = parser.parse_args(argv)
    if args.to and args.usage:
        parser.error(
            "--usage adds a JSON line to the events: with --to the output is TARGET's own stream (its usage "
            "is written in it)"
        )
    if sys.stdout is None:  # (started with stdout closed: nowhere to write)
        print("ssewire: stdout is closed: nowhere to write the events", file=sys.stderr)
        return 2
    name = args.stream
    if name == "-" and sys.stdin is None:
        name = None
    if name is None:
        if sys.stdin is None:
            print("ssewire: stdin is closed: give a STREAM file", file=sys.stderr)
            return 2
        if sys.stdin.isatty():
            parser.print_usage(sys.stderr)
            print("ssewire: give a STREAM file, or pipe a stream in (STREAM - reads stdin)", file=sys.stderr)
            return 2
        name = "-"
    if name != "-" and os.path.isdir(name):
        print(f"ssewire: {name} is a directory: use `ssewire batch {name} --out FILE`", file=sys.stderr)
        return 2
    try:
        stream: BinaryIO = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"ssewire: {exc}", file=sys.stderr)
        return 2
    out = _Output(live=_is_live(stream))
    try:
        with stream:
            chunks = _chunks(stream)
            if args.framed:
                return _run_framed(chunks, args, out)
            return _run_transcode(chunks, args, out) if args.to else _run_unified(chunks, args, out)
    except SSEwireError as exc:
        hint = " (on the command line: --max-buffer BYTES)" if isinstance(exc, SSEBufferOverflow) else ""
        print(f"ssewire: {type(exc).__name__}: {exc}{hint}", file=sys.stderr)
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
