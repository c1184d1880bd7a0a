"""Where the numbers were measured: machine, Python and the versions of every package involved."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

__all__ = ["PACKAGES", "brief", "describe", "one_line", "where"]

PACKAGES = (
    "ssewire",
    "httpx",
    "httpx-sse",
    "openai",
    "anthropic",
    "sseclient-py",
    "ijson",
    "orjson",
    "msgspec",
    "botocore",
    "pytest-benchmark",
    "matplotlib",
    "Cython",
)


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def describe() -> dict[str, Any]:
    """Machine, Python, package versions and which ssewire scanner / JSON backend / ijson backend are active."""
    import ijson

    import ssewire
    from ssewire import _json

    from .contenders import compiled_scanner

    compiled, why = compiled_scanner()
    return {
        "machine": {
            "cpu": _cpu(),
            "cpu_count": os.cpu_count(),
            "arch": platform.machine(),
            "os": f"{platform.system()} {platform.release()}",
            "platform": platform.platform(),
        },
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "compiler": platform.python_compiler(),
            "executable": sys.executable,
        },
        "packages": {name: _version(name) for name in PACKAGES},
        "ssewire": {
            "version": ssewire.__version__,
            "default_implementation": ssewire.IMPLEMENTATION,
            "compiled_available": compiled is not None,
            "compiled_note": why,
            "json_backend": _json.BACKEND,
        },
        "ijson_backend": ijson.backend,
    }


def one_line(env: dict[str, Any]) -> str:
    """``CPU (N CPUs), OS, CPython X.Y.Z; pkg a.b, ...`` for the README and the tables."""
    m, py, pk = env["machine"], env["python"], env["packages"]
    pkgs = ", ".join(f"{name} {pk[name]}" for name in PACKAGES if name not in ("pytest-benchmark", "matplotlib"))
    return f"{m['cpu']} ({m['cpu_count']} CPUs, {m['arch']}), {m['os']}, {py['implementation']} {py['version']}; {pkgs}"


def brief() -> dict[str, str]:
    """The machine, Python and active scanner in three short strings (the small benchmarks' README lines)."""
    import os
    import platform

    import ssewire

    return {
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "python": platform.python_version(),
        "scanner": ssewire.IMPLEMENTATION,
    }


def where(env: dict[str, str]) -> str:
    """A :func:`brief` as the small benchmarks' captions say it: machine, Python and scanner."""
    return f"{env['machine']}, Python {env['python']}, scanner {env['scanner']}"
