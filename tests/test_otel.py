"""ssewire.otel: stream results on spans and in metrics, in the OpenTelemetry GenAI semantic conventions, read back
through the SDK's in-memory span exporter and metric reader."""

from __future__ import annotations

import inspect
import subprocess
import sys
from typing import Any, Optional, cast

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.metrics import Histogram, Meter
from opentelemetry.sdk.metrics import Meter as SDKMeter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import INVALID_SPAN_CONTEXT, NonRecordingSpan, StatusCode

from helpers import FIXTURES
from ssewire import StreamResult, StreamTap, collect, iter_unified
from ssewire.names import ProviderName, literal_values
from ssewire.otel import DURATION_BUCKETS, PROVIDER_NAMES, TOKEN_BUCKETS, GenAIMetrics, set_span_attributes

ADVISORY = "explicit_bucket_boundaries_advisory" in inspect.signature(SDKMeter.create_histogram).parameters


def read(name: str, provider: ProviderName) -> StreamResult:
    return collect(iter_unified([(FIXTURES / name).read_bytes()], provider))


def span_of(result: Any, **kwargs: Any) -> ReadableSpan:
    """The finished span ``set_span_attributes(span, result, **kwargs)`` made."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("chat", end_on_exit=True) as span:
        set_span_attributes(span, result, **kwargs)
    (finished,) = exporter.get_finished_spans()
    return finished


def attributes_of(result: Any, **kwargs: Any) -> dict[str, Any]:
    return dict(span_of(result, **kwargs).attributes or {})


def recorded(*calls: tuple[Any, dict[str, Any]], meter: Optional[Any] = None) -> dict[str, Any]:
    """``GenAIMetrics(meter).record(source, **kwargs)`` for each call: the metrics read back by name."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    real = provider.get_meter("test")
    metrics = GenAIMetrics(real if meter is None else meter(real))
    for source, kwargs in calls:
        metrics.record(source, **kwargs)
    data = reader.get_metrics_data()
    if data is None:  # nothing recorded
        return {}
    return {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}


def points(metric: Any) -> list[tuple[dict[str, Any], int, float]]:
    """``(attributes, count, sum)`` of each data point, sorted."""
    out = [(dict(p.attributes), p.count, p.sum) for p in metric.data.data_points]
    return sorted(out, key=repr)


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
    assert result.usage is not None
    expected: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.response.id": "resp_68d2a1f0c3b48190a5e2f7d41c9b03e60b7a2c5d9e1f4a83",
        "gen_ai.response.model": "gpt-5-mini-2025-08-07",
        "gen_ai.response.finish_reasons": ("completed",),  # the provider's own reason (unified: tool_use)
        "gen_ai.request.stream": True,
        "gen_ai.usage.input_tokens": 78,
        "gen_ai.usage.output_tokens": 94,
        "gen_ai.usage.cache_read.input_tokens": 0,  # reported as 0: a real count
        "gen_ai.usage.reasoning.output_tokens": 64,
    }
    if result.usage.cache_write_tokens is not None:
        expected["gen_ai.usage.cache_creation.input_tokens"] = result.usage.cache_write_tokens
    span = span_of(result, provider="openai")
    assert dict(span.attributes or {}) == expected
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
        "gen_ai.usage.cache_creation.input_tokens": 0,
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
        "gen_ai.usage.cache_creation.input_tokens": 488,
    }


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
    assert set(got) == {
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "gen_ai.client.operation.time_to_first_chunk",
        "gen_ai.client.operation.time_per_output_chunk",
    }
    usage = got["gen_ai.client.token.usage"]
    assert usage.unit == "{token}"
    assert points(usage) == [
        ({**common, "gen_ai.token.type": "input"}, 1, 412),
        ({**common, "gen_ai.token.type": "output"}, 1, 78),
    ]
    assert points(got["gen_ai.client.operation.duration"]) == [(common, 1, 2.25)]  # to message_stop
    assert points(got["gen_ai.client.operation.time_to_first_chunk"]) == [(common, 1, 1.0)]
    assert points(got["gen_ai.client.operation.time_per_output_chunk"]) == [(common, 1, 0.5)]
    for name in got:
        if name != "gen_ai.client.token.usage":
            assert got[name].unit == "s"
    if ADVISORY:
        assert list(usage.data.data_points[0].explicit_bounds) == [
            1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864
        ]  # fmt: skip
        duration = got["gen_ai.client.operation.duration"].data.data_points[0]
        assert list(duration.explicit_bounds) == [
            0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92
        ]  # fmt: skip


def test_failed_stream_duration_has_error_type_and_partial_usage_is_marked() -> None:
    result = read("gemini-stream-truncated.sse", "gemini")
    got = recorded((result, {"provider": "gemini", "duration": 3.5}))
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
    # no TapMetrics: no timing points (and no duration without one given)
    assert "gen_ai.client.operation.time_to_first_chunk" not in got
    assert "gen_ai.client.operation.time_per_output_chunk" not in got


def test_unknown_usage_and_unknown_duration_record_nothing() -> None:
    result = read("bedrock-converse-throttled.eventstream", "bedrock-converse")
    assert result.usage is None and result.error is not None
    assert recorded((result, {"provider": "bedrock-converse"})) == {}
    got = recorded((result, {"provider": "bedrock-converse", "duration": 0.25}))
    failed = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock"}
    failed["error.type"] = "throttlingException"
    assert points(got["gen_ai.client.operation.duration"]) == [(failed, 1, 0.25)]


def test_points_of_many_streams_aggregate_by_attributes() -> None:
    ollama = read("ollama-chat-length.ndjson", "ollama")
    got = recorded((ollama, {"provider": "ollama", "duration": 1.0}), (ollama, {"provider": "ollama", "duration": 2.0}))
    ((attributes, count, total),) = points(got["gen_ai.client.operation.duration"])
    assert (count, total) == (2, 3.0)
    assert "error.type" not in attributes
    tokens = points(got["gen_ai.client.token.usage"])
    assert [(a["gen_ai.token.type"], c, s) for a, c, s in tokens] == [("input", 2, 24), ("output", 2, 6)]


def test_a_meter_without_bucket_advice_still_records() -> None:
    class OldMeter:  # the API before 1.30: create_histogram takes no advisory boundaries
        def __init__(self, meter: Meter) -> None:
            self.meter = meter

        def create_histogram(self, name: str, unit: str = "", description: str = "") -> Histogram:
            return self.meter.create_histogram(name, unit, description)

    got = recorded((tapped_anthropic(), {"provider": "anthropic"}), meter=lambda real: cast(Meter, OldMeter(real)))
    assert points(got["gen_ai.client.operation.time_to_first_chunk"])[0][1:] == (1, 1.0)


def test_bucket_constants_are_the_conventions() -> None:
    assert TOKEN_BUCKETS == (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
    assert DURATION_BUCKETS == (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)


def test_importing_ssewire_imports_no_opentelemetry() -> None:
    code = "import sys, ssewire; print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
