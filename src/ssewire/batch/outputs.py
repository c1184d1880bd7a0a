"""Result rows out to a file, Parquet (needs pyarrow), JSONL or CSV, as they come: never all held.

Columns: ``source``, the kept input columns, then :data:`ssewire.batch.COLUMNS`. Rows are written to a hidden
``.NAME.partial`` beside the output, renamed to the output by :meth:`Writer.finish`; :meth:`Writer.abort` (an
interrupted batch) closes it as it is, readable (a Parquet file gets its footer) unless closing fails too (a full
disk). An output that is a symbolic link is written where it points (the link stays); one that is not a regular
file (a FIFO, ``/dev/stdout``) is written in place, never replaced. Parquet holds up to
:data:`ROW_GROUP_ROWS` rows before writing them as one row group. In CSV a null is an empty cell, a boolean
``true``/``false`` and a list (``tool_call_names``) its JSON text. A lone surrogate in a string (a JSON
``"\\ud800"`` the body held) is written as its escape: JSONL reads it back as it was.
"""

from __future__ import annotations

import base64
import csv
import errno
import json
import math
import os
import stat
import sys
from typing import Any, Optional, Sequence

from . import COLUMNS
from .errors import UsageError

__all__ = [
    "FORMATS",
    "ROW_GROUP_ROWS",
    "Writer",
    "format_for",
    "open_writer",
    "partial_path",
    "pyarrow_without_pandas",
    "require_format",
]

#: The output formats, ``--format``'s choices.
FORMATS = ("parquet", "jsonl", "csv")
#: Rows per Parquet row group (what the Parquet writer holds at most).
ROW_GROUP_ROWS = 16 * 1024  # held before a row group is written: a few MB of rows, never the archive
_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
_NAMES = [name for name, _ in COLUMNS]


def format_for(path: str, given: Optional[str]) -> str:
    """``given``, else the format the suffix of ``path`` names; :class:`UsageError` when it names none."""
    if given is not None:
        return given
    found = _SUFFIXES.get(os.path.splitext(path)[1].lower())
    if found is None:
        raise UsageError(f"cannot tell the format of {path} from its suffix: name it --format {'/'.join(FORMATS)}")
    return found


