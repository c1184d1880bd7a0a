"""A delta payload's fast shape written once, by named paths (:class:`DeltaShape`): the one description a provider's
compiled delta rule (:func:`.typed.delta_rule`), its msgspec structs and its Python fast check are made from, so the
three cannot disagree, and no index is written by hand (reordering the paths cannot renumber one silently)."""

from __future__ import annotations

from dataclasses import dataclass
from keyword import iskeyword
from typing import Any, Callable, Optional, Union

from ...names import UnifiedType

__all__ = ["CallShape", "DeltaShape", "Path"]

Path = tuple[Union[str, int], ...]


@dataclass(frozen=True)
class CallShape:
    """A tool call's argument fragment inside a delta payload, for the compiled reader only (the msgspec struct and
    the Python fast check never take one):

    - ``at``: the fragment object; a payload that has one is read only as one ``tool_call_delta`` (its texts empty);
    - ``key``: the member naming the open call the fragment continues (an integer), looked up in the normaliser's
      ``_reader_calls``;
    - ``arguments``: the argument text of the fragment;
    - ``nulls``: members of the fragment that must be absent or null (those of a fragment that opens or renames a
      call).

    Every path but ``at`` goes through ``at``.
    """

    at: Path
    key: Path
    arguments: Path
    nulls: tuple[Path, ...] = ()

    @property
    def inner(self) -> tuple[Path, ...]:
        """The paths inside the fragment."""
        return (self.key, self.arguments, *self.nulls)


