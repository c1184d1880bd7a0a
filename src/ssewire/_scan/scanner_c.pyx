# Compiled scanners: the C twin of ``_scanner_py`` (identical behaviour, event for event, state for state).
# Compiler directives live in one place: setup.py (CYTHON_DIRECTIVES).
"""Compiled scanners: ``SSEParser`` (WHATWG HTML 9.2.6 event-stream framing), ``JSONArrayStreamParser``
(Gemini's streamed JSON array), ``NDJSONParser`` (JSON lines) and ``EventStreamParser`` (AWS event-stream), plus
the compiled ``SSEEvent`` type and its ``EventStreamMessage`` subclass.

Behaviour is defined by the pure-Python twin ``ssewire._scan.scanner_py``; this module does the same work in C:

- chunks are read in place through the buffer protocol (``bytes``, ``bytearray``, contiguous ``memoryview``;
  anything else goes through the twin's copying path), in the twin's 256 KiB windows, so nothing is copied
  whole and ``bytes_fed`` advances exactly as in the twin;
- line ends and JSON structure are found with the GIL released for windows of 4 KiB or more, so threads that
  parse different streams run in parallel; the GIL is taken back only to build the event objects. The hot
  loops are vector kernels written once (``SSEWIRE_*_BODY`` over the ``SW_*`` vocabulary) and built for SSE2
  and for AVX2, the latter chosen at import where the CPU has it (``SIMD`` says which; plain C without either);
- JSON-array elements are walked 64 bytes at a time with simdjson-style string masks (escapes, quotes), falling
  back to the byte-wise walk for a block with a backslash outside a string, where the two rules could differ;
- event data is decoded straight from the chunk by our own UTF-8 decoder: the str is sized from byte statistics
  taken during the line-end search (CR-framed lines) or the element walk (else in a pass of their own), then
  filled and checked to be exactly the str ``PyUnicode_DecodeUTF8(..., "replace")`` would build, which gets any
  input that is not (invalid UTF-8 included). Only the pending line/event/element that continues into the next
  chunk is copied, into buffers bounded by ``max_buffer``;
- ``SSEEvent`` fields are member descriptors (as ``__slots__`` makes them) and the scanners build events in C,
  recycling them through a small free list (not in free-threaded builds).

A parser instance belongs to one stream and must not be used from two threads at once (``feed`` from a second
thread while one is running raises ``RuntimeError``).
"""

cimport cython
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Copy
from cpython.list cimport PyList_GET_ITEM
from cpython.mem cimport PyMem_RawFree, PyMem_RawRealloc
from cpython.object cimport Py_EQ, Py_NE, PyObject
from cpython.ref cimport Py_INCREF
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.math cimport floor
from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy, memmove

from .kernels cimport (
    ssewire_decode,
    ssewire_decode_sized,
    ssewire_eol,
    ssewire_event_new,
    ssewire_select_simd,
    ssewire_utf8_check,
    SW_SLOTS_MAX,
    sw_slots,
    sw_slots_init,
    sw_slots_install,
    sw_slots_new,
    ssewire_crc32,
    ssewire_crc32_init,
    ssewire_crc32_select,
    ssewire_use_member_fields,
    ssewire_walk,
    ssewire_walk64,
)
# the vector kernels are in _c/sw_kernels.h, the event type's C side in _c/sw_events_py.h (both declared in
# _kernels.pxd)

import json as _json

from . import messages
from .chunks import windows as _windows
from .utf8_event import LARGE_DATA, utf8_event_type
from ..errors import SSEwireError
from ..limits import DEFAULT_MAX_BUFFER

_SIMD_NAMES = ("none", "sse2", "avx2")
SIMD = _SIMD_NAMES[ssewire_select_simd(1)]  # the vector instructions the scanners use on this CPU


def _select_simd(allow_avx2):
    """Tests only: switch the AVX2 loops off (or back on where the CPU has them); returns the level in use.
    Not to be called while a parser is feeding."""
    global SIMD
    SIMD = _SIMD_NAMES[ssewire_select_simd(1 if allow_avx2 else 0)]
    return SIMD


cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX

__all__ = [
    "DEFAULT_MAX_BUFFER",
    "EventStreamMessage",
    "EventStreamParser",
    "JSONArrayStreamParser",
    "NDJSONParser",
    "SSEEvent",
    "SSEParser",
    "Utf8Event",
]


cdef enum:
    WINDOW = 256 * 1024  # bytes per step of one feed() call (as the twin's _WINDOW)
    NOGIL_MIN = 4096  # release the GIL to scan windows at least this long
    LINE_BATCH = 512  # line ends found per GIL-free scan
    SPAN_BATCH = 256  # JSON elements found per GIL-free scan
    RETAIN = 64 * 1024  # buffers larger than this are freed once emptied (memory stays about one event)
    BYTES_FROM = 16 * 1024  # a buffer that grows past this is a bytes object's storage (see buf_take)
    NAME_SLOTS = 128  # event-name cache (open addressing), at most NAME_SLOTS // 2 names
    NAME_MASK = NAME_SLOTS - 1
    NAME_CACHED_UP_TO = 128  # a longer event name is decoded each time, never kept (memory: one event's)
    KNOWN_SLOTS = 512  # the table of the documented event types (open addressing, at most a quarter full)
    KNOWN_MASK = KNOWN_SLOTS - 1
    UNKNOWN_STATS = 0x100  # a line's decoder statistics were not taken

#: Event types the providers' documentation names (Anthropic Messages, OpenAI Responses, Cohere v2 chat, Gemini
#: Interactions): decoded once, at import, into a table every SSE scanner looks in before its own cache, so a short
#: stream decodes none of its types. Only a cache (a type not here is decoded as before); written only here, at
#: import, and read-only after: safe without the GIL.
KNOWN_EVENT_TYPES = (
    # Anthropic Messages
    "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
    "message_stop", "ping", "error",
    # OpenAI Responses (and xAI's)
    "response.created", "response.in_progress", "response.queued", "response.completed", "response.incomplete",
    "response.failed", "response.output_item.added", "response.output_item.done", "response.content_part.added",
    "response.content_part.done", "response.output_text.delta", "response.output_text.done",
    "response.output_text.annotation.added", "response.refusal.delta", "response.refusal.done",
    "response.function_call_arguments.delta", "response.function_call_arguments.done",
    "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_text.delta",
    "response.reasoning_text.done", "response.web_search_call.in_progress", "response.web_search_call.searching",
    "response.web_search_call.completed", "response.file_search_call.in_progress",
    "response.file_search_call.searching", "response.file_search_call.completed",
    "response.code_interpreter_call.in_progress", "response.code_interpreter_call.interpreting",
    "response.code_interpreter_call.completed", "response.code_interpreter_call_code.delta",
    "response.code_interpreter_call_code.done", "response.image_generation_call.in_progress",
    "response.image_generation_call.generating", "response.image_generation_call.partial_image",
    "response.image_generation_call.completed", "response.mcp_list_tools.in_progress",
    "response.mcp_list_tools.completed", "response.mcp_list_tools.failed", "response.mcp_call.in_progress",
    "response.mcp_call.completed", "response.mcp_call.failed", "response.mcp_call_arguments.delta",
    "response.mcp_call_arguments.done", "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
    # Cohere v2 chat
    "message-start", "content-start", "content-delta", "content-end", "tool-plan-delta", "tool-call-start",
    "tool-call-delta", "tool-call-end", "citation-start", "citation-end", "message-end", "debug",
    # Gemini Interactions
    "interaction.start", "interaction.created", "interaction.status_update", "interaction.complete",
    "interaction.completed", "content.start", "content.delta", "content.stop", "step.start", "step.delta",
    "step.stop", "done",
)

cdef list _known_keys = [None] * KNOWN_SLOTS  # the raw bytes of each known type, by slot ...
cdef list _known_values = [None] * KNOWN_SLOTS  # ... and its str


cdef inline unsigned long long _name_hash(const char* s, Py_ssize_t n) noexcept:
    """A hash of an event type's bytes: their length and first and last (up to) 8 bytes."""
    cdef unsigned long long h, a = 0, b = 0
    if n >= 8:
        memcpy(&a, s, 8)
        memcpy(&b, s + n - 8, 8)
    else:
        memcpy(&a, s, <size_t>n)
    h = (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL) ^ <unsigned long long>n
    return h ^ (h >> 29)


cdef inline bint _same_name(object key, const char* s, Py_ssize_t n) noexcept:
    return PyBytes_GET_SIZE(key) == n and memcmp(PyBytes_AS_STRING(key), s, <size_t>n) == 0


def _fill_known_types():
    cdef bytes raw
    cdef Py_ssize_t slot
    for name in KNOWN_EVENT_TYPES:
        raw = name.encode()
        slot = <Py_ssize_t>(_name_hash(raw, len(raw)) & KNOWN_MASK)
        while _known_keys[slot] is not None:
            if _known_keys[slot] == raw:
                break
            slot = (slot + 1) & KNOWN_MASK
        _known_keys[slot] = raw
        _known_values[slot] = name


_fill_known_types()

