"""Hostile input to the scanners ends in bounded time and memory, on both implementations (the ``scanner``
fixture): ``framing="auto"`` reads a body that opens with whitespace in time linear in its size (measured as
ratios in the same run: against the framing named, and a 2x input against the 1x one) and gives exactly the
events of the framing named; one SSE event of very many ``data:`` lines is held in about its data's size, and
its data is bounded by ``max_buffer`` with the same error in both implementations."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any, Callable, Optional

import pytest

from helpers import peak_traced
from helpers.trace import event_key
from ssewire import SSEBufferOverflow, framing
from ssewire.limits import DEFAULT_MAX_BUFFER

BOM = b"\xef\xbb\xbf"
Make = Callable[..., Any]  # (framing name, max_buffer=...) -> scanner


@pytest.fixture
def make(scanner: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Make:
    """``make(name)``: the scanner of framing ``name`` (``"auto"`` too) built from ``scanner``'s classes."""
    registry = {
        name: entry._replace(scanner=getattr(scanner, entry.scanner.__name__))
        for name, entry in framing.FRAMINGS_BY_NAME.items()
    }
    monkeypatch.setattr(framing, "FRAMINGS_BY_NAME", registry)

    def build(name: str, max_buffer: int = DEFAULT_MAX_BUFFER) -> Any:
        return framing.AutoScanner(max_buffer) if name == "auto" else registry[name].scanner(max_buffer)

    return build


def _outcome(parser: Any, chunks: list[bytes]) -> tuple[list[tuple[Any, ...]], Optional[tuple[type, str]]]:
    """The events of ``chunks`` then ``close()``, and the error that stopped them (None when none did)."""
    events: list[tuple[Any, ...]] = []
    try:
        for chunk in chunks:
            events += [event_key(e) for e in parser.feed(chunk)]
        events += [event_key(e) for e in parser.close()]
    except Exception as exc:
        return events, (type(exc), str(exc))
    return events, None


def _feeds_to_error(parser: Any, chunks: Iterable[bytes]) -> tuple[int, Exception]:
    """How many chunks were fed up to the one that raised, and its error (AssertionError: none raised)."""
    fed = 0
    for chunk in chunks:
        fed += 1
        try:
            parser.feed(chunk)
        except Exception as exc:
            return fed, exc
    raise AssertionError(f"no error after {fed} chunks")


def _chunkings(body: bytes) -> Iterator[list[bytes]]:
    for size in (1, 2, 3, 7, 64, len(body) or 1):
        yield [body[i : i + size] for i in range(0, len(body), size)]
    for cut in range(len(body) + 1):
        yield [body[:cut], body[cut:]]


# --- finding 2: auto framing, identical results ------------------------------------------------------------------

PREFIXES = [
    b"",
    b"\n\n\n",
    b"\r\n\r\n",
    b"\r",
    b" \t \n",
    b"  ",  # spaces without a line end: in SSE they start the first line (whose field is then unknown)
    b"\n\t",
    BOM,
    BOM + b"\r\n \n",
    b"\n" + BOM,  # a BOM after whitespace is not the stream's BOM
    b"\n" * 70 + b" " * 70,  # longer than the head auto asks about on every chunk
]
BODIES = [
    (b"data: x\n\nevent: e\ndata: y\nid: 7\n\n", "sse"),
    (b"data: x", "sse"),
    (b": ping\n\n\ndata: z\n\n", "sse"),
    (b'[{"a": 1}, {"b": [2, {"c": 3}]}]', "json_array"),
    (b'[{"a": 1}, 2]', "json_array"),  # an error, the same as json_array's
    (b'{"a": 1}\n\n{"b": 2}\r\n{"c": 3}', "ndjson"),
    (b'{"a": "' + b"x" * 80 + b'"}\n' + b" \n" * 40 + b'{"b": 2}\n', "ndjson"),
    (b'{"a": 1}', "sse"),  # one JSON object: a response that was not streamed
    (b'{"a": 1}\n  \ndata: x\n\n', "sse"),
]


@pytest.mark.parametrize("prefix", PREFIXES, ids=repr)
@pytest.mark.parametrize(("body", "named"), BODIES, ids=lambda b: repr(b)[:24])
def test_auto_gives_the_named_framings_results_after_any_whitespace(
    make: Make, prefix: bytes, body: bytes, named: str
) -> None:
    stream = prefix + body
    expected = _outcome(make(named), [stream])
    if prefix.startswith(b"\n" + BOM) and named != "sse":
        named = "sse"  # a BOM after whitespace is content: SSE's
        expected = _outcome(make(named), [stream])
    auto = make("auto")
    assert _outcome(auto, [stream]) == expected and auto.framing == named
    for chunks in _chunkings(stream):
        auto = make("auto")
        events, error = _outcome(auto, chunks)
        # an error's message may quote what the chunk held (a JSON array's): its type must agree
        assert (events, error and error[0]) == (expected[0], expected[1] and expected[1][0]), [len(c) for c in chunks]
        assert auto.framing == named


