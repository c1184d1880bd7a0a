"""The INPUT paths of ``ssewire batch`` in, an :class:`~ssewire._batch_items.Input` for each out
(:func:`open_inputs`): they yield one item per stream, lazily.

- a file: one stream. Its bytes are read where it is parsed (a worker), never here;
- a directory: every regular file under it, recursively, sorted by name at each level; names starting with ``.``
  (hidden files and directories) are skipped and symbolic links to directories are not followed. Each file is one
  stream, whatever its name (a ``.parquet`` or ``.jsonl`` file inside a directory is not read as a table); a
  directory that cannot be listed is an unreadable item;
- a ``.parquet`` file: a table, one stream per row (:mod:`ssewire._batch_tables`; needs pyarrow);
- a ``.jsonl`` / ``.ndjson`` file, when ``--body-column`` is given: a table, one JSON object per line (without
  ``--body-column`` it is one stream, as a recorded NDJSON stream is).

A file's or directory entry's source is its path (an undecodable byte of a file name written as its escape).
"""

from __future__ import annotations

import os
from typing import Iterator, Optional, Sequence, Union

from ._batch_errors import UsageError
from ._batch_items import Input, Item, ReadFile, TableColumns, Unreadable, os_message, utf8
from ._batch_tables import JsonlInput, ParquetInput

__all__ = ["DirectoryInput", "FileInput", "open_inputs"]


class FileInput(Input):
    """A file: one stream."""

    def items(self) -> Iterator[Item]:
        yield Item(self.source, ReadFile(self.path), None, _file_size(self.path), self.nulls)

    def totals(self) -> tuple[int, Optional[int]]:
        return 1, _file_size(self.path)


class DirectoryInput(Input):
    """Every regular file under a directory (see the module docstring), except the files named in ``exclude``
    (the output being written, when it is inside the directory)."""

    def __init__(self, path: str, columns: TableColumns, exclude: Sequence[str] = ()) -> None:
        super().__init__(path, columns)
        self.exclude = exclude

    def items(self) -> Iterator[Item]:
        skip = {_identity(path) for path in self.exclude} - {None}
        for path, found in _walk(self.path):
            if isinstance(found, OSError):
                yield Item(utf8(path), Unreadable(os_message(found)), None, 0, self.nulls)
            elif (found.st_dev, found.st_ino) not in skip:
                yield Item(utf8(path), ReadFile(path), None, found.st_size, self.nulls)

    def totals(self) -> tuple[int, Optional[int]]:
        streams = size = 0
        for _, found in _walk(self.path):
            streams += 1
            size += 0 if isinstance(found, OSError) else found.st_size
        return streams, size


def open_inputs(
    paths: Sequence[str], columns: TableColumns, jsonl_tables: bool, exclude: Sequence[str] = ()
) -> list[Input]:
    """An :class:`Input` for each path, checked: a missing path, a table without its columns or a Parquet input
    without pyarrow raises :class:`UsageError`. ``jsonl_tables``: ``.jsonl``/``.ndjson`` files are tables."""
    inputs: list[Input] = []
    for path in paths:
        suffix = os.path.splitext(path)[1].lower()
        if os.path.isdir(path):
            inputs.append(DirectoryInput(path, columns, exclude))
        elif not os.path.exists(path):
            raise UsageError(f"no such file or directory: {path}")
        elif not os.path.isfile(path):
            raise UsageError(f"not a regular file or a directory: {path}")
        elif suffix == ".parquet":
            inputs.append(ParquetInput(path, columns))
        elif suffix in (".jsonl", ".ndjson") and jsonl_tables:
            inputs.append(JsonlInput(path, columns))
        else:
            inputs.append(FileInput(path, columns))
    return inputs


def _walk(directory: str) -> Iterator[tuple[str, Union[os.stat_result, OSError]]]:
    """(path, stat) of every regular file under ``directory`` in order, (path, error) where listing failed."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        yield directory, exc
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(entry.path)
            elif entry.is_file():
                yield entry.path, entry.stat()
        except OSError as exc:
            yield entry.path, exc


def _identity(path: str) -> Optional[tuple[int, int]]:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _file_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
