"""The archive of recorded bodies that ``python -m benchmarks.batch`` runs beside its generated one: many small
streams as real traffic has them, where pool start-up and per-task costs weigh most.

:func:`build_recorded` draws ``n`` bodies (:data:`RECORDED_STREAMS`) at random, with replacement, from the real
recordings (:func:`recorded_bodies`: the captures of ``../shared/corpus``, realtime sessions left out; the
fixtures where there is no corpus) and writes them once to ``data/`` (git-ignored) as a directory of files and as a
Parquet file of one row group (what pyarrow writes for a few thousand rows by default), its body column without a
dictionary (archived bodies are distinct). Returns the archive's folder and its manifest (streams, bytes, sizes,
where the bodies came from).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path
from typing import Any, Callable

from .generate import DATA_DIR, SEED
from .recordings import CORPUS, FIXTURES, load_recordings

__all__ = ["RECORDED_STREAMS", "RECORDED_VERSION", "build_recorded", "recorded_bodies"]

RECORDED_STREAMS = 3_000
RECORDED_VERSION = 1  # bump when the draw or the layout changes (invalidates cached archives)


def recorded_bodies(corpus: Path = CORPUS, fixtures: Path = FIXTURES) -> tuple[str, list[tuple[str, bytes]]]:
    """Where the bodies come from (``"corpus"`` or ``"fixtures"``) and each recording's name and whole body."""
    recordings = load_recordings(corpus, fixtures)
    captured = [rec for rec in recordings if not rec.group.startswith("fixtures")]
    origin, chosen = ("corpus", captured) if captured else ("fixtures", recordings)
    return origin, [(rec.name, b"".join(rec.chunks)) for rec in chosen]


def _percentiles(sizes: list[int]) -> dict[str, int]:
    ordered = sorted(sizes)
    return {f"p{round(q * 100)}": ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in (0.05, 0.5, 0.95)}


def build_recorded(
    n: int = RECORDED_STREAMS,
    root: Path = DATA_DIR,
    seed: int = SEED,
    *,
    log: Callable[[str], None] = lambda _msg: None,
) -> tuple[Path, dict[str, Any]]:
    """The archive of ``n`` recorded bodies under ``root`` (reused when complete and drawn from the same
    recordings; written through a ``.partial`` directory otherwise): its folder (``files/``, ``archive.parquet``)
    and its manifest."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    origin, bodies = recorded_bodies()
    digest = hashlib.sha256()
    for name, data in bodies:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    name = f"recorded-{n}-{seed}-v{RECORDED_VERSION}-{digest.hexdigest()[:12]}"
    final = root / name
    if (final / "manifest.json").exists():
        return final, json.loads((final / "manifest.json").read_text())
    partial = root / f"{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    (partial / "files").mkdir(parents=True)
    rng = random.Random(f"recorded:{seed}:{n}")
    drawn = [rng.randrange(len(bodies)) for _ in range(n)]
    for index, pick in enumerate(drawn):
        folder = partial / "files" / f"{index // 1000:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"{index:06d}.body").write_bytes(bodies[pick][1])
    table = pa.table(
        {
            "stream_id": pa.array(range(n), pa.int64()),
            "recording": [bodies[pick][0] for pick in drawn],
            "body": pa.array([bodies[pick][1] for pick in drawn], pa.binary()),
        }
    )
    pq.write_table(table, partial / "archive.parquet", use_dictionary=["recording"])
    sizes = [len(bodies[pick][1]) for pick in drawn]
    manifest = {
        "version": RECORDED_VERSION,
        "seed": seed,
        "origin": origin,
        "recordings": len(bodies),
        "streams": n,
        "bytes": sum(sizes),
        "largest": max(sizes),
        "mean": round(sum(sizes) / n),
        "sizes": _percentiles(sizes),
        "row_groups": pq.ParquetFile(partial / "archive.parquet").metadata.num_row_groups,
        "parquet_bytes": (partial / "archive.parquet").stat().st_size,
    }
    (partial / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    log(f"recorded archive: {n} bodies from {len(bodies)} {origin} recordings, {sum(sizes) / 1e6:.0f} MB")
    return final, manifest