def test_auto_decides_as_soon_as_the_second_json_line_starts(make: Make) -> None:
    """The recognisers are asked again only when a line's content starts or ends, which is when NDJSON is told
    apart: the first line comes out with the first byte of the second, even after a long line and whitespace."""
    first = b'{"a": "' + b"x" * 500 + b'"}'
    for gap in (b"\n", b"\r\n" + b" \n" * 300, b"\r" + b"\n" * 300):
        stream = b"\n" * 100 + first + gap + b'{"b": 2}\n'
        at = len(stream) - len(b'{"b": 2}\n')
        for size in (1, 5, 64):
            auto = make("auto")
            events = []
            for i in range(0, at, size):
                events += auto.feed(stream[i : min(i + size, at)])
            assert events == [] and auto.framing is None
            assert [e.data for e in auto.feed(stream[at : at + 1])] == [first.decode()]
            assert auto.framing == "ndjson"


def test_undecided_start_is_bounded_by_max_buffer_and_stays_failed(make: Make) -> None:
    """Whitespace counts: past ``max_buffer`` bytes without a framing, SSEBufferOverflow, raised again after."""
    auto = make("auto", 1 << 16)
    fed, error = _feeds_to_error(auto, [b"\r\n" * 512] * 1024)  # 1 MiB at most: the overflow comes past 64 KiB
    assert fed == 65 and isinstance(error, SSEBufferOverflow)
    assert str(error) == "the start of the body exceeds max_buffer (65536 bytes)"
    with pytest.raises(SSEBufferOverflow):
        auto.feed(b"data: x\n\n")
    with pytest.raises(SSEBufferOverflow):
        auto.close()


def test_undecided_start_is_held_in_about_its_size(make: Make) -> None:
    limit = 1 << 20

    def run() -> None:
        fed, error = _feeds_to_error(make("auto", limit), [b" \n" * (1 << 15)] * 64)
        assert fed == 17 and isinstance(error, SSEBufferOverflow)

    assert peak_traced(run) < 3 * limit


# --- finding 2: auto framing, linear time --------------------------------------------------------------------------


def _seconds(make: Make, name: str, body: bytes, size: int) -> float:
    """The least CPU time (this process's: other processes on a busy machine do not count) of five runs of
    ``body`` in ``size``-byte chunks through framing ``name`` (of one, when it takes over a second: the quadratic
    case these tests catch). Each run starts after a full collection: a run's allocations (megabytes) would else
    start one whose cost is the heap's, not the scanner's (PyPy's, late in a long test process, took longer than
    the run: a ratio of 37 where the scanners' own is 7)."""
    chunks = [body[i : i + size] for i in range(0, len(body), size)]
    best = float("inf")
    for _ in range(5):
        parser = make(name)
        gc.collect()
        start = time.process_time()
        for chunk in chunks:
            parser.feed(chunk)
        parser.close()
        best = min(best, time.process_time() - start)
        if best > 1:
            break
    return best


#: Bodies whose framing stays undecided for long: (body of n units, the framing named, chunk size).
SLOW_STARTS: dict[str, tuple[Callable[[int], bytes], str, int]] = {
    "newlines, 1-byte chunks": (lambda n: b"\n" * n + b"data: x\n\n", "sse", 1),
    "blank lines, 64 KiB chunks": (lambda n: (b" " * 63 + b"\n") * (n * 4) + b"data: x\n\n", "sse", 1 << 16),
    "whitespace then an array": (lambda n: b"\r\n" * (n * 64) + b'[{"a": 1}]', "json_array", 1 << 16),
    "a long first JSON line": (lambda n: b'{"a": "' + b"x" * n + b'"}\n' + b"\n" * n + b"{}\n", "ndjson", 1),
}


@pytest.mark.parametrize("case", SLOW_STARTS, ids=str)
def test_auto_is_about_as_fast_as_the_framing_named(make: Make, case: str) -> None:
    """Same run, same input: auto against the named framing (quadratic, this was 100x-1000x slower)."""
    body, named, size = SLOW_STARTS[case]
    data = body(16_384)
    ratio = _seconds(make, "auto", data, size) / _seconds(make, named, data, size)
    assert ratio < 30, f"auto took {ratio:.1f}x the time of {named}"


