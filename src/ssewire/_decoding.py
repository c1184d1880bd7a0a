"""Selects the per-stream machinery at import: ``_decoding_c`` (the same source, compiled) when it is built, else
``_decoding_py``; ``SSEWIRE_NO_EXTENSIONS=1`` (and any interpreter but CPython) takes the Python one.
``IMPLEMENTATION`` says which: ``"cython"`` or ``"python"``. Both give the same results; a decoder takes only the
accumulator of its own implementation (the public ones, :class:`ssewire.StreamDecoder`, :class:`ssewire.Accumulator`
and :class:`ssewire.StreamTap`, are always of one implementation). Its names are the selected module's ``__all__``
(the decoder, the accumulator, the normaliser's reading loop, the gateway's tap, whose public home is
:mod:`ssewire.tap`), with ``IMPLEMENTATION`` and ``Piece``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

from ._config import twin
from .framing import Chunk

#: What the unified iterators take: byte chunks of a body, or events an SDK already decoded (dicts, e.g. boto3's
#: Bedrock events), each given to the normaliser's ``frame()``.
Piece = Union[Chunk, dict[str, Any]]

__all__ = ["IMPLEMENTATION", "Piece"]

if TYPE_CHECKING:  # what type checkers see: the Python module, whose stub the compiled module matches
    from . import _decoding_py
    from ._decoding_py import *  # noqa: F403

    __all__ += _decoding_py.__all__
    IMPLEMENTATION = "python"
else:
    _module, IMPLEMENTATION = twin("ssewire", "_decoding")  # the compiled module unless switched off or not built
    globals().update({name: getattr(_module, name) for name in _module.__all__})
    __all__ += _module.__all__
