"""The modules compiled from their own source, and the import hook that runs them compiled.

The modules of :data:`COMPILED` (the normalisers, the encoders, pricing and what every event passes through) are written
once, in Python, and run twice. The build (``setup.py``) compiles each source file as it is with Cython, into
``ssewire/_compiled/<the module's path>`` (aiohttp's ``reader_c`` is compiled from ``reader_py`` the same way, here
without a second name). :func:`install` puts a finder first on ``sys.meta_path`` that loads that compiled file
under the module's own name, so that every importer, ``isinstance`` check and pickle sees one module, whichever
runs; a module whose compiled file is not there (no compiler at build time, another interpreter) is imported from
its source. ``ssewire/__init__`` imports this module first, which installs the finder. Nothing is installed when
compiled code is switched off (``SSEWIRE_NO_EXTENSIONS``, interpreters other than CPython:
:func:`~._config.no_extensions`): the same source then runs as Python.

A module may have a ``.pxd`` beside its source (the encoders' do): Cython reads it as the source's augmenting
declarations (a class's state as C fields, methods ``cpdef``), so that class compiles to an extension type; Python
never reads it. Type checkers and readers see the source (no stub: the compiled module has no name of its own).
Each compiled file carries the SHA-256 of the source (and of its ``.pxd``) it was compiled from
(``__source_sha256__``): the test suite holds it to them, so an edit without a rebuild (``python setup.py
build_ext --inplace``) is caught, never run stale.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from importlib.util import spec_from_file_location
from types import ModuleType
from typing import Optional, Sequence

from ._config import no_extensions

__all__ = [
    "COMPILED",
    "COMPILED_DIR",
    "CompiledFinder",
    "CompiledLoader",
    "compiled_file",
    "install",
    "loaded",
    "runs_compiled",
]

#: The modules compiled from their own source (``setup.py`` reads this tuple; keep it a literal). None of them
#: defines a public ``async def`` or generator function: Python 3.9's ``inspect`` does not see a compiled one as
#: such (``stream.py`` and ``transcode.py``, which do, stay Python).
COMPILED = (
    "ssewire.citations",
    "ssewire.cost.model",
    "ssewire.cost.pricing",
    "ssewire.cost.reported",
    "ssewire.encoders.anthropic",
    "ssewire.encoders.base",
    "ssewire.encoders.chat",
    "ssewire.encoders.gemini",
    "ssewire.encoders.openai",
    "ssewire.encoders.vercel_ui",
    "ssewire.events",
    "ssewire.framing",
    "ssewire.normalizers.anthropic",
    "ssewire.normalizers.auto",
    "ssewire.normalizers.bedrock",
    "ssewire.normalizers.chat",
    "ssewire.normalizers.cohere",
    "ssewire.normalizers.common",
    "ssewire.normalizers.contract",
    "ssewire.normalizers.gemini",
    "ssewire.normalizers.gemini_interactions",
    "ssewire.normalizers.gemini_live",
    "ssewire.normalizers.mistral",
    "ssewire.normalizers.ollama",
    "ssewire.normalizers.openai",
    "ssewire.normalizers.realtime",
    "ssewire.normalizers.tool_calls",
    "ssewire.normalizers.vercel_ui",
    "ssewire.normalizers.vertex_args",
    "ssewire.normalizers.xai",
    "ssewire.result",
    "ssewire.usage",
)
#: Where the build puts them: this package's ``_compiled`` directory, in the package's own layout.
COMPILED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_compiled")


def compiled_file(name: str) -> Optional[str]:
    """The compiled file of the module ``name`` (one of :data:`COMPILED`) for this interpreter, or None when it
    was not built."""
    base = os.path.join(COMPILED_DIR, *name.split(".")[1:])
    for suffix in EXTENSION_SUFFIXES:
        if os.path.exists(base + suffix):
            return base + suffix
    return None


class CompiledLoader(ExtensionFileLoader):
    """Loads a module's compiled file; its source is the ``.py`` it was compiled from (so that tracebacks and
    ``inspect.getsource`` show its lines)."""

    def get_source(self, fullname: str) -> Optional[str]:  # type: ignore[override]  # (typeshed: always None)
        path = os.path.join(os.path.dirname(COMPILED_DIR), *fullname.split(".")[1:]) + ".py"
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None


class CompiledFinder:
    """Finds the compiled file of a module of :data:`COMPILED`, to be loaded under the module's own name; None (the
    source, by the next finder) for any other module, and for one not built. (A finder of ``sys.meta_path`` is
    any object with ``find_spec``: not derived from ``importlib.abc.MetaPathFinder``, whose import costs more than
    the rest of this module's.)"""

    def __init__(self) -> None:
        self._names = frozenset(COMPILED)
        self.loaded: list[str] = []

    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]] = None, target: Optional[ModuleType] = None
    ) -> Optional[ModuleSpec]:
        if fullname not in self._names:
            return None
        file = compiled_file(fullname)
        if file is None:
            return None
        self.loaded.append(fullname)
        return spec_from_file_location(fullname, file, loader=CompiledLoader(fullname, file))

    def invalidate_caches(self) -> None:
        """Nothing cached (``importlib.invalidate_caches`` calls it)."""


_FINDER: Optional[CompiledFinder] = None


def install() -> None:
    """Run the modules of :data:`COMPILED` compiled from here on, unless compiled code is switched off (once per
    process; before any of them is imported: ``ssewire/__init__`` calls it first)."""
    global _FINDER
    if _FINDER is None and not no_extensions():
        _FINDER = CompiledFinder()
        sys.meta_path.insert(0, _FINDER)


def loaded() -> list[str]:
    """The modules of :data:`COMPILED` imported compiled so far, in import order (empty when compiled code is off
    or was not built)."""
    return [] if _FINDER is None else list(_FINDER.loaded)


def runs_compiled() -> list[str]:
    """The modules of :data:`COMPILED` that run compiled in this process, imported yet or not (empty when compiled
    code is off or was not built)."""
    return [] if _FINDER is None else [name for name in COMPILED if compiled_file(name) is not None]


install()  # at import: ssewire/__init__ imports this module before any other
