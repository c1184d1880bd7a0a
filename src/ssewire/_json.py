"""JSON decoding for payloads: orjson when it is installed (the ``fast`` extra), the standard library otherwise.

``loads(text)`` returns the decoded value or raises ``ValueError``. Whatever orjson rejects that the standard
library accepts (``NaN``, lone surrogates) is retried with ``json.loads``, so the results are the same with or
without the extra, with one documented exception: orjson decodes an integer beyond the 64-bit range as a float
(no provider sends such numbers in its own fields; scanning every payload for them would cost more than decoding
it). Tool-argument strings are parsed with ``loads_exact`` (the standard library), so their integers stay exact.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from ._env import env_flag

__all__ = ["BACKEND", "loads", "loads_exact", "loads_first", "loads_retry"]


def _std_loads(text: str) -> Any:
    """``json.loads``, with nesting too deep for it reported as the ``ValueError`` it is."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _make_loads() -> tuple[Callable[[str], Any], Callable[[str], Any], Optional[Callable[[str], Any]], str]:
    if env_flag("SSEWIRE_NO_ORJSON"):
        return _std_loads, json.loads, None, "json"
    try:
        import orjson
    except ImportError:
        return _std_loads, json.loads, None, "json"
    _orjson_loads = orjson.loads
    _orjson_error = orjson.JSONDecodeError

    def loads(text: str) -> Any:
        try:
            return _orjson_loads(text)
        except _orjson_error:
            return _std_loads(text)

    return loads, _orjson_loads, _std_loads, "orjson"


#: ``loads`` in two steps, for the per-event hot path (one Python call less than :func:`loads`): call
#: ``loads_first(text)``; when it raises ``ValueError`` or ``RecursionError`` and ``loads_retry`` is not None, the
#: result is ``loads_retry(text)`` (which raises ``ValueError`` for text that is not JSON). Same values as
#: :func:`loads`, which itself only ever raises ``ValueError``.
loads, loads_first, loads_retry, BACKEND = _make_loads()

#: The standard library's decoder (``ValueError`` only): exact integers of any size, for values parsed once per
#: tool call (arguments), where precision matters more than speed.
loads_exact: Callable[[str], Any] = _std_loads
