"""Every provider's normaliser takes any payload without raising: real payloads from the fixtures (and the corpus,
when present) with one value anywhere replaced by an arbitrary JSON value, fed in stream order. Unknown shapes
become ``raw`` (or an ``error`` event), never an exception."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from helpers.streams import all_streams
from ssewire import UNIFIED_TYPES, DetectionError, iter_events, normalizer_for
from ssewire.names import ProviderName

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _streams() -> dict[str, list[tuple[Any, Any]]]:
    """Per provider, the ``(event name, decoded payload)`` of one stream of each file (the first 60 events)."""
    out: dict[str, list[tuple[Any, Any]]] = {}
    for name, data, provider, framing in all_streams():
        if name.startswith("generated-") or (provider in out and len(out[provider]) > 400):
            continue
        events = []
        try:
            for ev in iter_events([data], framing):
                try:
                    events.append((ev.event, json.loads(ev.data)))
                except ValueError:
                    events.append((ev.event, ev.data))
                if len(events) >= 60:
                    break
        except ValueError:  # a fixture cut on purpose
            pass
        out.setdefault(provider, []).extend(events)
    return out


STREAMS = _streams()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            paths += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            paths += _paths(inner, (*prefix, index))
    return paths


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(copy[path[0]], path[1:], new)
    return copy


@pytest.mark.parametrize("provider", sorted(STREAMS))
@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_any_value_anywhere_never_raises(provider: str, data: st.DataObject) -> None:
    from ssewire.events import SSEEvent

    events = STREAMS[provider]
    normalizer = normalizer_for(provider)  # type: ignore[arg-type]
    out = []
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(events) - 1))
        name, payload = events[at]
        path = data.draw(st.sampled_from(_paths(payload)))
        mutated = _replaced(payload, path, data.draw(_values))
        text = mutated if isinstance(mutated, str) else json.dumps(mutated)
        for before in events[:at]:
            out += normalizer(SSEEvent(before[0], before[1] if isinstance(before[1], str) else json.dumps(before[1])))
        out += normalizer(SSEEvent(name, text))
        if isinstance(mutated, dict):
            out += normalizer.frame(mutated)
    out += normalizer.finish()
    assert all(event.type in UNIFIED_TYPES for event in out)


#: Members whose value a normaliser dispatches on (looks up in a table or a set): any JSON value may stand there.
DISCRIMINATORS = frozenset(
    {"type", "event_type", "object", "role", "finish_reason", "stop_reason", "status", "format", "event", "kind"}
)


@pytest.mark.parametrize("provider", sorted(STREAMS))
def test_a_list_or_an_object_where_a_name_is_looked_up_never_raises(provider: str) -> None:
    """Every member a normaliser dispatches on, in every payload of the provider's streams, replaced by a list and
    by an object (neither can be looked up in a table: an unguarded lookup raises TypeError), read after the
    payloads before it, named and auto-detected."""
    from ssewire.events import SSEEvent

    events = STREAMS[provider]
    for at, (name, payload) in enumerate(events):
        for path in _paths(payload):
            if not path or path[-1] not in DISCRIMINATORS:
                continue
            for value in ([1], {"type": [1]}):
                mutated = json.dumps(_replaced(payload, path, value))
                for reading in (provider, "auto"):
                    normalizer = normalizer_for(reading)  # type: ignore[arg-type]
                    out = []
                    try:
                        for before in events[:at]:
                            out += normalizer(SSEEvent(before[0], json.dumps(before[1])))
                        out += normalizer(SSEEvent(name, mutated))
                        out += normalizer.finish()
                    except DetectionError:  # (a first payload no provider sends: auto-detection says so)
                        assert reading == "auto" and at == 0, (reading, path, value)
                    assert all(event.type in UNIFIED_TYPES for event in out), (reading, path, value)


@pytest.mark.parametrize("provider", sorted(get_args(ProviderName)))
@pytest.mark.parametrize("value", [None, [1], "text", 3, b"{}"], ids=repr)
def test_a_payload_that_is_no_dict_is_a_type_error(provider: str, value: Any) -> None:
    """``payload()`` reads a decoded JSON object; anything else, whichever the provider (and ``auto``), is a
    ``TypeError`` naming what it got, on both implementations (the compiled one reads payloads with dict's own
    methods, which would otherwise fail with a ``SystemError``)."""
    normalizer = normalizer_for(provider)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=f"a payload is a dict, not {type(value).__name__}"):
        normalizer.payload(value)
