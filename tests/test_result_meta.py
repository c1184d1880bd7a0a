"""The stream's id and model come from its normaliser, not from a search of every payload: the same answer as the
search over every fixture and recording, in time that does not depend on whether the stream names them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from helpers.corpus import framing_for, provider_for
from ssewire import StreamTap, collect, iter_unified, normalizer_for

STREAMS = sorted(p for p in FIXTURES.iterdir() if p.is_file() and not p.name.endswith(".expected.json"))
CAPTURES = load_manifest()


def _both(data: bytes, provider: str, framing: str) -> None:
    searched = collect(list(iter_unified([data], provider, framing)))  # type: ignore[arg-type]  # a plain list
    normalizer = normalizer_for(provider)  # type: ignore[arg-type]
    read = collect(iter_unified([data], normalizer, framing))  # type: ignore[arg-type]  # through the decoder
    tap = StreamTap(provider, framing)  # type: ignore[arg-type]
    for start in range(0, len(data), 97):
        tap.feed(data[start : start + 97])
    tapped = tap.close()
    assert (read.response_id, read.model) == (searched.response_id, searched.model)  # the first the stream names
    assert read.response_id == normalizer.response_id or normalizer.response_id is None
    assert (tapped.response_id, tapped.model) == (read.response_id, read.model)
    assert (read.text, read.reasoning) == (searched.text, searched.reasoning) == (tapped.text, tapped.reasoning)


@pytest.mark.parametrize("path", STREAMS, ids=[p.name for p in STREAMS])
def test_every_fixture_names_the_same_id_and_model_both_ways(path: Path) -> None:
    expected = json.loads(path.with_name(path.name + ".expected.json").read_text(encoding="utf-8"))
    _both(path.read_bytes(), expected["provider"], expected["framing"])


@pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")
@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_every_recording_names_the_same_id_and_model_both_ways(capture: dict[str, Any]) -> None:
    _both((CORPUS / capture["file"]).read_bytes(), provider_for(capture), framing_for(capture))


def _responses(deltas: int, created: bool) -> list[bytes]:
    head = b'data: {"type":"response.created","response":{"id":"r1","model":"m","status":"in_progress"}}\n\n'
    delta = b'data: {"type":"response.output_text.delta","item_id":"x","output_index":0,"delta":"ab"}\n\n'
    tail = b'data: {"type":"response.completed","response":{"id":"r1","model":"m","status":"completed"}}\n\n'
    chunks = [head] if created else []
    chunks += [delta * 100] * (deltas // 100)
    return [*chunks, tail]


def _seconds(chunks: list[bytes]) -> float:
    start = time.perf_counter()
    result = collect(iter_unified(chunks, "openai"))
    seconds = time.perf_counter() - start
    assert (result.response_id, result.model) == ("r1", "m")
    return seconds


def test_a_stream_that_never_names_its_id_until_the_end_costs_what_one_that_does() -> None:
    # the best of 7 of each, interleaved (a busy 2-core machine slows single runs by 2-3x)
    chunks = {True: _responses(20_000, True), False: _responses(20_000, False)}
    best = {True: float("inf"), False: float("inf")}
    for _ in range(7):
        for names in (True, False):
            best[names] = min(best[names], _seconds(chunks[names]))
    named, unnamed = best[True], best[False]
    assert unnamed < 4 * named, (named, unnamed)  # was ~14x: every payload decoded in search of the id


def test_collected_text_costs_about_its_length_not_an_object_per_delta() -> None:
    tracemalloc = pytest.importorskip("tracemalloc")  # CPython's: PyPy has none (its module fails to import)
    chunks = _responses(200_000, True)
    tracemalloc.start()
    result = collect(iter_unified(chunks, "openai"))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(result.text) == 400_000
    assert peak < 12 * len(result.text), peak  # a list of 200k two-character strings alone is ~12 MB


def test_events_without_their_normaliser_are_recognised_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain list of events (no normaliser to ask) is read for the id and model by the provider that claims the
    first payload: recognition is not run again for every event until the id shows."""
    from ssewire.normalizers.providers import ENTRIES

    events = list(iter_unified(_responses(2_000, False), "openai"))
    asked: list[str] = []
    for rules in {entry.cls.rules for entry in ENTRIES}:
        claims = rules.claims.__func__  # type: ignore[attr-defined]

        def counting(cls: Any, obj: dict[str, Any], event: Any = None, _claims: Any = claims) -> bool:
            asked.append(cls.__name__)
            return bool(_claims(cls, obj, event))

        monkeypatch.setattr(rules, "claims", classmethod(counting))
    result = collect(events)
    assert (result.response_id, result.model) == ("r1", "m")  # named by the last event only
    assert len(events) > 2_000 and 0 < len(asked) <= len(ENTRIES), asked