@dataclass(frozen=True)
class DeltaShape:
    """The one shape of a payload that a fast path reads without a full decode: a single text or reasoning delta.

    - ``type``: a member that must be absent or null (a payload with a ``type`` is routed by other rules);
    - ``texts``: ``(path, kind)`` in precedence order, members of one object (:attr:`text_parent`), each a string,
      null or absent: the first non-empty string is the event's text and kind, and any other non-empty one must be
      of the same kind (so an earlier one wins over a later one of its kind, and two kinds at once are not this
      shape); a payload with no non-empty text is not this shape;
    - ``nulls``: members that must be absent or null;
    - ``zeros``: members that, where they are integers, must be 0 (the index of the choice a stream is read by: a
      payload of another choice is left to the full decode);
    - ``reads``: members the fast path reads without checking them (the stream's ``id``, ``model``);
    - ``events``: the SSE event names a payload of this shape comes under (None: an event without one);
    - ``call``: a tool call's argument fragment the compiled reader also takes (:class:`CallShape`), or None.

    A path is member keys, with 0 for the one element of an array (an array of any other length is not this shape),
    and is never a prefix of another (but ``call.at``, of the paths inside it). ValueError for a description that
    breaks these rules.
    """

    name: str
    type: Path
    texts: tuple[tuple[Path, UnifiedType], ...]
    nulls: tuple[Path, ...]
    zeros: tuple[Path, ...] = ()
    reads: tuple[Path, ...] = ()
    events: tuple[Optional[str], ...] = (None,)
    call: Optional[CallShape] = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a shape's name is a Python identifier (its struct's): not {self.name!r}")
        call = self.call
        if call is not None and any(len(p) <= len(call.at) or p[: len(call.at)] != call.at for p in call.inner):
            raise ValueError(f"a call's paths go through its fragment {call.at!r}")
        every = tuple(p for p in (*self.paths, *self.reads) if call is None or p != call.at)
        for path in every:
            if not path or type(path[0]) is not str or any(type(s) is not str and not _element(s) for s in path):
                raise ValueError(f"a path is member keys and 0 (the one element), first a key: not {path!r}")
            if any(type(a) is int and type(b) is int for a, b in zip(path, path[1:])):
                raise ValueError(f"a path has no array directly in an array: {path!r}")
            if any(type(s) is str and (not s.isidentifier() or iskeyword(s)) for s in path):
                raise ValueError(f"a path's keys are Python identifiers (struct fields): not {path!r}")
        for path in every:
            if sum(other[: len(path)] == path for other in every) != 1:
                raise ValueError(f"{path!r} is written twice or is the prefix of another path")
        if any(type(path[-1]) is not str for path in self.zeros):
            raise ValueError("a zero is a member (its path ends in a key)")
        if not self.texts or any(p[:-1] != self.text_parent or type(p[-1]) is not str for p, _ in self.texts):
            raise ValueError("the texts are members (keys) of one object")

    @property
    def paths(self) -> tuple[Path, ...]:
        """The paths the delta rule reads: the type, the texts, the nulls, the zeros, then the call's (in that
        order)."""
        call = () if self.call is None else (self.call.at, *self.call.inner)
        return (self.type, *(path for path, _ in self.texts), *self.nulls, *self.zeros, *call)

    @property
    def text_parent(self) -> Path:
        """The path of the object whose members the texts are."""
        return self.texts[0][0][:-1] if self.texts else ()

    @property
    def text_members(self) -> tuple[tuple[str, UnifiedType], ...]:
        """``(key, kind)`` of each text in precedence order: its member key in :attr:`text_parent`."""
        return tuple((str(path[-1]), kind) for path, kind in self.texts)

    def rule_args(self) -> dict[str, Any]:
        """The arguments of :func:`.typed.delta_rule` for this shape, each index found by its path."""
        paths = self.paths
        texts = tuple((paths.index(path), kind) for path, kind in self.texts)
        nulls = tuple(paths.index(path) for path in self.nulls)
        zeros = tuple(paths.index(path) for path in self.zeros)
        call = self.call
        if call is None:
            return {
                "paths": paths,
                "cases": dict.fromkeys(self.events, (None, ((None, texts),))),
                "type_path": paths.index(self.type),
                "nulls": nulls,
                "zeros": zeros,
            }
        arguments = ((paths.index(call.arguments), "tool_call_delta"),)
        variants = ((type(None), texts), (dict, arguments + texts, "tool_call_delta"))  # no fragment / one
        return {
            "paths": paths,
            "cases": dict.fromkeys(self.events, (None, variants)),
            "type_path": paths.index(self.type),
            "tag_path": paths.index(call.at),
            "key_path": paths.index(call.key),
            "nulls": nulls + tuple(paths.index(path) for path in call.nulls),
            "zeros": zeros,
        }

    def struct(self, msgspec: Any) -> Any:
        """The msgspec struct (``gc=False``) a payload of this shape decodes into, a struct per object on the paths,
        every field None by default: a text is ``Optional[str]``, a read member ``Any``, the type and each null
        ``None`` -- so a payload with one of those non-null fails the decode (a ``msgspec.ValidationError``): it is
        not this shape. An array step is ``Optional[list[...]]`` (of any length: the reader checks it is one); a zero
        is ``Any`` (the reader checks it)."""
        kinds: dict[Path, Any] = {path: Optional[str] for path, _ in self.texts}
        kinds.update((path, None) for path in (self.type, *self.nulls))
        kinds.update((path, Any) for path in (*self.reads, *self.zeros))
        if self.call is not None:  # the struct takes no call fragment: the member holding them must be null
            at = self.call.at
            kinds[at[:-1] if _element(at[-1]) else at] = None
        return _struct(msgspec, self.name, (), kinds)

    def reader_source(self) -> str:
        """The Python source of :meth:`reader`: the walk to :attr:`text_parent` and the texts' precedence rule,
        written out for this shape (a generic loop over the paths costs a third more per chunk)."""
        lines = [f"def read_{self.name}(node):"]
        for path in self.zeros:  # each, where it is there and an integer, 0
            lines.append("    z = node")
            depth = 1
            for at, step in enumerate(path, 1):
                pad = "    " * depth
                if type(step) is str:
                    lines.append(f"{pad}z = z.{step}")
                    if at == len(path):  # (None is no int)
                        break
                    lines.append(f"{pad}if z is not None:")
                else:  # (an array of any other length is not this shape)
                    lines += [f"{pad}if len(z) != 1:", f"{pad}    return None", f"{pad}z = z[0]"]
                    continue
                depth += 1
            lines += [f"{pad}if type(z) is int and z != 0:", f"{pad}    return None"]
        for step in self.text_parent:
            if type(step) is str:
                lines += [f"    node = node.{step}", "    if node is None:", "        return None"]
            else:
                lines += ["    if len(node) != 1:", "        return None", "    node = node[0]"]
        members = self.text_members
        lines += [f"    t{i} = node.{key}" for i, (key, _) in enumerate(members)]
        for i, (_, kind) in enumerate(members):
            others = [f"t{j}" for j in range(i + 1, len(members)) if members[j][1] != kind]
            lines.append(f"    if t{i}:")
            if others:
                lines += [f"        if {' or '.join(others)}:", "            return None"]
            lines.append(f"        return ({kind!r}, t{i})")
        lines.append("    return ('raw', '')")
        return "\n".join(lines) + "\n"

    def reader(self) -> Callable[[Any], Optional[tuple[UnifiedType, str]]]:
        """``read(chunk) -> (kind, text) | None``: the one event a decoded :meth:`struct` of this shape makes: its
        delta, or ``("raw", "")`` when it has no text (a chunk that only names the role, as a stream's first one
        does); None when it is not this shape (two kinds of text, a step missing, an array step not of one
        element)."""
        namespace: dict[str, Any] = {}
        exec(compile(self.reader_source(), f"<{self.name} reader>", "exec"), namespace)
        return namespace[f"read_{self.name}"]  # type: ignore[no-any-return]


def _element(step: Any) -> bool:
    """Whether a path step is 0 (the one element of an array), not ``False`` or ``0.0``."""
    return type(step) is int and step == 0


def _struct(msgspec: Any, name: str, at: Path, kinds: dict[Path, Any]) -> Any:
    """The struct of the object at path ``at``: a field per member key any path in ``kinds`` goes through."""
    fields: dict[str, Any] = {}
    for path in kinds:
        if path[: len(at)] != at or len(path) == len(at) or path[len(at)] in fields:
            continue
        key = path[len(at)]
        assert type(key) is str  # __post_init__: a key first, and never an array in an array
        inner = (*at, key)
        if inner in kinds:
            fields[key] = kinds[inner]
        elif any(len(p) > len(inner) and p[: len(inner) + 1] == (*inner, 0) for p in kinds):
            fields[key] = Optional[list[_struct(msgspec, f"{name}_{key}", (*inner, 0), kinds)]]  # type: ignore[misc]
        else:
            fields[key] = Optional[_struct(msgspec, f"{name}_{key}", inner, kinds)]
    return msgspec.defstruct(name, [(key, kind, None) for key, kind in fields.items()], gc=False, module=__name__)