@pytest.mark.parametrize("case", SLOW_STARTS, ids=str)
def test_auto_takes_linear_time_while_undecided(make: Make, case: str) -> None:
    """Four times the input takes about four times the time (quadratic: sixteen; 4x rather than 2x, as the linear
    part of a quadratic run can hide its square at 2x, and a ratio of 16 is far from 4 even on a busy machine)."""
    body, _, size = SLOW_STARTS[case]
    ratio = _seconds(make, "auto", body(32_768), size) / _seconds(make, "auto", body(8_192), size)
    assert ratio < 8, f"4x the input took {ratio:.1f}x the time"


# --- finding 4: an event of many data lines ------------------------------------------------------------------------


@pytest.mark.parametrize("line", [b"data:\n", b"data\n", b"data: \n", b"data:x\r\n", b"data: " + b"y" * 40 + b"\n"])
def test_an_event_of_many_data_lines_is_held_in_about_its_size(scanner: ModuleType, line: bytes) -> None:
    """The data's bytes, not a slot (and a join buffer) per line: a list held ~85x max_buffer in the twin."""
    limit = 1 << 17
    value = line.split(b":", 1)[1].lstrip(b" ").rstrip(b"\r\n") if b":" in line else b""
    count = limit // (len(value) + 1)
    body = line * count + b"\n"
    got: list[Any] = []

    def run() -> None:
        parser = scanner.SSEParser(max_buffer=limit)
        for i in range(0, len(body), 8192):
            got.extend(parser.feed(body[i : i + 8192]))
        got.extend(parser.close())

    peak = peak_traced(run)
    assert [e.data for e in got] == ["\n".join([value.decode()] * count)]
    assert peak < 3 * limit, f"peak {peak / limit:.1f}x max_buffer"


def test_many_data_lines_are_bounded_by_max_buffer_with_one_message(scanner: ModuleType) -> None:
    """Each data line adds its length plus one newline; past max_buffer: the same error in both twins, raised by
    the chunk that crosses it (so a stream of endless empty data lines stops early)."""
    limit = 1000
    assert [e.data for e in scanner.SSEParser(limit).feed(b"data:\n" * 1001 + b"\n")] == ["\n" * 1000]
    assert [e.data for e in scanner.SSEParser(limit).feed(b"data: ab\n" * 333 + b"data: a\n\n")] == [
        "\n".join(["ab"] * 333 + ["a"])
    ]
    for body in (b"data:\n" * 1002 + b"\n", b"data: ab\n" * 334 + b"\n"):
        for size in (1, 7, 100, len(body)):
            chunks = [body[i : i + size] for i in range(0, len(body), size)]
            _, error = _feeds_to_error(scanner.SSEParser(limit), chunks)
            assert type(error) is SSEBufferOverflow
            assert str(error) == (
                "the data of one event exceeds max_buffer (1000 bytes): to accept it, raise max_buffer=..."
            )
    fed, error = _feeds_to_error(scanner.SSEParser(1 << 16), [b"data:\n" * (1 << 14)] * 100)
    assert fed == 5 and isinstance(error, SSEBufferOverflow)  # 4 x 16 Ki lines: 64 Ki - 1 bytes of data


@pytest.mark.parametrize("count", [63, 64, 65, 127, 128, 129, 1000])
def test_many_data_lines_join_in_order(scanner: ModuleType, count: int) -> None:
    """Folding the values of a long event keeps them in order, each event apart (CR, LF, CRLF, long values)."""
    values = [(b"v%d" % i) * (i % 5) + (b"z" * 5000 if i % 97 == 3 else b"") for i in range(count)]
    eols = [b"\n", b"\r\n", b"\r"]
    block = b"".join(b"data: " + v + eols[i % 3] for i, v in enumerate(values))
    body = block + b"\n\n" + b"data: next\n\n" + block + b"\n\n"  # "\n\n": a CR may end the block
    expected = [b"\n".join(values).decode(), "next", b"\n".join(values).decode()]
    for size in (1, 13, 4096, len(body)):
        parser = scanner.SSEParser()
        events = []
        for i in range(0, len(body), size):
            events += parser.feed(body[i : i + size])
        events += parser.close()
        assert [e.data for e in events] == expected, size
    parser = scanner.SSEParser()
    assert parser.feed(block) == []
    assert [e.data for e in parser.close()] == [expected[0]]  # flushed at the end without its blank line
