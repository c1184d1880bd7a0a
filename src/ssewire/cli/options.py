"""The options and argument types both commands share (``ssewire`` and ``ssewire batch``), and ``--version``."""

from __future__ import annotations

import argparse

from .. import IMPLEMENTATION, __version__
from .._json import BACKEND
from .._twins import COMPILED, runs_compiled
from ..errors import UnknownFramingError
from ..framing import FRAMINGS, framing_name
from ..normalizers.registry import PROVIDERS

__all__ = ["add_provider_options", "byte_size", "version_line"]

_SUFFIXES = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def byte_size(text: str) -> int:
    """A size argument (``--max-buffer``, ``--task-bytes``): bytes, or with a K/M/G (KiB/MiB/GiB) suffix."""
    value = text.strip().lower().removesuffix("ib").removesuffix("b")
    factor = _SUFFIXES.get(value[-1:], 1)
    number = value[:-1] if factor != 1 else value
    try:
        size = int(number) * factor
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (bytes, or with K, M or G)") from None
    if size <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return size


def version_line() -> str:
    """What ``--version`` prints: ssewire's version, the scanner in use (and its vector loops), how many of the
    modules compiled from their own source run compiled, the JSON decoder."""
    scanner = IMPLEMENTATION
    if IMPLEMENTATION == "cython":
        from .._scan import scanner_c as _scanner_c

        scanner += f", SIMD {getattr(_scanner_c, 'SIMD', 'none')}"
    compiled = f"{len(runs_compiled())}/{len(COMPILED)} modules compiled"  # (from their own source: ssewire._twins)
    return f"ssewire {__version__} (scanner: {scanner}; {compiled}; JSON decoder: {BACKEND})"


def add_provider_options(parser: argparse.ArgumentParser, whose: str, provider_auto: str, framing_auto: str) -> None:
    """``--provider`` / ``-p`` and ``--framing`` / ``-f`` (default ``auto``: what the help says of each)."""
    providers = sorted(PROVIDERS)
    help_provider = f"{whose}: {', '.join(providers)} (default: auto, {provider_auto})"
    parser.add_argument("--provider", "-p", default="auto", choices=providers, metavar="NAME", help=help_provider)
    help_framing = f"{', '.join(FRAMINGS)} (default: auto, {framing_auto})"
    parser.add_argument("--framing", "-f", default="auto", type=_framing, metavar="NAME", help=help_framing)


def _framing(text: str) -> str:
    """A ``--framing`` value: a name of ``FRAMINGS`` in either spelling (``json-array`` is ``json_array``)."""
    try:
        return framing_name(text)
    except UnknownFramingError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
