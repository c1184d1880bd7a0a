"""Timing and memory: every contender on one stream, output checked before any time counts.

``bench_stream(case, contenders, settings, progress)`` returns one :class:`Row` per contender. Each contender
first runs once untimed (warm-up: imports, caches) and its :class:`Outcome` is checked against ssewire's
reference; a contender whose output differs gets no time. Then the contenders run in interleaved rounds (so a
load change on the machine hits all of them alike): at least ``repeats`` runs each, more for fast contenders (up to
``max_runs`` or ``min_time`` seconds), fewer for one whose runs exceed ``budget`` seconds (at least one run); the
median counts. Peak memory is one more run under ``tracemalloc`` (Python-heap allocations; a C library's own ``malloc``
is not seen). ``scaling()`` measures ssewire's peak on the same stream kind at two sizes.
"""

from __future__ import annotations

import gc
import json
import math
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from .contenders import E2E, FRAMING, Case, Contender, Outcome, prepare, ssewire_e2e, ssewire_framing
from .generate import Stream, load

__all__ = [
    "Reference",
    "Row",
    "Settings",
    "StreamResult",
    "bench_stream",
    "check_outcome",
    "peak_memory",
    "reference",
    "scaling",
]

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Settings:
    """How hard to measure (see the module docstring); ``memory`` whether to trace peaks."""

    repeats: int = 7
    max_runs: int = 50
    min_time: float = 2.0
    budget: float = 10.0
    memory: bool = True

    def runs_for(self, seconds: float) -> int:
        """Timed runs for a contender whose warm-up took ``seconds``."""
        wanted = math.ceil(self.min_time / seconds) if seconds > 0 else self.max_runs
        return max(1, min(self.max_runs, max(self.repeats, wanted)))


@dataclass
class Reference:
    """ssewire's output on a stream (the pure twin, untimed): what every contender must reproduce."""

    events: int
    chars: int
    unified: Optional[int]
    last: Any  # the last payload decoded as JSON (for contenders that yield objects)
    error: Optional[str] = None


@dataclass
class Row:
    """One contender on one stream."""

    contender: str
    group: str
    floor: bool
    implementation: Optional[str]
    status: str = "ok"  # ok | unavailable | mismatch | error
    note: str = ""
    times: list[float] = field(default_factory=list)
    peak: Optional[int] = None
    outcome: Optional[Outcome] = None

    @property
    def median(self) -> Optional[float]:
        return statistics.median(self.times) if self.status == "ok" and self.times else None


def reference(case: Case) -> Reference:
    """Frame ``case`` with the pure twin (fills ``case.payloads``) and run its end-to-end pipeline once."""
    from ssewire._scan import scanner_py as _scanner_py

    from .contenders import scanner_for

    stream = case.stream
    parser = scanner_for(_scanner_py, stream.framing)
    payloads = [ev.data for chunk in case.chunks for ev in parser.feed(chunk)]
    payloads += [ev.data for ev in parser.close()]
    case.payloads = payloads
    ref = Reference(len(payloads), sum(map(len, payloads)), None, None)
    if ref.events != stream.events:
        ref.error = f"generator made {stream.events} events, ssewire framed {ref.events}"
    if stream.framing == "json_array" and payloads:
        ref.last = json.loads(payloads[-1])
    try:
        ref.unified = ssewire_e2e(_scanner_py)(case).unified
    except Exception as exc:  # a normaliser bug must not stop the framing benchmarks
        ref.error = f"end-to-end reference failed: {exc!r}"
    return ref


def check_outcome(outcome: Outcome, ref: Reference) -> Optional[str]:
    """``None`` when ``outcome`` matches ssewire's reference, else what differs."""
    if outcome.events != ref.events:
        return f"{outcome.events} events, expected {ref.events}"
    if outcome.chars is not None and outcome.chars != ref.chars:
        return f"{outcome.chars} data characters, expected {ref.chars}"
    if outcome.unified is not None and outcome.unified != ref.unified:
        return f"{outcome.unified} unified events, expected {ref.unified}"
    if outcome.last is not None and outcome.last != ref.last:
        return "last decoded element differs from ssewire's"
    return None


def same_output(timed: Outcome, checked: Outcome) -> bool:
    """A timed run gave what the checked run gave (a timed run may leave out the data character count)."""
    if timed.chars is None and checked.chars is not None:
        timed = replace(timed, chars=checked.chars)
    return timed == checked


def _settle() -> None:
    """Collect garbage, then move every surviving object (imported SDKs, the input) out of the collector's sight,
    so that collections during a run cost what they would in a process holding only that run's objects."""
    gc.collect()
    gc.freeze()


def _timed(run: Callable[[Case], Outcome], case: Case) -> tuple[float, Outcome]:
    gc.collect()
    start = time.perf_counter()
    outcome = run(case)
    return time.perf_counter() - start, outcome


