"""What every encoder promises whatever it is fed: the constructor's errors, an empty or cut source ending as the
target's error, nothing after the end, what it drops counted, and any sequence of unified events -- in any order,
with any field values -- written without an exception to bytes ssewire reads back without one."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from helpers import FIXTURES, examples
from ssewire import UNIFIED_TYPES, Citation, Encoder, Unified, collect, iter_unified, transcode
from ssewire._json import quote_utf8
from ssewire.encoders import ENCODERS, TARGETS, ChatEncoder
from ssewire.encoders.base import PIECES_JOINED, Pieces, dumps, quote, quote_text, utf8
from ssewire.encoders.chat import chat_usage, chat_usage_json
from ssewire.encoders.gemini import is_base64
from ssewire.encoders.openai import responses_usage, usage_json
from ssewire.usage import Usage


def test_the_target_is_named_and_checked() -> None:
    with pytest.raises(TypeError):
        Encoder()
    with pytest.raises(ValueError, match="openai-chat"):
        Encoder("open-ai")
    with pytest.raises(ValueError):
        ChatEncoder("anthropic")
    with pytest.raises(TypeError, match="include_usage"):
        Encoder("anthropic", include_usage=True)
    for to, cls in ENCODERS.items():
        encoder = Encoder(to)
        assert type(encoder) is cls and isinstance(encoder, Encoder) and encoder.to == to
        assert encoder.content_type == "text/event-stream"
    assert Encoder("vercel-ui").headers["x-vercel-ai-ui-message-stream"] == "v1"


@pytest.mark.parametrize("to", TARGETS)
def test_a_source_that_said_nothing_ends_as_a_truncation_error(to: str) -> None:
    encoder = Encoder(to, model="m", response_id="r1")
    out = encoder.close()
    assert encoder.close() == b"" and encoder.encode(Unified("text_delta", text="late")) == b""
    back = collect(iter_unified([out], to))  # type: ignore[arg-type]
    assert back.error is not None and back.error["type"] == "stream_truncated"
    assert back.stop_reason in (None, "failed") and back.text == ""


@pytest.mark.parametrize("to", TARGETS)
def test_nothing_is_written_after_the_end(to: str) -> None:
    encoder = Encoder(to, model="m", response_id="r1")
    encoder.encode(Unified("text_delta", text="hi"))
    encoder.encode(Unified("done", stop_reason="end"))
    end = encoder.close()
    assert end  # the stop, written once the source ended
    assert encoder.encode(Unified("text_delta", text="after")) == b"" and encoder.close() == b""
    assert b"after" not in end


@pytest.mark.parametrize("to", ["openai-chat", "openai", "gemini"])
def test_server_calls_a_target_cannot_carry_are_counted(to: str) -> None:
    data = (FIXTURES / "openai-responses-mcp.sse").read_bytes()
    source = collect(iter_unified([data], "openai"))
    assert source.server_tool_calls
    normalizer_events = list(iter_unified([data], "openai"))
    encoder = Encoder(to)
    out = b"".join(encoder.encode(e) for e in normalizer_events) + encoder.close()
    assert encoder.dropped["server_tool_call"] == len(source.server_tool_calls)
    back = collect(iter_unified([out], to))  # type: ignore[arg-type]
    assert not back.server_tool_calls


def test_chat_without_include_usage_counts_the_usage_it_left_out() -> None:
    data = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
    pieces = list(transcode([data], "anthropic", "openai-chat", include_usage=False))
    assert b'"usage"' not in b"".join(pieces)
    encoder = Encoder("openai-chat", include_usage=False)
    for event in iter_unified([data], "anthropic"):
        encoder.encode(event)
    encoder.close()
    assert encoder.dropped["usage"] == 1


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("ending", ["end", "failed", "truncated"])
def test_a_usage_count_the_target_has_no_member_for_is_counted_once(to: str, ending: str) -> None:
    """``dropped`` counts each occurrence once, however the stream ends (a stop, a stop the target writes as its
    error, a cut source)."""
    usage = {"input_tokens": 4, "output_tokens": 5, "cache_creation_input_tokens": 7}
    encoder = Encoder(to, model="m", response_id="r1")
    events = [Unified("text_delta", text="hi"), Unified("usage", usage=usage)]
    if ending != "truncated":
        events.append(Unified("done", stop_reason=ending))
    for event in events:
        encoder.encode(event)
    encoder.close()
    reasoning = Encoder(to, model="m", response_id="r1")
    gemini_usage = {"promptTokenCount": 1, "candidatesTokenCount": 2, "thoughtsTokenCount": 9}
    reasoning.encode(Unified("usage", usage=gemini_usage))
    reasoning.encode(Unified("done", stop_reason=ending if ending != "truncated" else "end"))
    reasoning.close()
    cls = type(encoder)
    assert encoder.dropped["cache_write_tokens"] == (0 if cls.carries_cache_writes else 1)
    counts = reasoning.usage
    assert counts is not None and counts.reasoning_tokens == 9
    lost = not cls.carries_reasoning_tokens or (cls.reasoning_within_output and (counts.output_tokens or 0) < 9)
    assert reasoning.dropped["reasoning_tokens"] == int(lost)


_SIGNATURE = "c2lnbmF0dXJl"
#: A tool call's signature on each event it may come on: the call's start (and again on its done), a call sent
#: whole, a delta of a call already opened, a call the provider ran.
_CALL_SIGNATURES = {
    "start": [
        Unified("tool_call_start", tool_call_id="c1", tool_name="f", signature=_SIGNATURE),
        Unified("tool_call_done", tool_call_id="c1", arguments={}, signature=_SIGNATURE),
    ],
    "whole": [
        Unified("tool_call_done", tool_call_id="c1", tool_name="f", arguments={"a": 1}, signature=_SIGNATURE),
    ],
    "late": [
        Unified("tool_call_start", tool_call_id="c1", tool_name="f"),
        Unified("tool_call_delta", tool_call_id="c1", arguments_delta="{}", signature=_SIGNATURE),
        Unified("tool_call_done", tool_call_id="c1", arguments={}),
    ],
    "server": [
        Unified("tool_call_start", tool_call_id="s1", tool_name="web", server=True, signature=_SIGNATURE),
        Unified("tool_call_done", tool_call_id="s1", arguments={}, server=True),
    ],
}


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("placement", list(_CALL_SIGNATURES))
def test_a_tool_calls_signature_is_written_once_or_counted_once(to: str, placement: str) -> None:
    encoder = Encoder(to, model="m", response_id="r1", created=1)
    events = [Unified("text_delta", text="hi"), *_CALL_SIGNATURES[placement], Unified("done", stop_reason="tool_use")]
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    written, dropped = out.count(_SIGNATURE.encode()), encoder.dropped["signature"]
    once = 2 if to == "openai" else 1  # (the Responses API's final response repeats every item)
    assert (written, dropped) in ((once, 0), (0, 1))


@pytest.mark.parametrize("to", TARGETS)
def test_an_encoder_that_lost_nothing_has_nothing_in_dropped(to: str) -> None:
    events = [Unified("text_delta", text="hi"), Unified("done", stop_reason="end")]
    rendering = Encoder(to, model="m", response_id="r1")
    rendering.render(collect(events))
    streaming = Encoder(to, model="m", response_id="r1")
    for event in events:
        streaming.encode(event)
    streaming.close()
    assert not rendering.dropped and not streaming.dropped and dict(rendering.dropped) == {}


def test_a_signature_that_is_not_base64_is_not_written_to_gemini() -> None:
    encoder = Encoder("gemini", model="m", response_id="r1")
    out = encoder.encode(Unified("raw", signature="not base64!")) + encoder.encode(Unified("raw", signature="QUJD"))
    assert b"not base64" not in out and b"QUJD" in out
    assert encoder.dropped["signature"] == 1


def _decodes_as_base64(text: str) -> bool:
    """The standard library's answer: ``text`` (of a length divisible by four) is what ``b64decode`` takes."""
    if len(text) % 4:
        return False
    try:
        base64.b64decode(text, validate=True)
    except ValueError:
        return False
    return True


