"""ssewire.otel: stream results on spans and in metrics, in the OpenTelemetry GenAI semantic conventions, read back
through the SDK's in-memory span exporter and metric reader."""

from __future__ import annotations

import inspect
import subprocess
import sys
from decimal import Decimal
from typing import Any, Optional, cast

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.metrics import Counter, Histogram, Meter
from opentelemetry.sdk.metrics import Meter as SDKMeter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import INVALID_SPAN_CONTEXT, NonRecordingSpan, StatusCode

import ssewire.cost
from helpers import CORPUS, FIXTURES
from ssewire import SSEwireError, StreamResult, StreamTap, collect, iter_unified
from ssewire._config import env_flag
from ssewire.cost import Cost
from ssewire.names import ProviderName, literal_values
from ssewire.otel import (
    CONVENTIONS,
    DURATION_BUCKETS,
    PROVIDER_NAMES,
    TOKEN_BUCKETS,
    Conventions,
    GenAIMetrics,
    UnknownConventionsError,
    set_span_attributes,
)

ADVISORY = "explicit_bucket_boundaries_advisory" in inspect.signature(SDKMeter.create_histogram).parameters

#: semantic-conventions-genai v0.1.0's metrics, and those of core semantic-conventions v1.41.0 (``previous``).
COUNTERS = (
    "gen_ai.client.inference.usage.input_tokens",
    "gen_ai.client.inference.usage.output_tokens",
    "gen_ai.client.inference.usage.cache_read.input_tokens",
    "gen_ai.client.inference.usage.cache_write.input_tokens",
    "gen_ai.client.inference.usage.reasoning.output_tokens",
)
OPERATION_TOKENS = ("gen_ai.client.inference.operation.input_tokens", "gen_ai.client.inference.operation.output_tokens")
TIMES = (
    "gen_ai.client.inference.duration",
    "gen_ai.client.inference.time_to_first_chunk",
    "gen_ai.client.inference.time_per_output_chunk",
)
PREVIOUS = (
    "gen_ai.client.token.usage",
    "gen_ai.client.operation.duration",
    "gen_ai.client.operation.time_to_first_chunk",
    "gen_ai.client.operation.time_per_output_chunk",
)
COST = "ssewire.client.inference.cost"


def read(name: str, provider: ProviderName) -> StreamResult:
    return collect(iter_unified([(FIXTURES / name).read_bytes()], provider))


def recording(name: str, provider: ProviderName) -> StreamResult:
    """A shared-corpus recording's result (skipped where the corpus is absent, unless CI requires it)."""
    path = CORPUS / name
    if not path.is_file():
        if env_flag("SSEWIRE_REQUIRE_CORPUS"):
            raise RuntimeError(f"SSEWIRE_REQUIRE_CORPUS is set but there is no {path}")
        pytest.skip(f"no shared corpus at {CORPUS}")
    return collect(iter_unified([path.read_bytes()], provider))


def span_of(result: Any, **kwargs: Any) -> ReadableSpan:
    """The finished span ``set_span_attributes(span, result, **kwargs)`` made (``cost=False`` unless given)."""
    kwargs.setdefault("cost", False)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("chat", end_on_exit=True) as span:
        set_span_attributes(span, result, **kwargs)
    (finished,) = exporter.get_finished_spans()
    return finished


def attributes_of(result: Any, **kwargs: Any) -> dict[str, Any]:
    return dict(span_of(result, **kwargs).attributes or {})


