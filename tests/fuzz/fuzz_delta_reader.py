"""Differential fuzzing of the compiled delta reader (``normalizers._fast.deltas_c``) against the full decode (run by
hand, or for a bounded time in CI: libFuzzer prints the seed first, ``INFO: Seed: N``; ``-seed=N`` replays a run).

    python tests/fuzz/fuzz_delta_reader.py -max_total_time=60 -seed=1 -timeout=10 -rss_limit_mb=2048

Each input picks a provider, an SSE event name and a payload -- arbitrary text; or one of the shapes the reader
takes with arbitrary text or JSON pieces spliced in, or bytes cut out; or a shape with a hostile value in place
of one member's value (or as a new member): an integer longer than Python's ``int_max_str_digits`` (4300), plain,
negative or with a fraction, or arrays / objects nested past the reader's depth limit and a recursive decoder's
-- after the unspliced shape (so the spliced payload is read by the shape the reader learned, or found not to be
of it), and normalises it with the reader on and off: after a first chunk that names the stream's id and model,
or opens a tool call, when the input asks for one, and before the event that closes the call; when the input
asks for it, a second normaliser of the same provider reads another shape between every two batches (what one
stream learns must not change another's events). Any difference in the events (``raw`` included), in the
normaliser's state, in the result ``normalize_into`` builds, or in the exception raised, is a crash; so is any
crash of the C code and any exception from a payload of the hostile kinds (every body ends in a typed result). The
file name keeps pytest from collecting it.
"""

from __future__ import annotations

import contextlib
import re
import sys
from typing import Any, Optional

import atheris

with atheris.instrument_imports():
    from ssewire import Accumulator
    from ssewire._scan import scanner_c as _scanner_c
    from ssewire.normalizers import normalizer_for
    from ssewire.normalizers._fast import typed

PROVIDERS = (
    "openai",
    "anthropic",
    "openai-chat",
    "xai",
    "gemini",
    "bedrock-converse",
    "cohere",
    "openai-realtime",
    "gemini-live",
    "vercel-ui",
)
NAMES = (
    "message",
    None,
    "response.output_text.delta",
    "response.reasoning_summary_text.delta",
    "content_block_delta",
    "ping",
    "response.function_call_arguments.delta",
    "response.output_text.done",
    "contentBlockDelta",
    "content-delta",
    "tool-call-delta",
    "tool-plan-delta",
    "step.delta",
    "response.image_generation_call.partial_image",
)
SHAPES = (
    '{"type":"response.output_text.delta","item_id":"m","delta":"hi","sequence_number":7}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}',
    '{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi"},'
    '"finish_reason":null}],"usage":null}',
    '{"candidates":[{"content":{"parts":[{"text":"hi","thought":true}],"role":"model"},"index":0}],'
    '"usageMetadata":{"promptTokenCount":3},"modelVersion":"g","responseId":"r"}',
    '{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\\"a","sequence_number":4}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"a"}}',
    '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":[1.5,"x\\n",-0,{}],"b":null}}}]}}],'
    '"modelVersion":"g"}',
    '{"type":"ping"}',
    '{"contentBlockIndex":0,"delta":{"text":"hi"},"p":"abc"}',
    '{"contentBlockIndex":1,"delta":{"reasoningContent":{"text":"hm"}},"p":"ab"}',
    '{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\\"a"}},"p":"a"}',
    '{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
    '"function":{"arguments":"{\\"a"}}]},"logprobs":null,"finish_reason":null}],"usage":null}',
    '{"type":"response.output_text.done","item_id":"m","output_index":0,"text":"hi","sequence_number":9}',
    '{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"hi"}}}}',
    '{"type":"content-delta","index":0,"delta":{"message":{"content":{"thinking":"hm"}}}}',
    '{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\\"a"}}}}}',
    '{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I will"}}}',
    '{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBO"}}],"role":"model"}}],'
    '"modelVersion":"g"}',
    '{"index":0,"delta":{"type":"text","text":"hi"},"event_type":"step.delta","event_id":"e1"}',
    '{"type":"response.output_audio.delta","event_id":"e","response_id":"r","delta":"QUJD"}',
    '{"type":"response.output_text.delta","event_id":"e","delta":"hi"}',
    '{"type":"response.image_generation_call.partial_image","item_id":"ig","output_index":0,"partial_image_b64":"QUJD",'
    '"sequence_number":3}',
    '{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm","data":"AAAA"}}]}}}',
    '{"type":"text-delta","id":"t0","delta":"hi"}',
    '{"type":"reasoning-delta","id":"r0","delta":"hm"}',
    '{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":[{"type":'
    '"thinking","thinking":[{"type":"text","text":"hm"}]}]},"finish_reason":null}]}',
    '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"hi"}]}}]}',
    '{"id":"g","model":"a/b","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"hm",'
    '"reasoning_details":[{"type":"reasoning.text","text":"hm","format":"unknown","index":0}]}}]}',
    '{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"index":0,"groundingMetadata":{}}],'
    '"modelVersion":"g","responseId":"r"}',
    '{"candidates":[{"content":{"parts":[{"text":"hi"},{"text":"hm","thought":true},{"inlineData":{"data":"QUJD"}},'
    '{"text":"ho"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3},"modelVersion":"g"}',
)
#: Pieces spliced into a shape: members that change what a payload is, values of every JSON type, and the
#: characters strict JSON is picky about.
PIECES = (
    '"usage":{"prompt_tokens":1},',
    '"error":{"message":"x"},',
    '"type":"response.output_text.delta",',
    '"role":"assistant",',
    '"refusal":"no",',
    '"tool_calls":[{"index":0}],',
    '"tool_calls":[],',
    '"object":"chat.completion.chunk",',
    '"id":"call_9",',
    '"index":1,',
    '"arguments":"x",',
    '"name":"g",',
    '"reasoning_content":"r",',
    '"finish_reason":"stop",',
    '"finishReason":"STOP",',
    '"thoughtSignature":"s",',
    '"functionCall":null,',
    '"inlineData":{},',
    '"executableCode":{},',
    '"turnComplete":true,',
    '"usageMetadata":{"totalTokenCount":1},',
    '"goAway":{},',
    '"providerMetadata":{"a":{"signature":"s"}},',
    '"event_type":null,',
    '"sequence_number":1.5,',
    '"delta":null,',
    '"text":"",',
    '"type":"thinking",',
    '"thinking":[{"type":"text","text":"t"}],',
    '"content":[{"type":"text","text":"c"}],',
    '"reasoning_details":[{"type":"reasoning.text","text":"t"}],',
    '"groundingMetadata":{},',
    '"groundingChunks":[{"web":{"uri":"u"}}],',
    '"citationMetadata":{"citations":[]},',
    '"signature":"s",',
    '{"text":"b"},',
    '{"text":"b"},{"text":"c"},{"text":"d"},{"text":"e"},{"text":"f"},{"text":"g"},{"text":"h"},{"text":"i"},',
    '{"thoughtSignature":"s","text":"b"},',
    "null",
    "true",
    '"x"',
    "-0",
    "1e400",
    "NaN",
    "[]",
    "{}",
    "\\u0074",
    "\\ud800",
    ",",
    "}",
    "]",
    " ",
)
#: Where a member's value starts in a shape (a string, a number or a literal after a colon).
VALUE = re.compile(r':("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)')


