"""Type stub of the compiled delta reader (``_deltas_c.pyx``); it has no pure-Python twin: without it the normalisers
decode every payload and the accumulator takes every event in Python (see ``ssewire.normalizers._fast.typed``)."""

from typing import Any, Mapping, Optional, Union

from typing_extensions import TypeAlias, disjoint_base

__all__ = [
    "MAX_CHARS",
    "MAX_PATHS",
    "MAX_SLOTS",
    "MAX_STEPS",
    "DeltaRule",
    "MemberPath",
    "TextSink",
    "compact_member",
    "take_deltas",
    "take_texts",
    "use_types",
    "without_member",
    "write_texts",
]

MAX_CHARS: int
MAX_PATHS: int
MAX_STEPS: int
MAX_SLOTS: int

_Path: TypeAlias = tuple[Union[str, int], ...]
_Tag: TypeAlias = Union[str, bool, type, None]  # a string, True, dict, type(None) or None (any)
_Conditions: TypeAlias = tuple[tuple[int, _Tag], ...]  # ((path index, tag), ...): all must hold
_Candidates: TypeAlias = tuple[tuple[int, str], ...]  # ((text path, kind), ...)
_Variant: TypeAlias = Union[
    tuple[Union[_Tag, _Conditions], _Candidates], tuple[Union[_Tag, _Conditions], _Candidates, str]
]  # (tag or conditions, candidates[, kind])

def use_types(
    unified: type,
    fields: tuple[str, ...],
    defaults: tuple[Any, ...],
    lazy: type,
    undecoded: object,
    event: type,
    call: type,
) -> bool: ...

@disjoint_base
class TextSink:
    texts: list[str]
    reasonings: list[str]
    fragments: dict[Any, list[str]]
    taken: int
    sequence: Any
    def __init__(
        self, texts: list[str], reasonings: list[str], fragments: Optional[dict[Any, list[str]]] = None
    ) -> None: ...

@disjoint_base
class DeltaRule:
    def __init__(
        self,
        paths: tuple[_Path, ...],
        cases: Mapping[Optional[str], tuple[Optional[str], tuple[_Variant, ...]]],
        type_path: int,
        tag_path: int = -1,
        seq_path: int = -1,
        nulls: tuple[int, ...] = (),
        absent: tuple[int, ...] = (),
        key_path: int = -1,
        notes: tuple[tuple[int, str], ...] = (),
        not_true: tuple[int, ...] = (),
        by_type: bool = False,
        zeros: tuple[int, ...] = (),
        media: tuple[int, ...] = (),
        each_step: int = 0,
    ) -> None: ...
    def fresh(self) -> DeltaRule: ...
    def __copy__(self) -> DeltaRule: ...
    def __deepcopy__(self, memo: Any) -> DeltaRule: ...
    def __reduce__(self) -> tuple[Any, ...]: ...
    @property
    def learns(self) -> bool: ...
    @property
    def learned(self) -> int: ...

@disjoint_base
class MemberPath:
    @property
    def string(self) -> bool: ...
    def __init__(self, path: _Path, string: bool = False) -> None: ...

def compact_member(data: str, path: MemberPath) -> Optional[str]: ...
def without_member(data: Union[bytes, str], path: MemberPath) -> Optional[bytes]: ...
def take_deltas(
    events: list[Any],
    start: int,
    rule: DeltaRule,
    out: list[Any],
    calls: Optional[dict[Any, Any]] = None,
    notes: Optional[list[Any]] = None,
    sink: Optional[TextSink] = None,
) -> int: ...
def take_texts(events: list[Any], start: int, texts: list[str], reasonings: list[str]) -> tuple[int, Any]: ...
def write_texts(
    events: list[Any],
    start: int,
    kind: str,
    head: str,
    tail: str,
    parts: Optional[list[bytes]],
    seq: Optional[int],
    seq_end: str,
) -> tuple[bytes, int, int]: ...
