"""Runs of text and reasoning deltas written by ``Encoder.write_all`` (in compiled code where it is built) give the
text :meth:`Encoder.write` gives for each event, on every target."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssewire import Unified
from ssewire.citations import Citation
from ssewire.encoders import TARGETS, Encoder
from ssewire.encoders import base as encoders_base
from ssewire.encoders.base import PIECES_JOINED
from ssewire.normalizers._fast import typed

TEXTS = [
    "hi",
    "",
    "".join(map(chr, range(128))),
    "\b\f",
    "é ☃ 𝄞 \u07ff\u0800\uffff\U00010000\U0010ffff",
    'quote " back \\ slash',
    "ctl \x00\x01\x1f\t\n\r\x7f",
    "\ud800 lone \udfff",
    "long " * 40,
    "x",
]


def _events() -> list[Unified]:
    """A stream whose runs of deltas are cut by every kind of event the run writer must leave to ``write``."""
    out = [Unified("text_delta", text=text) for text in TEXTS]
    out += [Unified("reasoning_delta", text=text) for text in TEXTS]
    out += [Unified("text_delta", text="signed", signature="sig"), Unified("text_delta", text="after")]
    out += [Unified("raw", raw={"a": 1}), Unified("text_delta", text="after raw")]
    cited = Unified("text_delta", text="cited", citations=[Citation("url", "https://example.com", "t")])
    out += [cited, Unified("text_delta", text="after citation")]
    out += [Unified("reasoning_delta", text="think"), Unified("text_delta", text="back to text")]
    out += [Unified("text_delta", text=f"{i},") for i in range(3 * PIECES_JOINED + 5)]  # (Responses compacts)
    out += [Unified("tool_call_start", tool_call_id="c1", tool_name="f")]
    out += [Unified("tool_call_delta", tool_call_id="c1", arguments_delta='{"a":1}')]
    out += [Unified("tool_call_done", tool_call_id="c1", tool_name="f", arguments={"a": 1})]
    out += [Unified("text_delta", text="last"), Unified("done", stop_reason="end")]
    return out


def _encoder(to: str) -> Encoder:
    return Encoder(to, created=1_700_000_000, response_id="r-1", model="m")


def _each(encoder: Encoder, events: list[Unified]) -> bytes:
    """The bytes ``write`` makes of each event, one at a time."""
    return b"".join(b"".join(encoder.pieces(encoder.write(event))) for event in events)


def _all(encoder: Encoder, events: list[Unified]) -> bytes:
    """The bytes ``write_all`` makes of ``events`` (runs written as UTF-8 and held: given by ``pieces``)."""
    return b"".join(encoder.pieces("".join(encoder.write_all(events))))


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("batch", [1, 3, 50, None])
@pytest.mark.parametrize("held_from", [0, encoders_base.RUN_HELD_FROM, 1 << 30])  # runs held as UTF-8: all, long, none
def test_runs_are_written_as_each_event_is(
    to: str, batch: Any, held_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(encoders_base, "RUN_HELD_FROM", held_from)
    events = _events()
    one = _encoder(to)
    expected = _each(one, events) + one.close()
    runs = []
    real = typed.write_texts  # (the compiled writer, or None: what encoders.base writes runs with)
    if real is not None:

        def counted(*args: Any) -> Any:
            got = real(*args)
            runs.append(got[2])
            return got

        monkeypatch.setattr(encoders_base, "_write_texts", counted)
    many = _encoder(to)
    size = batch or len(events)
    got = b"".join(_all(many, events[i : i + size]) for i in range(0, len(events), size))
    assert got + many.close() == expected
    if real is not None and batch != 1:
        assert sum(runs) > len(TEXTS), "the compiled writer wrote the runs"


def test_without_the_compiled_writer_every_event_is_written_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoders_base, "_write_texts", None)
    events = _events()
    for to in TARGETS:
        one, many = _encoder(to), _encoder(to)
        assert many.write_all(events) == [one.write(event) for event in events] and many.held == one.held


ANY_CHARACTER = st.characters(blacklist_categories=())  # lone surrogates too


@given(st.lists(st.text(ANY_CHARACTER), min_size=1, max_size=8))
def test_any_text_is_quoted_as_the_standard_library_quotes_it(texts: list[str]) -> None:
    events = [Unified("text_delta", text="first")] + [Unified("text_delta", text=text) for text in texts]
    for to in ("openai-chat", "openai"):
        one, many = _encoder(to), _encoder(to)
        assert _all(many, events) == _each(one, events)


@pytest.mark.parametrize("signature", [None, "sig", "\ud800 lone " * 20])
@pytest.mark.parametrize("short_output", [0, 1 << 30])  # the finished items kept as UTF-8, or all kept as text
def test_responses_short_items_are_written_as_text_and_as_held_pieces_alike(
    signature: Any, short_output: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ssewire.encoders import openai as responses

    events = _events()
    events.insert(len(TEXTS), Unified("reasoning_delta", text="r", signature=signature))  # encrypted_content
    cited = Citation("url", "https://a.example", "t", start=0, end=1)
    events.insert(3, Unified("text_delta", text="", citations=[cited]))
    monkeypatch.setattr(responses, "SHORT_OUTPUT", short_output)  # (1 << 30: the final response written as text)
    as_text = _encoder("openai")
    text = "".join(as_text.write(event) for event in events).encode("utf-8", "backslashreplace") + as_text.close()
    monkeypatch.setattr(responses, "SHORT_OUTPUT", 0)
    monkeypatch.setattr(responses, "SHORT_ITEM", 0)  # every item, and the final response, made as UTF-8 pieces
    monkeypatch.setattr(encoders_base, "HELD_FROM", 0)  # ... and held as such
    held = _encoder("openai")
    pieces = b"".join(b"".join(held.pieces(held.write(event))) for event in events) + held.close()
    assert text == pieces and held.held == []
    assert b'"encrypted_content"' in text and b'"annotations":[{"type":"url_citation"' in text


@given(
    st.lists(st.lists(st.sampled_from(["a", "é", "🙂", "\ud800", encoders_base.HELD, '"', ""]), max_size=6), max_size=6)
)
def test_a_chunks_texts_encoded_each_on_its_own_are_the_bytes_of_their_join(parts: list[list[str]]) -> None:
    """``pieces_each`` (and ``transcode``'s ``utf8_pieces``, which joins only ASCII texts) give the bytes
    ``pieces`` gives for the texts joined, each held run in the place of its mark."""
    from ssewire.transcode import utf8_pieces

    texts = ["".join(part) for part in parts]
    marks = sum(text.count(encoders_base.HELD) for text in texts)
    runs = [[f"<run {i}>".encode(), b"", "é".encode()] for i in range(marks)]
    joined, each, either = _encoder("openai"), _encoder("openai"), _encoder("openai")
    for encoder in (joined, each, either):
        encoder.held = [list(run) for run in runs]
    between = "".join(texts).split(encoders_base.HELD)  # (the oracle: the text around each mark, by split)
    expected = between[0].encode("utf-8", "backslashreplace")
    for run, after in zip(runs, between[1:]):
        expected += b"".join(run) + after.encode("utf-8", "backslashreplace")
    made = joined.pieces("".join(texts))
    assert b"".join(made) == expected and b"" not in made and joined.held == []
    got = each.pieces_each(list(texts))
    assert b"".join(got) == expected and b"" not in got and each.held == []
    assert b"".join(utf8_pieces(either, list(texts))) == expected and either.held == []


def test_a_mark_without_its_run_is_a_bug_said_out_loud() -> None:
    encoder = _encoder("openai")
    encoder.held = [[b"x"]]
    with pytest.raises(AssertionError, match="1 runs of pieces held, 2 marks"):
        encoder.pieces_each(["a" + encoders_base.HELD, encoders_base.HELD + "é"])
    encoder.held = [[b"x"], [b"y"]]
    with pytest.raises(AssertionError, match="2 runs of pieces held, 1 marks"):
        encoder.pieces_each(["é" + encoders_base.HELD])