@settings(max_examples=examples(400))
@given(
    text=st.one_of(
        st.text(st.sampled_from("QUJDZmY0+/=Ae\n \u00e9-_"), max_size=24),
        st.builds(
            lambda raw, cut: base64.b64encode(raw).decode()[: len(raw) * 2 + cut],
            st.binary(max_size=40),
            st.integers(0, 4),
        ),
        st.text(max_size=12),
    )
)
@example(text="A===")
@example(text="====")
@example(text="AB==")
@example(text="A=B=")
@example(text="QUJD\n")
@example(text="")
@example(text="é===")
@example(text="QU J")
@example(text="QUJ=")
@example(text="Q===QUJD")
def test_a_signature_is_base64_exactly_where_the_standard_library_decodes_it(text: str) -> None:
    assert is_base64(text) == _decodes_as_base64(text)


# -- any events --------------------------------------------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=()), max_size=8)  # lone surrogates too (JSON can escape them)
_IDS = st.sampled_from([None, "c1", "c2", "", "call_0", "id\ud800"])
_NAMES = st.sampled_from([None, "f", "web_search", ""])
_USAGES = st.sampled_from(
    [
        None,
        {},
        {"input_tokens": 5, "output_tokens": 2},
        {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
        {"promptTokenCount": 1, "candidatesTokenCount": 2, "thoughtsTokenCount": 9},
        {"input_tokens": "x"},
    ]
)
_STOPS = st.sampled_from(
    [None, "end", "max_tokens", "tool_use", "stop_sequence", "refusal", "incomplete", "failed", "cancelled", "other"]
)
_ERRORS = st.sampled_from([None, {}, {"type": "overloaded_error", "message": "busy"}, {"type": 3, "message": None}])
_EVENTS = st.builds(
    Unified,
    st.sampled_from(sorted(UNIFIED_TYPES)),
    text=_TEXT,
    tool_call_id=_IDS,
    tool_name=_NAMES,
    arguments_delta=_TEXT,
    arguments=st.sampled_from([None, {}, {"a": 1}]),
    usage=_USAGES,
    stop_reason=_STOPS,
    error=_ERRORS,
    server=st.booleans(),
    signature=st.sampled_from([None, "c2ln", "sig"]),
    arguments_raw=st.sampled_from([None, "", "{", '{"a": 1}', "[1]"]),
)


@pytest.mark.parametrize("to", TARGETS)
@settings(max_examples=examples(200))
@given(events=st.lists(_EVENTS, max_size=12), close=st.booleans())
def test_any_events_are_written_and_read_back_without_an_exception(to: str, events: list[Unified], close: bool) -> None:
    encoder = Encoder(to, model="m", response_id="r1", created=1)
    out = b"".join(encoder.encode(event) for event in events)
    if close:
        out += encoder.close()
    text = out.decode("utf-8")  # valid UTF-8: a lone surrogate is written as its JSON escape
    for line in text.split("\n"):  # every data line is JSON (or the [DONE] sentinel); SSE lines end at \n only
        if line.startswith("data: ") and line != "data: [DONE]":
            json.loads(line[6:])
    if to == "openai":  # events in the order they were made, pieces made as UTF-8 included
        numbers = [int(n) for n in re.findall(rb'"sequence_number":(\d+)\}\n\n', out)]
        assert numbers == list(range(len(numbers))) and len(numbers) == out.count(b"\n\n")
    back = collect(iter_unified([out], to))  # type: ignore[arg-type]
    if close and not any(e.type in ("done", "error") for e in events):  # a source that never ended
        assert back.error is not None and back.error["type"] == "stream_truncated"
        assert back.stop_reason not in ("end", "tool_use", "max_tokens")
        assert back.text == "".join(e.text for e in events if e.type == "text_delta")


@pytest.mark.parametrize("to", TARGETS)
def test_an_error_after_the_stop_is_written_before_the_targets_end(to: str) -> None:
    """Clients stop reading at the target's end (``[DONE]``, ``message_stop``, ``response.completed``): an error the
    source sent after its stop is written as one sent before it, then the stop."""
    text, stop = Unified("text_delta", text="hi"), Unified("done", stop_reason="end")
    error = Unified("error", error={"type": "overloaded", "message": "x"})
    encoder = Encoder(to, model="m", response_id="r1")
    out = b"".join(encoder.encode(e) for e in (text, stop, error)) + encoder.close()
    before = Encoder(to, model="m", response_id="r1")
    assert out == b"".join(before.encode(e) for e in (text, error, stop)) + before.close()
    back = collect(iter_unified([out], to))  # type: ignore[arg-type]
    assert back.text == "hi" and back.error is not None and back.error["type"] == "overloaded"
    ends = {
        "openai-chat": b"data: [DONE]",
        "openai": b"event: response.completed",
        "anthropic": b"event: message_stop",
        "gemini": b'"finishReason"',
        "vercel-ui": b'"type":"finish"',
    }
    assert out.index(b"overloaded") < out.index(ends[to])


@settings(max_examples=examples(100))
@given(texts=st.lists(st.text(max_size=3), max_size=2000))
def test_pieces_hold_many_small_texts_compact_and_give_them_back_whole(texts: list[str]) -> None:
    pieces = Pieces()
    for round_ in range(2):  # taken, it starts again
        for text in texts:
            pieces.append(text)
            if len(pieces) >= pieces.limit:
                pieces.compact()
            assert len(pieces) <= len(texts) // PIECES_JOINED + PIECES_JOINED
        assert pieces.take_quoted_text() == quote("".join(texts)) and len(pieces) == 0, round_


#: Texts of every kind of character: ASCII, what JSON escapes, non-ASCII up to the astral planes, lone surrogates.
_ANY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x7F), st.characters(), st.sampled_from(['"', "\\", "\n", "\x00", "\ud800"])
    ),
    max_size=300,
)