cdef const char* BOM = b"\xef\xbb\xbf"
cdef const char* REPLACE = b"replace"
_json_loads = _json.loads


# --- growable byte buffers (PyMem_Raw*: usable without the GIL, seen by tracemalloc) ------------------------
#
# A buffer that grows past BYTES_FROM is the storage of a bytes object from then on (``obj``), grown and cut with
# the GIL held: a large event can then be handed over as that object, without a copy (``buf_take``). (Made so early
# that the one copy into it, from the raw memory it outgrew, is small.)

cdef extern from "Python.h":
    int _PyBytes_Resize(PyObject** bytes, Py_ssize_t size)
    void PyErr_Clear()
    void Py_CLEAR(PyObject* o)


cdef struct Buf:
    char* p
    Py_ssize_t len
    Py_ssize_t cap
    PyObject* obj  # a bytes object whose storage ``p`` is (a buffer grown past BYTES_FROM), or NULL: raw memory


cdef int _buf_to_bytes(Buf* b, Py_ssize_t cap) noexcept:
    """The buffer's storage as a bytes object of ``cap`` bytes (made from the raw memory, or resized); 0, or -1 when
    out of memory (the buffer is then empty). Holds the GIL."""
    cdef PyObject* obj
    if b.obj == NULL:
        try:
            made = PyBytes_FromStringAndSize(NULL, cap)
        except MemoryError:
            return -1
        obj = <PyObject*>made
        Py_INCREF(made)  # (the buffer's own reference, dropped in buf_trim / buf_free / buf_take)
        if b.len:
            memcpy(PyBytes_AS_STRING(made), b.p, <size_t>b.len)
        PyMem_RawFree(b.p)
        b.obj = obj
    elif _PyBytes_Resize(&b.obj, cap) < 0:  # (on failure the object is gone)
        PyErr_Clear()
        b.obj = NULL
        b.p = NULL
        b.len = 0
        b.cap = 0
        return -1
    b.p = PyBytes_AS_STRING(<object>b.obj)
    b.cap = cap
    return 0


cdef int buf_reserve(Buf* b, Py_ssize_t need) noexcept nogil:
    """Make room for ``need`` bytes; 0, or -1 when out of memory."""
    cdef Py_ssize_t cap
    cdef char* p
    cdef int done
    if need <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 256
    if cap > RETAIN:  # a large event's: a quarter more each time (doubling would hold up to twice it as it fills)
        cap = b.cap + (b.cap >> 2)
        if cap < RETAIN:
            cap = RETAIN
    if cap < need:
        cap = need
    if cap > BYTES_FROM:
        with gil:
            done = _buf_to_bytes(b, cap)
        return done
    p = <char*>PyMem_RawRealloc(b.p, <size_t>cap)
    if p == NULL:
        return -1
    b.p = p
    b.cap = cap
    return 0


cdef inline int buf_append(Buf* b, const char* s, Py_ssize_t n) noexcept nogil:
    if b.len + n > b.cap and buf_reserve(b, b.len + n) < 0:
        return -1
    if n:
        memcpy(b.p + b.len, s, <size_t>n)
    b.len += n
    return 0


cdef inline void buf_fit(Buf* b) noexcept nogil:
    """Give back the room past the buffer's content (when it can: else it stays as it was)."""
    cdef char* p
    if b.len and b.cap > b.len:
        if b.obj != NULL:
            with gil:
                _buf_to_bytes(b, b.len)  # (a cut: cannot fail, but would leave the buffer empty if it did)
            return
        p = <char*>PyMem_RawRealloc(b.p, <size_t>b.len)
        if p != NULL:
            b.p = p
            b.cap = b.len


cdef inline void buf_fit_large(Buf* b) noexcept nogil:
    """:func:`buf_fit` for a buffer grown past ``RETAIN`` (the one that held a large event, about to be copied out:
    it grew by doubling, so without this the copy-out would cost up to three times the event)."""
    if b.cap > RETAIN:
        buf_fit(b)


cdef inline void _buf_release(Buf* b) noexcept nogil:
    if b.obj != NULL:
        with gil:
            Py_CLEAR(b.obj)
    else:
        PyMem_RawFree(b.p)
    b.p = NULL
    b.len = 0
    b.cap = 0


cdef inline void buf_trim(Buf* b) noexcept nogil:
    """Empty the buffer; give its memory back when it grew large."""
    b.len = 0
    if b.cap > RETAIN:
        _buf_release(b)


cdef inline void buf_free(Buf* b) noexcept nogil:
    _buf_release(b)


cdef object buf_take(Buf* b, Py_ssize_t off, Py_ssize_t size):
    """``b.p[off:off + size]`` as bytes: the buffer's own bytes object where it has one (the data moved to its start,
    the object cut to it: no copy; the buffer is then empty), else a copy."""
    cdef object out
    if b.obj == NULL:
        return PyBytes_FromStringAndSize(b.p + off, size)
    if off:
        memmove(b.p, b.p + off, <size_t>size)
    if _buf_to_bytes(b, size) < 0:
        raise MemoryError()
    out = <object>b.obj  # (a new reference: the buffer's own is dropped)
    Py_CLEAR(b.obj)
    b.p = NULL
    b.len = 0
    b.cap = 0
    return out


cdef Py_ssize_t _clamp(object value) except? -1:
    """``max_buffer`` as a C size: ``length > value`` holds exactly when ``length > _clamp(value)``."""
    cdef double f
    if isinstance(value, int):
        if value > PY_SSIZE_T_MAX:
            return PY_SSIZE_T_MAX
        if value < -PY_SSIZE_T_MAX:
            return -PY_SSIZE_T_MAX
        return value
    f = float(value)
    if f != f or f >= 9.0e18:  # NaN: no length is ever greater
        return PY_SSIZE_T_MAX
    if f <= -9.0e18:
        return -PY_SSIZE_T_MAX
    return <Py_ssize_t>floor(f)


# --- SSEEvent -------------------------------------------------------------------------------------------------

@cython.no_gc
cdef class SSEEvent:
    """One dispatched Server-Sent Event (or one JSON-array element, with ``event=None``).

    ``event`` is the event type (``"message"`` when the block set none), ``data`` the data lines joined by
    ``"\\n"``, ``id`` the last event ID at dispatch (``None`` until the stream set one) and ``retry`` the
    reconnection time in milliseconds last set by the stream (``None`` until set). Compiled twin of
    ``ssewire.events.SSEEvent``: same attributes, equality (with either type), hash, repr and ``json()``.
    """

    cdef public object event
    cdef public object data
    cdef public object id
    cdef public object retry

    # The methods read and write the fields by name, through the member descriptors (as the twin's __slots__
    # do): a field removed with ``del`` then raises AttributeError, as in the twin, never touches a NULL.

    def __init__(self, event="message", data="", id=None, retry=None):
        cdef object o = self
        o.event = event
        o.data = data
        o.id = id
        o.retry = retry

    def json(self):
        """``data`` decoded as JSON, or ``None`` when it is not valid JSON (e.g. the ``[DONE]`` sentinel)."""
        cdef object o = self
        try:
            return _json_loads(o.data)
        except (ValueError, RecursionError):
            return None

    def _key(self):
        return _fields(self)

    # == and != of SSEEvent and EventStreamMessage (which inherits both slots): see _equal and _hashed
    def __richcmp__(self, other, int op):
        return _equal(self, other, op)

    def __hash__(self):
        return hash(_hashed(self))

    def __repr__(self):
        event, data, id, retry = _fields(self)
        return f"SSEEvent(event={event!r}, data={data!r}, id={id!r}, retry={retry!r})"

    def __reduce__(self):
        return (type(self), _fields(self))


#: An event whose data is held as its UTF-8 bytes until read (a large non-ASCII event: see ``utf8_event``).
Utf8Event = utf8_event_type(SSEEvent)
cdef Py_ssize_t _LARGE_DATA = LARGE_DATA


cdef inline tuple _fields(object ev):
    return (ev.event, ev.data, ev.id, ev.retry)


cdef inline tuple _message_fields(object msg):
    return (msg.event, msg.data, msg.message_type, msg.content_type, msg.headers, msg.payload)


cdef object _equal(object ev, object other, int op):
    """``ev == other`` (or ``!=``) for both event types, as the twin's: a message compares its _message_key()
    with the other's (either implementation's message has one), an event its four fields with the other's;
    NotImplemented when the other lacks them, or for an ordering."""
    if op != Py_EQ and op != Py_NE:
        return NotImplemented
    try:
        if isinstance(ev, EventStreamMessage):
            result = _message_fields(ev) == other._message_key()
        else:
            result = _fields(ev) == _fields(other)
    except AttributeError:
        return NotImplemented
    return result if op == Py_EQ else not result


cdef inline tuple _hashed(object ev):
    """The fields an event's hash is of (a message's headers, a dict, are not among them)."""
    if isinstance(ev, EventStreamMessage):
        return (ev.event, ev.data, ev.message_type, ev.payload)
    return _fields(ev)


cdef tuple _EVENT_FIELDS = ("event", "data", "id", "retry")  # ssewire_event_new's order; kept alive (sw_slots_py.h)


