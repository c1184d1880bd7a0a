"""Build configuration: the wheels cibuildwheel would build, workflow syntax, project metadata."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
pytestmark = pytest.mark.skipif(not PYPROJECT.is_file(), reason="needs the source tree")

VERSIONS = ["cp39", "cp310", "cp311", "cp312", "cp313", "cp314", "cp314t"]
INTENDED = {
    "linux": {
        f"{v}-{libc}_{arch}" for v in VERSIONS for libc in ("manylinux", "musllinux") for arch in ("x86_64", "aarch64")
    },
    "macos": {f"{v}-macosx_{arch}" for v in VERSIONS for arch in ("x86_64", "arm64")},
    "windows": {f"{v}-win_amd64" for v in VERSIONS}
    | {f"{v}-win_arm64" for v in VERSIONS if v not in ("cp39", "cp310")},
}


def _load_pyproject() -> dict:  # type: ignore[type-arg]
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.mark.parametrize("platform", sorted(INTENDED))
def test_cibuildwheel_builds_exactly_the_intended_wheels(platform: str) -> None:
    exe = shutil.which("cibuildwheel") or str(Path(sys.executable).with_name("cibuildwheel"))
    if not Path(exe).exists():
        pytest.skip("cibuildwheel is not installed (release extra)")
    out = subprocess.run(
        [exe, "--print-build-identifiers", "--platform", platform],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert set(out) == INTENDED[platform]
    assert len(out) == len(INTENDED[platform])


def test_workflows_pass_actionlint() -> None:
    exe = shutil.which("actionlint") or str(Path(sys.executable).with_name("actionlint"))
    if not Path(exe).exists():
        pytest.skip("actionlint is not installed (release extra)")
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    assert {Path(w).name for w in workflows} >= {"ci.yml", "wheels.yml", "bench.yml"}
    proc = subprocess.run([exe, *workflows], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_metadata_is_complete() -> None:
    project = _load_pyproject()["project"]
    assert project["requires-python"] == ">=3.9"
    assert project["dependencies"] == []  # the standard library only, at run time
    classifiers = set(project["classifiers"])
    assert any(c.startswith("Programming Language :: Python :: Free Threading") for c in classifiers)
    assert "Typing :: Typed" in classifiers
    for extra in ("test", "bench", "fast", "release"):
        assert extra in project["optional-dependencies"]
    assert (ROOT / "src" / "ssewire" / "py.typed").is_file()
    assert (ROOT / "CHANGELOG.md").is_file()


def test_cython_is_pinned_by_one_constraints_file() -> None:
    pins = [
        line for line in (ROOT / "requirements" / "cython.txt").read_text().splitlines() if line.startswith("Cython")
    ]
    assert len(pins) == 1 and pins[0].startswith("Cython==")
    env = _load_pyproject()["tool"]["cibuildwheel"]["environment"]
    assert env["PIP_CONSTRAINT"] == env["PIP_BUILD_CONSTRAINT"] == "requirements/cython.txt"
