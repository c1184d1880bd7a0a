"""JSON decoding for payloads: orjson when it is installed (the ``fast`` extra), the standard library otherwise.

``loads(text)`` returns the decoded value or raises ``ValueError``. Whatever orjson rejects that the standard
library accepts (``NaN``, lone surrogates) is retried with ``json.loads``, so the results are the same with or
without the extra, with one documented exception: orjson decodes an integer beyond the 64-bit range as a float
(no provider sends such numbers; scanning every payload for them would cost more than decoding it).
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable

__all__ = ["BACKEND", "loads"]

_std_loads: Callable[[str], Any] = json.loads


def _make_loads() -> tuple[Callable[[str], Any], str]:
    if os.environ.get("SSEWIRE_NO_ORJSON"):
        return _std_loads, "json"
    try:
        import orjson
    except ImportError:
        return _std_loads, "json"
    _orjson_loads = orjson.loads
    _orjson_error = orjson.JSONDecodeError

    def loads(text: str) -> Any:
        try:
            return _orjson_loads(text)
        except _orjson_error:
            return _std_loads(text)

    return loads, "orjson"


loads, BACKEND = _make_loads()