def _fast_event_fields():
    markers = (object(), object(), object(), object())
    return ssewire_use_member_fields(SSEEvent, SSEEvent(*markers), _EVENT_FIELDS, markers) == 1


# SSEEvent attributes are plain member descriptors (as __slots__ makes them), events built by ssewire_event_new
cdef bint _fast_fields = _fast_event_fields()


cdef inline SSEEvent _new_event(object event, object data, object id, object retry):
    cdef SSEEvent ev
    if _fast_fields:
        return <SSEEvent>ssewire_event_new(event, data, id, retry)
    ev = SSEEvent.__new__(SSEEvent)  # no __init__ call
    ev.event = event
    ev.data = data
    ev.id = id
    ev.retry = retry
    return ev


# --- the unified events the normalisers make (ssewire.events.new_event, in C) -------------------------------------

cdef sw_slots _unified
cdef PyObject* _unified_defaults[SW_SLOTS_MAX]
cdef object _unified_kept = None  # the type and its defaults, alive while they are used; None: not in use
cdef Py_ssize_t _at_type = 0, _at_text = 0, _at_sequence = 0, _at_raw = 0, _at_signature = 0


def use_unified(unified, tuple fields, tuple defaults):
    """Let :func:`new_unified` build ``unified`` objects (``ssewire.Unified``): its ``__slots__`` ``fields``, each
    starting as the matching one of ``defaults``. Returns whether every field is a plain slot (False: not in use)."""
    global _unified_kept, _at_type, _at_text, _at_sequence, _at_raw, _at_signature
    cdef Py_ssize_t i
    if len(fields) != len(defaults) or len(fields) > SW_SLOTS_MAX:
        raise ValueError(f"one default per field, at most {SW_SLOTS_MAX} fields, not {len(fields)}")
    _unified_kept = None
    if sw_slots_init(&_unified, unified, fields) != 1:
        return False
    _at_type, _at_text, _at_sequence = fields.index("type"), fields.index("text"), fields.index("sequence")
    _at_raw, _at_signature = fields.index("_raw"), fields.index("signature")
    for i in range(len(defaults)):
        _unified_defaults[i] = <PyObject*>defaults[i]
    _unified_kept = (unified, defaults)
    return True


def new_unified(kind, raw, text="", sequence=None, signature=None):
    """``Unified(kind, text=text, sequence=sequence, raw=raw, signature=signature)``, every other field its default
    (what ``ssewire.events.new_event`` does in Python); :func:`use_unified` must have succeeded."""
    cdef PyObject* values[SW_SLOTS_MAX]
    if _unified_kept is None:
        raise RuntimeError("use_unified() has not succeeded")
    memcpy(values, _unified_defaults, _unified.n * sizeof(PyObject*))
    values[_at_type] = <PyObject*>kind
    values[_at_text] = <PyObject*>text
    values[_at_sequence] = <PyObject*>sequence
    values[_at_raw] = <PyObject*>raw
    values[_at_signature] = <PyObject*>signature
    return sw_slots_new(&_unified, values)


# --- what both scanners share ----------------------------------------------------------------------------------

cdef class _Scanner:
    """The part both compiled scanners share: the ``feed()`` protocol of the twin's ``_feed`` (a failed parser
    stays failed, a closed one refuses more, events completed before an error are returned and the error comes
    next call), the chunk read in place through the buffer protocol in the twin's windows, ``max_buffer``, and
    the one-stream-one-thread guard. Subclasses implement ``_scan`` (one window) and ``_fail``."""

    cdef public Py_ssize_t events_parsed
    cdef public long long bytes_fed
    cdef object _max_obj
    cdef Py_ssize_t _max
    cdef object _error
    cdef bint _closed
    cdef bint _busy

    cdef int _start(self, max_buffer) except -1:
        """``__init__``'s common part: check and set ``max_buffer``, zero the counters, clear the end state."""
        if type(max_buffer) is not int or max_buffer <= 0:  # (a float, even inf or nan, a str, a bool: no limit)
            raise messages.bad_max_buffer(max_buffer)
        if self._busy:
            raise messages.busy(self, "__init__")
        self.max_buffer = max_buffer
        self.events_parsed = 0
        self.bytes_fed = 0
        self._error = None
        self._closed = False
        return 0

    @property
    def max_buffer(self):
        """The bound on one pending event, in bytes (see the class docstring)."""
        return self._max_obj

    @max_buffer.setter
    def max_buffer(self, value):
        self._max = _clamp(value)
        self._max_obj = value

    def feed(self, data):
        """Scan one chunk (bytes-like); return the events it completes."""
        if self._error is not None:
            raise self._error
        if self._closed:
            raise messages.fed_after_close()
        if self._busy:
            raise messages.reentered(self)
        cdef list out = []
        cdef Py_buffer view
        cdef bint have_view = False
        cdef object t = type(data)
        self._busy = True
        try:
            if t is bytes or t is bytearray or t is memoryview:
                try:
                    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
                    have_view = True
                except BufferError:  # a non-contiguous memoryview: the twin's copying path
                    pass
            try:
                if have_view:
                    self._feed_windows(<const char*>view.buf, view.len, out)
                else:
                    for window in _windows(data):
                        self._feed_windows(PyBytes_AS_STRING(window), PyBytes_GET_SIZE(window), out)
                        self._detach()  # the window is freed on the next step
            except SSEwireError as exc:
                self._fail(exc)
                if out:
                    return out
                raise
            finally:
                self._detach()
        finally:
            if have_view:
                PyBuffer_Release(&view)
            self._busy = False
        return out

    cdef bint _closing(self) except -1:
        """``close()``'s common start: re-raise a failure; False when already closed; else mark closed."""
        if self._error is not None:
            raise self._error
        if self._closed:
            return False
        if self._busy:
            raise messages.busy(self, "close")
        self._closed = True
        return True

    cdef int _feed_windows(self, const char* p, Py_ssize_t n, list out) except -1:
        cdef Py_ssize_t pos = 0, w
        while True:
            w = n - pos
            if w > WINDOW:
                w = WINDOW
            self.bytes_fed += w
            self._scan(p + pos, w, out)
            pos += w
            if pos >= n:
                return 0

    cdef int _scan(self, const char* p, Py_ssize_t n, list out) except -1:
        """Scan one window, appending the events it completes to ``out``."""
        raise NotImplementedError

    cdef void _fail(self, exc) noexcept:
        """Keep ``exc`` for every later call and drop what is pending."""
        self._error = exc

    cdef void _detach(self) noexcept:
        """Stop pointing into the caller's chunk (copy what is still needed): it may be freed after this call."""
        pass


# --- SSE ------------------------------------------------------------------------------------------------------

cdef struct LineEnd:
    uint32_t end  # offset of the line's CR or LF
    uint32_t cont  # UTF-8 continuation bytes in the line (when max_byte is known)
    unsigned max_byte  # the line's largest byte; UNKNOWN_STATS when not taken


cdef Py_ssize_t _find_line_ends(const char* p, Py_ssize_t pos, Py_ssize_t n, LineEnd* ends,
                                Py_ssize_t* next_lf, Py_ssize_t* next_cr) noexcept nogil:
    """Record up to LINE_BATCH line ends (CR, LF or CRLF, at the CR) in ``p[pos:n]``; return how many.

    ``next_lf``/``next_cr`` carry the next known LF/CR positions between calls (``n``: none; below ``pos``:
    unknown), so each byte is searched once per kind. Lines found by the one-pass CR-or-LF scan also get the
    decoder's statistics (largest byte, continuation bytes); lines found by ``memchr`` do not.
    """
    cdef Py_ssize_t lf = next_lf[0], cr = next_cr[0], e, count = 0, cont
    cdef const char* q
    cdef unsigned max_byte
    cdef bint after_cr = False
    while count < LINE_BATCH:
        if after_cr and lf < pos and cr < pos:
            # CR-terminated lines (CRLF streams): find the next CR or LF in one pass, not one pass each
            e = ssewire_eol(p, pos, n, &max_byte, &cont)
            if e >= n:
                lf = cr = n
                break
            if p[e] == b'\r':
                cr = e
            else:
                lf = e
                after_cr = False
            ends[count].end = <uint32_t>e
            ends[count].cont = <uint32_t>cont
            ends[count].max_byte = max_byte
            count += 1
            pos = e + 1
            if e == cr and pos < n and p[pos] == b'\n':
                pos += 1
            if pos < n and p[pos] == b'\r' and count < LINE_BATCH:  # a blank line (CR or CRLF): no scan needed
                cr = pos
                ends[count].end = <uint32_t>pos
                ends[count].max_byte = 0
                ends[count].cont = 0
                count += 1
                pos += 1
                if pos < n and p[pos] == b'\n':
                    pos += 1
            continue
        if lf < pos:
            if pos < n and p[pos] == b'\n':  # a blank line: no call needed
                lf = pos
            else:
                q = <const char*>memchr(p + pos, b'\n', <size_t>(n - pos))
                lf = q - p if q != NULL else n
        if cr < pos:
            q = <const char*>memchr(p + pos, b'\r', <size_t>(n - pos))
            cr = q - p if q != NULL else n
        e = lf if lf < cr else cr
        if e >= n:
            break
        ends[count].end = <uint32_t>e
        ends[count].max_byte = UNKNOWN_STATS
        count += 1
        pos = e + 1
        if e == cr:
            after_cr = True
            if pos < n and p[pos] == b'\n':
                pos += 1
    next_lf[0] = lf
    next_cr[0] = cr
    return count


