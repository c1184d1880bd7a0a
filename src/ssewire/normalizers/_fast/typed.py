"""Typed decoding of the hot payloads: decode only the fields a normaliser needs and keep the rest as text for a
lazy ``raw`` (:class:`~ssewire.events.LazyPayload`), two ways:

- the compiled delta reader (:func:`take_deltas`, built with the scanners; no extra needed) reads the text and
  reasoning deltas of the Responses and Messages APIs straight from the payload text, by a provider's
  :func:`delta_rule`;
- msgspec (the ``fast`` extra) decodes Chat Completions and Gemini chunks into small structs.

A normaliser takes a fast path only when what it read shows the one shape that path handles (every field that
could change the result is read, so an unexpected key or type is seen, never ignored); anything else, and every
payload when the reader is not built and msgspec not installed, or typed decoding is switched off
(``SSEWIRE_NO_TYPED_DECODE=1`` or :func:`set_enabled`; ``SSEWIRE_NO_FAST_JSON=1`` / ``SSEWIRE_NO_MSGSPEC=1`` leave
msgspec out, ``SSEWIRE_NO_EXTENSIONS=1`` the compiled reader), takes the full decode and the same rules. The events
are the same either way: tests compare them field for field, ``raw`` included.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, Union

from ..._config import no_msgspec, no_typed_decode
from ..._scan import NO_EXTENSIONS
from ...events import LazyPayload, SSEEvent, Unified, unified_defaults
from ...names import UnifiedType
from ..tool_calls import OpenCall
from .chat_shape import CHAT_SHAPE

__all__ = [
    "DECODE_ERRORS",
    "chat_chunk",
    "compact_member",
    "delta_rule",
    "enabled",
    "gemini_chunk",
    "member_path",
    "own_rule",
    "responses_terminal",
    "set_enabled",
    "take_deltas",
    "take_texts",
    "service_tier_members",
    "without_member",
    "write_texts",
    "TextSink",
    "MAX_PATHS",
    "MAX_STEPS",
    "READER_MAX_CHARS",
]

Decoder = Optional[Callable[[Union[str, bytes, bytearray]], Any]]  # a payload's text or its UTF-8 bytes

chat_chunk: Decoder = None
gemini_chunk: Decoder = None
#: A Responses API terminal event (``response.completed`` ...) with only the members its events need.
responses_terminal: Decoder = None
#: ``service_tier_members(text) -> dict``: a payload (its text, or UTF-8) as a dict of only the members that name a
#: service tier (``service_tier`` / ``serviceTier``, on the payload and on its ``response``), as the full decode
#: gives them; a payload's ``raw`` is never built to read its tier (a Responses terminal event repeats the whole
#: output). ``DECODE_ERRORS`` where it cannot tell (a ``response`` that is neither an object nor null, a payload that
#: is not an object): the full decode then.
service_tier_members: Optional[Callable[[Union[str, bytes, bytearray]], dict[str, Any]]] = None
DECODE_ERRORS: tuple[type[BaseException], ...] = (ValueError,)
#: The value of a field whose key was absent (msgspec's UNSET), where presence matters.
ABSENT: Any = object()

try:
    if no_msgspec():
        raise ImportError("msgspec switched off")
    import msgspec
except ImportError:  # the fast extra is not installed (or is switched off): no typed structs
    msgspec = None  # type: ignore[assignment]

if msgspec is not None:
    #: A Chat Completions chunk (see :mod:`.chat_shape`): a non-null ``type`` or member that must be null fails
    #: its decode.
    ChatChunk = CHAT_SHAPE.struct(msgspec)

    #: A member whose presence matters (even as null), kept as its JSON text: UNSET when the key is absent.
    Present = Union[msgspec.Raw, msgspec.UnsetType]

    class GeminiPart(msgspec.Struct, gc=False):
        text: Optional[str] = None
        thought: Any = None
        thoughtSignature: Any = None
        functionCall: Present = msgspec.UNSET
        executableCode: Present = msgspec.UNSET
        #: Media (a generated image, audio): the bulk of such a payload, never built as a Python object here.
        inlineData: Present = msgspec.UNSET
        fileData: Present = msgspec.UNSET

    class GeminiContent(msgspec.Struct, gc=False):
        parts: Optional[list[GeminiPart]] = None

    class GeminiCandidate(msgspec.Struct, gc=False):
        index: Any = None  # (the candidate's place when several are asked for: 0, or absent, is the one read)
        content: Optional[GeminiContent] = None
        finishReason: Any = None
        groundingMetadata: Present = msgspec.UNSET
        citationMetadata: Present = msgspec.UNSET

    class GeminiChunk(msgspec.Struct, gc=False):
        """A generateContent chunk."""

        candidates: Optional[list[GeminiCandidate]] = None
        #: Kept as its JSON text (decoded only when the usage is read: Gemini sends one on every chunk).
        usageMetadata: Present = msgspec.UNSET
        responseId: Any = None
        modelVersion: Any = None
        promptFeedback: Any = None
        error: Any = None
        event_type: Any = msgspec.UNSET  # its presence matters (even as null): an Interactions payload

    class OutputHead(msgspec.Struct, gc=False):
        """An output item's ``type`` and ``id`` (its content skipped)."""

        type: Any = None
        id: Any = None

    class TerminalResponse(msgspec.Struct, gc=False):
        """The members of a terminal event's ``response`` its events read (the items of ``output`` by their type
        and id, their content and the other members skipped)."""

        id: Any = None
        model: Any = None
        status: Any = None
        incomplete_details: Any = None
        error: Any = None
        usage: Any = None
        output: Optional[list[OutputHead]] = None

    class ResponsesTerminal(msgspec.Struct, gc=False):
        """A Responses API terminal event; a ``response`` that is not an object (or null) fails the decode."""

        type: Any = None
        sequence_number: Any = None
        response: Optional[TerminalResponse] = None

    class TierHolder(msgspec.Struct, gc=False):
        """The members that may name a service tier (UNSET: absent)."""

        service_tier: Any = msgspec.UNSET
        serviceTier: Any = msgspec.UNSET

    class TierPayload(TierHolder, gc=False):
        """A payload's tier members, and its ``response``'s (UNSET: absent; a ``response`` of another type fails)."""

        response: Union[TierHolder, msgspec.UnsetType, None] = msgspec.UNSET

    def _present(holder: Any) -> dict[str, Any]:
        members = {}
        if holder.service_tier is not msgspec.UNSET:
            members["service_tier"] = holder.service_tier
        if holder.serviceTier is not msgspec.UNSET:
            members["serviceTier"] = holder.serviceTier
        return members

    _decode_tiers = msgspec.json.Decoder(TierPayload).decode

    def _tier_members(text: Union[str, bytes, bytearray]) -> dict[str, Any]:
        payload = _decode_tiers(text)
        members = _present(payload)
        response = payload.response
        if response is not msgspec.UNSET:
            members["response"] = None if response is None else _present(response)
        return members

    _DECODERS: dict[str, Callable[[Union[str, bytes, bytearray]], Any]] = {
        "chat_chunk": msgspec.json.Decoder(ChatChunk).decode,
        "gemini_chunk": msgspec.json.Decoder(GeminiChunk).decode,
        "responses_terminal": msgspec.json.Decoder(ResponsesTerminal).decode,
        "service_tier_members": _tier_members,
    }
    DECODE_ERRORS = (msgspec.MsgspecError, ValueError, RecursionError)
    ABSENT = msgspec.UNSET
