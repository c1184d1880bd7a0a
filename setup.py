"""Build the compiled scanner when possible; otherwise install the pure-Python package and say so.

``SSEWIRE_NO_EXTENSIONS=1`` skips compiling. Without Cython or a working C compiler the build does not fail:
the pure-Python twin is installed and a clear line is printed.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext


def _flag(name: str) -> bool:
    """An environment switch: on unless unset, empty, 0, false, no or off (as ssewire._env.env_flag)."""
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


def _skip(reason: str) -> None:
    sys.stderr.write(f"\n*** ssewire: compiled scanner SKIPPED ({reason}); installing the pure-Python twin ***\n\n")


class OptionalBuildExt(build_ext):
    """build_ext that falls back to pure Python when compiling fails."""

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


def _extensions() -> list:  # type: ignore[type-arg]
    if NO_EXTENSIONS:
        _skip("SSEWIRE_NO_EXTENSIONS is set" if _flag("SSEWIRE_NO_EXTENSIONS") else "not CPython")
        return []
    source = os.path.join("src", "ssewire", "_scanner_c.pyx")
    if not os.path.exists(source):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _skip("Cython is not installed")
        return []
    from setuptools import Extension

    here = os.path.join("src", "ssewire")
    kernels = [os.path.join(here, "_c", name) for name in ("sw_kernels.h", "sw_events.h", "sw_crc32.h")]
    flags = ["-O3"] if os.name != "nt" else []
    exts = [
        Extension(
            "ssewire._scanner_c",
            [source],
            depends=[*kernels, os.path.join(here, "_kernels.pxd")],  # the C lives in these headers
            extra_compile_args=flags,
        ),
        Extension(
            "ssewire._deltas_c",
            [os.path.join(here, "_deltas_c.pyx")],
            depends=[os.path.join(here, "_c", "sw_json.h"), os.path.join(here, "_json_fields.pxd")],
            extra_compile_args=flags,
        ),
    ]
    try:
        return cythonize(exts, compiler_directives=CYTHON_DIRECTIVES, quiet=True)
    except Exception as exc:
        _skip(f"Cython could not translate {source}: {exc}")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