cdef class _LineScanner(_Scanner):
    """What the line-based compiled scanners (SSE, NDJSON) share: a BOM at stream start dropped once, line ends
    (CR, LF or CRLF; a CRLF split across chunks counts once) found in batches without the GIL, the unterminated
    last line held within ``max_buffer``. Subclasses implement ``_take`` (one line)."""

    cdef Buf _tail  # the unterminated last line (or, at stream start, a possible BOM prefix)
    cdef bint _started
    cdef bint _skip_lf

    cdef void _start_lines(self) noexcept:
        self._tail.len = 0
        self._started = False
        self._skip_lf = False

    def __dealloc__(self):
        buf_free(&self._tail)

    cdef int _take(self, const char* s, Py_ssize_t n, unsigned max_byte, Py_ssize_t cont, bint from_tail,
                   list out) except -1:
        """One line (without its end) of ``n`` bytes, with the decoder's statistics when taken (else
        ``UNKNOWN_STATS``); ``from_tail``: it sits in the tail buffer."""
        raise NotImplementedError

    cdef int _scan(self, const char* p, Py_ssize_t n, list out) except -1:
        cdef Py_ssize_t t, pos = 0, start, e, count, i, next_lf = -1, next_cr = -1
        cdef LineEnd ends[LINE_BATCH]
        cdef int appended
        if n == 0:
            return 0
        if self._skip_lf:
            self._skip_lf = False
            if p[0] == b'\n':
                p += 1
                n -= 1
        if not self._started:
            t = self._tail.len  # a BOM prefix held back
            if t + n < 3 and memcmp(BOM + t, p, <size_t>n) == 0:
                if buf_append(&self._tail, p, n) < 0:
                    raise MemoryError()
                return 0
            self._started = True
            if t + n >= 3 and memcmp(BOM + t, p, <size_t>(3 - t)) == 0:
                self._tail.len = 0
                p += 3 - t
                n -= 3 - t
            # otherwise the held bytes are the start of the first line
        while True:
            appended = 0
            if n - pos >= NOGIL_MIN:
                with nogil:
                    count = _find_line_ends(p, pos, n, ends, &next_lf, &next_cr)
                    if count == 0 and self._tail.len + (n - pos) <= self._max:
                        # no line end in the rest of the window: it all continues the pending line
                        appended = 1 if buf_append(&self._tail, p + pos, n - pos) == 0 else -1
            else:
                count = _find_line_ends(p, pos, n, ends, &next_lf, &next_cr)
            if appended < 0:
                raise MemoryError()
            if appended:
                return 0
            for i in range(count):
                e = ends[i].end
                start = pos
                pos = e + 1
                if p[e] == b'\r' and pos < n and p[pos] == b'\n':
                    pos += 1
                if self._tail.len:  # the line began in an earlier chunk
                    if self._tail.len + (e - start) > self._max:
                        raise messages.overflow("a line", self._max_obj)
                    if buf_append(&self._tail, p + start, e - start) < 0:
                        raise MemoryError()
                    buf_fit_large(&self._tail)
                    self._take(self._tail.p, self._tail.len, UNKNOWN_STATS, 0, True, out)
                    buf_trim(&self._tail)
                else:
                    self._take(p + start, e - start, ends[i].max_byte, ends[i].cont, False, out)
            if count < LINE_BATCH:
                break
        if pos < n:  # the unterminated last line, checked after the complete lines were processed
            if self._tail.len + (n - pos) > self._max:
                raise messages.overflow("a line", self._max_obj)
            if buf_append(&self._tail, p + pos, n - pos) < 0:
                raise MemoryError()
        elif n > 0 and p[n - 1] == b'\r':
            self._skip_lf = True  # an LF at the start of the next chunk belongs to this CR
        return 0