else:  # pragma: no cover
    _DECODERS = {}


# -- the compiled delta reader ------------------------------------------------------------------------------------
#
# Where the compiled extension is built (and SSEWIRE_NO_EXTENSIONS is not set), the text and reasoning deltas -- the
# bulk of a stream -- are read straight from the payload text in C (:mod:`.deltas_c`), by the rule each
# provider module declares with :func:`delta_rule`: the JSON is validated strictly and only the members the rule
# names are located, so a delta costs no decode at all; ``raw`` stays lazy. Whatever the reader cannot vouch for
# takes the msgspec structs or the full decode.


try:
    if NO_EXTENSIONS:
        raise ImportError("the compiled extensions are switched off")
    from ..._scan.scanner_c import SSEEvent as _CompiledEvent
    from . import deltas_c as _deltas_c
except ImportError:  # the pure-Python install: the normalisers decode every payload
    _deltas_c = None  # type: ignore[assignment]
else:
    if not _deltas_c.use_types(
        Unified, Unified.__slots__, unified_defaults(), LazyPayload, LazyPayload(" ")._value, _CompiledEvent, OpenCall
    ):  # pragma: no cover - a Python whose classes do not lay out __slots__ as plain members
        _deltas_c = None  # type: ignore[assignment]


#: The most paths a delta rule reads, and steps a path has: the compiled reader's own limits (``SW_JSON_MAX_PATHS`` /
#: ``SW_JSON_MAX_STEPS`` in ``_c/sw_json.h``, which size its arrays); without the reader the same numbers, checked
#: against the header by tests/normalizers/test_hostile_rules.py, so a rule is refused alike on every install.
MAX_PATHS: int = 28 if _deltas_c is None else _deltas_c.MAX_PATHS
#: The largest payload (characters) the compiled reader reads; a larger one is left to the typed fast path or the
#: full decode.
READER_MAX_CHARS: int = 64 * 1024 if _deltas_c is None else _deltas_c.MAX_CHARS
MAX_STEPS: int = 8 if _deltas_c is None else _deltas_c.MAX_STEPS


