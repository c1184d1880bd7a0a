"""The module paths users had before the layout of issue #25 keep working: ``ssewire._scanner_c.SIMD``, the
public ``ssewire.arrow`` / ``ssewire.spark`` / ``ssewire.cli`` / ``ssewire.batch`` names, and pickles of scanners
and events made by ssewire 0.1.0 (kept in :mod:`pickles_v0_1`), which load and go on where they stopped."""

from __future__ import annotations

import importlib
import pickle
from typing import Optional

import pytest
from pickles_v0_1 import PICKLES

from helpers.eventstream import encode_message
from ssewire import IMPLEMENTATION
from ssewire._scan import scanner_py

_MESSAGE = encode_message({":event-type": "chunk", ":message-type": "event"}, b'{"x":1}')


def test_twin_scanners_pickled_mid_stream_by_0_1_go_on_where_they_stopped() -> None:
    sse = pickle.loads(PICKLES["twin SSEParser mid-event"])
    assert isinstance(sse, scanner_py.SSEParser)
    assert [(e.event, e.data) for e in sse.feed(b"o\n\n")] == [("message", "two")]
    array = pickle.loads(PICKLES["twin JSONArrayStreamParser mid-element"])
    assert [e.data for e in array.feed(b": 2}]")] == ['{"b": 2}']
    lines = pickle.loads(PICKLES["twin NDJSONParser mid-line"])
    assert [e.data for e in lines.feed(b": 2}\n")] == ['{"b": 2}']
    messages = pickle.loads(PICKLES["twin EventStreamParser mid-message"])
    assert [m.event for m in messages.feed(_MESSAGE[7:])] == ["chunk"]


@pytest.mark.parametrize("label", ["twin", "compiled"])
def test_events_pickled_by_0_1_load_as_equal_events(label: str) -> None:
    if label == "compiled" and IMPLEMENTATION != "cython":
        pytest.skip("the compiled scanner is not built here: its 0.1 pickles name ssewire._scanner_c")
    event = pickle.loads(PICKLES[f"{label} SSEEvent"])
    assert (event.event, event.data, event.id, event.retry) == ("a", "x", "7", 5)
    message = pickle.loads(PICKLES[f"{label} EventStreamMessage"])
    assert (message.event, message.message_type, message.payload) == ("chunk", "event", b'{"x":1}')


@pytest.mark.c_extension
def test_the_compiled_module_is_still_named_ssewire_scanner_c() -> None:
    if IMPLEMENTATION != "cython":
        pytest.skip("the compiled scanner is not built here")
    old = importlib.import_module("ssewire._scanner_c")
    new = importlib.import_module("ssewire._scan.scanner_c")
    assert old.SIMD == new.SIMD and old.SIMD in ("none", "sse2", "avx2")
    assert old.SSEParser is new.SSEParser


@pytest.mark.parametrize(
    ("name", "needs"),
    [
        ("adapters", None),
        ("stream", None),
        ("names", None),
        ("usage", None),
        ("tap", None),
        ("batch", None),
        ("cli", None),
        ("otel", "opentelemetry"),
        ("httpx_sse", "httpx"),
    ],
)
def test_a_module_path_of_the_readme_imports(name: str, needs: Optional[str]) -> None:
    if needs is not None:
        pytest.importorskip(needs)  # its extra
    assert importlib.import_module(f"ssewire.{name}").__name__ == f"ssewire.{name}"


def test_the_entry_points_and_the_arrow_path() -> None:
    from ssewire.batch import result_row
    from ssewire.cli import main

    assert callable(main) and callable(result_row)
    pytest.importorskip("pyarrow")
    from ssewire import arrow
    from ssewire.batch import arrow as home

    assert arrow.parse_batch is home.parse_batch