cdef class SSEParser(_LineScanner):
    """Incremental Server-Sent-Events parser (WHATWG HTML 9.2.6), compiled twin of ``_scanner_py.SSEParser``.

    ``feed(chunk)`` -> list of :class:`SSEEvent` completed by the chunk; ``close()`` -> the events the end of
    the stream completes. Lines end in CRLF, LF or a lone CR (a CRLF split across chunks counts once); a leading
    BOM is dropped once; UTF-8 is decoded per event (invalid bytes become U+FFFD). Blocks without ``data`` dispatch
    nothing but still commit ``id``. ``last_event_id`` and ``retry`` expose the stream state for reconnection.

    ``max_buffer`` bounds one event: no single line and no event's joined data may exceed it. With
    ``flush_incomplete`` (default) ``close()`` dispatches a last event that lacks its blank line; without it that
    event is discarded, as the specification says. One instance parses one stream, from one thread at a time.
    """

    cdef public object flush_incomplete
    cdef public object last_event_id
    cdef public object retry
    cdef Buf _dat  # joined data of the pending event, at _dat.p[_doff:_doff + _data_size] (unless _dref)
    cdef Buf _ev  # event type of the pending event (empty: "message")
    cdef Py_ssize_t _doff
    cdef Py_ssize_t _data_size  # -1: no data line yet
    cdef const char* _dref  # the pending event's single data line, still inside the caller's chunk
    cdef bint _dref_mode
    cdef unsigned _line_max  # decoder statistics of the line being read (UNKNOWN_STATS: not taken) ...
    cdef Py_ssize_t _line_cont
    cdef unsigned _dref_max  # ... and of the data line at _dref
    cdef Py_ssize_t _dref_cont
    cdef object _id  # the last event ID buffer
    cdef list _name_keys  # event-name cache: raw bytes -> decoded str
    cdef list _name_values
    cdef Py_ssize_t _name_count
    cdef object _name_last_key  # the raw bytes of the type found last (None: none yet) ...
    cdef object _name_last  # ... and its str

    def __init__(self, max_buffer=DEFAULT_MAX_BUFFER, *, flush_incomplete=True):
        self._start(max_buffer)
        self.flush_incomplete = flush_incomplete
        self.last_event_id = None
        self.retry = None
        self._start_lines()
        self._line_max = UNKNOWN_STATS
        self._reset_event()
        self._id = None
        self._name_keys = None
        self._name_values = None
        self._name_count = 0
        self._name_last_key = None
        self._name_last = None

    def __dealloc__(self):
        buf_free(&self._dat)
        buf_free(&self._ev)

    def close(self):
        """End of stream: the pending line and event, dispatched when ``flush_incomplete`` (else discarded)."""
        cdef list out = []
        if not self._closing():
            return out
        if not self.flush_incomplete:
            self._release()
            return out
        self._started = True
        try:
            if self._tail.len:
                self._line(self._tail.p, self._tail.len, True, out)
                self._tail.len = 0
            self._dispatch(out)
        except SSEwireError as exc:
            self._fail(exc)
            if out:
                return out
            raise
        self._release()
        return out

    @cython.final
    cdef void _reset_event(self) noexcept:
        self._data_size = -1
        self._dref_mode = False
        self._dref = NULL
        self._dat.len = 0
        self._doff = 0
        self._ev.len = 0

    @cython.final
    cdef void _release(self) noexcept:
        """Drop the pending line and event and give their memory back."""
        self._reset_event()
        buf_free(&self._tail)
        buf_free(&self._dat)
        buf_free(&self._ev)

    cdef void _fail(self, exc) noexcept:
        self._error = exc
        self._release()

    cdef void _detach(self) noexcept:
        if self._dref_mode:  # the pending data still points into the chunk: keep a copy
            self._unref()

    @cython.final
    cdef void _unref(self) noexcept:
        if buf_append(&self._dat, self._dref, self._data_size) < 0:  # out of memory: the event is lost
            self._reset_event()
            return
        self._doff = 0
        self._dref_mode = False
        self._dref = NULL

    cdef int _take(self, const char* s, Py_ssize_t n, unsigned max_byte, Py_ssize_t cont, bint from_tail,
                   list out) except -1:
        if from_tail:
            return self._line(s, n, True, out)
        if n == 0:
            return self._dispatch(out)  # a blank line ends the event
        self._line_max = max_byte
        self._line_cont = cont
        return self._line(s, n, False, out)

    @cython.final
    cdef int _line(self, const char* s, Py_ssize_t n, bint from_tail, list out) except -1:
        cdef const char* colon
        cdef const char* v
        cdef Py_ssize_t name_len, vlen, k, zeros
        cdef long long number
        if n > self._max:
            raise messages.overflow("a line", self._max_obj)
        if n >= 5 and s[0] == b'd' and s[1] == b'a' and s[2] == b't' and s[3] == b'a' and s[4] == b':':
            if n > 5 and s[5] == b' ':
                return self._add_data(s + 6, n - 6, from_tail)
            return self._add_data(s + 5, n - 5, from_tail)
        if n >= 6 and s[0] == b'e' and s[5] == b':' and memcmp(s, b"event", 5) == 0:
            colon = s + 5
        else:
            colon = <const char*>memchr(s, b':', <size_t>n)
        if colon == s:
            return 0  # comment
        if colon == NULL:
            name_len = n
            v = s + n
        else:
            name_len = colon - s
            v = colon + 1
            if v < s + n and v[0] == b' ':
                v += 1
        vlen = s + n - v
        if name_len == 5:
            if memcmp(s, b"event", 5) == 0:
                self._ev.len = 0
                if buf_append(&self._ev, v, vlen) < 0:
                    raise MemoryError()
            elif memcmp(s, b"retry", 5) == 0:
                # ASCII digits only; absurdly long values (over 18 significant digits) are ignored too
                if vlen == 0:
                    return 0
                zeros = 0
                while zeros < vlen and v[zeros] == b'0':
                    zeros += 1
                if vlen - zeros > 18:
                    return 0
                number = 0
                for k in range(vlen):
                    if v[k] < b'0' or v[k] > b'9':
                        return 0
                    number = number * 10 + (v[k] - 48)  # '0'
                self.retry = number
        elif name_len == 4:
            if memcmp(s, b"data", 4) == 0:
                return self._add_data(v, vlen, from_tail)
        elif name_len == 2:
            if s[0] == b'i' and s[1] == b'd' and memchr(v, 0, <size_t>vlen) == NULL:
                self._id = PyUnicode_DecodeUTF8(<char*>v, vlen, <char*>REPLACE)
        return 0  # any other field is ignored

    @cython.final
    cdef int _add_data(self, const char* v, Py_ssize_t vlen, bint from_tail) except -1:
        cdef Py_ssize_t size = self._data_size + 1 + vlen
        cdef Buf swap
        if size > self._max:
            raise messages.overflow("the data of one event", self._max_obj)
        if self._data_size < 0:
            if from_tail:  # the line sits in the tail buffer: make it the data buffer instead of copying
                swap = self._dat
                self._dat = self._tail
                self._tail = swap
                self._tail.len = 0
                self._doff = v - self._dat.p
                self._dat.len = self._doff + vlen
            else:
                self._dref = v
                self._dref_mode = True
                self._dref_max = self._line_max
                self._dref_cont = self._line_cont
        else:
            if self._dref_mode:
                self._dat.len = 0
                self._unref()
                if self._data_size < 0:
                    raise MemoryError()
            if buf_reserve(&self._dat, self._dat.len + 1 + vlen) < 0:
                raise MemoryError()
            self._dat.p[self._dat.len] = b'\n'
            if vlen:
                memcpy(self._dat.p + self._dat.len + 1, v, <size_t>vlen)
            self._dat.len += 1 + vlen
        self._data_size = size
        return 0

    @cython.final
    cdef int _dispatch(self, list out) except -1:
        cdef object data, name
        cdef const char* at = self._dref if self._dref_mode else self._dat.p + self._doff
        if self.last_event_id is not self._id:
            self.last_event_id = self._id
        if self._data_size < 0:
            self._ev.len = 0
            return 0
        if self._ev.len == 0:
            name = "message"
        else:
            name = self._name(self._ev.p, self._ev.len)
        if not self._dref_mode and self._dat.cap > RETAIN:
            # the buffer a large event grew in is cut to it first, so the event costs its size twice at most while
            # it is copied out
            buf_fit(&self._dat)
            at = self._dat.p + self._doff
        if self._data_size >= _LARGE_DATA and ssewire_utf8_check(<const unsigned char*>at, self._data_size) == 2:
            # held as its UTF-8 until read (see utf8_event): the bytes of the buffer it grew in, where it can be
            # handed over (see buf_take), so that it is not held twice while it is copied out
            if self._dref_mode:
                data = PyBytes_FromStringAndSize(at, self._data_size)
            else:
                data = buf_take(&self._dat, self._doff, self._data_size)
            out.append(Utf8Event(name, data, self._id, self.retry))
        else:
            if self._dref_mode and self._dref_max != UNKNOWN_STATS:
                data = ssewire_decode_sized(self._dref, self._data_size, self._dref_max, self._dref_cont)
            else:
                data = ssewire_decode(at, self._data_size)
            out.append(_new_event(name, data, self._id, self.retry))
        self.events_parsed += 1
        self._data_size = -1
        self._dref_mode = False
        self._dref = NULL
        self._doff = 0
        buf_trim(&self._dat)
        self._ev.len = 0
        return 0

    @cython.final
    cdef object _name(self, const char* s, Py_ssize_t n):
        """The decoded event type: the one found last again, else from the table of known types, else from this
        scanner's own small cache keyed by the raw bytes (made at the first type not known)."""
        cdef unsigned long long h
        cdef Py_ssize_t slot
        cdef object key, name
        key = self._name_last_key  # streams mostly repeat the previous type
        if key is not None and _same_name(key, s, n):
            return self._name_last
        h = _name_hash(s, n)
        slot = <Py_ssize_t>(h & KNOWN_MASK)
        while True:
            key = <object>PyList_GET_ITEM(_known_keys, slot)
            if key is None:
                break
            if _same_name(key, s, n):
                name = <object>PyList_GET_ITEM(_known_values, slot)
                self._name_last_key, self._name_last = key, name
                return name
            slot = (slot + 1) & KNOWN_MASK
        if self._name_keys is None:
            self._name_keys = [None] * NAME_SLOTS
            self._name_values = [None] * NAME_SLOTS
        slot = <Py_ssize_t>(h & NAME_MASK)
        while True:
            key = <object>PyList_GET_ITEM(self._name_keys, slot)
            if key is None:
                break
            if _same_name(key, s, n):
                name = <object>PyList_GET_ITEM(self._name_values, slot)
                self._name_last_key, self._name_last = key, name
                return name
            slot = (slot + 1) & NAME_MASK
        name = PyUnicode_DecodeUTF8(<char*>s, n, <char*>REPLACE)
        if self._name_count < NAME_SLOTS // 2 and n <= NAME_CACHED_UP_TO:
            key = PyBytes_FromStringAndSize(s, n)
            self._name_keys[slot] = key
            self._name_values[slot] = name
            self._name_count += 1
            self._name_last_key, self._name_last = key, name
        return name


# --- NDJSON ---------------------------------------------------------------------------------------------------

cdef inline bint _blank(const char* s, Py_ssize_t n) noexcept nogil:
    """Only spaces and tabs."""
    cdef Py_ssize_t i
    for i in range(n):
        if s[i] != b' ' and s[i] != b'\t':
            return False
    return True


cdef class NDJSONParser(_LineScanner):
    """Incremental scanner for newline-delimited JSON, compiled twin of ``_scanner_py.NDJSONParser``.

    ``feed(chunk)`` -> one ``SSEEvent(event=None, data=<line text>)`` per line the chunk completes that is not
    blank. A line ends in LF, CRLF or a lone CR (a CRLF split across chunks counts once); lines of only spaces and
    tabs are skipped; a leading BOM is dropped; UTF-8 is decoded per line (invalid bytes become U+FFFD). The line
    is not parsed here: a line that is not JSON reaches the normaliser, which makes it ``raw``. ``close()`` gives a
    last line that lacks its line end. ``max_buffer`` bounds one line (:class:`~ssewire.SSEBufferOverflow`).
    """

    def __init__(self, max_buffer=DEFAULT_MAX_BUFFER):
        self._start(max_buffer)
        self._start_lines()

    def close(self):
        """End of stream: the last line, when it lacks its line end."""
        cdef list out = []
        cdef const char* p = self._tail.p
        cdef Py_ssize_t n = self._tail.len
        if not self._closing():
            return out
        if not self._started and n >= 3 and memcmp(p, BOM, 3) == 0:
            p += 3
            n -= 3
        self._started = True
        try:
            self._take(p, n, UNKNOWN_STATS, 0, True, out)
        finally:
            self._tail.len = 0
            buf_free(&self._tail)
        return out

    cdef void _fail(self, exc) noexcept:
        self._error = exc
        self._tail.len = 0
        buf_free(&self._tail)

    cdef int _take(self, const char* s, Py_ssize_t n, unsigned max_byte, Py_ssize_t cont, bint from_tail,
                   list out) except -1:
        if n > self._max:
            raise messages.overflow("a line", self._max_obj)
        if _blank(s, n):
            return 0
        if max_byte != UNKNOWN_STATS:
            data = ssewire_decode_sized(s, n, max_byte, cont)
        else:
            data = ssewire_decode(s, n)
        out.append(_new_event(None, data, None, None))
        self.events_parsed += 1
        return 0


# --- JSON array -----------------------------------------------------------------------------------------------

cdef enum:
    BEFORE = 0  # before the opening "["
    FIRST = 1  # after "[": an object or "]"
    INSIDE = 2  # inside a top-level object
    AFTER = 3  # after an object: "," or "]"
    NEXT = 4  # after ",": an object
    END = 5  # after the closing "]": only whitespace

