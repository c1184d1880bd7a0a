"""The compiled delta reader's limits and learned state under hostile use.

- Limits: every array of the reader is sized by the headers' macros (``SW_JSON_MAX_PATHS``, ``SW_JSON_MAX_STEPS``,
  ``SW_SLOTS_MAX``); the limits Python checks are those very numbers (read from the compiled module, and equal to
  the headers' on an install without it), and a rule or a type one past a limit is refused with a ValueError that
  names the limit -- compiled or not -- instead of writing past a C array.
- Learned state: the shapes the reader learns from a stream's payloads belong to that stream's normaliser (its own
  copy of the module's rule, which itself never changes), so streams of different shapes -- interleaved chunk by
  chunk in one thread, or in several threads at once -- each give exactly what they give alone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from typing import Any, Callable

import pytest

from helpers import ROOT
from ssewire import StreamDecoder, Unified
from ssewire.normalizers import anthropic, chat, gemini, normalizer_for, openai
from ssewire.normalizers._fast import typed

SRC = ROOT / "src" / "ssewire"
#: The header-reading tests need the source tree (the installed package ships no C headers).
needs_headers = pytest.mark.skipif(not (SRC / "_c").is_dir(), reason="the tests run outside the source tree")
#: The compiled reader as the normalisers use it (None: not built, or SSEWIRE_NO_EXTENSIONS).
COMPILED: Any = vars(typed)["_deltas_c"]
reader = pytest.mark.skipif(COMPILED is None, reason="the compiled delta reader is not built")


def _macro(header: str, name: str) -> int:
    """The value of ``#define name N`` in ``src/ssewire/_c/<header>``."""
    found = re.search(rf"^#define {name} (\d+)\b", (SRC / "_c" / header).read_text(), re.MULTILINE)
    assert found is not None, f"{name} is not defined in {header}"
    return int(found.group(1))


# -- limits ---------------------------------------------------------------------------------------------------------


@needs_headers
def test_the_limits_python_checks_are_the_headers() -> None:
    paths, steps = _macro("sw_json.h", "SW_JSON_MAX_PATHS"), _macro("sw_json.h", "SW_JSON_MAX_STEPS")
    assert (paths, steps) == (typed.MAX_PATHS, typed.MAX_STEPS)
    if COMPILED is not None:
        slots = _macro("sw_slots_py.h", "SW_SLOTS_MAX")
        assert (paths, steps, slots) == (COMPILED.MAX_PATHS, COMPILED.MAX_STEPS, COMPILED.MAX_SLOTS)


def _paths(n: int) -> tuple[tuple[str, ...], ...]:
    return tuple((f"k{i}",) for i in range(n))


def test_a_rule_with_one_path_too_many_is_refused() -> None:
    most = typed.MAX_PATHS
    typed.delta_rule(_paths(most), {}, 0)  # the most there may be: accepted
    with pytest.raises(ValueError, match=f"1 to {most} paths, not {most + 1}"):
        typed.delta_rule(_paths(most + 1), {}, 0)
    with pytest.raises(ValueError, match=f"1 to {typed.MAX_STEPS} keys"):
        typed.delta_rule((("a",) * (typed.MAX_STEPS + 1),), {}, 0)


@reader
def test_the_compiled_rule_refuses_one_path_too_many_itself() -> None:
    """``DeltaRule`` checks its own limits (it may be built without :func:`typed.delta_rule`)."""
    compiled = COMPILED
    with pytest.raises(ValueError, match=f"1 to {compiled.MAX_PATHS} paths"):
        compiled.DeltaRule(_paths(compiled.MAX_PATHS + 1), {}, 0)
    with pytest.raises(ValueError, match="nulls, absent, not_true"):
        compiled.DeltaRule(_paths(2), {}, 0, nulls=(0,) * (compiled.MAX_PATHS + 1))
    with pytest.raises(ValueError, match="at most 4 notes"):
        compiled.DeltaRule(_paths(5), {}, 0, notes=tuple((i, "int") for i in range(5)))


@needs_headers
def test_without_the_reader_a_rule_is_refused_alike() -> None:
    """The pure-Python install (``SSEWIRE_NO_EXTENSIONS=1``, a fresh interpreter): the same limits, the same
    error; a rule within them is None (every payload takes the full decode)."""
    code = (
        "import json; from ssewire.normalizers._fast import typed\n"
        "ok = typed.delta_rule(tuple((f'k{i}',) for i in range(typed.MAX_PATHS)), {}, 0)\n"
        "try:\n"
        "    typed.delta_rule(tuple((f'k{i}',) for i in range(typed.MAX_PATHS + 1)), {}, 0)\n"
        "    refused = None\n"
        "except ValueError as exc:\n"
        "    refused = str(exc)\n"
        "print(json.dumps([typed._deltas_c is None, ok is None, typed.MAX_PATHS, typed.MAX_STEPS, refused]))\n"
    )
    env = {**os.environ, "SSEWIRE_NO_EXTENSIONS": "1", "SSEWIRE_REQUIRE_EXTENSIONS": ""}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    pure, none, paths, steps, refused = json.loads(done.stdout)
    assert pure and none
    assert (paths, steps) == (_macro("sw_json.h", "SW_JSON_MAX_PATHS"), _macro("sw_json.h", "SW_JSON_MAX_STEPS"))
    assert refused == f"a DeltaRule reads 1 to {paths} paths, not {paths + 1}"


