"""The suite's pytest markers, in one place: registered by ``tests/conftest.py`` and ``benchmarks/conftest.py``, so
they hold in the tree and where ``.ci/check-packaging`` runs the tests outside it (no ``pyproject.toml`` there)."""

from __future__ import annotations

import pytest

MARKERS = {
    "c_extension": "needs the compiled scanner",
    "slow": "exhaustive sweeps and long runs, deselected by default (run them with -m slow, or everything with -m '')",
}


def register(config: pytest.Config) -> None:
    """Register :data:`MARKERS` with ``config`` (``--strict-markers`` then accepts them)."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