def _hostile(fdp: Any) -> str:
    """A value no delta is made of: an integer past ``int_max_str_digits`` (plain, negative, with a fraction or
    an exponent) or JSON nested past the reader's depth limit (256) or past the recursion limit (1000), closed or
    not."""
    kind = fdp.ConsumeIntInRange(0, 6)
    if kind <= 3:
        digits = "1" + "0" * fdp.ConsumeIntInRange(4290, 6000)
        return (digits, "-" + digits, digits + ".5", digits + "e3")[kind]
    # Not 600 to 1100 deep: there, whether Python's decoders (json, msgspec) read a document depends on how deep the
    # caller's stack already is, so the same payload decodes in one place and not in another (a known issue of the
    # lazy ``raw``, not of the reader); below, every decode reads it, above, none does.
    depth = fdp.ConsumeIntInRange(250, 600) if fdp.ConsumeBool() else fdp.ConsumeIntInRange(1100, 5000)
    if kind == 4:
        return "[" * depth + "]" * depth
    if kind == 5:
        return '{"a":' * depth + "1" + "}" * depth
    return "[" * depth  # never closed


def _with_hostile(shape: str, fdp: Any) -> str:
    """``shape`` with one member's value (or a new first member's) a :func:`_hostile` value."""
    spots = list(VALUE.finditer(shape))
    value = _hostile(fdp)
    at = fdp.ConsumeIntInRange(0, len(spots))
    if at == len(spots):
        return '{"h":' + value + "," + shape[1:]
    found = spots[at]
    return shape[: found.start(1)] + value + shape[found.end(1) :]