def partial_path(path: str) -> str:
    """Where the output is written until it is complete: ``.NAME.partial`` beside it (hidden), or beside the file a
    symbolic link ``path`` names; ``path`` itself when it is there and no regular file (a FIFO, a device)."""
    path = os.path.realpath(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return path
    except OSError:  # not there yet
        pass
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.partial")


class Writer:
    """Writes rows to :func:`partial_path` of ``path``; ``kept`` names the kept columns with their Arrow types
    (None: strings)."""

    def __init__(self, path: str, kept: Sequence[tuple[str, Any]]) -> None:
        self.path = path
        self.partial = partial_path(path)
        self.columns = ["source", *(name for name, _ in kept), *_NAMES]
        #: The kept columns of a date, time, timestamp or duration type, whose values come as integers (see
        #: :func:`~ssewire.batch.parquet_rows.is_time`), with that type.
        self.times: list[tuple[int, Any]] = []
        if any(kind is not None for _, kind in kept):
            import pyarrow as pa

            from .parquet_rows import is_time

            self.times = [
                (index, kind) for index, (_, kind) in enumerate(kept) if kind is not None and is_time(pa, kind)
            ]

    def _as_text(self, kept: list[tuple[Any, ...]]) -> Sequence[Sequence[Any]]:
        """``kept`` with the values of :attr:`times` columns written as Arrow writes them as text (a timestamp to
        the nanosecond, a year past 9999)."""
        if not self.times:
            return kept
        import pyarrow as pa

        rows = [list(values) for values in kept]
        for index, kind in self.times:
            texts = pa.array([row[index] for row in rows], type=kind).cast(pa.string()).to_pylist()
            for row, text in zip(rows, texts):
                row[index] = text
        return rows

    def write(self, sources: list[str], kept: list[tuple[Any, ...]], rows: list[tuple[Any, ...]]) -> None:
        """One row per source: the source, its kept values, its result row (values of ``COLUMNS``)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Close, and move the complete output into place (where a symbolic link points; an output that is no
        regular file was written in place)."""
        self.close()
        target = os.path.realpath(self.path)
        if self.partial != target:
            os.replace(self.partial, target)

    def abort(self) -> tuple[str, Optional[str]]:
        """Close, leaving the rows written so far in the partial file: its path, and why closing it failed too
        (None when it is closed and readable). Never raises for a file that cannot be written."""
        try:
            self.close()
        except (OSError, ValueError) as exc:  # (pyarrow's errors are ValueErrors and OSErrors)
            return self.partial, f"{type(exc).__name__}: {exc}"
        return self.partial, None


class _Jsonl(Writer):
    def __init__(self, path: str, kept: Sequence[tuple[str, Any]]) -> None:
        super().__init__(path, kept)
        self.file = open(self.partial, "w", encoding="utf-8", errors="backslashreplace", newline="\n")  # noqa: SIM115

    def write(self, sources: list[str], kept: list[tuple[Any, ...]], rows: list[tuple[Any, ...]]) -> None:
        columns = self.columns
        for source, values, row in zip(sources, self._as_text(kept), rows):
            line = dict(zip(columns, (source, *values, *row)))
            try:
                text = json.dumps(line, ensure_ascii=False, default=_json_value, allow_nan=False)
            except ValueError:  # a NaN or infinite float somewhere in a kept value (Parquet holds them)
                text = json.dumps(_finite(line), ensure_ascii=False, default=_json_value, allow_nan=False)
            self.file.write(text + "\n")

    def close(self) -> None:
        self.file.close()


class _Csv(Writer):
    def __init__(self, path: str, kept: Sequence[tuple[str, Any]]) -> None:
        super().__init__(path, kept)
        self.file = open(self.partial, "w", encoding="utf-8", errors="backslashreplace", newline="")  # noqa: SIM115
        self.csv = csv.writer(self.file, lineterminator="\n")
        self.csv.writerow(self.columns)

    def write(self, sources: list[str], kept: list[tuple[Any, ...]], rows: list[tuple[Any, ...]]) -> None:
        for source, values, row in zip(sources, self._as_text(kept), rows):
            self.csv.writerow([source, *map(_cell, values), *map(_cell, row)])

    def close(self) -> None:
        self.file.close()


class _Parquet(Writer):
    def __init__(self, path: str, kept: Sequence[tuple[str, Any]]) -> None:
        super().__init__(path, kept)
        pa, pq, result_schema = _pyarrow()
        self.pa, self.pq = pa, pq
        fields = [pa.field("source", pa.string())]
        fields += [pa.field(name, pa.string() if kind is None else kind) for name, kind in kept]
        self.schema = pa.schema([*fields, *result_schema], metadata=result_schema.metadata)
        self.writer = pq.ParquetWriter(self.partial, self.schema)
        self.batches: list[Any] = []
        self.held = 0

    def write(self, sources: list[str], kept: list[tuple[Any, ...]], rows: list[tuple[Any, ...]]) -> None:
        columns: list[Sequence[Any]] = [sources, *zip(*kept), *zip(*rows)]
        try:
            arrays = [self.pa.array(column, type=field.type) for column, field in zip(columns, self.schema)]
        except UnicodeEncodeError:  # a lone surrogate (a JSON "\\ud800" in a name or a message): escaped
            columns = [[_escaped(value) for value in column] for column in columns]
            arrays = [self.pa.array(column, type=field.type) for column, field in zip(columns, self.schema)]
        self.batches.append(self.pa.RecordBatch.from_arrays(arrays, schema=self.schema))
        self.held += len(sources)
        if self.held >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self.batches:
            self.writer.write_table(self.pa.Table.from_batches(self.batches, schema=self.schema))
        self.batches, self.held = [], 0

    def close(self) -> None:
        self._flush()
        self.writer.close()

    def abort(self) -> tuple[str, Optional[str]]:
        """:meth:`Writer.abort`, the closed file checked: pyarrow closes a file it failed to write without an error
        and without its footer (unreadable)."""
        partial, unclosed = super().abort()
        if unclosed is None and stat.S_ISREG(os.stat(partial).st_mode):
            try:
                self.pq.read_metadata(partial)
            except (OSError, ValueError) as exc:
                return partial, f"{type(exc).__name__}: {exc}"
        return partial, unclosed


def open_writer(path: str, fmt: str, kept: Sequence[tuple[str, Any]] = ()) -> Writer:
    """A writer of ``fmt`` (one of :data:`FORMATS`) for ``path``. :class:`UsageError` when Parquet needs a pyarrow
    that is not installed, or the partial file cannot be created."""
    kinds = {"parquet": _Parquet, "jsonl": _Jsonl, "csv": _Csv}
    try:
        return kinds[fmt](path, kept)
    except OSError as exc:
        if exc.errno is not None and exc.errno not in _PATH_ERRORS:  # (a full disk, an I/O error: no usage error)
            raise
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


#: The errors opening an output that say its path is wrong (a usage error); any other (a full disk) is a failure.
_PATH_ERRORS = frozenset(
    {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR, errno.EROFS, errno.ENAMETOOLONG, errno.ELOOP}
)


def require_format(fmt: str) -> None:
    """:class:`UsageError` when writing ``fmt`` needs a library that is not installed (pyarrow for Parquet)."""
    if fmt == "parquet":
        _pyarrow()


def _pyarrow() -> tuple[Any, Any, Any]:
    try:
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs
        import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]

        from .arrow import SCHEMA
    except ImportError:
        raise UsageError(
            "writing Parquet needs pyarrow: pip install 'ssewire[arrow]', or write JSONL or CSV instead "
            "(--format jsonl or --format csv, or an --out ending in .jsonl or .csv)"
        ) from None
    return pa, pq, SCHEMA


