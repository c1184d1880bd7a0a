"""JSON decoding for payloads: orjson when it is installed (the ``fast`` extra), the standard library otherwise.

``loads(text)`` returns the decoded value or raises ``ValueError``. Whatever orjson rejects that the standard
library accepts (``NaN``, lone surrogates) is retried with ``json.loads``, and text with a run of 19 or more
digits (an integer orjson would turn into a float) goes to ``json.loads`` directly, so results never depend on
whether the extra is installed.
"""

from __future__ import annotations

import json
import os
import re
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

    long_digits = re.compile(r"[0-9]{19}").search

    def loads(text: str) -> Any:
        if long_digits(text) is not None:
            return _std_loads(text)
        try:
            return _orjson_loads(text)
        except _orjson_error:
            return _std_loads(text)

    return loads, "orjson"


loads, BACKEND = _make_loads()