cdef enum:
    E_NONE = 0
    E_NOT_ARRAY = 1
    E_NOT_OBJECT = 2
    E_SEPARATOR = 3
    E_AFTER_END = 4
    E_OVERFLOW = 5
    E_NOMEM = 6

cdef struct Span:
    Py_ssize_t start  # -1: the element is in the pending buffer
    Py_ssize_t end
    unsigned max_byte  # decoder statistics of the element (UNKNOWN_STATS: not taken)
    Py_ssize_t cont

cdef unsigned char IS_WS[256]
cdef unsigned char IS_STRUCT[256]

IS_WS[0x20] = IS_WS[0x09] = IS_WS[0x0D] = IS_WS[0x0A] = 1  # space, tab, CR, LF
IS_STRUCT[0x22] = IS_STRUCT[0x7B] = IS_STRUCT[0x7D] = IS_STRUCT[0x5B] = IS_STRUCT[0x5D] = 1  # " { } [ ]


cdef class JSONArrayStreamParser(_Scanner):
    """Incremental scanner for a streamed JSON array of objects (Gemini ``streamGenerateContent`` without
    ``alt=sse``), compiled twin of ``_scanner_py.JSONArrayStreamParser``.

    ``feed(chunk)`` -> one ``SSEEvent(event=None, data=<object text>)`` per top-level object that the chunk
    closes, the object's exact text from ``{`` to its matching ``}``. Strings (with escapes) are skipped, so
    braces inside them do not count. Any whitespace and one comma may separate objects; a leading BOM is allowed.
    A body that is not an array, a non-object element or data after the closing ``]`` raises
    :class:`~ssewire.FramingError`; ``close()`` raises :class:`~ssewire.StreamTruncated` if the body ended
    before the closing ``]``. ``max_buffer`` bounds one element. One instance parses one stream, from one thread
    at a time.
    """

    cdef int _state
    cdef Py_ssize_t _depth
    cdef bint _in_str
    cdef bint _esc
    cdef Buf _pending  # bytes of the element being read (from its "{")
    cdef bint _started
    cdef char _head[3]  # stream start held back while it could be a BOM
    cdef Py_ssize_t _head_len

    def __init__(self, max_buffer=DEFAULT_MAX_BUFFER):
        self._start(max_buffer)
        self._state = BEFORE
        self._depth = 0
        self._in_str = False
        self._esc = False
        self._pending.len = 0
        self._started = False
        self._head_len = 0

    def __dealloc__(self):
        buf_free(&self._pending)

    @property
    def finished(self):
        """True once the closing ``]`` has been seen."""
        return self._state == END

    def close(self):
        """End of body: ``StreamTruncated`` unless the closing ``]`` was seen."""
        if not self._closing():
            return []
        buf_free(&self._pending)
        if self._state != END:
            self._error = messages.json_array_truncated(self._state == INSIDE)
            raise self._error
        return []

    cdef void _fail(self, exc) noexcept:
        self._error = exc
        buf_free(&self._pending)

    cdef int _scan(self, const char* s, Py_ssize_t n, list out) except -1:
        cdef const unsigned char* p = <const unsigned char*>s
        cdef Py_ssize_t t, pos = 0, count, i
        cdef int err
        cdef Span spans[SPAN_BATCH]
        cdef object data
        cdef object head
        if not self._started:
            t = self._head_len
            if t + n < 3 and memcmp(BOM + t, p, <size_t>n) == 0:
                memcpy(self._head + t, p, <size_t>n)
                self._head_len = t + n
                return 0
            self._started = True
            self._head_len = 0
            if t + n >= 3 and memcmp(BOM + t, p, <size_t>(3 - t)) == 0:
                p += 3 - t
                n -= 3 - t
            elif t:  # the held bytes open the body, and they are no "["
                head = PyBytes_FromStringAndSize(self._head, t) + PyBytes_FromStringAndSize(
                    <const char*>p, n if n < 40 else 40
                )
                raise messages.not_a_json_array(head)
        while pos < n:
            count = 0
            err = E_NONE
            if n - pos >= NOGIL_MIN:
                with nogil:
                    pos = self._run(p, pos, n, spans, &count, &err)
            else:
                pos = self._run(p, pos, n, spans, &count, &err)
            for i in range(count):
                if spans[i].start < 0:
                    buf_fit_large(&self._pending)
                    data = ssewire_decode(self._pending.p, self._pending.len)
                    buf_trim(&self._pending)
                elif spans[i].max_byte != UNKNOWN_STATS:
                    data = ssewire_decode_sized(<const char*>p + spans[i].start, spans[i].end - spans[i].start,
                                                spans[i].max_byte, spans[i].cont)
                else:
                    data = ssewire_decode(<const char*>p + spans[i].start, spans[i].end - spans[i].start)
                out.append(_new_event(None, data, None, None))
                self.events_parsed += 1
            if err != E_NONE:
                self._raise(err, p, pos, n)
        return 0

    @cython.final
    cdef int _raise(self, int err, const unsigned char* p, Py_ssize_t pos, Py_ssize_t n) except -1:
        if err == E_OVERFLOW:
            raise messages.overflow("a JSON array element", self._max_obj)
        if err == E_NOMEM:
            raise MemoryError()
        head = PyBytes_FromStringAndSize(<const char*>p + pos, n - pos if n - pos < 40 else 40)
        if err == E_NOT_ARRAY:
            raise messages.not_a_json_array(head)
        if err == E_NOT_OBJECT:
            raise messages.element_not_an_object(head)
        if err == E_SEPARATOR:
            raise messages.no_separator(head)
        raise messages.data_after_the_end(head)

    @cython.final
    cdef Py_ssize_t _run(self, const unsigned char* p, Py_ssize_t pos, Py_ssize_t n, Span* spans,
                         Py_ssize_t* count, int* err) noexcept nogil:
        """Scan from ``pos``: record completed elements in ``spans``; stop at the window end, a full batch, an
        element completed in the pending buffer (emitted before anything else is read) or an error."""
        cdef Py_ssize_t start, end, k = 0, cont = 0
        cdef unsigned max_byte
        cdef int state
        cdef unsigned char c
        while pos < n:
            state = self._state
            if state != INSIDE:
                while pos < n and IS_WS[p[pos]]:
                    pos += 1
                if pos >= n:
                    break
                c = p[pos]
                if state == BEFORE:
                    if c != b'[':
                        err[0] = E_NOT_ARRAY
                        break
                    self._state = FIRST
                elif state == FIRST or state == NEXT:
                    if c == b'{':
                        self._state = INSIDE
                        self._depth = 0
                        self._pending.len = 0
                        continue
                    if c == b']' and state == FIRST:  # an empty array
                        self._state = END
                    else:
                        err[0] = E_NOT_OBJECT
                        break
                elif state == AFTER:
                    if c == b',':
                        self._state = NEXT
                    elif c == b']':
                        self._state = END
                    else:
                        err[0] = E_SEPARATOR
                        break
                else:
                    err[0] = E_AFTER_END
                    break
                pos += 1
                continue
            start = pos
            end = self._element(p, pos, n, &max_byte, &cont)
            if end < 0:  # the element continues in the next chunk
                if self._pending.len + (n - start) > self._max:
                    err[0] = E_OVERFLOW
                    break
                if buf_append(&self._pending, <const char*>p + start, n - start) < 0:
                    err[0] = E_NOMEM
                    break
                pos = n
                break
            if self._pending.len:
                if self._pending.len + (end - start) > self._max:
                    err[0] = E_OVERFLOW
                    break
                if buf_append(&self._pending, <const char*>p + start, end - start) < 0:
                    err[0] = E_NOMEM
                    break
                spans[k].start = -1
                spans[k].end = 0
                k += 1
                self._state = AFTER
                pos = end
                break
            if end - start > self._max:
                err[0] = E_OVERFLOW
                break
            spans[k].start = start
            spans[k].end = end
            spans[k].max_byte = max_byte
            spans[k].cont = cont
            k += 1
            self._state = AFTER
            pos = end
            if k == SPAN_BATCH:
                break
        count[0] = k
        return pos

    @cython.final
    cdef Py_ssize_t _element(self, const unsigned char* p, Py_ssize_t pos, Py_ssize_t n,
                             unsigned* max_byte, Py_ssize_t* cont) noexcept nogil:
        """Advance through an element from ``pos``; return the offset just past its closing brace, or -1.

        64-byte blocks go through ``ssewire_walk64``; what it leaves (the last bytes of the window, a block with a
        backslash outside a string) goes byte by byte. ``max_byte``/``cont`` get the decoder statistics of
        ``p[pos:end]`` when the blocks covered all of it (else ``UNKNOWN_STATS``).
        """
        cdef ssewire_walk w
        cdef Py_ssize_t limit, end
        cdef int done
        cdef bint whole = True
        w.depth = self._depth
        w.in_str = self._in_str
        w.esc = self._esc
        w.max_byte = 0
        w.cont = 0
        max_byte[0] = UNKNOWN_STATS
        while True:
            limit = n
            if n - pos >= 64:
                done = 0
                pos = ssewire_walk64(p, pos, n, &w, &done)
                if done:
                    self._depth = 0
                    self._in_str = False
                    self._esc = False
                    if whole:
                        max_byte[0] = w.max_byte
                        cont[0] = w.cont
                    return pos
                if n - pos >= 64:
                    limit = pos + 64  # a block the walker left to the byte-wise walk
            whole = False
            if pos < limit:
                end = _walk_bytes(p, pos, limit, &w)
                if end >= 0:
                    self._depth = 0
                    self._in_str = False
                    self._esc = False
                    return end
                pos = limit
            if pos >= n:
                self._depth = w.depth
                self._in_str = w.in_str
                self._esc = w.esc
                return -1


