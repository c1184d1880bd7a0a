"""Build the compiled scanner when possible; otherwise build the pure-Python package and say so.

``SSEWIRE_NO_EXTENSIONS=1`` skips compiling. Without Cython or a working C compiler the build does not fail: the
pure-Python twin is installed, a line saying so is written to the build's output (pip shows it with ``-v``), and
the wheel is tagged ``py3-none-any``, as any build with no extension is. With ``SSEWIRE_REQUIRE_EXTENSIONS=1`` a
build whose compiling failed stops with an error instead. Release builds carry no debug information (``-g0``,
stripped at link on Linux and macOS); ``SSEWIRE_DEBUG_SYMBOLS=1`` keeps it, for a debugger. A module written once in
Python (``<name>_py.py``, C types in ``<name>_c.pxd``) is compiled from that one source as ``<name>_c``; the modules
``ssewire._twins.COMPILED`` lists are compiled from their own source, as they are, into ``ssewire/_compiled/``.
"""

from __future__ import annotations

import ast
import hashlib
import os
import sys

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext


def _flag(name: str) -> bool:
    """An environment switch: on unless unset, empty, 0, false, no or off (as ssewire._config.env_flag)."""
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


NO_EXTENSIONS = _flag("SSEWIRE_NO_EXTENSIONS") or sys.implementation.name != "cpython"
CYTHON_DIRECTIVES = {
    "language_level": "3",
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "embedsignature": True,
    "freethreading_compatible": True,
}

#: For the modules compiled from their own source: Python's semantics unchanged (negative indices, bounds checks;
#: annotations are not types: a ``list`` parameter given an int behaves as the source does, not as a TypeError).
SAME_SOURCE_DIRECTIVES = {
    "language_level": "3",
    "annotation_typing": False,
    "embedsignature": True,
    "freethreading_compatible": True,
}


def _skip(reason: str, failed: bool = True) -> None:
    """Say that the compiled scanner is not built; a build that ``failed`` fails with ``SSEWIRE_REQUIRE_EXTENSIONS``."""
    if failed and _flag("SSEWIRE_REQUIRE_EXTENSIONS"):
        raise SystemExit(f"ssewire: compiled scanner not built ({reason}) and SSEWIRE_REQUIRE_EXTENSIONS is set")
    sys.stderr.write(f"\n*** ssewire: compiled scanner SKIPPED ({reason}); installing the pure-Python twin ***\n\n")


def _flags(level: str = "-O3") -> tuple[list[str], list[str]]:
    """Compile and link flags: optimised (``level``), and with no debug information unless ``SSEWIRE_DEBUG_SYMBOLS``
    is set.

    Python's own CFLAGS usually carry ``-g``, which makes the two modules ~3.8 MB instead of ~0.4 MB; ``-g0`` comes
    after them and wins, and the linker strips what is left (symbols a debugger would use; the exported module init
    functions stay, as they are dynamic symbols). The modules compiled from their own source take ``-O1``: their C
    is calls into the interpreter, which ``-O3`` makes no faster (within 3% on the recordings) in twice the time."""
    if os.name == "nt":
        return [], []
    if _flag("SSEWIRE_DEBUG_SYMBOLS"):
        return [level, "-g"], []
    if sys.platform == "darwin":
        return [level, "-g0"], ["-Wl,-S,-x"]  # ld64: no debug map, no local symbols
    if sys.platform.startswith("linux"):
        return [level, "-g0"], ["-Wl,--strip-all"]
    return [level, "-g0"], []