def recorded(
    *calls: tuple[Any, dict[str, Any]], meter: Optional[Any] = None, conventions: str = "genai-0.1"
) -> dict[str, Any]:
    """``GenAIMetrics(meter, conventions).record(source, **kwargs)`` for each call (``cost=False`` unless given):
    the metrics read back by name."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    real = provider.get_meter("test")
    metrics = GenAIMetrics(real if meter is None else meter(real), conventions=cast(Any, conventions))
    for source, kwargs in calls:
        metrics.record(source, **{"cost": False, **kwargs})
    data = reader.get_metrics_data()
    if data is None:  # nothing recorded
        return {}
    return {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}


def points(metric: Any) -> list[tuple[dict[str, Any], int, float]]:
    """``(attributes, count, sum)`` of each histogram data point, sorted."""
    out = [(dict(p.attributes), p.count, p.sum) for p in metric.data.data_points]
    return sorted(out, key=repr)


def sums(metric: Any) -> list[tuple[dict[str, Any], float]]:
    """``(attributes, value)`` of each data point of a monotonic counter, sorted."""
    assert metric.data.is_monotonic
    return sorted(((dict(p.attributes), p.value) for p in metric.data.data_points), key=repr)


def counted(got: dict[str, Any]) -> dict[str, list[tuple[dict[str, Any], float]]]:
    """The five usage counters' points, by metric name."""
    return {name: sums(got[name]) for name in COUNTERS}


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def tapped_anthropic() -> StreamTap:
    """anthropic-messages-tool-use.sse through a tap in four chunks: message_start, ping (no output) at 0.5 s;
    the two text deltas at 1.0 s; the tool call at 1.5 s; the stops, usage and message_stop at 2.25 s."""
    body = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e.strip()]
    assert len(events) == 14
    clock = FakeClock()
    tap = StreamTap("anthropic", clock=clock)
    for at, group in ((0.5, events[0:3]), (1.0, events[3:5]), (1.5, events[5:11]), (2.25, events[11:])):
        clock.now = 50.0 + at
        tap.feed(b"".join(group))
    tap.close()
    return tap


# ------------------------------------------------------------------------------------------------------- spans


def test_openai_responses_span_has_the_conventions_attributes() -> None:
    result = read("openai-responses-tool-call.sse", "openai")
    span = span_of(result, provider="openai")
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.response.id": "resp_68d2a1f0c3b48190a5e2f7d41c9b03e60b7a2c5d9e1f4a83",
        "gen_ai.response.model": "gpt-5-mini-2025-08-07",
        "gen_ai.response.finish_reasons": ("completed",),  # the provider's own reason (unified: tool_use)
        "gen_ai.request.stream": True,
        "gen_ai.usage.input_tokens": 78,
        "gen_ai.usage.output_tokens": 94,
        "gen_ai.usage.cache_read.input_tokens": 0,  # reported as 0: a real count
        "gen_ai.usage.cache_write.input_tokens": 0,
        "gen_ai.usage.reasoning.output_tokens": 64,
    }
    assert span.status.status_code is StatusCode.UNSET


def test_tap_span_has_time_to_first_chunk_and_anthropic_usage() -> None:
    tap = tapped_anthropic()
    assert attributes_of(tap, provider="anthropic") == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.response.id": "msg_01HqZ7xYk3VbN9cR2tLw5PdE",
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.response.finish_reasons": ("tool_use",),
        "gen_ai.request.stream": True,
        "gen_ai.response.time_to_first_chunk": 1.0,  # the first chunk with output, not message_start's
        "gen_ai.usage.input_tokens": 412,
        "gen_ai.usage.output_tokens": 78,
        "gen_ai.usage.cache_read.input_tokens": 0,
        "gen_ai.usage.cache_write.input_tokens": 0,
        # Anthropic reports no reasoning count: no gen_ai.usage.reasoning.output_tokens
    }
    # the tap's result with metrics given apart is the same thing
    assert attributes_of(tap.result, metrics=tap.metrics, provider="anthropic") == attributes_of(
        tap, provider="anthropic"
    )


def test_bedrock_converse_cache_counts_and_no_invented_id_or_model() -> None:
    result = read("bedrock-converse-max-tokens-cache.eventstream", "bedrock-converse")
    assert attributes_of(result, provider="bedrock-converse") == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "aws.bedrock",
        "gen_ai.response.finish_reasons": ("max_tokens",),
        "gen_ai.request.stream": True,
        "gen_ai.usage.input_tokens": 1524,  # 12 uncached + 1024 read from the cache + 488 written to it
        "gen_ai.usage.output_tokens": 8,
        "gen_ai.usage.cache_read.input_tokens": 1024,
        "gen_ai.usage.cache_write.input_tokens": 488,
    }


