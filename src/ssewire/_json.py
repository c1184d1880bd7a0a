"""JSON decoding for payloads: msgspec when it is installed (the ``fast`` extra), else orjson, else the standard
library (``SSEWIRE_NO_FAST_JSON=1`` forces it; ``SSEWIRE_NO_MSGSPEC=1`` skips msgspec).

``loads(text)`` returns the decoded value or raises ``ValueError``. Whatever the fast decoder rejects that the
standard library accepts (``NaN``, ``1e400``, lone surrogates) is retried with ``json.loads``, so the results are
the same with or without the extra; the one documented exception is orjson, which decodes an integer beyond the
64-bit range as a float (msgspec keeps it exact). Tool-argument strings are parsed with ``loads_exact`` (the
standard library), so their integers stay exact whatever the decoder.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Optional, Union

from ._config import no_fast_json, no_msgspec

__all__ = [
    "TOO_DEEP_MESSAGE",
    "BACKEND",
    "FIRST_ERRORS",
    "Text",
    "dumps",
    "dumps_utf8",
    "loads",
    "loads_exact",
    "loads_first",
    "loads_retry",
    "quote_utf8",
]

#: What the payload decoders take: a JSON text, or its UTF-8 (a large event held as UTF-8: see ``Utf8Event``).
Text = Union[str, bytes, bytearray]


def _on_fresh_stack(decode: Callable[[Text], Any], text: Text) -> Any:
    """``decode(text)`` in a new thread: how deep a document the standard library decodes then depends on the
    document alone, not on how deep the caller's stack already is. Nesting too deep even there is a
    ``ValueError``."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(decode(text))
        except RecursionError:
            box.append(_TOO_DEEP)
        except ValueError as exc:
            box.append(exc)

    thread = threading.Thread(target=run, name="ssewire-json")
    thread.start()
    thread.join()
    value = box[0]
    if value is _TOO_DEEP:
        raise ValueError(TOO_DEEP_MESSAGE)
    if isinstance(value, ValueError):
        raise value
    return value


_TOO_DEEP = object()
#: The ``ValueError`` of a valid document nested deeper than the decoders read.
TOO_DEEP_MESSAGE = "JSON nested too deeply"


def _exact_loads(text: Text) -> Any:
    """``json.loads``, with nesting too deep for it reported as the ``ValueError`` it is (decided by the document,
    not the caller's stack: see :func:`_on_fresh_stack`); an integer longer than Python's ``int_max_str_digits``
    raises ``ValueError`` too (for tool arguments: exact, or an error that says why)."""
    try:
        return json.loads(text)
    except RecursionError:
        return _on_fresh_stack(json.loads, text)


def _int_or_float(digits: str) -> Any:
    """A JSON integer: exact, or a float when it has more digits than Python converts (``int_max_str_digits``,
    process-wide: never changed here), as orjson and JavaScript read one beyond their range."""
    try:
        return int(digits)
    except ValueError:
        return float(digits)


def _std_loads(text: Text) -> Any:
    """:func:`_exact_loads` for payloads: a valid document whose integer is longer than ``int_max_str_digits`` is
    decoded with that integer as a float (the same value on every path: the compiled reader and msgspec take such
    payloads too), never a bare ``ValueError``."""
    try:
        return _exact_loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # not a syntax error: an integer too long to convert
        if "nested" in str(exc):
            raise
        try:
            return json.loads(text, parse_int=_int_or_float)
        except RecursionError:
            return _on_fresh_stack(lambda doc: json.loads(doc, parse_int=_int_or_float), text)


def _make_loads() -> tuple[
    Callable[[Text], Any], Callable[[Text], Any], Optional[Callable[[Text], Any]], str, tuple[type[BaseException], ...]
]:
    """The fastest decoder installed: msgspec (the ``fast`` extra: fastest here, and it allocates about the size
    of the document where orjson allocates ~13x), else orjson, else the standard library. What the fast decoder
    rejects that the standard library accepts (``NaN``, ``1e400``, lone surrogates) is retried with it."""
    std: tuple[type[BaseException], ...] = (ValueError, RecursionError)
    if no_fast_json():
        return _std_loads, json.loads, _std_loads, "json", std
    if not no_msgspec():
        try:
            import msgspec
        except ImportError:
            pass
        else:
            decode = msgspec.json.Decoder().decode
            errors: tuple[type[BaseException], ...] = (*std, msgspec.MsgspecError)
            return _retrying(decode, errors), decode, _std_loads, "msgspec", errors
    try:
        import orjson
    except ImportError:
        return _std_loads, json.loads, _std_loads, "json", std
    first = _bounded(orjson.loads)
    return _retrying(first, std), first, _std_loads, "orjson", std