def _compiled_from_source() -> tuple[str, ...]:
    """The modules compiled from their own source: the tuple ``COMPILED`` of ``src/ssewire/_twins.py``."""
    with open(os.path.join("src", "ssewire", "_twins.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "COMPILED" for t in node.targets):
            names: tuple[str, ...] = ast.literal_eval(node.value)
            return names
    raise SystemExit("ssewire: src/ssewire/_twins.py names no COMPILED modules")


COMPILED_FROM_SOURCE = frozenset(_compiled_from_source())


class OptionalBuildExt(build_ext):
    """build_ext that falls back to pure Python when compiling fails; a module compiled from its own source goes to
    the package's ``_compiled`` directory (``ssewire._twins`` loads it from there), never beside its source, where it
    would shadow it."""

    def get_ext_fullname(self, ext_name: str) -> str:
        fullname: str = super().get_ext_fullname(ext_name)
        if fullname in COMPILED_FROM_SOURCE:  # (its init function keeps the module's own name: the last part)
            package, _, rest = fullname.partition(".")
            return f"{package}._compiled.{rest}"
        return fullname

    def copy_extensions_to_source(self) -> None:
        build_py = self.get_finalized_command("build_py")
        for name in COMPILED_FROM_SOURCE:  # (the in-place copy makes no directory)
            os.makedirs(build_py.get_package_dir(self.get_ext_fullname(name).rpartition(".")[0]), exist_ok=True)
        super().copy_extensions_to_source()

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:  # the extensions compile side by side, one per core (build_ext -j)
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            _skip(f"build failed: {exc}")

    def build_extension(self, ext):  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as exc:
            _skip(f"could not compile {ext.name}: {exc}")

    def built(self) -> list[str]:
        """The extensions whose module file exists after the build (compiled now or up to date)."""
        return [ext.name for ext in self.extensions if os.path.exists(self.get_ext_fullpath(ext.name))]


class TruthfulBdistWheel(bdist_wheel):
    """bdist_wheel whose tag follows what was built: ``py3-none-any`` (pure) when no extension was compiled."""

    def run_command(self, command: str) -> None:
        super().run_command(command)
        if command == "build" and self.distribution.has_ext_modules():
            if not self.get_finalized_command("build_ext").built():  # every extension failed: the pure package
                self.distribution.ext_modules = []
                self.root_is_pure = True


def _compiled_copy(package: str, name: str) -> str:
    """The pure-Python module ``<name>_py.py`` of ``package``, copied as ``<name>_c.py`` beside its ``<name>_c.pxd``
    into ``build/cython/`` for Cython to compile as ``<name>_c`` (aiohttp's ``reader_c`` from ``reader_py``, with a
    copy instead of a symlink, which Windows and sdists do not keep); returns the copy's path. The copies keep
    their sources' times, so an unchanged module is not translated again; ``build/`` never ships."""
    import shutil

    source = os.path.join("src", *package.split("."))
    target = os.path.join("build", "cython", *package.split("."))
    os.makedirs(target, exist_ok=True)
    shutil.copy2(os.path.join(source, f"{name}_c.pxd"), os.path.join(target, f"{name}_c.pxd"))
    copy = os.path.join(target, f"{name}_c.py")
    shutil.copy2(os.path.join(source, f"{name}_py.py"), copy)
    return copy


#: Where the sources of the modules compiled from their own source are copied, to be translated.
SOURCE_COPIES = os.path.join("build", "cython", "source")


def _source_copy(name: str) -> str:
    """The source of the module ``name`` (one of :data:`COMPILED_FROM_SOURCE`), copied into ``build/cython/source/``
    with the SHA-256 of the source (and of the ``.pxd`` beside it, which declares a module's C types where it has
    one, copied too) appended as ``__source_sha256__`` (what the tests hold the compiled module to); returns the
    copy's path. An unchanged source is not copied (nor translated) again."""
    source = os.path.join("src", *name.split(".")) + ".py"
    with open(source, "rb") as f:
        text = f.read()
    declarations = source[:-3] + ".pxd"
    copy = os.path.join(SOURCE_COPIES, *name.split(".")) + ".py"
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    if os.path.exists(declarations):
        import shutil

        with open(declarations, "rb") as f:
            text_pxd = f.read()
        digest = hashlib.sha256(text + text_pxd).hexdigest()
        shutil.copy2(declarations, copy[:-3] + ".pxd")
    else:
        digest = hashlib.sha256(text).hexdigest()
    wanted = text + f"\n__source_sha256__ = {digest!r}  # (appended by setup.py)\n".encode()
    if os.path.exists(copy):
        with open(copy, "rb") as f:
            if f.read() == wanted:
                return copy
    with open(copy, "wb") as f:
        f.write(wanted)
    return copy


def _extensions() -> list:  # type: ignore[type-arg]
    if NO_EXTENSIONS:
        _skip("SSEWIRE_NO_EXTENSIONS is set" if _flag("SSEWIRE_NO_EXTENSIONS") else "not CPython", failed=False)
        return []
    source = os.path.join("src", "ssewire", "_scan", "scanner_c.pyx")
    if not os.path.exists(source):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _skip("Cython is not installed")
        return []
    from setuptools import Extension

    here = os.path.join("src", "ssewire")
    kernels = [
        os.path.join(here, "_c", name)
        for name in ("sw_types.h", "sw_kernels.h", "sw_kernels_py.h", "sw_events_py.h", "sw_slots_py.h", "sw_crc32.h")
    ]
    compile_flags, link_flags = _flags()
    exts = [
        Extension(
            "ssewire._scan.scanner_c",
            [source],
            depends=[*kernels, os.path.join(here, "_scan", "kernels.pxd")],  # the C lives in these headers
            include_dirs=[here],  # the .pxd files name the headers as "_c/..."
            extra_compile_args=compile_flags,
            extra_link_args=link_flags,
        ),
        Extension(
            "ssewire.normalizers._fast.deltas_c",
            [os.path.join(here, "normalizers", "_fast", "deltas_c.pyx")],
            depends=[
                *(
                    os.path.join(here, "_c", name)
                    for name in ("sw_types.h", "sw_json.h", "sw_json_py.h", "sw_slots_py.h")
                ),
                os.path.join(here, "normalizers", "_fast", "json_fields.pxd"),
            ],
            include_dirs=[here],
            extra_compile_args=compile_flags,
            extra_link_args=link_flags,
        ),
    ]
    try:
        exts = cythonize(exts, compiler_directives=CYTHON_DIRECTIVES, quiet=True)
    except Exception as exc:
        _skip(f"Cython could not translate {source}: {exc}")
        return []
    #: The modules compiled from their pure-Python source (its .pxd declares the C types): (package, name).
    sources = (("ssewire.normalizers._fast", "bedrock_chunks"), ("ssewire", "_decoding"))
    try:
        twins = [
            Extension(
                f"{package}.{name}_c",
                [_compiled_copy(package, name)],
                extra_compile_args=compile_flags,
                extra_link_args=link_flags,
            )
            for package, name in sources
        ]
        copies = os.path.join("build", "cython")  # where Cython finds each copy's .pxd (by its module name)
        exts += cythonize(twins, compiler_directives=CYTHON_DIRECTIVES, include_path=[copies], quiet=True)
    except Exception as exc:
        _skip(f"Cython could not translate the pure-Python twins ({', '.join(n for _, n in sources)}): {exc}")
        return exts
    try:
        plain_flags, plain_link = _flags("-O1")
        same = [
            Extension(
                name,
                [os.path.relpath(_source_copy(name), SOURCE_COPIES)],
                extra_compile_args=plain_flags,
                extra_link_args=plain_link,
            )
            for name in sorted(COMPILED_FROM_SOURCE)
        ]
        # translated from where the copies are, so that a traceback names a module by its path in the package
        # (ssewire/normalizers/chat.py), not the build's copy; ssewire._twins' loader gives its lines
        here = os.getcwd()
        os.chdir(SOURCE_COPIES)
        try:
            same = cythonize(same, compiler_directives=SAME_SOURCE_DIRECTIVES, quiet=True)
        finally:
            os.chdir(here)
        for ext in same:
            ext.sources = [os.path.join(SOURCE_COPIES, source) for source in ext.sources]
        return exts + same
    except Exception as exc:
        _skip(f"Cython could not translate the modules compiled from their own source: {exc}")
        return exts


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt, "bdist_wheel": TruthfulBdistWheel})
