"""``provider="auto"`` and the named provider give the same result on every fixture and recording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import CORPUS, FIXTURES, load_manifest
from helpers.corpus import framing_for, provider_for
from ssewire import StreamResult, collect, iter_unified

#: Providers auto-detection never names: their streams are read by another's normaliser, or are sessions of
#: frames fed one by one.
_UNDETECTED = {"gemini-live"}
STREAMS = sorted(p for p in FIXTURES.iterdir() if p.is_file() and not p.name.endswith(".expected.json"))
CAPTURES = load_manifest()


def _view(result: StreamResult) -> dict[str, Any]:
    """The result, less what names the normaliser that read it (the usage reader's name, a truncation message)."""
    out = result.to_dict(with_raw=False)
    if out["usage"] is not None:
        del out["usage"]["source"]
    if result.error is not None:
        out["error"] = (result.error.get("type"), result.error.get("message"))
    return out


def _compare(data: bytes, provider: str, framing: str) -> None:
    if provider in _UNDETECTED:
        pytest.skip(f"auto-detection never names {provider}")
    named = _view(collect(iter_unified([data], provider, framing)))  # type: ignore[arg-type]
    auto = _view(collect(iter_unified([data], "auto", framing)))  # type: ignore[arg-type]
    if named["error"] is not None and auto["error"] is not None:  # the truncation message names the provider
        named["error"], auto["error"] = named["error"][0], auto["error"][0]
    assert auto == named


@pytest.mark.parametrize("path", STREAMS, ids=[p.name for p in STREAMS])
def test_auto_reads_every_fixture_as_its_provider_does(path: Path) -> None:
    expected = json.loads(path.with_name(path.name + ".expected.json").read_text(encoding="utf-8"))
    _compare(path.read_bytes(), expected["provider"], expected["framing"])


@pytest.mark.skipif(not CAPTURES, reason="../shared/corpus is not present")
@pytest.mark.parametrize("capture", CAPTURES, ids=[c["file"] for c in CAPTURES])
def test_auto_reads_every_recording_as_its_provider_does(capture: dict[str, Any]) -> None:
    _compare((CORPUS / capture["file"]).read_bytes(), provider_for(capture), framing_for(capture))
