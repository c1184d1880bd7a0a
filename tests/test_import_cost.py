"""What importing ssewire and reading one stream load: only what reading needs. Every process pays its imports
(the command line, each ``ssewire batch`` worker, a gateway's workers), so modules a stream never uses are
imported where they are used."""

from __future__ import annotations

import pytest

from helpers import run_python

#: Never imported by ``import ssewire`` nor by reading a stream: asyncio (with ssl, logging, concurrent.futures:
#: ~20 ms; the adapters import it where aiohttp has), importlib.abc (~5-10 ms; the compiled modules' finder needs
#: no base class).
NOT_AT_IMPORT = ("asyncio", "ssl", "importlib.abc")

_BODY = (
    b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)
#: A fresh interpreter imports ssewire, reads and collects _BODY, and prints which of NAMES it imported.
_READ_ONE = (
    "import sys, ssewire\n"
    f"body = {_BODY!r}\n"
    "events = [e.type for e in ssewire.iter_unified([body], 'openai-chat')]\n"
    "print(events, ssewire.collect(ssewire.iter_unified([body], 'openai-chat')).text)\n"
    "print(' '.join(sorted(m for m in NAMES if m in sys.modules)) or '-')\n"
)


@pytest.mark.parametrize("switched_off", [False, True], ids=["as built", "SSEWIRE_NO_EXTENSIONS"])
def test_reading_a_stream_imports_no_module_it_does_not_use(switched_off: bool) -> None:
    env = {"SSEWIRE_NO_EXTENSIONS": "1"} if switched_off else {}
    out = run_python(_READ_ONE.replace("NAMES", repr(NOT_AT_IMPORT)), **env).splitlines()
    assert out[0] == "['text_delta', 'raw', 'done'] hi"
    assert out[1] == "-", f"imported by reading one stream: {out[1]}"


def test_the_compiled_build_reads_without_importing_the_python_twin() -> None:
    """Where ``ssewire._decoding`` is the compiled twin, its Python twin (``_decoding_py``, ~10 ms to import) is
    never imported by reading and collecting a stream: a normaliser looks it up, it does not import it."""
    from ssewire import _decoding

    if _decoding.IMPLEMENTATION != "cython":
        pytest.skip("the Python twin is the one selected here")
    out = run_python(_READ_ONE.replace("NAMES", repr(("ssewire._decoding_py",)))).splitlines()
    assert out == ["['text_delta', 'raw', 'done'] hi", "-"]
