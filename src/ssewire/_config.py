"""Every ``SSEWIRE_*`` switch the package reads, in one place.

A switch is on for ``1``/``true``/``yes``/``on`` (any non-empty value other than the "off" words), off when unset,
empty, ``0``, ``false``, ``no`` or ``off``. Each function reads the environment when called; the modules that
depend on a switch call it once, at their import (so a switch is set before ``import ssewire``, or in the
environment of a subprocess):

- :func:`no_extensions` (``SSEWIRE_NO_EXTENSIONS``): the pure-Python twin instead of the compiled scanner and
  delta reader (``ssewire._scan``, ``ssewire.normalizers._fast.typed``); interpreters other than CPython always;
- :func:`no_fast_json` (``SSEWIRE_NO_FAST_JSON``, or its old name ``SSEWIRE_NO_ORJSON``): the standard library's
  JSON decoder, no msgspec or orjson (``ssewire._json``), and no typed structs;
- :func:`no_msgspec` (``SSEWIRE_NO_MSGSPEC``): no msgspec (orjson or the standard library; no typed structs);
- :func:`no_typed_decode` (``SSEWIRE_NO_TYPED_DECODE``): no typed decoding at all (every payload fully decoded).

The build reads ``SSEWIRE_NO_EXTENSIONS`` too (``setup.py``: skip compiling); the test suite and benchmarks read
their own switches (``SSEWIRE_REQUIRE_*``, ``SSEWIRE_CORPUS``, ``SSEWIRE_BENCH_*``) with :func:`env_flag`.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

__all__ = ["env_flag", "no_extensions", "no_fast_json", "no_msgspec", "no_typed_decode", "twin"]

_OFF = frozenset({"", "0", "false", "no", "off"})


def env_flag(name: str) -> bool:
    """Whether the environment variable ``name`` is switched on."""
    return os.environ.get(name, "").strip().lower() not in _OFF


def no_extensions() -> bool:
    """``SSEWIRE_NO_EXTENSIONS``, or an interpreter other than CPython: no compiled code is used."""
    return env_flag("SSEWIRE_NO_EXTENSIONS") or sys.implementation.name != "cpython"


def twin(package: str, name: str) -> tuple[ModuleType, str]:
    """A module written once and run twice: ``<package>.<name>_c`` (compiled) when it is built and compiled code is
    not switched off (:func:`no_extensions`), else ``<package>.<name>_py`` (which behaves identically); and which
    one: ``"cython"`` or ``"python"``."""
    if not no_extensions():
        try:
            return importlib.import_module(f"{package}.{name}_c"), "cython"
        except ImportError:  # no compiled module for this platform
            pass
    return importlib.import_module(f"{package}.{name}_py"), "python"


def no_fast_json() -> bool:
    """``SSEWIRE_NO_FAST_JSON`` (or the old name ``SSEWIRE_NO_ORJSON``): payloads are decoded by the standard
    library alone."""
    return env_flag("SSEWIRE_NO_FAST_JSON") or env_flag("SSEWIRE_NO_ORJSON")


def no_msgspec() -> bool:
    """``SSEWIRE_NO_MSGSPEC``, or :func:`no_fast_json`: msgspec is not used even when installed."""
    return env_flag("SSEWIRE_NO_MSGSPEC") or no_fast_json()


def no_typed_decode() -> bool:
    """``SSEWIRE_NO_TYPED_DECODE``: every payload takes the full decode (no typed structs, no delta reader)."""
    return env_flag("SSEWIRE_NO_TYPED_DECODE")
