"""An archive of stored stream bodies for the engine tests (Spark, Ray): every fixture, every shared recording (when
``../shared/corpus`` is present, see :func:`helpers.load_manifest`) and bad bodies, each with the provider it is
known to be (None: auto), and the row each must give."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Optional

from ssewire.batch import COLUMNS, result_rows

from . import CORPUS, FIXTURES, load_manifest
from .corpus import provider_for

__all__ = ["RESULT_NAMES", "ROWS", "expected_row", "table_columns"]

RESULT_NAMES = [name for name, _ in COLUMNS]

_GOOD = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()


def _fixture_provider(path: Path) -> Optional[str]:
    expected = path.with_name(path.name + ".expected.json")
    return json.loads(expected.read_text(encoding="utf-8"))["provider"] if expected.is_file() else None


#: (name, body, provider) of every stored stream: the fixtures, the recordings, then bad bodies (``bad/...``)
ROWS: list[tuple[str, Optional[bytes], Optional[str]]] = [
    *(
        (p.name, p.read_bytes(), _fixture_provider(p))
        for p in sorted(FIXTURES.iterdir())
        if p.is_file() and not p.name.endswith(".expected.json")
    ),
    *((c["file"], (CORPUS / c["file"]).read_bytes(), provider_for(c)) for c in load_manifest()),
    ("bad/junk", random.Random(7).randbytes(256), None),
    ("bad/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>", None),
    ("bad/truncated", _GOOD[: len(_GOOD) // 2], "anthropic"),
    ("bad/empty", b"", None),
    ("bad/null", None, None),
    ("bad/unknown-provider", _GOOD, "not-a-provider"),
]


def expected_row(body: Optional[bytes], provider: Optional[str] = None) -> dict[str, Any]:
    """The row of ``body`` read with a per-row ``provider`` (None: auto; a name ssewire does not know: an error
    row), as the engines read a provider column."""
    return next(result_rows([(body, provider)]))


def table_columns(rows: list[tuple[str, Optional[bytes], Optional[str]]], start: int = 0) -> dict[str, list[Any]]:
    """``rows`` as columns ``id`` (from ``start``), ``name``, ``body`` and ``provider``."""
    return {
        "id": list(range(start, start + len(rows))),
        "name": [name for name, _, _ in rows],
        "body": [body for _, body, _ in rows],
        "provider": [provider for _, _, provider in rows],
    }
