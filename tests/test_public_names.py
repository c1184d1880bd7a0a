"""The package's public names: ``__all__`` is the core; every name exported before keeps working; one version."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Any, Optional

import pytest

import ssewire
import ssewire.normalizers

ROOT = Path(__file__).resolve().parents[1]

#: What ``ssewire.__all__`` was before it was cut to the core: each must still be importable from ``ssewire``.
BEFORE = (
    "IMPLEMENTATION",
    "PROVIDERS",
    "UNIFIED_TYPES",
    "Accumulator",
    "AnthropicNormalizer",
    "BedrockAnthropicNormalizer",
    "BedrockConverseNormalizer",
    "ChatCompletionsNormalizer",
    "CohereNormalizer",
    "DetectionError",
    "EventStreamMessage",
    "EventStreamParser",
    "FramingError",
    "GeminiInteractionsNormalizer",
    "GeminiLiveNormalizer",
    "GeminiNormalizer",
    "IncrementalJSON",
    "JSONArrayStreamParser",
    "MistralNormalizer",
    "NDJSONParser",
    "Normalizer",
    "OllamaNormalizer",
    "OpenAINormalizer",
    "OpenAIRealtimeNormalizer",
    "PartialJSON",
    "ResumeCursor",
    "ResponseStatusError",
    "BodyTooLarge",
    "Citation",
    "SSEBufferOverflow",
    "SSEEvent",
    "SSEParser",
    "SSEwireError",
    "StreamResult",
    "StreamTap",
    "StreamTruncated",
    "TapMetrics",
    "ToolCall",
    "Unified",
    "Usage",
    "XAINormalizer",
    "__version__",
    "StreamDecoder",
    "aiter_events",
    "aiter_response",
    "aiter_response_events",
    "aiter_unified",
    "collect",
    "collect_text",
    "iter_events",
    "iter_response",
    "iter_response_events",
    "iter_resumable",
    "iter_unified",
    "normalizer_for",
    "parse_partial_json",
    "parse_sse_bytes",
)


def test_all_is_the_core() -> None:
    names = ssewire.__all__
    assert len(names) == len(set(names)) and 25 <= len(names) <= 40, len(names)
    for name in names:
        assert hasattr(ssewire, name), name
    for name in ("iter_unified", "collect", "Unified", "Usage", "StreamResult", "ToolCall", "Citation"):
        assert name in names
    for name in ("aiter_resumable", "SSEBufferOverflowError", "StreamTruncatedError"):
        assert name in names
    for name in ("FramingName", "ProviderName", "UnifiedType"):
        assert name in names and getattr(ssewire, name) is getattr(ssewire.names, name)


def test_normalisers_are_documented_from_their_package_and_still_importable_from_the_top() -> None:
    classes = [name for name in ssewire.normalizers.__all__ if name.endswith("Normalizer")]
    assert len(classes) >= 10
    for name in classes:
        assert name not in ssewire.__all__, name
    for name in BEFORE:
        if name.endswith("Normalizer") or name == "PROVIDERS":
            assert getattr(ssewire, name) is getattr(ssewire.normalizers, name), name


@pytest.mark.parametrize("name", BEFORE)
def test_every_name_exported_before_still_imports(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from ssewire import {name}", namespace)
    assert namespace[name] is getattr(ssewire, name)


def test_star_import_gives_the_core_only() -> None:
    namespace: dict[str, object] = {}
    exec("from ssewire import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(ssewire.__all__)


def test_aiter_resumable_is_the_stream_module_one() -> None:
    from ssewire.stream import aiter_resumable

    assert ssewire.aiter_resumable is aiter_resumable and inspect.isasyncgenfunction(aiter_resumable)


def _keyword_only(function: object) -> bool:
    parameter = inspect.signature(function).parameters["max_buffer"]  # type: ignore[arg-type]
    return parameter.kind is inspect.Parameter.KEYWORD_ONLY


def test_max_buffer_is_keyword_only_in_every_glue_function() -> None:
    """Every function and glue class that takes ``max_buffer`` takes it by keyword; the scanner classes keep it
    positional (their pickles pass it so)."""
    from ssewire import adapters, framing, stream, tap

    modules: list[Any] = [stream, adapters, framing, tap, ssewire]
    try:
        from ssewire import httpx_sse  # needs httpx (the httpx extra)
    except ImportError:
        pass
    else:
        modules.append(httpx_sse)
    checked = 0
    for module in modules:
        for name, obj in vars(module).items():
            if name.startswith("_") or not callable(obj) or getattr(obj, "__module__", "").startswith("ssewire._scan"):
                continue
            if name in ("AutoScanner", "UnifiedEvents"):  # a scanner (built as registry entries build theirs); internal
                continue
            try:
                parameters = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            if "max_buffer" in parameters:
                assert _keyword_only(obj), f"{module.__name__}.{name}"
                checked += 1
    assert checked >= 12, checked
    for parser in (ssewire.SSEParser, ssewire.JSONArrayStreamParser, ssewire.NDJSONParser, ssewire.EventStreamParser):
        assert parser(100).max_buffer == 100  # type: ignore[attr-defined]


def test_the_version_is_written_once() -> None:
    from ssewire._version import __version__

    assert ssewire.__version__ is __version__ and re.fullmatch(r"\d+\.\d+\.\d+\S*", __version__)
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("the tests run outside the source tree (an installed package): no pyproject.toml to read")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = pyproject.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project, re.MULTILINE)
    assert re.search(r'^dynamic = \[.*"version".*\]', project, re.MULTILINE)
    assert 'version = { attr = "ssewire._version.__version__" }' in pyproject
    sources = [p for p in (ROOT / "src" / "ssewire").rglob("*.py") if p.name != "_version.py"]
    for path in sources:
        assert f'"{__version__}"' not in path.read_text(encoding="utf-8"), path


def test_every_switch_is_read_in_config() -> None:
    """``_config.py`` is the one place an ``SSEWIRE_*`` variable is named in the package's code."""
    named: dict[str, set[str]] = {}
    for path in (ROOT / "src" / "ssewire").rglob("*"):
        if path.suffix in (".py", ".pyx") and path.name != "_config.py":
            code = path.read_text(encoding="utf-8")
            for switch in re.findall(r"[\"'](SSEWIRE_[A-Z_]+)[\"']", code):
                named.setdefault(switch, set()).add(path.name)
    assert not named, named


#: The compiled modules (and the old name of the scanner's): built where the install has a compiler.
COMPILED = {
    "ssewire._decoding_c",
    "ssewire._scan.scanner_c",
    "ssewire._scanner_c",
    "ssewire.normalizers._fast.bedrock_chunks_c",
    "ssewire.normalizers._fast.deltas_c",
}


@pytest.mark.parametrize(
    "module",
    sorted(
        info.name
        for info in pkgutil.walk_packages(ssewire.__path__, "ssewire.")
        if info.name != "ssewire.__main__"  # (runs the command line)
    ),
)
def test_every_module_imports_on_this_interpreter(module: str) -> None:
    """Every module of the package imports on the interpreter the suite runs on (its syntax, its annotations and
    the standard library's names), or, when its optional extra is not installed, says which extra to install."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        missing: Optional[ImportError] = exc
    else:
        return
    if module in COMPILED and ssewire.IMPLEMENTATION == "python":
        pytest.skip(f"{module} is not built here")
    assert "pip install 'ssewire[" in str(missing), (module, missing)