class _PandasHidden:
    """An import finder for which pandas is not there (see :func:`pyarrow_without_pandas`)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("hidden from pyarrow by ssewire batch", name=name)


def pyarrow_without_pandas() -> None:
    """Have pyarrow take pandas as not installed in this process, unless pandas is imported already: the Parquet
    writer converts Python lists, which never need it, but pyarrow's first conversion of any kind imports pandas
    where it is installed (a quarter of a second of every run, more than parsing a thousand small bodies). For a
    process that runs nothing else (the command line): pyarrow then never converts to or from pandas in it. Pandas
    itself stays importable."""
    if "pandas" in sys.modules:
        return
    pa = _pyarrow()[0]
    hidden = _PandasHidden()
    sys.meta_path.insert(0, hidden)
    try:
        pa.array([], type=pa.null())  # pyarrow asks for pandas once, on its first conversion, and remembers
    finally:
        sys.meta_path.remove(hidden)


def _escaped(value: Any) -> Any:
    """``value`` with every string in it valid UTF-8 (a lone surrogate written as its escape, as JSONL and CSV do)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, list):
        return [_escaped(item) for item in value]
    return value


def _cell(value: Any) -> Any:
    """A CSV cell: empty for None, ``true``/``false``, JSON for lists and objects, base64 for bytes."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=_json_value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def _finite(value: Any) -> Any:
    """A kept value as JSON can say it: every NaN or infinite float in it (a Parquet column, a list or struct of
    one, may hold them) as null."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _json_value(value: Any) -> Any:
    """What JSON cannot say (kept Parquet values): bytes as base64, anything else (dates, decimals) as text."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)