cdef Py_ssize_t _walk_bytes(const unsigned char* p, Py_ssize_t pos, Py_ssize_t n, ssewire_walk* w) noexcept nogil:
    """The element walk byte by byte over ``p[pos:n]`` (``pos < n``; state in ``w``): the offset just past the
    element's closing brace, or -1 when ``n`` is reached first."""
    cdef Py_ssize_t depth = w.depth, k, q
    cdef bint in_str = w.in_str, esc = w.esc
    cdef const unsigned char* found
    cdef unsigned char c
    while True:
        if in_str:
            if esc:
                esc = False
                pos += 1
                if pos >= n:
                    break
            found = <const unsigned char*>memchr(p + pos, b'"', <size_t>(n - pos))
            if found == NULL:
                # the string goes on; remember whether the bytes end in an unfinished escape
                k = n
                while k > pos and p[k - 1] == b'\\':
                    k -= 1
                esc = ((n - k) & 1) == 1
                break
            q = found - p
            k = q
            while k > pos and p[k - 1] == b'\\':
                k -= 1
            pos = q + 1
            if ((q - k) & 1) == 0:
                in_str = False
            continue
        while pos < n and not IS_STRUCT[p[pos]]:
            pos += 1
        if pos >= n:
            break
        c = p[pos]
        pos += 1
        if c == b'"':
            in_str = True
        elif c == b'{' or c == b'[':
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos
    w.depth = depth
    w.in_str = in_str
    w.esc = esc
    return -1


# --- AWS event-stream -------------------------------------------------------------------------------------------

ssewire_crc32_init()


def _select_crc(allow_clmul):
    """Tests only: switch the carry-less multiply CRC path off (or back on where the CPU has it); returns whether
    it is in use. Not to be called while a parser is feeding."""
    return bool(ssewire_crc32_select(1 if allow_clmul else 0))


def _crc32(const unsigned char[::1] data, uint32_t crc=0):
    """Tests only: ``zlib.crc32(data, crc)`` computed by the scanners' own CRC-32."""
    return ssewire_crc32(crc, &data[0] if data.shape[0] else NULL, <size_t>data.shape[0])


#: The event-stream limits (as botocore's): headers of at most 128 KiB, a payload of at most 16 MiB.
MAX_HEADERS_LENGTH = 128 * 1024
MAX_PAYLOAD_LENGTH = 16 * 1024 * 1024

cdef enum:
    PRELUDE = 12  # total length, headers length, prelude CRC
    ES_MAX_HEADERS = 128 * 1024
    ES_MAX_PAYLOAD = 16 * 1024 * 1024
    STRING_SLOTS = 64  # header names and string values kept decoded (a power of two)
    STRING_MAX = 64  # the longest string kept
    BLOCK_SLOTS = 8  # header blocks kept parsed (round robin)
    BLOCK_MAX = 256  # the longest header block kept


@cython.no_gc
cdef class EventStreamMessage(SSEEvent):
    """One AWS event-stream message (``application/vnd.amazon.eventstream``), compiled twin of
    ``_scanner_py.EventStreamMessage``.

    ``headers``: every header, by name (``bool``, ``int`` for the byte/short/integer/long/timestamp types,
    ``bytes`` for byte arrays and UUIDs, ``str`` for strings); ``message_type``: the ``:message-type`` header
    (``event``, ``exception`` or ``error``; ``None`` when absent); ``content_type``: ``:content-type``;
    ``payload``: the payload's bytes; ``data``: the payload as text (invalid UTF-8 replaced); ``event``: the
    ``:event-type`` of an event, the ``:exception-type`` of an exception, the ``:error-code`` of an error.
    ``id`` and ``retry`` are always ``None``.
    """

    # Member descriptors, as the twin's __slots__ (and SSEEvent's fields): a field deleted with ``del`` then raises
    # AttributeError. The methods read them by name through ``o`` (never a NULL); the scanner sets them directly.
    cdef public object headers
    cdef public object payload
    cdef public object message_type
    cdef public object content_type

    def __init__(self, event=None, data="", headers=None, payload=b"", message_type=None, content_type=None):
        cdef object o = self
        o.event = event
        o.data = data
        o.id = None
        o.retry = None
        o.headers = {} if headers is None else headers
        o.payload = payload
        o.message_type = message_type
        o.content_type = content_type

    def _message_key(self):
        return _message_fields(self)

    # == != and hash: SSEEvent's slots (_equal, _hashed)

    def __repr__(self):
        cdef object o = self
        return (
            f"EventStreamMessage(event={o.event!r}, message_type={o.message_type!r}, "
            f"content_type={o.content_type!r}, data={o.data!r})"
        )

    def __reduce__(self):
        cdef object o = self
        return (type(self), (o.event, o.data, o.headers, o.payload, o.message_type, o.content_type))


cdef sw_slots _message_slots  # the fields' member descriptors and offsets (_c/sw_slots_py.h): lives with the type
cdef tuple _MESSAGE_FIELDS = ("headers", "payload", "message_type", "content_type")


def _message_member_fields():
    """Give ``EventStreamMessage``'s own four fields plain member descriptors, as ``SSEEvent``'s (a field deleted
    with ``del`` then raises AttributeError, as a deleted slot of the twin's); False when the layout is not as
    expected (Cython's descriptors stay)."""
    markers = (object(), object(), object(), object())
    sample = EventStreamMessage(None, "", *markers)
    return sw_slots_install(&_message_slots, EventStreamMessage, sample, _MESSAGE_FIELDS, markers) == 1


_message_member_fields()


cdef inline uint32_t _be32(const unsigned char* p) noexcept nogil:
    return (<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8) | <uint32_t>p[3]


cdef inline uint64_t _be64(const unsigned char* p) noexcept nogil:
    return (<uint64_t>_be32(p) << 32) | <uint64_t>_be32(p + 4)