@settings(max_examples=examples(300))
@given(text=_ANY_TEXT)
def test_long_and_short_texts_are_quoted_alike_by_every_encoder(text: str) -> None:
    """The fast encoder quotes a long text (or one held as UTF-8) exactly as the standard library's escaper does."""
    for piece in (text, text * 7):
        assert quote_text(piece) == quote(piece)
        assert quote_utf8(piece) == utf8(quote(piece))


@settings(max_examples=examples(100))
@given(texts=st.lists(_ANY_TEXT, max_size=600))
@pytest.mark.parametrize("quoted", ["none", "some", "all"])  # texts kept as they are, or quoted as written (runs)
def test_pieces_taken_quoted_are_the_whole_text_quoted(texts: list[str], quoted: str) -> None:
    """Texts kept as they are and texts quoted as they were written, as the run writer does (UTF-8 without the
    quotes), joined in any mix and compacted, are the whole text quoted: a lone surrogate, or half of a pair, at a
    piece's end or start included."""
    for take in ("bytes", "text"):
        pieces = Pieces()
        for number, text in enumerate(texts):
            as_written = quoted == "all" or (quoted == "some" and number % 3 == 1)
            pieces.append(quote_utf8(text)[1:-1] if as_written else text)
            if len(pieces) >= pieces.limit:
                pieces.compact()
        whole = "".join(texts)
        if take == "bytes":
            assert pieces.take_quoted() == utf8(quote(whole)) == quote_utf8(whole)
        else:
            assert utf8(pieces.take_quoted_text()) == utf8(quote(whole))
        assert len(pieces) == 0 and pieces.take_quoted() == b'""' and pieces.take_quoted_text() == '""'


