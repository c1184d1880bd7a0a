"""Selects Bedrock's chunk unwrapping at import: ``bedrock_chunks_c`` (the same source, compiled) when it is built,
else ``bedrock_chunks_py``; ``SSEWIRE_NO_EXTENSIONS=1`` (and any interpreter but CPython) takes the Python one.
``IMPLEMENTATION`` says which: ``"cython"`` or ``"python"``. Both give the same results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._config import twin

__all__ = ["IMPLEMENTATION", "type_of", "unwrap_chunks"]


if TYPE_CHECKING:  # what type checkers see: the Python functions, whose stub the compiled module matches
    from .bedrock_chunks_py import type_of, unwrap_chunks

    IMPLEMENTATION = "python"
else:
    _module, IMPLEMENTATION = twin("ssewire.normalizers._fast", "bedrock_chunks")  # (compiled unless off or not built)
    type_of = _module.type_of
    unwrap_chunks = _module.unwrap_chunks