STARTS = {
    "openai-chat": (
        "message",
        '{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,'
        '"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}',
    ),
    "xai": ("message", '{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}]}'),
    "gemini": ("message", '{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"modelVersion":"g0"}'),
    "openai": (
        "response.output_item.added",
        '{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1",'
        '"call_id":"c1","name":"f","arguments":""}}',
    ),
    "anthropic": (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f"}}',
    ),
    "bedrock-converse": (
        "contentBlockStart",
        '{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}',
    ),
    "cohere": (
        "tool-call-start",
        '{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"c1","type":"function",'
        '"function":{"name":"f","arguments":""}}}}}',
    ),
}
STOPS = {
    "openai": (
        "response.output_item.done",
        '{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1",'
        '"call_id":"c1","name":"f"}}',
    ),
    "anthropic": ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    "bedrock-converse": ("contentBlockStop", '{"contentBlockIndex":2}'),
    "cohere": ("tool-call-end", '{"type":"tool-call-end","index":0}'),
}


def _result(provider: str, events: list[Any]) -> Any:
    """What ``normalize_into`` builds from the batches (the text of plain deltas handed over without events)."""
    normalizer = normalizer_for(provider)  # type: ignore[arg-type]
    accumulator = Accumulator()
    for batch in events:
        normalizer.normalize_into(batch, accumulator)
    result = accumulator.result
    calls = [c.to_dict() for c in result.tool_calls + result.incomplete_tool_calls]
    return repr(result), calls, result.last_sequence, accumulator.events, accumulator.deltas


def _decoy(normalizer: Any, event: Any) -> None:
    """The other stream's event read (its events and errors are not compared: only its effect on the first)."""
    with contextlib.suppress(Exception):
        normalizer.normalize([event])


def _run(provider: str, events: list[Any], on: bool, decoy: Optional[Any] = None) -> tuple[Any, ...]:
    """What the batches make with the reader on or off (events, state, ``normalize_into``'s result); with a
    ``decoy`` event, another normaliser of the provider reads it between every two batches."""
    typed.set_enabled(on)
    try:
        normalizer = normalizer_for(provider)  # type: ignore[arg-type]
        other = normalizer_for(provider) if decoy is not None else None  # type: ignore[arg-type]
        made: list[Any] = []
        try:
            for batch in events:
                made += normalizer.normalize(batch)
                if other is not None:
                    _decoy(other, decoy)
            outcome: Any = [e.to_dict(with_raw=True) for e in made]
        except Exception as exc:  # the same exception either way is fine; a different one is not
            outcome = type(exc).__name__
        state = (normalizer.usage, normalizer.response_id, normalizer.model, normalizer.last_sequence, normalizer.done)
        try:
            built: Any = _result(provider, events)
        except Exception as exc:
            built = type(exc).__name__
        return outcome, repr(state), built
    finally:
        typed.set_enabled(True)


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    provider = PROVIDERS[fdp.ConsumeIntInRange(0, len(PROVIDERS) - 1)]
    name = NAMES[fdp.ConsumeIntInRange(0, len(NAMES) - 1)]
    started = fdp.ConsumeBool()
    decoy = None
    if fdp.ConsumeBool():
        decoy = _scanner_c.SSEEvent(name, SHAPES[fdp.ConsumeIntInRange(0, len(SHAPES) - 1)].replace('"hi"', '"yo"'))
    shape = ""
    mode = fdp.ConsumeIntInRange(0, 2)
    if mode == 2:
        shape = SHAPES[fdp.ConsumeIntInRange(0, len(SHAPES) - 1)]
        payload = _with_hostile(shape, fdp)
    elif mode == 1:
        shape = SHAPES[fdp.ConsumeIntInRange(0, len(SHAPES) - 1)]
        at = fdp.ConsumeIntInRange(0, len(shape))
        cut = fdp.ConsumeIntInRange(0, 3)
        pieces = [PIECES[fdp.ConsumeIntInRange(0, len(PIECES) - 1)] for _ in range(fdp.ConsumeIntInRange(0, 2))]
        spliced = "".join(pieces) if fdp.ConsumeBool() else fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 16))
        payload = shape[:at] + spliced + shape[at + cut :]
    else:
        payload = fdp.ConsumeUnicode(fdp.remaining_bytes())
    batches: list[list[Any]] = []
    if started and provider in STARTS:
        batches.append([_scanner_c.SSEEvent(*STARTS[provider])])
    if shape:
        batches.append([_scanner_c.SSEEvent(name, shape)])
    batches.append([_scanner_c.SSEEvent(name, payload)])
    if started and provider in STOPS:
        batches.append([_scanner_c.SSEEvent(*STOPS[provider])])
    fast, slow = _run(provider, batches, True, decoy), _run(provider, batches, False)
    if fast != slow:
        raise AssertionError(f"{provider} {name!r} {payload[:300]!r}:\n reader {fast}\n decode {slow}")
    if mode == 2 and (isinstance(fast[0], str) or isinstance(fast[2], str)):
        raise AssertionError(f"{provider} {name!r} {payload[:300]!r}: a hostile value raised {fast[0]} / {fast[2]}")


def main() -> None:
    assert typed.take_deltas is not None, "the compiled delta reader is not built"
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