#: Payloads at least this long (characters) are decoded by the standard library even when orjson is the decoder:
#: orjson allocates ~13x a large string-heavy document while decoding it, ``json`` about 1x.
ORJSON_MAX = 64 * 1024


def _bounded(fast: Callable[[Text], Any]) -> Callable[[Text], Any]:
    """``fast(text)`` for payloads under :data:`ORJSON_MAX` characters, ``json.loads(text)`` for larger ones, so
    decoding an event allocates about the event's size whatever its size."""
    std_loads = json.loads

    def loads(text: Text) -> Any:
        return fast(text) if len(text) < ORJSON_MAX else std_loads(text)

    return loads


def _retrying(
    first: Callable[[Any], Any], errors: tuple[type[BaseException], ...], std: Callable[[Any], Any] = _std_loads
) -> Callable[[Any], Any]:
    """``first(value)``, and ``std``'s answer (the standard library's) for what it rejects with one of ``errors``."""

    def retrying(value: Any) -> Any:
        try:
            return first(value)
        except errors:
            return std(value)

    return retrying


#: ``loads`` in two steps, for the per-event hot path (one Python call less than :func:`loads`): call
#: ``loads_first(text)``; when it raises one of ``FIRST_ERRORS`` and ``loads_retry`` is not None, the result is
#: ``loads_retry(text)`` (which raises ``ValueError`` for text that is not JSON). Same values as :func:`loads`,
#: which itself only ever raises ``ValueError``.
loads, loads_first, loads_retry, BACKEND, FIRST_ERRORS = _make_loads()

#: The standard library's decoder (``ValueError`` only): exact integers (up to ``int_max_str_digits``; longer
#: ones are a ``ValueError``), for values parsed once per tool call (arguments), where precision matters more
#: than speed.
loads_exact: Callable[[str], Any] = _exact_loads


_STD_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _fast_encoder() -> Optional[tuple[Callable[[Any], bytes], tuple[type[BaseException], ...]]]:
    """The decoder's library's JSON encoder (compact, non-ASCII kept, UTF-8 out) and the exceptions it raises for
    what it refuses (integers beyond 64 bits for orjson, lone surrogates for both); None with the standard
    library."""
    if BACKEND == "msgspec":
        import msgspec

        return msgspec.json.encode, (TypeError, OverflowError, UnicodeEncodeError, msgspec.EncodeError)
    if BACKEND == "orjson":
        import orjson

        return orjson.dumps, (TypeError, OverflowError, orjson.JSONEncodeError)
    return None


def _by_fast_encoder(std: Callable[[Any], Any], text: bool) -> Callable[[Any], Any]:
    """The fast encoder (see :func:`_fast_encoder`), ``std`` for what it refuses, its UTF-8 decoded when ``text``;
    ``std`` itself with the standard library."""
    fast = _fast_encoder()
    if fast is None:
        return std
    encode, refused = fast
    if not text:
        return _retrying(encode, refused, std)

    def decoded(value: Any) -> Any:
        try:
            return encode(value).decode()
        except refused:
            return std(value)

    return decoded


#: A value as compact JSON text (no spaces, non-ASCII kept) by the fastest encoder installed: msgspec's or orjson's
#: (about ten times the standard library's on small objects), the standard library's for what they refuse (integers
#: beyond 64 bits for orjson, lone surrogates for both). NaN and the infinities, which JSON has no word for, are
#: ``null`` from either fast encoder and ``NaN`` / ``Infinity`` from the standard library. What the encoders of
#: :mod:`ssewire.encoders` write their objects with.
dumps: Callable[[Any], str] = _by_fast_encoder(_STD_DUMPS, text=True)


def _std_dumps_utf8(value: Any) -> bytes:
    return _STD_DUMPS(value).encode("utf-8", "backslashreplace")


#: :data:`dumps` as UTF-8 (a lone surrogate, which UTF-8 cannot hold, as its JSON escape), never made text: a large
#: object whose text has one character past Latin-1 would be two or four bytes a character as text.
dumps_utf8: Callable[[Any], bytes] = _by_fast_encoder(_std_dumps_utf8, text=False)


def _std_quote_utf8(text: str) -> bytes:
    return json.encoder.encode_basestring(text).encode("utf-8", "backslashreplace")


#: A string as a JSON string literal in UTF-8 (non-ASCII kept as it is; a lone surrogate, which UTF-8 cannot hold, as
#: its JSON escape): by msgspec's or orjson's encoder (about seven times the standard library's escaper per
#: character), else, and for what they refuse (a lone surrogate), by the standard library's.
quote_utf8: Callable[[str], bytes] = _by_fast_encoder(_std_quote_utf8, text=False)
