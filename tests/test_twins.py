"""The modules compiled from their own source (``ssewire._twins``): run compiled when built, from source when
switched off, never stale, one module whichever runs."""

from __future__ import annotations

import hashlib
import importlib
import os
import pickle
import sys
from pathlib import Path

import pytest

import ssewire
from helpers import run_python
from ssewire import _twins
from ssewire._config import env_flag, no_extensions

SRC = Path(_twins.__file__).resolve().parent


def _source_digest(name: str) -> str:
    """The SHA-256 the build gives a module: of its source, and of the .pxd beside it where it has one."""
    source = SRC.joinpath(*name.split(".")[1:]).with_suffix(".py")
    declarations = source.with_suffix(".pxd")
    return hashlib.sha256(
        source.read_bytes() + (declarations.read_bytes() if declarations.exists() else b"")
    ).hexdigest()


@pytest.mark.parametrize("name", _twins.COMPILED)
def test_a_compiled_module_runs_the_source_as_it_is_now(name: str) -> None:
    """Each module of COMPILED is the compiled build of its current source when built (an edited source without a
    rebuild fails here: ``python setup.py build_ext --inplace``), and built wherever CI requires compiled code."""
    module = importlib.import_module(name)
    file = _twins.compiled_file(name)
    if no_extensions() or file is None:
        assert not env_flag("SSEWIRE_REQUIRE_EXTENSIONS") or no_extensions(), f"{name} was not compiled"
        assert module.__file__ is not None and module.__file__.endswith(".py")
        assert name not in _twins.loaded()
        return
    assert module.__file__ == file
    assert name in _twins.loaded()
    assert getattr(module, "__source_sha256__", None) == _source_digest(name), f"{name}: rebuild, its source changed"


def test_the_finder_leaves_every_other_module_and_a_missing_build_to_the_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    finder = _twins.CompiledFinder()
    assert finder.find_spec("ssewire.adapters") is None  # not compiled from its source
    assert finder.find_spec("json") is None
    monkeypatch.setattr(_twins, "COMPILED_DIR", str(tmp_path))  # nothing built there
    assert finder.find_spec("ssewire.normalizers.gemini") is None
    assert finder.loaded == []


def test_switched_off_the_same_source_runs_as_python() -> None:
    code = (
        "import ssewire, ssewire._twins as t, ssewire.normalizers.chat as c; "
        "print(t.loaded(), c.__file__.endswith('.py'), "
        "c.ChatCompletionsNormalizer is ssewire.ChatCompletionsNormalizer)"
    )
    assert run_python(code, SSEWIRE_NO_EXTENSIONS="1") == "[] True True"


def test_one_module_and_one_class_whichever_runs() -> None:
    """Every importer sees the same module object: the public names, isinstance and pickle agree."""
    from ssewire.normalizers import chat, gemini

    assert ssewire.GeminiNormalizer is gemini.GeminiNormalizer
    assert ssewire.ChatCompletionsNormalizer.__module__ == "ssewire.normalizers.chat"
    assert sys.modules["ssewire.normalizers.chat"] is chat
    event = ssewire.Unified("text_delta", text="hi")
    assert pickle.loads(pickle.dumps(event)) == event
    result = ssewire.collect(
        ssewire.iter_unified([b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'], "openai-chat")
    )
    assert pickle.loads(pickle.dumps(result)).text == "hi"


@pytest.mark.parametrize("name", _twins.COMPILED)
def test_no_compiled_module_defines_an_async_or_generator_function(name: str) -> None:
    """Python 3.9's ``inspect`` does not see a compiled ``async def`` or generator function as one
    (``inspect.isasyncgenfunction(aiter_unified)`` was False there): the modules that define them stay Python."""
    import ast

    tree = ast.parse((SRC.joinpath(*name.split(".")[1:]).with_suffix(".py")).read_text(encoding="utf-8"))
    found = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.AsyncFunctionDef)
        or (
            isinstance(node, ast.FunctionDef)
            and any(isinstance(inner, (ast.Yield, ast.YieldFrom)) for inner in ast.walk(node))
        )
    ]
    assert found == [], f"{name} defines {found}"


def test_a_traceback_through_a_compiled_module_shows_its_source_line() -> None:
    """The compiled build names its source by its path in the package, and its loader gives the source: a
    traceback shows the line that raised, compiled or not."""
    import traceback

    from ssewire.normalizers.chat import ChatCompletionsNormalizer

    try:
        ChatCompletionsNormalizer().payload(None)  # type: ignore[arg-type]
    except TypeError as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
    assert frame.filename.replace(os.sep, "/").endswith("ssewire/normalizers/chat.py")
    assert frame.line == "raise not_a_payload(obj)"
