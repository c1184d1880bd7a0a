"""Every stream the differential tests read: the fixtures, the shared recordings (when ``../shared/corpus`` is
there) and a 300 KB piece of each generated benchmark stream (when the benchmark generator is importable), as
``(name, body, provider, framing)``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import CORPUS, FIXTURES, load_manifest
from .corpus import framing_for, provider_for


def all_streams() -> list[tuple[str, bytes, Any, Any]]:
    out = []
    for expected_file in sorted(FIXTURES.glob("*.expected.json")):
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        stream = expected_file.with_name(expected_file.name[: -len(".expected.json")])
        out.append((stream.name, stream.read_bytes(), expected["provider"], expected["framing"]))
    for capture in load_manifest():
        data = Path(CORPUS / capture["file"]).read_bytes()
        out.append((capture["file"], data, provider_for(capture), framing_for(capture)))
    try:
        from benchmarks.generate import STREAMS, generate
    except ImportError:  # the suite copied out of the source tree (wheel tests): the benchmark generator is not there
        return out
    for name, spec in STREAMS.items():
        out.append((f"generated-{name}", generate(name, 300_000).data, spec.provider, spec.framing))
    return out
