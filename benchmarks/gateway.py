"""``python -m benchmarks.gateway [--quick] [--check]``: what the gateway features cost.

1. Tap: a gateway reads an OpenAI Responses stream from a local HTTP server with httpx (one event per network
   chunk, as providers flush them) and forwards every chunk to a downstream socket. ``StreamTap.feed`` on the
   same chunks is timed separately; the report gives tap time / forwarding time (the issue's budget: < 0.25).
2. Tool-argument previews: a 1 MB argument streamed in 10,000 deltas, previewed after every delta with
   ``PartialJSON.preview`` (incremental) and with ``parse_partial_json`` of the whole text so far (the quadratic
   way most code does it, timed on a sample of the deltas and scaled up).

Medians of repeated runs; both results are ratios measured in the same run. ``--check`` fails when the tap costs
more than half of forwarding or previews are less than 10x faster than re-parsing (conservative CI floors).
Writes ``benchmarks/results/gateway[-quick].json`` and, on a full run, the README block between
``<!-- gateway:start -->`` and ``<!-- gateway:end -->``.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Optional

from .generate import load
from .readme import replace_block

RESULTS = Path(__file__).resolve().parent / "results"
TAP_FLOOR = 0.5  # CI: the tap must cost less than half of forwarding (the target is a quarter)
PREVIEW_FLOOR = 10.0  # CI: incremental previews at least 10x faster than re-parsing


def _serve(events: list[bytes]) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in events:  # one flush per event, as providers do
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def tap_cost(size: int, repeats: int) -> dict[str, Any]:
    """Forwarding time vs tap time on the same chunks (medians of ``repeats``)."""
    import httpx

    from ssewire import IMPLEMENTATION, StreamTap

    events = [e + b"\n\n" for e in load("openai-responses", size).data.split(b"\n\n") if e]
    server, url = _serve(events)
    down, drain_end = socket.socketpair()

    def drain() -> None:
        while drain_end.recv(1 << 16):
            pass

    threading.Thread(target=drain, daemon=True).start()
    forward_times, tap_times = [], []
    try:
        with httpx.Client() as client:
            for i in range(repeats + 1):
                chunks: list[bytes] = []
                start = time.perf_counter()
                with client.stream("GET", url) as response:
                    for chunk in response.iter_raw():
                        chunks.append(chunk)
                        down.sendall(chunk)
                forwarded = time.perf_counter() - start
                tap = StreamTap("openai")
                start = time.perf_counter()
                for chunk in chunks:
                    tap.feed(chunk)
                result = tap.close()
                tapped = time.perf_counter() - start
                assert result.stop_reason is not None and b"".join(chunks) == b"".join(events)
                if i:  # the first run warms up
                    forward_times.append(forwarded)
                    tap_times.append(tapped)
    finally:
        server.shutdown()
        down.close()
    forward, tap_ = statistics.median(forward_times), statistics.median(tap_times)
    return {
        "stream_bytes": sum(map(len, events)),
        "chunks": len(chunks),
        "forward_s": forward,
        "tap_s": tap_,
        "ratio": tap_ / forward,
        "implementation": IMPLEMENTATION,
    }


def _time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def preview_cost(arg_bytes: int, deltas: int, repeats: int) -> dict[str, Any]:
    """Preview after every delta: incremental vs re-parsing the whole text (sampled, scaled to all deltas)."""
    from ssewire import PartialJSON, parse_partial_json

    text = json.dumps({"path": "/tmp/x", "content": "x" * arg_bytes, "mode": 420})
    step = -(-len(text) // deltas)
    pieces = [text[i : i + step] for i in range(0, len(text), step)]

    def incremental() -> None:
        acc = PartialJSON()
        for piece in pieces:
            acc.append("c", piece)
            acc.preview("c")
        assert acc.finish("c")["mode"] == 420

    every = max(1, len(pieces) // 50)
    positions = [min(len(text), (i + 1) * step) for i in range(0, len(pieces), every)]  # ends of sampled deltas

    def reparse_sample() -> None:
        for end in positions:
            parse_partial_json(text[:end])

    t_inc = _time(incremental, repeats)
    t_full = _time(reparse_sample, max(1, repeats // 2)) * len(pieces) / len(positions)
    return {
        "argument_bytes": len(text),
        "deltas": len(pieces),
        "incremental_s": t_inc,
        "reparse_s_estimated": t_full,
        "speedup": t_full / t_inc,
    }


def readme_block(doc: dict[str, Any]) -> str:
    tap, preview = doc["tap"], doc["preview"]
    return "\n".join(
        [
            "| gateway feature | measured | ratio |",
            "|---|---|---|",
            f"| `StreamTap` on an OpenAI stream forwarded through httpx ({tap['chunks']} chunks, "
            f"{tap['stream_bytes'] / 1e6:.1f} MB) | tap {tap['tap_s'] * 1e3:.0f} ms vs forwarding "
            f"{tap['forward_s'] * 1e3:.0f} ms | tap costs {tap['ratio']:.2f}x of forwarding |",
            f"| previews of a {preview['argument_bytes'] / 1e6:.1f} MB tool argument after each of "
            f"{preview['deltas']} deltas | incremental {preview['incremental_s'] * 1e3:.0f} ms vs re-parsing "
            f"≈{preview['reparse_s_estimated']:.1f} s | {preview['speedup']:.0f}x faster |",
            "",
            f"Measured by `python -m benchmarks.gateway` ({doc['python']}, {tap['implementation']} scanner).",
        ]
    )


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gateway", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller stream and argument (CI)")
    p.add_argument("--check", action="store_true", help="exit 1 when a ratio misses its CI floor")
    args = p.parse_args(argv)
    quick = args.quick
    doc = {
        "python": sys.version.split()[0],
        "tap": tap_cost((1 if quick else 4) << 20, 3 if quick else 7),
        "preview": preview_cost(1_000_000, 10_000, 3 if quick else 5),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"gateway{'-quick' if quick else ''}.json").write_text(json.dumps(doc, indent=2) + "\n")
    block = readme_block(doc)
    print(block)
    if not quick and replace_block("gateway", block):
        print("\nwrote README.md gateway block")
    failures = []
    if doc["tap"]["ratio"] > TAP_FLOOR:
        failures.append(f"tap/forward {doc['tap']['ratio']:.2f} > {TAP_FLOOR}")
    if doc["preview"]["speedup"] < PREVIEW_FLOOR:
        failures.append(f"preview speedup {doc['preview']['speedup']:.1f} < {PREVIEW_FLOOR}")
    if args.check and failures:
        print("CHECK FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
