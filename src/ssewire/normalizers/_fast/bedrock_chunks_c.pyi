"""Type stub of ``bedrock_chunks_c``: ``bedrock_chunks_py.py`` compiled (see ``bedrock_chunks_c.pxd``). The same
functions; its constants are C values, read from ``bedrock_chunks_py``."""

from typing import Any, Callable, Optional

__all__ = ["type_of", "unwrap_chunks"]

def type_of(text: str) -> Optional[str]: ...
def unwrap_chunks(
    events: list[Any], start: int, out: list[Any], make_event: Callable[[Optional[str], str], Any]
) -> int: ...