@reader
def test_a_type_with_one_slot_too_many_is_refused_and_the_reader_stays_on() -> None:
    compiled = COMPILED
    fields = tuple(f"f{i}" for i in range(compiled.MAX_SLOTS + 1))
    with pytest.raises(ValueError, match=f"at most {compiled.MAX_SLOTS} fields"):
        compiled.use_types(object, fields, (None,) * len(fields), object, None, object, object)
    assert len(Unified.__slots__) <= compiled.MAX_SLOTS
    events = [_compiled("response.output_text.delta", '{"type":"response.output_text.delta","delta":"a"}')]
    out: list[Unified] = []
    assert compiled.take_deltas(events, 0, openai._DELTA_RULE, out) == 1 and out[0].text == "a"


@reader
def test_a_rule_of_the_most_paths_reads_every_one() -> None:
    """A payload with a member at each of ``MAX_PATHS`` paths, the last one the text: every located value fits
    the reader's arrays, and the event is the delta (a learning copy reads the next payload by its shape)."""
    most = typed.MAX_PATHS
    rule = typed.delta_rule(
        (("type",), *(((f"k{i}",)) for i in range(most - 2)), ("delta",)),
        {"e": ("e", ((None, ((most - 1, "text_delta"),)),))},
        0,
        nulls=tuple(range(1, most - 1)),
    )
    own = typed.own_rule(rule)
    members = "".join(f'"k{i}":null,' for i in range(most - 2))
    for text in ("one", "two"):
        out: list[Unified] = []
        data = f'{{"type":"e",{members}"delta":"{text}"}}'
        assert COMPILED.take_deltas([_compiled("e", data)], 0, own, out) == 1
        assert out[0].text == text
    assert own.learned == 1 and rule.learned == 0


# -- learned state: one per stream ----------------------------------------------------------------------------------


def _compiled(name: str, data: str) -> Any:
    from ssewire._scan import scanner_c as _scanner_c

    return _scanner_c.SSEEvent(name, data)


def _sse(name: str, payload: Any) -> str:
    return f"event: {name}\ndata: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n"


def _responses(flavour: int, n: int) -> bytes:
    """A Responses stream of ``n`` text deltas, its delta payloads shaped by ``flavour`` (key order, extra
    members, whitespace)."""
    rid = f"resp_{flavour}"
    out = [
        _sse(
            "response.created",
            {"type": "response.created", "sequence_number": 0, "response": {"id": rid, "model": f"m{flavour}"}},
        )
    ]
    for i in range(1, n + 1):
        word = f"w{flavour}.{i} "
        delta = [
            {"type": "response.output_text.delta", "item_id": "msg", "output_index": 0, "delta": word},
            {"delta": word, "type": "response.output_text.delta", "sequence_number": i, "logprobs": []},
            {"type": "response.output_text.delta", "obfuscation": "x" * (i % 7), "delta": word, "sequence_number": i},
        ][flavour % 3]
        text = json.dumps(delta, separators=(", ", ": ") if flavour >= 3 else (",", ":"))
        out.append(_sse("response.output_text.delta", text))
    usage = {"input_tokens": 1, "output_tokens": n, "total_tokens": n + 1}
    done = {"id": rid, "status": "completed", "usage": usage}
    out.append(_sse("response.completed", {"type": "response.completed", "sequence_number": n + 1, "response": done}))
    return "".join(out).encode()


def _messages(flavour: int, n: int) -> bytes:
    """A Messages stream of ``n`` text (or, for an odd ``flavour``, thinking) deltas."""
    kind, field = ("thinking_delta", "thinking") if flavour % 2 else ("text_delta", "text")
    message = {"id": f"msg_{flavour}", "model": f"c{flavour}", "usage": {"input_tokens": 2, "output_tokens": 1}}
    out = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse("content_block_start", {"type": "content_block_start", "index": flavour, "content_block": {"type": "x"}}),
    ]
    for i in range(n):
        delta = {"type": kind, field: f"t{flavour}.{i} "}
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": flavour, "delta": delta}))
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": flavour}))
    stop = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": n}}
    out += [_sse("message_delta", stop), _sse("message_stop", {"type": "message_stop"})]
    return "".join(out).encode()


