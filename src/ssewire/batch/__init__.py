"""Stored stream bodies in, one flat row per stream out: re-parse archives of recorded responses at scale.

:func:`result_row` parses one whole body (any framing, any provider, gzip or deflate) and returns a dict with the
columns of :data:`COLUMNS`, in that order; :func:`result_rows` does it for many. A row never raises for what is in
the body: a body that holds no stream (empty, binary, an HTML error page, a JSON error object), one cut short or one
that cannot be parsed gives a row with ``error_type`` and ``error_message`` set, and the batch goes on.

The schema (version :data:`SCHEMA_VERSION`, in every row as ``schema_version``); an absent value is None, never 0:

- ``provider``, ``framing``: the provider and framing used (detected when ``"auto"``; None when never detected);
- ``response_id``, ``model``: as the stream names them;
- ``stop_reason``: the unified stop reason (``end``, ``max_tokens``, ``tool_use`` ...), ``raw_stop_reason`` the
  provider's own; both None without a terminal ``done``;
- ``error_type``, ``error_message``: None for a stream without error. ``error_type`` is the provider's own error
  type for an in-stream error (``overloaded_error`` ...), ssewire's for the rest (``stream_truncated``,
  ``not_a_stream`` (a body with no event: empty, HTML, binary, a non-streaming JSON body; its ``framing`` is None),
  ``wrong_provider`` (the named provider does not read this stream; the message names the one that does),
  ``framing_error``, ``buffer_overflow``, ``body_too_large``, ``unsupported_encoding``, ``detection_error``,
  ``parse_error``), and three of this module:
  ``missing_body`` (a None body), ``unknown_provider`` (a per-row provider name ssewire does not know) and
  ``internal`` (a bug in ssewire: the message says what);
- ``truncated``: True when the stream ended (or parsing stopped) before its terminal event;
- ``text_chars``, ``reasoning_chars``: characters of visible text and of reasoning;
- ``tool_calls``: calls the provider closed (client and server ones), ``tool_call_names`` their names in start
  order (None for an unnamed call), ``incomplete_tool_calls``: calls started and never closed;
- ``input_tokens`` ... ``total_tokens``: :class:`~ssewire.Usage`'s counts (all None when the stream reported no
  usage, each None where the provider does not report it), ``usage_provenance`` ``"reported"``, ``"partial"``
  (the best seen before the stream was cut or failed) or ``"absent"``, ``cost`` the provider's reported cost;
- ``cost_usd``: what the stream cost (:func:`ssewire.cost.price`: the provider's figure where it reported one,
  else computed from the price table), ``cost_computed_usd`` the table's figure (beside ``cost``: an audit's
  difference), ``cost_source`` ``"reported"`` or ``"computed"``, ``price_version`` the table priced from
  (``genai-prices <version>``), all None for a stream that cannot be priced (no usage, a model the table lacks,
  the extra ``prices`` not installed: never a 0 that looks like a price); a partial usage is priced and its
  ``usage_provenance`` says ``"partial"``; ``service_tier`` the tier the provider says served it;
- ``events``: unified events; ``bytes``: the stored body's length (compressed, when it is).

Schema 2 added ``cost_usd``, ``cost_computed_usd``, ``cost_source``, ``price_version`` and ``service_tier`` after
``cost``; every column of schema 1 keeps its name, type and meaning, so a reader that selects columns by name
reads either (one that reads them by position must skip the five).

A None body gives a ``missing_body`` row with every measured column None. Strings are valid UTF-8: a lone surrogate
the stream's JSON spelled out (``"\\ud83d"``) is kept as that escape. ``ssewire batch`` adds ``unreadable_input``
rows for inputs it could not read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Iterator, NamedTuple, Optional, Union

from ..cost.pricing import Figures, figures, search_calls
from ..errors import SSEwireError, UnknownProviderError, error_type
from ..events import Unified
from ..framing import Chunk, framing_name
from ..limits import DEFAULT_MAX_BUFFER, DEFAULT_MAX_INFLATED
from ..names import FramingName, ProviderName
from ..normalizers.registry import normalizer_for
from ..result import Accumulator, StreamResult
from ..stream import StreamDecoder
from ..usage import Usage

__all__ = ["COLUMNS", "GROUP_STREAMS", "SCHEMA_VERSION", "error_row", "result_row", "result_rows"]

#: Version of the row schema: bumped whenever a column is added, removed, renamed or changes meaning.
SCHEMA_VERSION = 2

#: Every column of a row, in order, with its type: ``string``, ``int64``, ``bool``, ``float64`` or
#: ``list<string>``. Every column is nullable.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("provider", "string"),
    ("framing", "string"),
    ("response_id", "string"),
    ("model", "string"),
    ("stop_reason", "string"),
    ("raw_stop_reason", "string"),
    ("error_type", "string"),
    ("error_message", "string"),
    ("truncated", "bool"),
    ("text_chars", "int64"),
    ("reasoning_chars", "int64"),
    ("tool_calls", "int64"),
    ("tool_call_names", "list<string>"),
    ("incomplete_tool_calls", "int64"),
    ("input_tokens", "int64"),
    ("output_tokens", "int64"),
    ("cached_input_tokens", "int64"),
    ("cache_write_tokens", "int64"),
    ("reasoning_tokens", "int64"),
    ("total_tokens", "int64"),
    ("usage_provenance", "string"),
    ("cost", "float64"),
    ("cost_usd", "float64"),
    ("cost_computed_usd", "float64"),
    ("cost_source", "string"),
    ("price_version", "string"),
    ("service_tier", "string"),
    ("events", "int64"),
    ("bytes", "int64"),
    ("schema_version", "int64"),
)

#: What ``result_rows`` takes: a body, or a ``(body, provider)`` pair (provider None: the default).
Body = Union[Chunk, None, tuple[Union[Chunk, None], Optional[str]]]


def result_row(
    body: Optional[Chunk],
    provider: ProviderName = "auto",
    framing: FramingName = "auto",
    *,
    content_encoding: Optional[str] = None,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    max_inflated: int = DEFAULT_MAX_INFLATED,
    priced_at: Optional[datetime] = None,
    priced: bool = True,
) -> dict[str, Any]:
    """The row (the columns of :data:`COLUMNS`, see the module docstring) of one whole stored body.

    ``content_encoding`` is the body's ``Content-Encoding`` (None: gzip and zlib-wrapped deflate are recognised by
    their first bytes); ``max_buffer`` bounds one event and ``max_inflated`` what a compressed body may inflate to
    (``buffer_overflow`` / ``body_too_large`` rows past them); ``priced_at`` is when the requests were made, for
    the prices then in force (None: now), and ``priced=False`` leaves the cost columns None (no lookup at all;
    ``cost``, the provider's own figure, is still read). Never raises for the body's content; an unknown ``provider`` or
    ``framing`` name raises (``ValueError``)."""
    framing = _check_names(provider, framing)
    options = Options(content_encoding, max_buffer, max_inflated, priced_at, priced)
    return next(priced_rows([parsed_row(body, provider, framing, options)], options))


def result_rows(
    bodies: Iterable[Body],
    provider: ProviderName = "auto",
    framing: FramingName = "auto",
    *,
    content_encoding: Optional[str] = None,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    max_inflated: int = DEFAULT_MAX_INFLATED,
    priced_at: Optional[datetime] = None,
    priced: bool = True,
) -> Iterator[dict[str, Any]]:
    """One row per body, in order, as :func:`result_row`. An item may be ``(body, provider)``: that row's provider
    (None: ``provider``); a name ssewire does not know gives an ``unknown_provider`` row. Rows are priced
    :data:`GROUP_STREAMS` (64) at a time, so up to that many bodies are read ahead (one at a time with
    ``priced=False``); a group holds rows, never a stream's text. Unknown ``provider`` or ``framing`` arguments
    raise here, before any body is read."""
    framing = _check_names(provider, framing)
    return _rows(bodies, provider, framing, Options(content_encoding, max_buffer, max_inflated, priced_at, priced))


class Options(NamedTuple):
    """How every body of a call is read and priced (see :func:`result_row`)."""

    content_encoding: Optional[str]
    max_buffer: int
    max_inflated: int
    priced_at: Optional[datetime] = None
    priced: bool = True


def _rows(bodies: Iterable[Body], provider: str, framing: FramingName, options: Options) -> Iterator[dict[str, Any]]:
    parsed = (
        parsed_row(item[0], provider if item[1] is None else item[1], framing, options)
        if isinstance(item, tuple)
        else parsed_row(item, provider, framing, options)
        for item in bodies
    )
    return priced_rows(parsed, options)


class Priceable(NamedTuple):
    """What a stream is priced from (:func:`ssewire.cost.pricing.figures`), kept without its result (and text)."""

    usage: Usage
    model: Optional[str]
    service_tier: Optional[str]
    search_calls: tuple[int, int]  # (web, file)


class ParsedRow(NamedTuple):
    """A body's row before its cost columns, what they are priced from (None: nothing to price) and the body's
    length."""

    row: dict[str, Any]
    priceable: Optional[Priceable]
    size: int


#: :func:`priced_rows` prices rows this many streams at a time: pricing code kept hot across a group costs about
#: half what it costs between parses; a group holds its rows and what they are priced from (never a stream's text).
GROUP_STREAMS = 64


def priced_rows(parsed: Iterable[ParsedRow], options: Options) -> Iterator[dict[str, Any]]:
    """The rows of ``parsed``, in order, with their cost columns (``options.priced``): one at a time unpriced,
    else in groups of up to :data:`GROUP_STREAMS` (it reads that many items ahead)."""
    if not options.priced:
        for item in parsed:
            yield item.row
        return
    group: list[ParsedRow] = []
    for item in parsed:
        group.append(item)
        if len(group) >= GROUP_STREAMS:
            yield from _price_group(group, options.priced_at)
            group = []
    yield from _price_group(group, options.priced_at)


def _price_group(group: list[ParsedRow], at: Optional[datetime]) -> Iterator[dict[str, Any]]:
    for item in group:
        row, priceable = item.row, item.priceable
        if priceable is not None:
            try:
                usage, model, tier, (web, files) = priceable
                _add_cost(
                    row, figures(usage, model, at, service_tier=tier, web_search_calls=web, file_search_calls=files)
                )
            except Exception as exc:  # a bug in ssewire: the row says so, the batch goes on
                row = error_row("internal", f"{type(exc).__name__}: {exc}", item.size)
        yield row


def _add_cost(row: dict[str, Any], found: Optional[Figures]) -> None:
    """The cost columns of ``row`` from a stream's :class:`~ssewire.cost.pricing.Figures`."""
    if found is None:
        return
    computed, reported, version = found
    row["cost_computed_usd"] = cost_computed = None if computed is None else float(computed)
    if reported is None:
        row["cost_usd"], row["cost_source"] = cost_computed, "computed"
    else:  # the provider's figure, from the Cost's reading (the same one ``cost`` has)
        row["cost_usd"], row["cost_source"] = float(reported), "reported"
    row["price_version"] = version


def _check_names(provider: str, framing: FramingName) -> FramingName:
    """The framing's one spelling, once both names are known to be good (``ValueError`` for an unknown one)."""
    normalizer_for(provider)
    return framing_name(framing)


def parsed_row(body: Optional[Chunk], provider: str, framing: FramingName, options: Options) -> ParsedRow:
    """One body parsed: its row without the cost columns (never raises: anything unexpected becomes an ``internal``
    error row), for :func:`priced_rows`."""
    if body is None:
        return ParsedRow(error_row("missing_body", "the body is null", None), None, 0)
    try:
        try:
            normalizer = normalizer_for(provider)
        except UnknownProviderError as exc:
            return ParsedRow(error_row("unknown_provider", str(exc), len(body)), None, len(body))
        try:
            decoder = StreamDecoder(
                normalizer,
                framing,
                max_buffer=options.max_buffer,
                content_encoding=options.content_encoding,
                max_inflated=options.max_inflated,
            )
        except SSEwireError as exc:  # an encoding the standard library cannot undo
            return ParsedRow(error_row(error_type(exc), str(exc), len(body)), None, len(body))
        accumulator = Accumulator()
        truncated = _parse(body, decoder, accumulator)
        result = accumulator.result
        row = _result_row(result, decoder, framing, truncated, len(body), accumulator.events)
        usage = result.usage
        priceable = None
        if usage is not None and options.priced:
            priceable = Priceable(usage, result.model, result.service_tier, search_calls(result))
        return ParsedRow(row, priceable, len(body))
    except Exception as exc:
        return ParsedRow(error_row("internal", f"{type(exc).__name__}: {exc}", len(body)), None, len(body))


def _parse(body: Chunk, decoder: StreamDecoder, accumulator: Accumulator) -> bool:
    """Parse ``body`` into ``accumulator``, as :class:`~ssewire.StreamTap` does (the decoder undoes gzip and
    deflate, a failure is recorded as the result's error); True when the terminal event never came."""
    try:
        decoder.feed_into(body, accumulator)
        tail = decoder.close()
    except SSEwireError as exc:
        accumulator.add(
            Unified(
                "error",
                error={
                    "type": error_type(exc),
                    "message": f"parsing stopped: {type(exc).__name__}: {exc}",
                    "incomplete_tool_calls": decoder.normalizer.incomplete_tool_calls(),
                },
            )
        )
        return not decoder.normalizer.done
    finally:
        accumulator.adopt_meta(decoder.normalizer.response_id, decoder.normalizer.model)
    accumulator.take(tail)
    return any(_is_truncation(event) for event in tail)


def _is_truncation(event: Unified) -> bool:
    return event.type == "error" and event.error is not None and event.error.get("type") == "stream_truncated"


def _detected(decoder: StreamDecoder, framing: str) -> tuple[Optional[str], Optional[str]]:
    """The provider and framing ``decoder`` used (None where ``auto`` never recognised one)."""
    normalizer = decoder.normalizer
    provider = getattr(normalizer, "detected", None) if normalizer.provider == "auto" else normalizer.provider
    used = getattr(decoder.scanner, "framing", None) if framing == "auto" else framing
    return provider, used


def _result_row(
    result: StreamResult, decoder: StreamDecoder, framing: str, truncated: bool, size: int, events: int
) -> dict[str, Any]:
    """The row of a parsed stream, its cost columns None (:func:`priced_rows` fills them)."""
    provider, used_framing = _detected(decoder, framing)
    error = result.error
    kind = message = None
    if error is not None:
        kind, message = error.get("type"), error.get("message")
        kind = "error" if kind is None else str(kind)
        message = None if message is None else str(message)
        if kind == "not_a_stream":  # a body without a stream has no framing
            used_framing = None
    usage = result.usage
    if usage is None:
        input_tokens = output_tokens = cached = cache_write = reasoning = total = cost = None
    else:
        input_tokens, output_tokens, total = usage.input_tokens, usage.output_tokens, usage.total_tokens
        cached, cache_write, reasoning = usage.cached_input_tokens, usage.cache_write_tokens, usage.reasoning_tokens
        cost = usage.cost
    return {
        "provider": provider,
        "framing": used_framing,
        "response_id": _utf8(result.response_id),
        "model": _utf8(result.model),
        "stop_reason": result.stop_reason,
        "raw_stop_reason": _utf8(result.raw_stop_reason),
        "error_type": _utf8(kind),
        "error_message": _utf8(message),
        "truncated": truncated,
        "text_chars": len(result.text),
        "reasoning_chars": len(result.reasoning),
        "tool_calls": len(result.tool_calls),
        "tool_call_names": [_utf8(call.name) for call in result.tool_calls],
        "incomplete_tool_calls": len(result.incomplete_tool_calls),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_input_tokens": cached,
        "cache_write_tokens": cache_write,
        "reasoning_tokens": reasoning,
        "total_tokens": total,
        "usage_provenance": "absent" if usage is None else usage.provenance,
        "cost": None if cost is None else float(cost),
        "cost_usd": None,
        "cost_computed_usd": None,
        "cost_source": None,
        "price_version": None,
        "service_tier": _utf8(result.service_tier),
        "events": events,
        "bytes": size,
        "schema_version": SCHEMA_VERSION,
    }


def _utf8(text: Optional[str]) -> Optional[str]:
    """``text`` as valid UTF-8: a lone surrogate (a JSON ``"\\ud83d"`` in a name or a message) written as its escape,
    so that every writer (Arrow, Parquet, CSV) takes the row."""
    if text is None or text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def error_row(kind: str, message: str, size: Optional[int]) -> dict[str, Any]:
    """A row for a body that was not parsed: the error, the size, every measured column None."""
    row: dict[str, Any] = dict.fromkeys(name for name, _ in COLUMNS)
    row.update(error_type=kind, error_message=message, bytes=size, schema_version=SCHEMA_VERSION)
    return row
