"""The real-recordings benchmark: what it loads, what it leaves out, and that every contender reads the same text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .contenders import compiled_scanner
from .recordings import (
    CONTENDERS,
    CORPUS,
    GEOMEAN_CEILING,
    GROUP_CEILING,
    MINIMAL,
    PER_STREAM_CEILING_X,
    Recording,
    _chunked,
    _floor,
    load_recordings,
    measure_group,
    over_ceilings,
    readable,
)


def test_fixtures_are_grouped_by_provider_and_realtime_is_left_out(tmp_path: Path) -> None:
    recordings = load_recordings(corpus=tmp_path, fixtures=Path(__file__).resolve().parent.parent / "fixtures")
    groups = {rec.group for rec in recordings}
    assert "fixtures: openai-chat" in groups and "fixtures: anthropic" in groups
    assert not any(rec.provider == "openai-realtime" for rec in recordings)
    assert all(b"".join(rec.chunks) for rec in recordings)


@pytest.mark.skipif(not (CORPUS / "manifest.json").exists(), reason="the shared corpus is not beside the repository")
def test_every_corpus_capture_but_realtime_is_loaded() -> None:
    expected = 0
    for manifest in CORPUS.glob("**/manifest.json"):
        captures = json.loads(manifest.read_text(encoding="utf-8")).get("captures", [])
        expected += sum(1 for c in captures if c["api"] != "openai-realtime")
    loaded = [
        rec for rec in load_recordings(fixtures=CORPUS / "no-fixtures-here") if not rec.group.startswith("fixtures")
    ]
    assert len(loaded) == expected > 0


def test_a_body_that_raises_is_left_out_by_name() -> None:
    good = Recording("good", "g", "openai-chat", "sse", [MINIMAL[0][2]])
    bad = Recording("bad", "g", "openai-chat", "sse", _chunked(b"data: " + b"x" * (9 << 20)))  # over max_buffer
    kept, left = readable([good, bad])
    assert kept == [good]
    assert len(left) == 1 and left[0].startswith("bad: ")


def test_a_group_is_measured_against_the_floor_with_every_contender() -> None:
    compiled, why = compiled_scanner()
    if compiled is None:
        pytest.skip(why or "not built")
    group = [Recording(p, "g", p, f, [body]) for p, f, body in MINIMAL]
    result = measure_group(group, _floor(compiled), samples=1, min_time=0.001)
    assert set(result["cost_vs_floor"]) == {name for name, _run in CONTENDERS}
    assert result["streams"] == 3 and all(v > 0 for v in result["mb_s"].values())
    runs = dict(CONTENDERS)
    assert runs["collect()"](group) == runs["StreamTap"](group) == len("hi") * 3  # the whole text of each stream
    assert runs["iter_unified"](group) >= 3 * 2  # at least a text delta and the end of each


def _doc(cost: float, named: float = 5.0) -> dict[str, object]:
    groups = {g: {"cost_vs_floor": {name: cost for name, _run in CONTENDERS}} for g in ("a", "b")}
    return {"groups": groups, "per_stream_us": {"openai-chat": {"named": named, "auto": named, "loop": 5.0}}}


def test_the_gate_fails_a_cost_over_its_ceiling_and_passes_one_under() -> None:
    assert over_ceilings(_doc(1.0)) == []
    high = over_ceilings(_doc(GEOMEAN_CEILING + 0.1))
    assert len(high) == len(CONTENDERS) and all("geometric mean" in line for line in high)
    assert any("a: iter_unified" in line for line in over_ceilings(_doc(GROUP_CEILING + 1)))
    assert over_ceilings(_doc(1.0, named=5.0 * PER_STREAM_CEILING_X["named"] - 0.1)) == []
    slow = over_ceilings(_doc(1.0, named=5.0 * PER_STREAM_CEILING_X["auto"] + 0.1))
    assert [line.split(":")[0] for line in slow] == [
        "minimal openai-chat stream, named",
        "minimal openai-chat stream, auto",
    ]
