"""What ``ssewire batch``'s inputs yield: one :class:`Item` per stream, whose :data:`Payload` is what a worker
parses (a body, a file it reads itself, or why there is nothing to parse), and the :class:`Input` they all are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple, Optional, Union

__all__ = ["Input", "Item", "Payload", "ReadFile", "TableColumns", "Unreadable", "os_message", "utf8"]


class ReadFile(NamedTuple):
    """A payload: the stream is the whole file at ``path``, read where it is parsed."""

    path: str


class Unreadable(NamedTuple):
    """A payload: no body, because the input could not be read; ``message`` says why."""

    message: str


#: What is parsed: a body (None: a null one), a file to read, or what could not be read.
Payload = Union[bytes, None, ReadFile, Unreadable]


class Item(NamedTuple):
    """One stream: where it comes from, what to parse, its own provider (tables; None: ``--provider``), its size
    in bytes (the body's, or the file's from ``stat``) and the values of ``--keep-columns`` (None where absent)."""

    source: str
    payload: Payload
    provider: Optional[str]
    size: int
    kept: tuple[Any, ...]


@dataclass(frozen=True)
class TableColumns:
    """The columns read from table inputs: the body, the provider (optional) and those kept in the output."""

    body: str = "body"
    provider: Optional[str] = None
    keep: tuple[str, ...] = ()


class Input:
    """One INPUT path: its items in order, and its totals for the progress bar; ``table``: rows of a table."""

    table = False

    def __init__(self, path: str, columns: TableColumns) -> None:
        self.path = path
        self.source = utf8(path)  # what the rows say: valid UTF-8 whatever bytes the file name holds
        self.columns = columns
        self.nulls: tuple[Any, ...] = (None,) * len(columns.keep)

    def items(self) -> Iterator[Item]:
        raise NotImplementedError

    def totals(self) -> tuple[int, Optional[int]]:
        """(streams, bytes or None when unknown); may read the input once (a directory walk, JSONL lines)."""
        raise NotImplementedError

    def kept_types(self) -> dict[str, Any]:
        """The kept columns this input has, with their Arrow type (None: strings)."""
        return {}


def utf8(text: str) -> str:
    """``text`` made valid UTF-8 for the output: a lone surrogate (a file name's undecodable byte, a JSON
    ``\\ud800``) written as its escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def os_message(exc: OSError) -> str:
    """What went wrong with a file, for a row or a message: the reason and the file name (valid UTF-8)."""
    return utf8(f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else str(exc))