class TakeDeltas(Protocol):
    def __call__(
        self,
        events: list[SSEEvent],
        start: int,
        rule: Any,
        out: list[Unified],
        calls: Optional[dict[Any, OpenCall]] = None,
        notes: Optional[list[Any]] = None,
        sink: Any = None,
        /,
    ) -> int: ...


#: ``take_deltas(events, start, rule, out, calls=None, notes=None, sink=None) -> index`` (see
#: :mod:`ssewire.normalizers._fast.deltas_c`), or None when typed decoding is off or the compiled reader is not built.
take_deltas: Optional[TakeDeltas] = None


Path = tuple[Union[str, int], ...]
Tag = Union[str, bool, type, None]  # a string, True, dict, type(None) or None (any): see deltas_c.DeltaRule
Conditions = tuple[tuple[int, Tag], ...]  # (path index, tag) pairs, all of which must hold
Candidates = tuple[tuple[int, UnifiedType], ...]
Variant = Union[tuple[Union[Tag, Conditions], Candidates], tuple[Union[Tag, Conditions], Candidates, UnifiedType]]


#: ``TextSink(texts, reasonings)``: where ``take_deltas`` puts the text of the deltas it takes instead of making
#: their events (see :mod:`.deltas_c`), or None where the compiled reader is not built.
TextSink: Any = None if _deltas_c is None else _deltas_c.TextSink

TakeTexts = Callable[[list[Unified], int, list[str], list[str]], tuple[int, Optional[int]]]
#: ``take_texts(events, start, texts, reasonings) -> (index, last sequence)``: the accumulator's hot path (see
#: :mod:`ssewire.normalizers._fast.deltas_c`), or None where the compiled reader is not built.
take_texts: Optional[TakeTexts] = None if _deltas_c is None else _deltas_c.take_texts

#: ``write_texts(events, start, kind, head, tail, parts, seq, seq_end) -> (utf8, index, written)``: the encoders' hot
#: path (see :meth:`ssewire.encoders.base.Encoder.write_all` and :mod:`.deltas_c`), or
#: None where the compiled reader is not built.
write_texts: Optional[Callable[..., tuple[bytes, int, int]]] = None if _deltas_c is None else _deltas_c.write_texts