cdef class EventStreamParser(_Scanner):
    """Incremental AWS event-stream parser (Bedrock's ``application/vnd.amazon.eventstream``), compiled twin of
    ``_scanner_py.EventStreamParser``.

    ``feed(chunk)`` -> one :class:`EventStreamMessage` per message the chunk completes. Each message is a prelude
    (total length, headers length, prelude CRC32), typed headers, the payload and a message CRC32, all big-endian;
    both CRCs are checked. A CRC mismatch, a corrupt length, headers that overrun their length, a header type that
    does not exist or a header given twice raise :class:`~ssewire.FramingError` naming the message's offset in the
    stream. Memory is bounded by one message: headers of at most 128 KiB, a payload of at most 16 MiB
    (``FramingError`` beyond), and a whole message of at most ``max_buffer`` bytes (``SSEBufferOverflow``).
    ``close()`` raises :class:`~ssewire.StreamTruncated` when the body ends inside a message.
    """

    cdef Buf _pending  # the start of a message that continues in the next chunk
    cdef Py_ssize_t _total  # that message's total length, once its prelude is read (0 until then)
    cdef long long _offset  # the stream offset of the message being read
    cdef list _strings  # decoded header strings, STRING_SLOTS of them, beside their bytes in _raw
    cdef char _raw[STRING_SLOTS][STRING_MAX]
    cdef Py_ssize_t _raw_len[STRING_SLOTS]
    cdef list _blocks  # the last header blocks parsed: (headers, event, message_type, content_type) ...
    cdef char _block[BLOCK_SLOTS][BLOCK_MAX]  # ... beside their bytes
    cdef Py_ssize_t _block_len[BLOCK_SLOTS]
    cdef int _next_block

    def __init__(self, max_buffer=DEFAULT_MAX_BUFFER):
        cdef int i
        self._start(max_buffer)
        self._pending.len = 0
        self._total = 0
        self._offset = 0
        self._strings = [None] * STRING_SLOTS
        for i in range(STRING_SLOTS):
            self._raw_len[i] = -1
        self._blocks = [None] * BLOCK_SLOTS
        for i in range(BLOCK_SLOTS):
            self._block_len[i] = -1
        self._next_block = 0

    def __dealloc__(self):
        buf_free(&self._pending)

    def close(self):
        """End of stream: nothing is owed; a message cut short raises :class:`~ssewire.StreamTruncated`."""
        cdef Py_ssize_t have = self._pending.len
        if not self._closing():
            return []
        if have:
            exc = messages.message_truncated(self._offset, have, self._total, PRELUDE)
            self._fail(exc)
            raise exc
        return []

    cdef void _fail(self, exc) noexcept:
        self._error = exc
        self._total = 0
        buf_free(&self._pending)

    cdef int _scan(self, const char* p, Py_ssize_t n, list out) except -1:
        cdef Py_ssize_t pos = 0, total
        if self._pending.len:
            pos = self._complete(p, n, out)
        while n - pos >= PRELUDE:
            total = self._prelude(<const unsigned char*>p + pos)
            if n - pos < total:
                self._total = total
                break
            self._message(<const unsigned char*>p + pos, total, out)
            pos += total
        if pos < n:
            self._hold(p + pos, n - pos)
        return 0

    cdef int _hold(self, const char* p, Py_ssize_t n) except -1:
        """Add ``p[0:n]`` to the pending message. Its buffer doubles as it fills (nothing is allocated for bytes that
        have not arrived) but never past the message's length once the prelude gave it, so a pending message holds
        at most ``max_buffer`` bytes (``buf_append`` would double past it: up to twice the message)."""
        cdef Buf* b = &self._pending
        cdef Py_ssize_t need = b.len + n, cap
        cdef char* q
        if need > b.cap:
            cap = b.cap * 2 if b.cap else 256
            if self._total and cap > self._total:
                cap = self._total  # a pending message never needs more
            if cap < need:
                cap = need
            q = <char*>PyMem_RawRealloc(b.p, <size_t>cap)
            if q == NULL:
                raise MemoryError()
            b.p = q
            b.cap = cap
        if n:
            memcpy(b.p + b.len, p, <size_t>n)
        b.len = need
        return 0

    cdef Py_ssize_t _complete(self, const char* p, Py_ssize_t n, list out) except -1:
        """Add to the pending message the bytes of the chunk it still needs; emit it once whole. Returns how much of
        the chunk was used (all of it while the message is still incomplete)."""
        cdef Py_ssize_t pos = 0, need
        if not self._total:
            pos = PRELUDE - self._pending.len
            if pos > n:
                pos = n
            self._hold(p, pos)
            if self._pending.len < PRELUDE:
                return n
            self._total = self._prelude(<const unsigned char*>self._pending.p)
        need = self._total - self._pending.len
        if need > n - pos:
            self._hold(p + pos, n - pos)
            return n
        self._hold(p + pos, need)
        self._message(<const unsigned char*>self._pending.p, self._total, out)
        buf_trim(&self._pending)
        self._total = 0
        return pos + need

    cdef Py_ssize_t _prelude(self, const unsigned char* q) except -1:
        """Check the prelude at ``q`` (its CRC, the lengths, the limits); return the message's total length."""
        cdef uint32_t total = _be32(q), headers = _be32(q + 4), crc = _be32(q + 8)
        cdef uint32_t computed = ssewire_crc32(0, q, 8)
        cdef long long offset = self._offset
        if computed != crc:
            raise messages.prelude_crc_mismatch(offset, computed, crc)
        if total < PRELUDE + 4 or headers > total - PRELUDE - 4:
            raise messages.corrupt_length(offset, total, headers)
        if headers > ES_MAX_HEADERS:
            raise messages.headers_too_long(offset, headers, MAX_HEADERS_LENGTH)
        if total - headers - PRELUDE - 4 > ES_MAX_PAYLOAD:
            raise messages.payload_too_long(offset, total - headers - PRELUDE - 4, MAX_PAYLOAD_LENGTH)
        if total > self._max:
            raise messages.overflow("an event-stream message", self._max_obj)
        return total

    cdef int _message(self, const unsigned char* q, Py_ssize_t total, list out) except -1:
        """The whole message at ``q[0:total]`` (prelude already checked): check its CRC, read its headers, append
        its event."""
        cdef uint32_t computed, crc = _be32(q + total - 4)
        cdef Py_ssize_t length = _be32(q + 4), size
        cdef EventStreamMessage ev
        if total >= NOGIL_MIN:
            with nogil:
                computed = ssewire_crc32(0, q, <size_t>(total - 4))
        else:
            computed = ssewire_crc32(0, q, <size_t>(total - 4))
        if computed != crc:
            raise messages.message_crc_mismatch(self._offset, computed, crc)
        described = self._described(q + PRELUDE, length)
        size = total - PRELUDE - 4 - length
        ev = EventStreamMessage.__new__(EventStreamMessage)
        ev.event = described[1]
        ev.data = ssewire_decode(<const char*>q + PRELUDE + length, size)
        ev.id = None
        ev.retry = None
        ev.headers = PyDict_Copy(described[0])
        ev.message_type = described[2]
        ev.content_type = described[3]
        ev.payload = PyBytes_FromStringAndSize(<const char*>q + PRELUDE + length, size)
        out.append(ev)
        self.events_parsed += 1
        self._offset += total
        return 0

    cdef tuple _described(self, const unsigned char* p, Py_ssize_t n):
        """``(headers, event, message_type, content_type)`` of the header block ``p[0:n]``: the last few blocks are
        kept, as a stream repeats the same few (only ``:event-type`` changes); the caller copies ``headers``."""
        cdef Py_ssize_t i
        if n <= BLOCK_MAX:
            for i in range(BLOCK_SLOTS):
                if self._block_len[i] == n and memcmp(self._block[i], p, <size_t>n) == 0:
                    return self._blocks[i]
        headers = self._headers(p, n)
        message_type = headers.get(":message-type")
        if type(message_type) is not str:
            message_type = None
        if message_type is None or message_type == "event":
            event = headers.get(":event-type")
        elif message_type == "exception":
            event = headers.get(":exception-type")
        elif message_type == "error":
            event = headers.get(":error-code")
        else:
            event = headers.get(":event-type")
        content_type = headers.get(":content-type")
        described = (
            headers, event if type(event) is str else None, message_type,
            content_type if type(content_type) is str else None,
        )
        if n <= BLOCK_MAX:
            i = self._next_block
            self._next_block = (i + 1) % BLOCK_SLOTS
            memcpy(self._block[i], p, <size_t>n)
            self._block_len[i] = n
            self._blocks[i] = described
        return described

    cdef dict _headers(self, const unsigned char* p, Py_ssize_t n):
        """The headers in ``p[0:n]``, by name."""
        cdef dict headers = {}
        cdef Py_ssize_t pos = 0, size
        cdef unsigned char kind
        while pos < n:
            size = p[pos]
            pos += 1
            if pos + size + 1 > n:
                raise messages.headers_overrun(self._offset)
            name = self._string(p + pos, size)
            kind = p[pos + size]
            pos += size + 1
            if kind == 0 or kind == 1:
                value = kind == 0
            elif kind == 2:
                if pos + 1 > n:
                    raise messages.headers_overrun(self._offset)
                value = <signed char>p[pos]
                pos += 1
            elif kind == 3:
                if pos + 2 > n:
                    raise messages.headers_overrun(self._offset)
                value = <int16_t>((<uint32_t>p[pos] << 8) | p[pos + 1])
                pos += 2
            elif kind == 4:
                if pos + 4 > n:
                    raise messages.headers_overrun(self._offset)
                value = <int32_t>_be32(p + pos)
                pos += 4
            elif kind == 5 or kind == 8:
                if pos + 8 > n:
                    raise messages.headers_overrun(self._offset)
                value = <int64_t>_be64(p + pos)
                pos += 8
            elif kind == 6 or kind == 7:
                if pos + 2 > n:
                    raise messages.headers_overrun(self._offset)
                size = (<Py_ssize_t>p[pos] << 8) | p[pos + 1]
                pos += 2
                if pos + size > n:
                    raise messages.headers_overrun(self._offset)
                if kind == 6:
                    value = PyBytes_FromStringAndSize(<const char*>p + pos, size)
                else:
                    value = self._string(p + pos, size)
                pos += size
            elif kind == 9:
                if pos + 16 > n:
                    raise messages.headers_overrun(self._offset)
                value = PyBytes_FromStringAndSize(<const char*>p + pos, 16)
                pos += 16
            else:
                raise messages.header_type_unknown(self._offset, name, kind)
            if name in headers:
                raise messages.header_twice(self._offset, name)
            headers[name] = value
        return headers

    cdef object _string(self, const unsigned char* s, Py_ssize_t n):
        """``s[0:n]`` decoded as UTF-8 (invalid bytes replaced); short ones kept (one slot per hash of the bytes), as
        header names and values repeat in every message."""
        cdef Py_ssize_t i
        cdef uint32_t h = 2166136261u
        if n > STRING_MAX:
            return ssewire_decode(<const char*>s, n)
        for i in range(n):  # FNV-1a
            h = (h ^ s[i]) * 16777619u
        i = (h ^ (h >> 16)) & (STRING_SLOTS - 1)
        if self._raw_len[i] == n and memcmp(self._raw[i], s, <size_t>n) == 0:
            return self._strings[i]
        text = ssewire_decode(<const char*>s, n)
        memcpy(self._raw[i], s, <size_t>n)
        self._raw_len[i] = n
        self._strings[i] = text
        return text