def test_previous_conventions_name_cache_writes_cache_creation() -> None:
    result = read("bedrock-converse-max-tokens-cache.eventstream", "bedrock-converse")
    assert attributes_of(result, provider="bedrock-converse", conventions="previous") == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "aws.bedrock",
        "gen_ai.response.finish_reasons": ("max_tokens",),
        "gen_ai.request.stream": True,
        "gen_ai.usage.input_tokens": 1524,
        "gen_ai.usage.output_tokens": 8,
        "gen_ai.usage.cache_read.input_tokens": 1024,
        "gen_ai.usage.cache_creation.input_tokens": 488,
    }
    # the default is the release's name, and naming it is the same thing
    default = attributes_of(result, provider="bedrock-converse")
    assert attributes_of(result, provider="bedrock-converse", conventions="genai-0.1") == default
    assert CONVENTIONS == ("genai-0.1", "previous") == tuple(literal_values(Conventions))


def test_ollama_counts_it_does_not_report_are_absent_not_zero() -> None:
    attributes = attributes_of(read("ollama-chat-length.ndjson", "ollama"), provider="ollama")
    assert attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "ollama",
        "gen_ai.response.model": "llama3.2",
        "gen_ai.response.finish_reasons": ("length",),
        "gen_ai.request.stream": True,
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
    }


def test_truncated_stream_is_an_error_without_usage() -> None:
    result = read("openai-chat-truncated.sse", "openai-chat")
    assert result.error is not None
    span = span_of(result, provider="openai-chat")
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.response.id": "chatcmpl-CK3vQ9rT1uY5wE7pL2mN4bX6zA8s",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.request.stream": True,
        "error.type": "stream_truncated",
    }
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == result.error["message"]


def test_truncated_stream_usage_is_marked_partial() -> None:
    result = read("gemini-stream-truncated.sse", "gemini")
    assert result.usage is not None and result.usage.partial
    attributes = attributes_of(result, provider="gemini")
    assert attributes["error.type"] == "stream_truncated"
    assert attributes["gen_ai.provider.name"] == "gcp.gen_ai"
    assert attributes["gen_ai.usage.input_tokens"] == 9
    assert attributes["gen_ai.usage.output_tokens"] == 9
    assert attributes["ssewire.usage.partial"] is True
    assert "gen_ai.response.finish_reasons" not in attributes
    # a complete stream's usage carries no such mark
    assert "ssewire.usage.partial" not in attributes_of(read("ollama-chat-length.ndjson", "ollama"))


def test_provider_error_type_and_message() -> None:
    span = span_of(read("anthropic-messages-overloaded.sse", "anthropic"), provider="anthropic")
    assert span.attributes is not None
    assert span.attributes["error.type"] == "overloaded_error"
    assert span.attributes["ssewire.usage.partial"] is True
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "Overloaded"


def test_a_response_its_provider_stopped_as_failed_is_a_failed_operation() -> None:
    from opentelemetry.trace import StatusCode

    result = read("mistral-chat-finish-error.sse", "mistral")
    assert result.error is None and result.stop_reason == "failed"
    span = span_of(result, provider="mistral")
    assert (span.attributes or {})["error.type"] == "failed" and span.status.status_code == StatusCode.ERROR
    got = recorded((result, {"provider": "mistral", "duration": 1.0}))
    ((attributes, _, _),) = points(got["gen_ai.client.inference.duration"])
    assert attributes["error.type"] == "failed"


def test_an_error_without_a_type_is_other() -> None:
    result = StreamResult()
    result.error = {"message": "?"}
    assert attributes_of(result)["error.type"] == "_OTHER"


def test_not_streamed_sets_neither_stream_flag_nor_time_to_first_chunk() -> None:
    attributes = attributes_of(tapped_anthropic(), provider="anthropic", request_stream=False)
    assert "gen_ai.request.stream" not in attributes
    assert "gen_ai.response.time_to_first_chunk" not in attributes


