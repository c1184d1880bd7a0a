"""Which twin each module written once and compiled from its Python source runs (``_config.twin``, the one rule):
the compiled module where it is built, unless ``SSEWIRE_NO_EXTENSIONS`` is on (``1``, ``true``; ``0`` and empty mean
off) or the interpreter is not CPython. Checked in a fresh interpreter for every selector at once."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

#: Each selector, with what its selected module is read from and the compiled module's name.
SELECTORS = {
    "ssewire._scan": ("ssewire._scan.SSEParser", "ssewire._scan.scanner_c"),
    "ssewire.normalizers._fast.bedrock_chunks": (
        "ssewire.normalizers.bedrock.unwrap_chunks",
        "ssewire.normalizers._fast.bedrock_chunks_c",
    ),
    "ssewire._decoding": ("ssewire.StreamDecoder", "ssewire._decoding_c"),
}


def _built(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:  # the pure-Python install
        return False
    return True


@pytest.mark.parametrize(("value", "compiled"), [("1", False), ("true", False), ("0", True), ("", True)])
def test_no_extensions_switches_every_selector_to_the_python_module(value: str, compiled: bool) -> None:
    reads = [read for read, _ in SELECTORS.values()]
    code = (
        "import importlib\n"
        f"for path in {reads!r}:\n"
        "    module, name = path.rsplit('.', 1)\n"
        "    print(getattr(importlib.import_module(module), name).__module__)\n"
    )
    environ = {**os.environ, "SSEWIRE_NO_EXTENSIONS": value}
    run = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True)
    want = [
        compiled_name
        if compiled and sys.implementation.name == "cpython" and _built(compiled_name)
        else compiled_name[: -len("_c")] + "_py"
        for _, compiled_name in SELECTORS.values()
    ]
    assert run.stdout.split() == want