def _chat(flavour: int, n: int) -> bytes:
    """A Chat Completions stream of ``n`` content (or, for an odd ``flavour``, reasoning) chunks."""
    field = "reasoning_content" if flavour % 2 else "content"
    head = {"id": f"c{flavour}", "object": "chat.completion.chunk", "model": f"g{flavour}"}
    out = [f"data: {json.dumps({**head, 'choices': [{'index': 0, 'delta': {'role': 'assistant'}}]})}\n\n"]
    for i in range(n):
        choice = {"index": 0, "delta": {field: f"c{flavour}.{i} "}, "finish_reason": None}
        extra = {"system_fingerprint": "fp_" + "z" * flavour} if flavour >= 2 else {}
        out.append(f"data: {json.dumps({**head, **extra, 'choices': [choice]})}\n\n")
    out.append(f"data: {json.dumps({**head, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})}\n\n")
    return ("".join(out) + "data: [DONE]\n\n").encode()


STREAMS: dict[str, Callable[[int, int], bytes]] = {"openai": _responses, "anthropic": _messages, "openai-chat": _chat}
RULES = {"openai": openai._DELTA_RULE, "anthropic": anthropic._DELTA_RULE, "openai-chat": chat.CHAT_DELTA_RULE}


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _alone(provider: str, data: bytes, size: int) -> list[dict[str, Any]]:
    decoder = StreamDecoder(provider)  # type: ignore[arg-type]
    made: list[Unified] = []
    for piece in _pieces(data, size):
        made += decoder.feed(piece)
    made += decoder.close()
    return [e.to_dict(with_raw=True) for e in made]


@pytest.mark.parametrize("provider", sorted(STREAMS))
def test_streams_of_different_shapes_interleaved_chunk_by_chunk_give_what_each_gives_alone(provider: str) -> None:
    """Four streams of one provider whose payloads have four shapes (more than the two a rule keeps per kind of
    event), fed one chunk of each in turn in one thread: each gives exactly its events alone, ``raw`` included;
    each normaliser learned its own stream's shape, the module's rule none."""
    bodies = [STREAMS[provider](flavour, 60) for flavour in range(4)]
    size = 97
    want = [_alone(provider, body, size) for body in bodies]
    decoders = [StreamDecoder(provider) for _ in bodies]  # type: ignore[arg-type]
    made: list[list[Unified]] = [[] for _ in bodies]
    queues = [_pieces(body, size) for body in bodies]
    for turn in range(max(len(q) for q in queues)):
        for i, queue in enumerate(queues):
            if turn < len(queue):
                made[i] += decoders[i].feed(queue[turn])
    for i, decoder in enumerate(decoders):
        made[i] += decoder.close()
    for i in range(len(bodies)):
        assert [e.to_dict(with_raw=True) for e in made[i]] == want[i], f"stream {i}"
        assert any(e["type"] in ("text_delta", "reasoning_delta") for e in want[i])
    if typed.take_deltas is not None:
        rules = [d.normalizer._delta_rule for d in decoders]  # type: ignore[attr-defined]
        assert len({id(r) for r in rules}) == len(rules)
        assert all(r.learns and 1 <= r.learned <= 2 for r in rules)
        assert not RULES[provider].learns and RULES[provider].learned == 0


@reader
@pytest.mark.parametrize(
    ("provider", "attribute", "shared"),
    [
        ("openai", "_delta_rule", openai._DELTA_RULE),
        ("anthropic", "_delta_rule", anthropic._DELTA_RULE),
        ("openai-chat", "_delta_rule", chat.CHAT_DELTA_RULE),
        ("gemini", "_delta_rule", gemini._DELTA_RULE),
        ("bedrock-converse", "_delta_rule", None),
    ],
)
def test_each_normaliser_owns_its_rule(provider: str, attribute: str, shared: Any) -> None:
    one, two = normalizer_for(provider), normalizer_for(provider)  # type: ignore[arg-type]
    a, b = getattr(one, attribute), getattr(two, attribute)
    assert a is not b and a.learns and b.learns and a.learned == b.learned == 0
    if shared is not None:
        assert a is not shared and not shared.learns


def test_streams_in_several_threads_at_once_each_give_their_own_result() -> None:
    """Six streams (three providers, two shapes each) decoded at the same time in six threads, released together
    and switching often: each gives what it gives alone. Bounded: every thread is joined within 60 s."""
    jobs = [(provider, flavour) for provider in sorted(STREAMS) for flavour in (0, 3)]
    bodies = {job: STREAMS[job[0]](job[1], 400) for job in jobs}
    want = {job: _alone(job[0], bodies[job], 61) for job in jobs}
    got: dict[tuple[str, int], Any] = {}
    start = threading.Barrier(len(jobs))

    def run(job: tuple[str, int]) -> None:
        start.wait(timeout=30)
        try:
            got[job] = _alone(job[0], bodies[job], 61)
        except BaseException as exc:  # reported by the assertion below
            got[job] = exc

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads every few events (a free-threaded build runs them at once)
    try:
        threads = [threading.Thread(target=run, args=(job,), daemon=True) for job in jobs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        sys.setswitchinterval(interval)
    assert not any(thread.is_alive() for thread in threads)
    for job in jobs:
        assert got[job] == want[job], job
