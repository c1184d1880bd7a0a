"""The INPUT paths of ``ssewire batch`` in, an :class:`~ssewire.batch.items.Input` for each out
(:func:`open_inputs`): they yield one item per stream, lazily.

- a file: one stream. Its bytes are read where it is parsed (a worker), never here;
- a directory: every regular file under it, recursively (to any depth), sorted by name at each level; names
  starting with ``.`` (hidden files and directories) are skipped and symbolic links to directories are not
  followed. Each file is one stream, whatever its name (a ``.parquet`` or ``.jsonl`` file inside a directory is not
  read as a table); a directory that cannot be listed and a broken symbolic link are unreadable items. A
  :class:`NameFilter` (``--glob``, ``--exclude``) picks which of its files are read, by their path relative to the
  directory (``sub/a.sse``), matched with :func:`fnmatch.fnmatch` (``*`` matches ``/`` too);
- a ``.parquet`` file: a table, one stream per row (:mod:`ssewire.batch.tables`; needs pyarrow);
- a ``.jsonl`` / ``.ndjson`` file, when ``--body-column`` is given: a table, one JSON object per line (without
  ``--body-column`` it is one stream, as a recorded NDJSON stream is).

A file's or directory entry's source is its path (an undecodable byte of a file name written as its escape). A
file bigger than ``max_body`` (``--max-buffer``) is a ``body_too_large`` item, never read; should it grow after
``stat``, the worker reads no more than the limit and a byte (:class:`~ssewire.batch.items.ReadFile`).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Sequence, Union

from ..limits import DEFAULT_MAX_BUFFER
from .errors import UsageError
from .items import Input, Item, Payload, ReadFile, TableColumns, Unreadable, os_message, too_large, utf8
from .tables import JsonlInput, ParquetInput

__all__ = ["DirectoryInput", "FileInput", "NameFilter", "open_inputs"]


@dataclass(frozen=True)
class NameFilter:
    """Which files of a directory input are read: those whose path relative to the directory matches ``glob``
    (None: every file) and none of ``exclude`` (``fnmatch`` patterns)."""

    glob: Optional[str] = None
    exclude: tuple[str, ...] = ()

    @property
    def keeps_all(self) -> bool:
        """Whether every file is read (no pattern given)."""
        return self.glob is None and not self.exclude

    def __call__(self, relative: str) -> bool:
        if self.glob is not None and not fnmatch.fnmatch(relative, self.glob):
            return False
        return not any(fnmatch.fnmatch(relative, pattern) for pattern in self.exclude)


class FileInput(Input):
    """A file: one stream."""

    def items(self) -> Iterator[Item]:
        size = _file_size(self.path)
        yield Item(self.source, _file_payload(self.path, size, self.max_body), None, size, self.nulls)

    def totals(self) -> tuple[int, Optional[int]]:
        return 1, _file_size(self.path)


class DirectoryInput(Input):
    """Every regular file under a directory that ``names`` keeps (see the module docstring), except the files
    named in ``exclude`` (the output being written, when it is inside the directory)."""

    def __init__(
        self,
        path: str,
        columns: TableColumns,
        exclude: Sequence[str] = (),
        max_body: int = DEFAULT_MAX_BUFFER,
        names: NameFilter = NameFilter(),  # frozen: one shared default is safe
    ) -> None:
        super().__init__(path, columns, max_body)
        self.exclude = exclude
        self.names = names
        self._prefix = len(os.path.join(path, ""))  # a listed path is the directory's path joined to the rest

    def _keep(self, path: str) -> bool:
        return self.names.keeps_all or self.names(path[self._prefix :])

    def items(self) -> Iterator[Item]:
        skip = {_identity(path) for path in self.exclude} - {None}
        for path, found in _walk(self.path, self._keep):
            if isinstance(found, OSError):
                yield Item(utf8(path), Unreadable(os_message(found)), None, 0, self.nulls)
            elif (found.st_dev, found.st_ino) not in skip:
                payload = _file_payload(path, found.st_size, self.max_body)
                yield Item(utf8(path), payload, None, found.st_size, self.nulls)

    def totals(self) -> tuple[int, Optional[int]]:
        streams = size = 0
        for _, found in _walk(self.path, self._keep):
            streams += 1
            size += 0 if isinstance(found, OSError) else found.st_size
        return streams, size


def open_inputs(
    paths: Sequence[str],
    columns: TableColumns,
    jsonl_tables: bool,
    exclude: Sequence[str] = (),
    max_body: int = DEFAULT_MAX_BUFFER,
    names: NameFilter = NameFilter(),  # frozen: one shared default is safe
) -> list[Input]:
    """An :class:`Input` for each path, checked: a missing path, a table without its columns or a Parquet input
    without pyarrow raises :class:`UsageError`. ``jsonl_tables``: ``.jsonl``/``.ndjson`` files are tables;
    ``max_body``: the largest body read (a bigger one is a ``body_too_large`` row); ``names``: which files of a
    directory are read (a file given itself always is)."""
    inputs: list[Input] = []
    for path in paths:
        suffix = os.path.splitext(path)[1].lower()
        if os.path.isdir(path):
            inputs.append(DirectoryInput(path, columns, exclude, max_body, names))
        elif not os.path.exists(path):
            raise UsageError(f"no such file or directory: {path}")
        elif not os.path.isfile(path):
            raise UsageError(f"not a regular file or a directory: {path}")
        elif suffix == ".parquet":
            inputs.append(ParquetInput(path, columns, max_body))
        elif suffix in (".jsonl", ".ndjson") and jsonl_tables:
            inputs.append(JsonlInput(path, columns, max_body))
        else:
            inputs.append(FileInput(path, columns, max_body))
    return inputs


def _walk(top: str, keep: Callable[[str], bool]) -> Iterator[tuple[str, Union[os.stat_result, OSError]]]:
    """(path, stat) of every regular file under ``top`` whose path ``keep`` takes, in order; (path, error) where
    listing a directory failed or a symbolic link ``keep`` takes is broken. Iterative: a tree of any depth takes
    one listing per level, no recursion."""
    listing = _listing(top)
    if isinstance(listing, OSError):
        yield top, listing
        return
    levels = [iter(listing)]
    while levels:
        entry = next(levels[-1], None)
        if entry is None:
            levels.pop()
            continue
        if entry.name.startswith("."):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) and not keep(entry.path):
                continue
            if entry.is_dir(follow_symlinks=False):
                listing = _listing(entry.path)
                if isinstance(listing, OSError):
                    yield entry.path, listing
                else:
                    levels.append(iter(listing))
            elif entry.is_file():
                yield entry.path, entry.stat()
            elif entry.is_symlink():  # to a directory or a special file (skipped), or to nothing
                broken = _broken_link(entry.path)
                if broken is not None:
                    yield entry.path, broken
        except OSError as exc:  # a link that loops fails is_file(); a file that vanished, stat()
            yield entry.path, (_broken_link(entry.path) if os.path.islink(entry.path) else None) or exc


def _listing(directory: str) -> Union[list[os.DirEntry[str]], OSError]:
    """The entries of ``directory`` sorted by name, or why it cannot be listed."""
    try:
        with os.scandir(directory) as scan:
            return sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        return exc


def _broken_link(path: str) -> Optional[OSError]:
    """Why the symbolic link ``path`` leads nowhere (its target missing, a loop ...), or None when it leads to
    something (a directory or a special file, skipped)."""
    try:
        os.stat(path)
    except OSError as exc:
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return OSError(exc.errno, f"broken symbolic link to {target!r} ({exc.strerror})", path)
    return None


def _identity(path: str) -> Optional[tuple[int, int]]:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _file_payload(path: str, size: int, limit: int) -> Payload:
    """What a worker parses of the file at ``path`` (``size`` from stat): the file, or a too-large item."""
    return too_large(f"the file {utf8(path)}", size, limit) if size > limit else ReadFile(path, limit)


def _file_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