def test_a_span_that_is_not_recording_is_left_alone() -> None:
    span = NonRecordingSpan(INVALID_SPAN_CONTEXT)
    set_span_attributes(span, read("openai-chat-truncated.sse", "openai-chat"), provider="openai-chat")
    assert not span.is_recording()


# ------------------------------------------------------------------------------------------------- conventions


@pytest.mark.parametrize("value", ["genai-0.2", "v1.41.0", "Previous", "", None])
def test_unknown_conventions_are_refused_with_the_allowed_values(value: Any) -> None:
    message = f"unknown conventions {value!r}; expected one of: genai-0.1, previous"
    result = read("ollama-chat-length.ndjson", "ollama")
    with pytest.raises(UnknownConventionsError) as raised:
        attributes_of(result, conventions=value)
    assert str(raised.value).startswith(message)
    assert isinstance(raised.value, SSEwireError) and isinstance(raised.value, ValueError)
    with pytest.raises(UnknownConventionsError, match=r"expected one of: genai-0\.1, previous"):
        GenAIMetrics(MeterProvider().get_meter("test"), conventions=value)
    # refused before anything else, even for a span that records nothing
    with pytest.raises(UnknownConventionsError):
        set_span_attributes(NonRecordingSpan(INVALID_SPAN_CONTEXT), result, conventions=value)


def test_a_close_conventions_name_is_suggested() -> None:
    with pytest.raises(UnknownConventionsError, match=r"did you mean 'genai-0\.1'"):
        attributes_of(StreamResult(), conventions="genai-0.2")


# ------------------------------------------------------------------------------------------------ provider names


def test_every_provider_has_a_convention_name() -> None:
    names = set(literal_values(ProviderName)) - {"auto"}
    assert set(PROVIDER_NAMES) == names
    assert PROVIDER_NAMES["xai"] == "x_ai"
    assert PROVIDER_NAMES["mistral"] == "mistral_ai"
    assert PROVIDER_NAMES["bedrock-anthropic"] == "aws.bedrock"
    assert PROVIDER_NAMES["gemini"] == "gcp.gen_ai"


def test_provider_name_override_unknown_and_auto() -> None:
    result = read("openai-chat-truncated.sse", "openai-chat")
    chosen = attributes_of(result, provider="openai-chat", provider_name="azure.ai.openai")
    assert chosen["gen_ai.provider.name"] == "azure.ai.openai"
    assert "gen_ai.provider.name" not in attributes_of(result)  # not said: not guessed from the stream's shape
    assert "gen_ai.provider.name" not in attributes_of(result, provider="auto")
    with pytest.raises(ValueError, match="unknown provider 'openai_chat'"):
        attributes_of(result, provider="openai_chat")


def test_operation_name_can_be_set() -> None:
    result = read("gemini-stream-truncated.sse", "gemini")
    assert attributes_of(result, operation_name="generate_content")["gen_ai.operation.name"] == "generate_content"


# ------------------------------------------------------------------------------------------------------ metrics


