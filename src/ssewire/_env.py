"""Environment switches: ``SSEWIRE_NO_EXTENSIONS`` and friends are on for ``1``/``true``/``yes``/``on`` (any
non-empty value other than the "off" words), off when unset, empty, ``0``, ``false``, ``no`` or ``off``."""

from __future__ import annotations

import os

__all__ = ["env_flag"]

_OFF = frozenset({"", "0", "false", "no", "off"})


def env_flag(name: str) -> bool:
    """Whether the environment variable ``name`` is switched on."""
    return os.environ.get(name, "").strip().lower() not in _OFF