#: ``compact_member(data, path) -> str | None``: the compact JSON text of one member of a payload, written from its
#: text (see :mod:`.deltas_c`); None where the compiled reader is not built (or typed decoding is off).
compact_member: Optional[Callable[[str, Any], Optional[str]]] = None
#: ``without_member(utf8, path) -> bytes | None``: a payload's UTF-8 with one member (an object or array, or a string
#: where the path says so) written as ``null`` (see :mod:`.deltas_c`); None where the compiled reader is not built
#: (or typed decoding is off).
without_member: Optional[Callable[[Union[bytes, str], Any], Optional[bytes]]] = None


def member_path(path: Path, string: bool = False) -> Any:
    """A path for :func:`compact_member` and :func:`without_member` (``string``: the member it writes as ``null`` is
    a string, not an object or array), or None without the compiled reader."""
    return None if _deltas_c is None else _deltas_c.MemberPath(path, string)


def delta_rule(
    paths: tuple[Path, ...],
    cases: dict[Optional[str], tuple[Optional[str], tuple[Variant, ...]]],
    type_path: int = -1,
    tag_path: int = -1,
    seq_path: int = -1,
    nulls: tuple[int, ...] = (),
    absent: tuple[int, ...] = (),
    key_path: int = -1,
    notes: tuple[tuple[int, str], ...] = (),
    not_true: tuple[int, ...] = (),
    by_type: bool = False,
    zeros: tuple[int, ...] = (),
    media: tuple[int, ...] = (),
    each_step: int = 0,
) -> Any:
    """A provider's delta rule compiled for :func:`take_deltas` (see ``deltas_c.DeltaRule`` for what
    each argument means), or None without the compiled reader. It only reads (shared by every stream and thread);
    a normaliser takes :func:`own_rule` of it. ValueError for more than :data:`MAX_PATHS` paths or a path of more
    than :data:`MAX_STEPS` steps, with or without the reader."""
    if not 0 < len(paths) <= MAX_PATHS:
        raise ValueError(f"a DeltaRule reads 1 to {MAX_PATHS} paths, not {len(paths)}")
    for path in paths:
        if not 1 <= len(path) <= MAX_STEPS:
            raise ValueError(f"a path is 1 to {MAX_STEPS} keys or 0 (the only element), not {path!r}")
    if _deltas_c is None:
        return None
    return _deltas_c.DeltaRule(
        paths,
        cases,
        type_path,
        tag_path,
        seq_path,
        nulls,
        absent,
        key_path,
        notes,
        not_true,
        by_type,
        zeros,
        media,
        each_step,
    )


def own_rule(rule: Any) -> Any:
    """A normaliser's own copy of a :func:`delta_rule` (None for None): it learns the shapes of the stream's
    payloads, which the shared rule never does, so two streams (two threads) never write the same rule. One
    small object, nothing copied; what it learns is freed with it."""
    return None if rule is None else rule.fresh()


def set_enabled(on: bool) -> bool:
    """Switch typed decoding on (where msgspec or the compiled delta reader is there) or off; returns whether it
    is on. Normalisers read the decoders when they are created."""
    global chat_chunk, gemini_chunk, responses_terminal, service_tier_members, take_deltas, compact_member
    global without_member
    chat_chunk = _DECODERS.get("chat_chunk") if on else None
    gemini_chunk = _DECODERS.get("gemini_chunk") if on else None
    responses_terminal = _DECODERS.get("responses_terminal") if on else None
    service_tier_members = _DECODERS.get("service_tier_members") if on else None
    take_deltas = _deltas_c.take_deltas if on and _deltas_c is not None else None
    compact_member = _deltas_c.compact_member if on and _deltas_c is not None else None
    without_member = _deltas_c.without_member if on and _deltas_c is not None else None
    return enabled()


def enabled() -> bool:
    """Whether typed decoding is on."""
    return chat_chunk is not None or take_deltas is not None


set_enabled(not no_typed_decode())