def peak_memory(run: Callable[[Case], Outcome], case: Case) -> int:
    """Peak traced bytes allocated while ``run(case)`` runs (the input itself is allocated before)."""
    gc.collect()
    tracemalloc.start()
    try:
        run(case)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@dataclass
class StreamResult:
    """Every contender's :class:`Row` on one stream, plus stream-level problems (``notes``)."""

    stream: Stream
    rows: list[Row]
    notes: list[str] = field(default_factory=list)


def bench_stream(
    case: Case, contenders: list[Contender], settings: Settings, progress: Optional[Progress] = None
) -> StreamResult:
    """Measure every contender that applies to ``case``'s framing; rows in ``contenders`` order."""
    say = progress or (lambda _msg: None)
    stream = case.stream
    say(f"{stream.name}: reference run")
    ref = reference(case)
    _settle()
    result = StreamResult(stream, [], [ref.error] if ref.error else [])
    pairs: list[tuple[Row, Contender]] = []
    targets: dict[tuple[str, str], int] = {}
    for c in contenders:
        if not c.applies_to(stream):
            continue
        row = Row(c.name, c.group, c.floor, c.implementation)
        result.rows.append(row)
        pairs.append((row, c))
        if c.unavailable:
            row.status, row.note = "unavailable", c.unavailable
            continue
        say(f"{stream.name}: {c.name} ({c.group}) warm-up + output check")
        try:
            warm, outcome = _timed(c.run, case)
        except Exception as exc:
            row.status, row.note = "error", f"{type(exc).__name__}: {exc}"
            continue
        problem = check_outcome(outcome, ref)
        if problem:
            row.status, row.note = "mismatch", problem
            continue
        row.outcome = outcome
        if warm >= settings.budget:  # too slow to repeat: the checked run is the one sample
            row.times.append(warm)
        targets[row.contender, row.group] = settings.runs_for(warm)
    _settle()
    rounds = max(targets.values(), default=0)
    for n in range(rounds):
        runnable = [
            (row, c)
            for row, c in pairs
            if row.status == "ok"
            and row.outcome is not None
            and len(row.times) < targets[row.contender, row.group]
            and sum(row.times) < settings.budget
        ]
        if not runnable:
            break
        say(f"{stream.name}: timing round {n + 1}/{rounds} ({len(runnable)} contenders)")
        for row, c in runnable:
            case.checking = False
            try:
                seconds, outcome = _timed(c.run, case)
            finally:
                case.checking = True
            if not same_output(outcome, row.outcome):
                row.status, row.note = "mismatch", "output changed between runs"
            row.times.append(seconds)
    for row, c in pairs:
        if row.status != "ok":
            continue
        if len(row.times) < settings.repeats:
            row.note = f"{len(row.times)} timed run(s): time budget"
        if settings.memory:
            say(f"{stream.name}: {c.name} ({c.group}) peak memory")
            case.checking = False  # (the output was checked: its data sums are no part of the work measured)
            try:
                row.peak = peak_memory(c.run, case)
            finally:
                case.checking = True
    gc.unfreeze()
    return result


@dataclass
class ScalePoint:
    size: int
    largest_event: int
    peak: int


def scaling(
    name: str, sizes: tuple[int, int], module: Any, implementation: str, progress: Optional[Progress] = None
) -> dict[str, Any]:
    """ssewire's peak memory (framing and end to end, one implementation) on stream ``name`` at two sizes.

    ``bounded`` holds when the larger stream's peak is at most the smaller one's scaled by the growth of the largest
    event (25 % and 256 KiB of slack): memory follows the largest event, not the stream. Most generated streams
    keep their largest event fixed as they grow; OpenAI's ``response.completed`` echoes the whole output, so there
    the largest event (and only it) grows with the stream.
    """
    say = progress or (lambda _msg: None)
    out: dict[str, Any] = {"stream": name, "implementation": implementation, "groups": {}}
    for group, make in ((FRAMING, ssewire_framing), (E2E, ssewire_e2e)):
        points: list[ScalePoint] = []
        for size in sizes:
            say(f"memory scaling: {name} {group} at {size / 1e6:g} MB")
            stream: Stream = load(name, size)
            case = prepare(stream)
            try:
                peak = peak_memory(make(module), case)
            except Exception as exc:
                out["groups"][group] = {"error": f"{type(exc).__name__}: {exc}"}
                break
            points.append(ScalePoint(stream.size, stream.largest_event, peak))
            del case, stream
        else:
            small, large = points
            growth = max(1.0, large.largest_event / max(1, small.largest_event))
            allowed = small.peak * growth * 1.25 + 256 * 1024
            out["groups"][group] = {
                "points": [p.__dict__ for p in points],
                "bounded": large.peak <= allowed,
            }
    return out