def test_metrics_of_a_tapped_stream() -> None:
    tap = tapped_anthropic()
    assert tap.metrics.gaps == [0.5]
    got = recorded((tap, {"provider": "anthropic", "attributes": {"gen_ai.request.model": "claude-sonnet-4-5"}}))
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.request.model": "claude-sonnet-4-5",
    }
    assert set(got) == {*COUNTERS, *OPERATION_TOKENS, *TIMES}
    tokens = {**common, "gen_ai.token.modality": "unknown"}  # ssewire's usage has no modality split
    assert counted(got) == {
        "gen_ai.client.inference.usage.input_tokens": [(tokens, 412)],
        "gen_ai.client.inference.usage.output_tokens": [(tokens, 78)],
        "gen_ai.client.inference.usage.cache_read.input_tokens": [(tokens, 0)],
        "gen_ai.client.inference.usage.cache_write.input_tokens": [(tokens, 0)],
        "gen_ai.client.inference.usage.reasoning.output_tokens": [(tokens, 0)],  # not reported: adds 0
    }
    assert points(got["gen_ai.client.inference.operation.input_tokens"]) == [(common, 1, 412)]
    assert points(got["gen_ai.client.inference.operation.output_tokens"]) == [(common, 1, 78)]
    assert points(got["gen_ai.client.inference.duration"]) == [(common, 1, 2.25)]  # to message_stop
    assert points(got["gen_ai.client.inference.time_to_first_chunk"]) == [(common, 1, 1.0)]
    assert points(got["gen_ai.client.inference.time_per_output_chunk"]) == [(common, 1, 0.5)]
    assert {name: got[name].unit for name in got} == {
        **dict.fromkeys((*COUNTERS, *OPERATION_TOKENS), "{token}"),
        **dict.fromkeys(TIMES, "s"),
    }
    if ADVISORY:
        for name in OPERATION_TOKENS:
            assert list(got[name].data.data_points[0].explicit_bounds) == [
                1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864
            ]  # fmt: skip
        for name in TIMES:
            assert list(got[name].data.data_points[0].explicit_bounds) == [
                0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92
            ]  # fmt: skip


def test_previous_conventions_metrics_of_a_tapped_stream() -> None:
    tap = tapped_anthropic()
    got = recorded(
        (tap, {"provider": "anthropic", "attributes": {"gen_ai.request.model": "claude-sonnet-4-5"}}),
        conventions="previous",
    )
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.request.model": "claude-sonnet-4-5",
    }
    assert set(got) == set(PREVIOUS)
    usage = got["gen_ai.client.token.usage"]
    assert usage.unit == "{token}"
    assert points(usage) == [
        ({**common, "gen_ai.token.type": "input"}, 1, 412),
        ({**common, "gen_ai.token.type": "output"}, 1, 78),
    ]
    assert points(got["gen_ai.client.operation.duration"]) == [(common, 1, 2.25)]
    assert points(got["gen_ai.client.operation.time_to_first_chunk"]) == [(common, 1, 1.0)]
    assert points(got["gen_ai.client.operation.time_per_output_chunk"]) == [(common, 1, 0.5)]
    if ADVISORY:
        assert list(usage.data.data_points[0].explicit_bounds) == list(TOKEN_BUCKETS)


def test_failed_stream_with_partial_usage_counts_it_with_error_type_on_the_histograms() -> None:
    result = read("gemini-stream-truncated.sse", "gemini")
    got = recorded((result, {"provider": "gemini", "duration": 3.5}))
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "gcp.gen_ai",
        "gen_ai.response.model": "gemini-2.5-flash",
    }
    failed = {**common, "error.type": "stream_truncated"}
    assert points(got["gen_ai.client.inference.duration"]) == [(failed, 1, 3.5)]
    partial = {**common, "ssewire.usage.partial": True, "gen_ai.token.modality": "unknown"}
    assert counted(got) == {
        "gen_ai.client.inference.usage.input_tokens": [(partial, 9)],
        "gen_ai.client.inference.usage.output_tokens": [(partial, 9)],
        "gen_ai.client.inference.usage.cache_read.input_tokens": [(partial, 0)],
        "gen_ai.client.inference.usage.cache_write.input_tokens": [(partial, 0)],
        "gen_ai.client.inference.usage.reasoning.output_tokens": [(partial, 0)],
    }
    measured = {**failed, "ssewire.usage.partial": True}
    assert points(got["gen_ai.client.inference.operation.input_tokens"]) == [(measured, 1, 9)]
    assert points(got["gen_ai.client.inference.operation.output_tokens"]) == [(measured, 1, 9)]
    # no TapMetrics: no timing points (and no duration without one given)
    assert "gen_ai.client.inference.time_to_first_chunk" not in got
    assert "gen_ai.client.inference.time_per_output_chunk" not in got


