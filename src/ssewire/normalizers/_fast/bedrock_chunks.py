"""Selects Bedrock's chunk unwrapping at import: ``bedrock_chunks_c`` (the same source, compiled) when it is built,
else ``bedrock_chunks_py``; ``SSEWIRE_NO_EXTENSIONS=1`` (and any interpreter but CPython) takes the Python one.
``IMPLEMENTATION`` says which: ``"cython"`` or ``"python"``. Both give the same results."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from ..._scan import NO_EXTENSIONS

__all__ = ["IMPLEMENTATION", "type_of", "unwrap_chunks"]


def _active() -> tuple[ModuleType, str]:
    """The compiled module when it is built and not switched off, else the Python one."""
    if not NO_EXTENSIONS:
        try:
            from . import bedrock_chunks_c

            return bedrock_chunks_c, "cython"
        except ImportError:  # not built for this platform
            pass
    from . import bedrock_chunks_py

    return bedrock_chunks_py, "python"


if TYPE_CHECKING:  # what type checkers see: the Python functions, whose stub the compiled module matches
    from .bedrock_chunks_py import type_of, unwrap_chunks

    IMPLEMENTATION = "python"
else:
    _module, IMPLEMENTATION = _active()
    type_of = _module.type_of
    unwrap_chunks = _module.unwrap_chunks
