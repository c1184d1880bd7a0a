"""The README's generated blocks: the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

__all__ = ["publish", "replace_block"]

README = Path(__file__).resolve().parent.parent / "README.md"


def replace_block(name: str, body: str, path: Path = README) -> bool:
    """Put ``body`` between the ``name`` markers of ``path`` (the first pair); False, the file untouched, when the
    file or a marker is missing."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    head, found, rest = text.partition(start)
    if not found or end not in rest:
        return False
    tail = rest.split(end, 1)[1]
    path.write_text(f"{head}{start}\n{body}\n{end}{tail}", encoding="utf-8")
    return True


def publish(
    doc: dict[str, Any], name: str, results: Path, *, quick: bool, readme: bool, table: str, block: Callable[[], str]
) -> Path:
    """Write ``doc`` to ``results/<name>[-quick].json``, print ``table`` and, with ``readme``, put ``block()``
    between README.md's ``name`` markers; returns the JSON file's path."""
    results.mkdir(parents=True, exist_ok=True)
    out = results / f"{name}{'-quick' if quick else ''}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(table)
    if readme and not replace_block(name, block()):
        print(f"README.md has no {name} markers", file=sys.stderr)
    root = README.parent
    print(f"\nwrote: {out.relative_to(root) if out.is_relative_to(root) else out}")
    return out