@pytest.mark.parametrize("conventions", ["genai-0.1", "previous"])
def test_a_tapped_stream_that_failed_has_its_duration_with_its_error_type(conventions: str) -> None:
    """A stream cut short (no terminal event) recorded from its tap: the operation's duration is the time to the
    tap's close, with ``error.type`` (a failed operation belongs in the duration histogram: error-rate panels)."""
    body = (FIXTURES / "anthropic-messages-tool-use.sse").read_bytes()
    clock = FakeClock()
    tap = StreamTap("anthropic", clock=clock)
    clock.now = 51.0
    tap.feed(body[: len(body) // 2])
    clock.now = 53.5
    tap.close()
    assert tap.metrics.time_to_done is None and tap.metrics.time_to_end == 3.5
    got = recorded((tap, {"provider": "anthropic"}), conventions=conventions)
    name = "gen_ai.client.inference.duration" if conventions == "genai-0.1" else "gen_ai.client.operation.duration"
    ((attributes, count, total),) = points(got[name])
    assert attributes["error.type"] == "stream_truncated" and (count, total) == (1, 3.5)


def test_previous_conventions_failed_stream_duration_and_partial_usage() -> None:
    result = read("gemini-stream-truncated.sse", "gemini")
    got = recorded((result, {"provider": "gemini", "duration": 3.5}), conventions="previous")
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "gcp.gen_ai",
        "gen_ai.response.model": "gemini-2.5-flash",
    }
    assert points(got["gen_ai.client.operation.duration"]) == [({**common, "error.type": "stream_truncated"}, 1, 3.5)]
    partial = {**common, "ssewire.usage.partial": True}
    assert points(got["gen_ai.client.token.usage"]) == [
        ({**partial, "gen_ai.token.type": "input"}, 1, 9),
        ({**partial, "gen_ai.token.type": "output"}, 1, 9),
    ]
    assert set(got) == {"gen_ai.client.operation.duration", "gen_ai.client.token.usage"}


def test_a_failed_stream_without_usage_counts_zero_in_the_unknown_modality() -> None:
    result = read("bedrock-converse-throttled.eventstream", "bedrock-converse")
    assert result.usage is None and result.error is not None
    common = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock"}
    got = recorded((result, {"provider": "bedrock-converse"}))
    assert set(got) == {*COUNTERS, *OPERATION_TOKENS}  # no duration known: none recorded
    zero = {**common, "gen_ai.token.modality": "unknown"}
    assert counted(got) == {name: [(zero, 0)] for name in COUNTERS}
    failed = {**common, "error.type": "throttlingException"}
    for name in OPERATION_TOKENS:
        assert points(got[name]) == [(failed, 1, 0)]
    got = recorded((result, {"provider": "bedrock-converse", "duration": 0.25}))
    assert points(got["gen_ai.client.inference.duration"]) == [(failed, 1, 0.25)]


def test_previous_conventions_unknown_usage_and_unknown_duration_record_nothing() -> None:
    result = read("bedrock-converse-throttled.eventstream", "bedrock-converse")
    assert recorded((result, {"provider": "bedrock-converse"}), conventions="previous") == {}
    got = recorded((result, {"provider": "bedrock-converse", "duration": 0.25}), conventions="previous")
    failed = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock"}
    failed["error.type"] = "throttlingException"
    assert points(got["gen_ai.client.operation.duration"]) == [(failed, 1, 0.25)]
    assert set(got) == {"gen_ai.client.operation.duration"}


def test_points_of_many_streams_aggregate_by_attributes() -> None:
    ollama = read("ollama-chat-length.ndjson", "ollama")
    got = recorded((ollama, {"provider": "ollama", "duration": 1.0}), (ollama, {"provider": "ollama", "duration": 2.0}))
    ((attributes, count, total),) = points(got["gen_ai.client.inference.duration"])
    assert (count, total) == (2, 3.0)
    assert "error.type" not in attributes
    assert [value for name in COUNTERS for _, value in sums(got[name])] == [24, 6, 0, 0, 0]
    assert [points(got[name])[0][1:] for name in OPERATION_TOKENS] == [(2, 24), (2, 6)]
    previous = recorded(
        (ollama, {"provider": "ollama", "duration": 1.0}),
        (ollama, {"provider": "ollama", "duration": 2.0}),
        conventions="previous",
    )
    tokens = points(previous["gen_ai.client.token.usage"])
    assert [(a["gen_ai.token.type"], c, s) for a, c, s in tokens] == [("input", 2, 24), ("output", 2, 6)]


def test_a_meter_without_bucket_advice_still_records() -> None:
    class OldMeter:  # the API before 1.30: create_histogram takes no advisory boundaries
        def __init__(self, meter: Meter) -> None:
            self.meter = meter

        def create_histogram(self, name: str, unit: str = "", description: str = "") -> Histogram:
            return self.meter.create_histogram(name, unit, description)

        def create_counter(self, name: str, unit: str = "", description: str = "") -> Counter:
            return self.meter.create_counter(name, unit, description)

    got = recorded((tapped_anthropic(), {"provider": "anthropic"}), meter=lambda real: cast(Meter, OldMeter(real)))
    assert points(got["gen_ai.client.inference.time_to_first_chunk"])[0][1:] == (1, 1.0)
    assert points(got["gen_ai.client.inference.operation.input_tokens"])[0][1:] == (1, 412)


def test_bucket_constants_are_the_conventions() -> None:
    assert TOKEN_BUCKETS == (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
    assert DURATION_BUCKETS == (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)


# --------------------------------------------------------------------------------------------------------- cost

XAI = "xai/chat-parallel-tool-calls-grok-4-fast.sse"  # usage.cost_in_usd_ticks = 1654500: $0.00016545


def test_a_priced_stream_has_its_cost_on_the_span() -> None:
    result = recording(XAI, "openai-chat")  # xAI's chat stream, read as OpenAI's shape
    attributes = attributes_of(result, provider="xai", cost=None)  # None: priced here
    assert attributes["ssewire.cost.usd"] == 0.00016545  # xAI's own figure, 1e-10 USD a tick
    assert attributes["ssewire.cost.source"] == "reported"
    assert "ssewire.cost.partial" not in attributes
    assert attributes["gen_ai.provider.name"] == "x_ai"
    assert attributes["gen_ai.usage.input_tokens"] == 432
    assert not [key for key in attributes_of(result, provider="xai", cost=False) if key.startswith("ssewire.cost")]


def test_the_default_is_to_price() -> None:
    result = recording(XAI, "openai-chat")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("chat") as span:
        set_span_attributes(span, result, provider="xai")  # no cost= at all
    (finished,) = exporter.get_finished_spans()
    assert (finished.attributes or {})["ssewire.cost.usd"] == 0.00016545


def test_a_computed_and_a_partial_cost() -> None:
    pytest.importorskip("genai_prices")
    full = attributes_of(read("anthropic-messages-tool-use.sse", "anthropic"), provider="anthropic", cost=None)
    assert (full["ssewire.cost.usd"], full["ssewire.cost.source"]) == (0.002406, "computed")  # 412 x $3, 78 x $15 /M
    assert "ssewire.cost.partial" not in full
    cut = attributes_of(read("gemini-stream-truncated.sse", "gemini"), provider="gemini", cost=None)
    assert cut["ssewire.cost.usd"] == 0.0000252  # 9 x $0.30 + 9 x $2.50 /M: what was seen before the cut
    assert cut["ssewire.cost.source"] == "computed"
    assert cut["ssewire.cost.partial"] is True
    assert cut["ssewire.usage.partial"] is True


def test_an_unpriceable_stream_has_no_cost() -> None:
    no_usage = attributes_of(read("openai-chat-truncated.sse", "openai-chat"), provider="openai-chat", cost=None)
    unknown_model = attributes_of(read("ollama-chat-length.ndjson", "ollama"), provider="ollama", cost=None)
    for attributes in (no_usage, unknown_model):
        assert not [key for key in attributes if key.startswith("ssewire.cost")]
    assert unknown_model["gen_ai.usage.input_tokens"] == 12  # the rest is there
    got = recorded((read("ollama-chat-length.ndjson", "ollama"), {"provider": "ollama", "cost": None}))
    assert COST not in got and "gen_ai.client.inference.usage.input_tokens" in got


def test_a_pricing_error_never_breaks_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the price table is broken")

    monkeypatch.setattr(ssewire.cost, "price", broken)
    result = read("anthropic-messages-tool-use.sse", "anthropic")
    attributes = attributes_of(result, provider="anthropic", cost=None)
    assert attributes["gen_ai.usage.input_tokens"] == 412
    assert not [key for key in attributes if key.startswith("ssewire.cost")]
    got = recorded((result, {"provider": "anthropic", "cost": None, "duration": 1.0}))
    assert COST not in got
    assert sums(got["gen_ai.client.inference.usage.input_tokens"])[0][1] == 412
    assert points(got["gen_ai.client.inference.duration"])[0][1:] == (1, 1.0)

    class Odd:  # a cost-like object whose total cannot be read
        partial = False
        source = "computed"

        @property
        def total(self) -> Decimal:
            raise ArithmeticError("no total")

    assert "ssewire.cost.usd" not in attributes_of(result, provider="anthropic", cost=Odd())


def test_a_given_cost_is_used_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[Any] = []
    monkeypatch.setattr(ssewire.cost, "price", lambda *args, **kwargs: called.append(args))
    given = Cost(reported=Decimal("0.25"), partial=True)
    result = read("anthropic-messages-tool-use.sse", "anthropic")
    attributes = attributes_of(result, provider="anthropic", cost=given)
    assert {key: value for key, value in attributes.items() if key.startswith("ssewire.cost")} == {
        "ssewire.cost.usd": 0.25,
        "ssewire.cost.source": "reported",
        "ssewire.cost.partial": True,
    }
    got = recorded((result, {"provider": "anthropic", "cost": given}))
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
    }
    assert sums(got[COST]) == [({**common, "ssewire.cost.source": "reported", "ssewire.cost.partial": True}, 0.25)]
    assert called == []  # never priced again


def test_the_cost_counter_adds_each_priced_stream() -> None:
    result = recording(XAI, "openai-chat")
    attributes = {"gen_ai.request.model": "grok-4-fast", "server.address": "api.x.ai", "server.port": 443}
    call = (result, {"provider": "xai", "cost": None, "attributes": attributes})
    got = recorded(call, call)
    assert got[COST].unit == "{USD}"
    identifying = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "x_ai",
        "gen_ai.response.model": "grok-4-fast-reasoning",
        "gen_ai.request.model": "grok-4-fast",
        "server.address": "api.x.ai",
        "server.port": 443,
    }
    ((point, total),) = sums(got[COST])
    assert point == {**identifying, "ssewire.cost.source": "reported"}
    assert total == pytest.approx(2 * 0.00016545, rel=1e-12)
    # the token counters carry the same identifying attributes, and their modality
    tokens = {**identifying, "gen_ai.token.modality": "unknown"}
    assert counted(got) == {
        "gen_ai.client.inference.usage.input_tokens": [(tokens, 2 * 432)],
        "gen_ai.client.inference.usage.output_tokens": [(tokens, 2 * 204)],  # 68 visible + 136 reasoning
        "gen_ai.client.inference.usage.cache_read.input_tokens": [(tokens, 2 * 153)],
        "gen_ai.client.inference.usage.cache_write.input_tokens": [(tokens, 0)],
        "gen_ai.client.inference.usage.reasoning.output_tokens": [(tokens, 2 * 136)],
    }


def test_previous_conventions_keep_the_cost() -> None:
    result = recording(XAI, "openai-chat")
    assert attributes_of(result, provider="xai", cost=None, conventions="previous")["ssewire.cost.usd"] == 0.00016545
    got = recorded((result, {"provider": "xai", "cost": None}), conventions="previous")
    assert sums(got[COST])[0][1] == 0.00016545


# ------------------------------------------------------------------------------------------------------ imports


def test_importing_ssewire_imports_no_opentelemetry() -> None:
    code = "import sys, ssewire; print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_importing_ssewire_otel_does_not_import_the_pricing() -> None:
    code = "import sys, ssewire.otel; print('ssewire.cost' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
