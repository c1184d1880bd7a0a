"""An install that tells the truth (issue #25, part 4): what a build without a compiled extension is tagged, what
an optional module says when its extra is missing, what the metadata and the errors say."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Optional

import pytest

from ssewire.errors import SSEBufferOverflow

ROOT = Path(__file__).resolve().parent.parent
SOURCE_TREE = (ROOT / "setup.py").is_file() and (ROOT / "src" / "ssewire").is_dir()
needs_tree = pytest.mark.skipif(not SOURCE_TREE, reason="needs the source tree")


def _import_without(module: str, hidden: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """``import module`` in a fresh interpreter in which the ``hidden`` packages cannot be imported."""
    prelude = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in hidden)
    return subprocess.run(
        [sys.executable, "-c", prelude + f"import {module}"], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("module", "hidden", "extra"),
    [
        ("ssewire.otel", ("opentelemetry",), "otel"),
        ("ssewire.batch.arrow", ("pyarrow",), "arrow"),
        ("ssewire.arrow", ("pyarrow",), "arrow"),
        ("ssewire.batch.spark", ("pyspark", "pyarrow"), "spark"),
        ("ssewire.spark", ("pyspark",), "spark"),
        ("ssewire.httpx_sse", ("httpx", "httpx2"), "httpx"),
    ],
)
def test_a_module_whose_extra_is_missing_names_the_extra(module: str, hidden: tuple[str, ...], extra: str) -> None:
    proc = _import_without(module, hidden)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ssewire."), last
    assert f"pip install 'ssewire[{extra}]'" in last, last


def test_import_ssewire_needs_no_extra() -> None:
    hidden = ("opentelemetry", "pyarrow", "pyspark", "httpx", "httpx2", "aiohttp", "requests", "msgspec", "orjson")
    assert _import_without("ssewire, ssewire.batch, ssewire.cli", hidden).returncode == 0


def _overflow(scanner: ModuleType) -> str:
    with pytest.raises(SSEBufferOverflow) as caught:
        scanner.SSEParser(max_buffer=64).feed(b"data: " + b"x" * 100)
    return str(caught.value)


def test_the_overflow_message_says_how_to_raise_the_limit(scanner: ModuleType) -> None:
    from ssewire._scan import scanner_py

    said = _overflow(scanner)
    assert said == "a line exceeds max_buffer (64 bytes): to accept it, raise max_buffer=..."
    assert said == _overflow(scanner_py)  # the twins say the same


def test_the_command_line_names_its_option_for_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ssewire.cli import main

    stream = tmp_path / "s.sse"
    stream.write_bytes(b"data: " + b"x" * 2000 + b"\n\n")
    assert main([str(stream), "--max-buffer", "1K"]) == 2
    assert "raise max_buffer=... (on the command line: --max-buffer BYTES)" in capsys.readouterr().err


def _pyproject() -> dict:  # type: ignore[type-arg]
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@needs_tree
def test_the_description_names_every_provider() -> None:
    from ssewire.normalizers.registry import PROVIDERS

    description = _pyproject()["project"]["description"]
    named = {
        "openai": "Responses",
        "openai-chat": "Chat Completions",
        "openai-realtime": "Realtime",
        "anthropic": "Anthropic",
        "xai": "xAI",
        "gemini": "Gemini",
        "gemini-live": "Gemini",
        "bedrock-converse": "Bedrock",
        "bedrock-anthropic": "Bedrock",
        "ollama": "Ollama",
        "cohere": "Cohere",
        "mistral": "Mistral",
        "vercel-ui": "Vercel AI SDK",
    }
    assert set(PROVIDERS) - {"auto"} <= set(named), set(PROVIDERS) - set(named)
    for provider in PROVIDERS:
        if provider != "auto":
            assert named[provider] in description, provider


@needs_tree
def test_the_spark_extra_keeps_pandas_below_3() -> None:
    spark = _pyproject()["project"]["optional-dependencies"]["spark"]
    assert "pandas<3" in spark


def _wheel(tmp_path: Path, env: dict[str, str]) -> Path:
    """Build a wheel of a copy of the source tree (no build isolation: this environment's setuptools and Cython)."""
    pytest.importorskip("setuptools")
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "requirements", tree / "requirements")
    junk = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c")
    shutil.copytree(ROOT / "src", tree / "src", ignore=junk)
    out = tmp_path / "dist"
    command = [sys.executable, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps", "-w", str(out), "."]
    # pip refuses a build constraint without build isolation (.ci/run sets one for every other build)
    environ = {key: value for key, value in os.environ.items() if key != "PIP_BUILD_CONSTRAINT"}
    proc = subprocess.run(command, cwd=tree, env={**environ, **env}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "compiled scanner SKIPPED" in proc.stdout + proc.stderr  # pip -v shows the build's line
    (wheel,) = out.glob("*.whl")
    return wheel


def _check_pure(wheel: Path) -> None:
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = archive.read(next(name for name in names if name.endswith(".dist-info/WHEEL"))).decode()
    assert "Root-Is-Purelib: true" in info and "Tag: py3-none-any" in info
    assert "ssewire/_scan/scanner_py.py" in names and "ssewire/__init__.py" in names  # at the root, not in .data/
    assert not [name for name in names if name.endswith((".so", ".pyd")) or ".data/" in name]


@needs_tree
def test_a_build_with_extensions_switched_off_is_a_pure_wheel(tmp_path: Path) -> None:
    _check_pure(_wheel(tmp_path, {"SSEWIRE_NO_EXTENSIONS": "1", "SSEWIRE_REQUIRE_EXTENSIONS": ""}))


@needs_tree
@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="CC=false is a POSIX command")
def test_a_build_whose_compiler_fails_is_a_pure_wheel(tmp_path: Path) -> None:
    pytest.importorskip("Cython")
    env = {"CC": "false", "CXX": "false", "LDSHARED": "false", "SSEWIRE_NO_EXTENSIONS": ""}
    _check_pure(_wheel(tmp_path, {**env, "SSEWIRE_REQUIRE_EXTENSIONS": ""}))


def _so_sections(path: Path) -> Optional[str]:
    readelf = shutil.which("readelf")
    if readelf is None:
        return None
    return subprocess.run([readelf, "-S", str(path)], capture_output=True, text=True, check=True).stdout


@needs_tree
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="readelf and ELF: Linux")
def test_a_release_build_is_stripped(tmp_path: Path) -> None:
    pytest.importorskip("Cython")
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy(ROOT / name, tree / name)
    env = {**os.environ, "SSEWIRE_NO_EXTENSIONS": "", "SSEWIRE_DEBUG_SYMBOLS": ""}
    subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree, env=env, capture_output=True, check=True
    )
    built = sorted((tree / "src").rglob("*.so"))
    assert {path.name.split(".")[0] for path in built} == {
        "scanner_c",
        "deltas_c",
        "bedrock_chunks_c",
        "_decoding_c",
    }, built
    for path in built:
        sections = _so_sections(path)
        if sections is None:
            pytest.skip("readelf is not installed")
        assert ".debug_info" not in sections, path
        assert path.stat().st_size < 1_000_000, (path, path.stat().st_size)
