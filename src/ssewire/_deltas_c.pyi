"""Type stub of the compiled delta reader (``_deltas_c.pyx``); it has no pure-Python twin: without it the normalisers
decode every payload (see ``ssewire.normalizers.typed``)."""

from typing import Any, Mapping, Optional, Union

from typing_extensions import TypeAlias, disjoint_base

__all__ = ["DeltaRule", "take_deltas", "use_types"]

_Variant: TypeAlias = tuple[Union[str, bool, None], tuple[tuple[int, str], ...]]  # (tag, ((text path, kind), ...))

def use_types(
    unified: type, fields: tuple[str, ...], defaults: tuple[Any, ...], lazy: type, undecoded: object, event: type
) -> bool: ...

@disjoint_base
class DeltaRule:
    def __init__(
        self,
        paths: tuple[tuple[Union[str, int], ...], ...],
        cases: Mapping[Optional[str], tuple[Optional[str], tuple[_Variant, ...]]],
        type_path: int,
        tag_path: int = -1,
        seq_path: int = -1,
        nulls: tuple[int, ...] = (),
        absent: tuple[int, ...] = (),
    ) -> None: ...

def take_deltas(events: list[Any], start: int, rule: DeltaRule, out: list[Any]) -> int: ...