@pytest.mark.parametrize("to", TARGETS)
def test_lone_surrogates_anywhere_are_written_as_json_escapes(to: str) -> None:
    call = {
        "index": 0,
        "id": "c\\ud800",
        "type": "function",
        "function": {"name": "f\\udfff", "arguments": '{"a":"\\ud800"}'},
    }
    chunks = [
        {"id": "id\\ud800", "model": "m\\udc00", "choices": [{"index": 0, "delta": {"content": "a\\ud800b"}}]},
        {"id": "id\\ud800", "model": "m\\udc00", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {"id": "id\\ud800", "model": "m\\udc00", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    body = b"".join(b"data: " + json.dumps(c).replace("\\\\u", "\\u").encode() + b"\n\n" for c in chunks)
    body += b"data: [DONE]\n\n"
    source = collect(iter_unified([body], "openai-chat"))
    assert source.text == "a\ud800b"
    out = b"".join(transcode([body], "openai-chat", to))  # type: ignore[arg-type]
    out.decode("utf-8")
    back = collect(iter_unified([out], to))  # type: ignore[arg-type]
    assert back.text == source.text
    assert [(c.id, c.name) for c in back.client_tool_calls] == [(c.id, c.name) for c in source.client_tool_calls]


@pytest.mark.parametrize("to", TARGETS)
def test_transcode_gives_each_chunk_in_one_piece_but_a_large_repeated_text(to: str) -> None:
    """Each source chunk's bytes come as one piece (fewer, larger writes), unless they are over 64 KiB and the
    target repeats a large text it made as UTF-8 (the Responses API's done events and final response): then its
    pieces share that text's bytes, so no copy of it is made."""
    data = (FIXTURES / "openai-responses-tool-call.sse").read_bytes()
    pieces = list(transcode([data], "openai", to, created=1))  # type: ignore[arg-type]
    assert len(pieces) <= 2 and all(pieces)  # the chunk's, then the end's
    chunks = [data[i : i + 97] for i in range(0, len(data), 97)]
    assert b"".join(transcode(chunks, "openai", to, created=1)) == b"".join(pieces)  # type: ignore[arg-type]
    text = "long " * 30_000
    source = Encoder("openai-chat", model="m")
    chat = b"".join(source.encode(e) for e in (Unified("text_delta", text=text), Unified("done", stop_reason="end")))
    pieces = list(transcode([chat + source.close()], "openai-chat", to))  # type: ignore[arg-type]
    back = collect(iter_unified([b"".join(pieces)], to))  # type: ignore[arg-type]
    assert (back.text, back.stop_reason, back.error) == (text, "end", None)
    if to == "openai":  # the delta, two done events and the final response: the last three share the text's bytes
        assert max(map(len, pieces)) < 2 * len(text) and sum(map(len, pieces)) > 4 * len(text)


_USAGE_COUNTS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens", "reasoning_tokens")
_COUNTS = st.one_of(st.none(), st.integers(min_value=0, max_value=2**63 - 1))


@settings(max_examples=examples(100))
@given(counts=st.fixed_dictionaries(dict.fromkeys(_USAGE_COUNTS, _COUNTS)))
def test_the_usage_is_written_as_dumps_writes_its_object(counts: dict[str, Any]) -> None:
    """The Responses and Chat targets write their ``usage`` text directly; it is the JSON of their usage object."""
    usage = Usage(**counts)
    assert usage_json(usage) == dumps(responses_usage(usage))
    assert chat_usage_json(usage) == dumps(chat_usage(usage))
    assert json.loads(usage_json(usage))["total_tokens"] == (counts["input_tokens"] or 0) + (
        counts["output_tokens"] or 0
    )


@pytest.mark.parametrize("to", TARGETS)
def test_content_after_a_stop_ends_with_that_stop_as_collect_reads_it(to: str) -> None:
    """A second message after a stop continues the one response; a source that sends no second stop ended with the
    first (as ``collect()`` reads it), not cut short."""
    events = [Unified("text_delta", text="one"), Unified("done", stop_reason="end"), Unified("text_delta", text="two")]
    encoder = Encoder(to, model="m", response_id="r1")
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    back = collect(iter_unified([out], to))  # type: ignore[arg-type]
    source = collect(events)
    assert source.error is None and source.stop_reason == "end"
    assert (back.text, back.stop_reason, back.error) == ("onetwo", "end", None)


def test_chat_counts_a_tool_use_stop_with_no_call_for_the_client_as_dropped() -> None:
    events = [Unified("text_delta", text="a"), Unified("done", stop_reason="tool_use")]
    encoder = Encoder("openai-chat", model="m", response_id="r1")
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    assert b'"finish_reason":"stop"' in out and encoder.dropped["stop_reason"] == 1
    rendering = Encoder("openai-chat", model="m", response_id="r1")
    assert rendering.render(collect(events))["choices"][0]["finish_reason"] == "stop"
    assert rendering.dropped["stop_reason"] == 1


def test_chat_without_include_usage_counts_a_usage_that_changed_after_an_error_once() -> None:
    events = [
        Unified("usage", usage={"prompt_tokens": 10, "completion_tokens": 5}),
        Unified("text_delta", text="hi"),
        Unified("error", error={"type": "overloaded", "message": "x"}),
        Unified("usage", usage={"prompt_tokens": 10, "completion_tokens": 9}),
        Unified("done", stop_reason="end"),
    ]
    encoder = Encoder("openai-chat", include_usage=False, model="m", response_id="r1")
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    assert b'"usage"' not in out and encoder.dropped["usage"] == 1


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("ending", ["error", "stop"])
def test_a_citation_after_the_targets_error_or_end_is_written_or_counted(to: str, ending: str) -> None:
    cited = Unified("raw", citations=[Citation("url_citation", url="https://a.example", title="A")])
    end = (
        Unified("error", error={"type": "overloaded", "message": "x"})
        if ending == "error"
        else Unified("done", stop_reason="end")
    )
    encoder = Encoder(to, model="m", response_id="r1")
    events = [Unified("text_delta", text="a"), end, Unified("text_delta", text="b"), cited]
    if ending == "stop":  # (a stop, then an error: the target ended at the stop, then reports the error)
        events[2] = Unified("error", error={"type": "overloaded", "message": "x"})
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    assert (b"https://a.example" in out) != (encoder.dropped["citation"] == 1)


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("stop_after", [False, True])
def test_a_usage_that_came_after_the_error_is_written_or_counted(to: str, stop_after: bool) -> None:
    events = [
        Unified("text_delta", text="hi"),
        Unified("error", error={"type": "overloaded", "message": "x"}),
        Unified("usage", usage={"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}),
    ]
    if stop_after:
        events.append(Unified("done", stop_reason="end"))
    encoder = Encoder(to, model="m", response_id="r1")
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    back = collect(iter_unified([out], to))  # type: ignore[arg-type]
    carried = back.usage is not None and back.usage.input_tokens == 11 and back.usage.output_tokens == 7
    assert carried != (encoder.dropped["usage"] == 1)


@pytest.mark.parametrize("to", TARGETS)
def test_a_call_whose_arguments_are_not_an_object_is_rendered_with_them_or_counted(to: str) -> None:
    """A closed call whose argument string is not a JSON object: its text in the body, or counted as dropped."""
    raw = '{"a": [1, 2'
    events = [
        Unified("tool_call_start", tool_call_id="c1", tool_name="f"),
        Unified("tool_call_delta", tool_call_id="c1", arguments_delta=raw),
        Unified("tool_call_done", tool_call_id="c1", arguments_raw=raw),
        Unified("done", stop_reason="tool_use"),
    ]
    result = collect(events)
    assert result.tool_calls and result.tool_calls[0].arguments is None
    encoder = Encoder(to, model="m", response_id="r1")
    body = json.dumps(encoder.render(result))
    assert (json.dumps(raw)[1:-1] in body) != (encoder.dropped["arguments"] == 1)


@pytest.mark.parametrize("to", TARGETS)
def test_an_error_body_counts_what_the_result_held_and_it_cannot_carry(to: str) -> None:
    result = collect(
        [
            Unified("reasoning_delta", text="th", signature="c2lnMQ=="),
            Unified("text_delta", text="hi"),
            Unified("raw", citations=[Citation("url_citation", url="https://x.example", title="X")]),
            Unified("raw", encrypted_reasoning="ENC"),
            Unified("tool_call_done", tool_call_id="s1", tool_name="web_search", arguments={"q": 1}, server=True),
            Unified("usage", usage={"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 3}),
            Unified("error", error={"type": "overloaded", "message": "x"}),
        ]
    )
    encoder = Encoder(to, model="m", response_id="r1")
    body = json.dumps(encoder.render(result))
    assert "https://x.example" not in body and "c2lnMQ==" not in body and "ENC" not in body
    kinds = ("signature", "citation", "encrypted_reasoning", "server_tool_call", "usage")
    assert dict(encoder.dropped) == dict.fromkeys(kinds, 1)


def test_the_ui_message_keeps_a_sources_title_as_the_stream_does() -> None:
    cited = Unified("raw", citations=[Citation("url_citation", url="https://x.example", title="X")])
    result = collect([Unified("text_delta", text="x"), cited, Unified("done", stop_reason="end")])
    parts = Encoder("vercel-ui").render(result)["parts"]
    assert {"type": "source-url", "sourceId": "src-0", "url": "https://x.example", "title": "X"} in parts


@pytest.mark.parametrize("ending", ["cut", "failed", "tool_use", "end"])
@pytest.mark.parametrize("to", TARGETS)
def test_a_call_never_closed_is_read_back_incomplete_or_counted(to: str, ending: str) -> None:
    # a call left open by a cut stream, a failed stop, or a clean stop the source gave with the call unfinished (a
    # UI stream's finish after tool-input-delta): a target that streams calls writes it and its reader finds it
    # open (before a clean stop, which its readers would close it with, the target's error instead); Gemini writes
    # a call whole at its end, so it writes none of it, and says so
    events = [
        Unified("text_delta", text="Let me "),
        Unified("tool_call_start", tool_call_id="c1", tool_name="delete_file"),
        Unified("tool_call_delta", tool_call_id="c1", tool_name="delete_file", arguments_delta='{"path": "/ho'),
    ]
    if ending != "cut":
        events.append(Unified("done", stop_reason=ending))
    encoder = Encoder(to, model="m", response_id="r1")
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    back = collect(iter_unified([out], to))  # type: ignore[arg-type]
    assert back.tool_calls == []  # never written as complete
    read_back = [call.id for call in back.incomplete_tool_calls]
    assert read_back == ["c1"] or encoder.dropped["incomplete_tool_call"] == 1, (read_back, dict(encoder.dropped))
    assert encoder.dropped["incomplete_tool_call"] == (0 if read_back else 1)


@pytest.mark.parametrize("to", TARGETS)
def test_render_counts_the_calls_it_cannot_write(to: str) -> None:
    events = [
        Unified("text_delta", text="Let me "),
        Unified("tool_call_start", tool_call_id="c1", tool_name="delete_file"),
        Unified("tool_call_delta", tool_call_id="c1", tool_name="delete_file", arguments_delta='{"path": "/ho'),
        Unified("done", stop_reason="tool_use"),
    ]
    result = collect(events)
    assert [call.id for call in result.incomplete_tool_calls] == ["c1"]
    encoder = Encoder(to, model="m", response_id="r1")
    body = json.dumps(encoder.render(result))
    assert "/ho" not in body and encoder.dropped["incomplete_tool_call"] == 1


def test_each_anthropic_thinking_block_carries_one_signature() -> None:
    # a signature covers its block's whole text: the reasoning after it goes to a new block (the SDK keeps one
    # signature a block, the last, so two on one block lost the first and signed text it did not cover)
    events = [
        Unified("reasoning_delta", text="first"),
        Unified("raw", signature="c2lnMQ=="),
        Unified("reasoning_delta", text=" second"),
        Unified("raw", signature="c2lnMg=="),
        Unified("text_delta", text="answer"),
        Unified("done", stop_reason="end"),
    ]
    encoder = Encoder("anthropic", model="m", response_id="r1")
    out = b"".join(encoder.encode(event) for event in events) + encoder.close()
    payloads = [json.loads(line[6:]) for line in out.split(b"\n") if line.startswith(b"data: ")]
    signed: dict[int, list[str]] = {}
    texts: dict[int, str] = {}
    for payload in payloads:
        delta = payload.get("delta", {})
        if delta.get("type") == "signature_delta":
            signed.setdefault(payload["index"], []).append(delta["signature"])
        elif delta.get("type") == "thinking_delta":
            texts[payload["index"]] = texts.get(payload["index"], "") + delta["thinking"]
    assert list(signed.values()) == [["c2lnMQ=="], ["c2lnMg=="]]
    assert [texts[index] for index in signed] == ["first", " second"] and not encoder.dropped
    back = collect(iter_unified([out], "anthropic"))
    assert (back.reasoning, back.signatures, back.text) == ("first second", ["c2lnMQ==", "c2lnMg=="], "answer")


def test_the_dropped_count_holds_only_kinds_counted() -> None:
    """``Encoder.dropped``: a Counter that starts empty (falsy), where adding 0 leaves a kind out and a count of a
    kind never counted is 0."""
    dropped = Encoder("openai-chat").dropped
    assert isinstance(dropped, Counter) and not dropped and dropped["signature"] == 0 and "signature" not in dropped
    dropped["signature"] += 0
    assert dropped == {} and not dropped
    dropped["signature"] += 2
    dropped["citation"] += 1
    assert dropped == {"signature": 2, "citation": 1} and dropped.most_common(1) == [("signature", 2)]
    dropped["citation"] -= 1
    assert dropped == {"signature": 2}
