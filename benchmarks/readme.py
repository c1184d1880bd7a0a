"""The README's generated blocks: the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``."""

from __future__ import annotations

from pathlib import Path

__all__ = ["replace_block"]

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
