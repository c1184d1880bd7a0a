# cython: language_level=3
"""The compiled hot path of the normalisers: a batch's text and reasoning delta events, read from each payload's
JSON text without decoding it (strict JSON validation and member lookup in C, ``_c/sw_json.h``) and built in C
(``_c/sw_slots.h``: the ``Unified`` and ``LazyPayload`` classes' own ``__slots__``, filled through their member
descriptors, so the objects are exactly those the Python factories make).

``take_deltas(events, start, rule, out)`` appends to ``out`` the delta events of ``events[start:]`` that ``rule``
describes, in order, and returns the index of the first event it did not take (``len(events)`` when it took them
all). It stops at the first event that is not such a delta, or that the full decode might read differently:
anything but strict JSON, a key spelled with an escape, a lone surrogate, an unexpected type; and at payloads
over 64 Ki characters (no delta is that large). The caller
normalises that event the slow way and calls again. The events it makes equal the slow path's, field for field
(tests/test_delta_reader.py proves it on every recording and on generated adversarial payloads).
"""

from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF
from libc.string cimport memcmp, memcpy

from ._json_fields cimport (
    SW_J_ABSENT,
    SW_J_INT,
    SW_J_NULL,
    SW_J_STRING,
    SW_J_TRUE,
    SW_JSON_MAX_PATHS,
    SW_JSON_MAX_STEPS,
    SW_JSON_ONLY,
    sw_json_locate,
    sw_json_paths,
    sw_json_string,
    sw_json_val,
    sw_slots,
    sw_slots_get,
    sw_slots_init,
    sw_slots_is,
    sw_slots_new,
)

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except? NULL
    bint PyUnicode_IS_COMPACT_ASCII(object s)
    void* PyUnicode_DATA(object s)
    Py_ssize_t PyUnicode_GET_LENGTH(object s)
    PyObject* PyErr_Occurred()
    object PyLong_FromString(const char* s, char** end, int base)

__all__ = ["DeltaRule", "take_deltas", "use_types"]

# -- the objects it reads and makes -------------------------------------------------------------------------------

cdef sw_slots _unified, _lazy, _event
cdef object _types = None  # keeps the types and the defaults alive; None until use_types() succeeded
cdef list _defaults = []
cdef Py_ssize_t _type_at = 0, _text_at = 0, _sequence_at = 0, _raw_at = 0
cdef object _undecoded = None


def use_types(unified, tuple fields, tuple defaults, lazy, undecoded, event):
    """Tell the reader what to build: ``unified`` (``Unified``: its ``__slots__`` ``fields``, each starting as the
    matching one of ``defaults``) and ``lazy`` (``LazyPayload``: ``text``, and ``_value`` starting as
    ``undecoded``); and ``event``, the compiled scanners' event type, whose ``event`` and ``data`` it reads
    directly. Returns whether every type has the fields named as plain slots (False: the reader stays off)."""
    global _types, _defaults, _type_at, _text_at, _sequence_at, _raw_at, _undecoded
    _types = None
    if len(fields) != len(defaults) or len(fields) > 20:
        raise ValueError("one default per field, at most 20 fields")
    if (sw_slots_init(&_unified, unified, fields) != 1 or sw_slots_init(&_lazy, lazy, ("text", "_value")) != 1
            or sw_slots_init(&_event, event, ("event", "data")) != 1):
        return False
    _type_at, _text_at = fields.index("type"), fields.index("text")
    _sequence_at, _raw_at = fields.index("sequence"), fields.index("_raw")
    _defaults = list(defaults)
    _undecoded = undecoded
    _types = (unified, lazy, event, defaults)
    return True


cdef object _new_delta(object kind, object data, object text, object sequence):
    """``Unified(kind, text=text, sequence=sequence)`` whose ``raw`` is ``LazyPayload(data)``."""
    cdef PyObject* values[20]
    cdef PyObject* lazy_values[2]
    cdef Py_ssize_t i
    lazy_values[0] = <PyObject*>data
    lazy_values[1] = <PyObject*>_undecoded
    lazy = sw_slots_new(&_lazy, lazy_values)
    for i in range(len(_defaults)):
        values[i] = <PyObject*>_defaults[i]
    values[_type_at] = <PyObject*>kind
    values[_text_at] = <PyObject*>text
    values[_sequence_at] = <PyObject*>sequence
    values[_raw_at] = <PyObject*>lazy
    return sw_slots_new(&_unified, values)


# -- the rules ----------------------------------------------------------------------------------------------------

cdef class DeltaRule:
    """Which events of a stream are plain deltas, and how to read one (built by ``ssewire.normalizers.typed``).

    ``paths``: up to 16 paths into the payload object, each 1 to 4 steps: a member key, or 0 for the one element
    of an array (an array with more elements there is not this shape). ``cases``: SSE event name (None for an event
    without one) -> ``(type, variants)``: the payload's ``paths[type_path]`` must be the string ``type`` (``type``
    None: absent or null). The first variant ``(tag, candidates)`` whose tag matches ``paths[tag_path]`` applies:
    a string tag matches that string, ``True`` the JSON ``true``, None anything (with ``tag_path`` -1 the first
    variant applies). Its candidates ``(text_path, kind)`` must each be a string, null or absent; the first
    non-empty string is the event's text and kind, and any other non-empty one must be of the same kind.
    ``nulls``: paths that must be absent or null; ``absent``: paths that must not be there at all.
    ``seq_path``: an integer member (absent or null: None) that becomes the event's ``sequence``, or -1.
    """

    cdef sw_json_paths c_paths
    cdef tuple keys  # the UTF-8 bytes the path pointers point into
    cdef dict cases
    cdef int n_nulls, n_absent
    cdef int c_nulls[16]
    cdef int c_absent[16]
    cdef int type_path, tag_path, seq_path

    def __init__(self, paths, cases, int type_path, int tag_path=-1, int seq_path=-1, nulls=(), absent=()):
        cdef list keys = []
        cdef int i, j
        if not 0 < len(paths) <= SW_JSON_MAX_PATHS:
            raise ValueError(f"a DeltaRule reads 1 to {SW_JSON_MAX_PATHS} paths, not {len(paths)}")
        for path in paths:
            if not 1 <= len(path) <= SW_JSON_MAX_STEPS or any(
                not (type(step) is str or (type(step) is int and step == 0)) for step in path
            ):
                raise ValueError(f"a path is 1 to {SW_JSON_MAX_STEPS} keys or 0 (the only element), not {path!r}")
            keys.append(tuple(None if type(step) is int else step.encode("utf-8") for step in path))
        for index in (type_path, tag_path, seq_path, *nulls, *absent):
            if not -1 <= index < len(paths):
                raise ValueError(f"path index {index} out of range")
        if len(nulls) > SW_JSON_MAX_PATHS or len(absent) > SW_JSON_MAX_PATHS or -1 in (*nulls, *absent):
            raise ValueError("nulls and absent name paths of the rule")
        self.keys = tuple(keys)
        self.c_paths.n = len(keys)
        for i in range(len(keys)):
            self.c_paths.steps[i] = len(keys[i])
            for j in range(len(keys[i])):
                step = keys[i][j]
                if step is None:
                    self.c_paths.key[i][j] = NULL
                    self.c_paths.len[i][j] = SW_JSON_ONLY
                else:
                    self.c_paths.key[i][j] = step
                    self.c_paths.len[i][j] = len(step)
        self.cases = {}
        for name, (expected, variants) in cases.items():
            if expected is not None and type_path < 0:
                raise ValueError("a type to match needs a type path")
            compiled = []
            for tag, candidates in variants:
                for text_path, _kind in candidates:
                    if not 0 <= text_path < len(paths):
                        raise ValueError(f"text path index {text_path} out of range")
                if not (tag is None or tag is True or type(tag) is str):
                    raise ValueError(f"a variant's tag is a string, True or None, not {tag!r}")
                compiled.append((tag.encode("utf-8") if type(tag) is str else tag, tuple(candidates)))
            self.cases[name] = (None if expected is None else expected.encode("utf-8"), tuple(compiled))
        self.type_path, self.tag_path, self.seq_path = type_path, tag_path, seq_path
        self.n_nulls, self.n_absent = len(nulls), len(absent)
        for i in range(self.n_nulls):
            self.c_nulls[i] = nulls[i]
        for i in range(self.n_absent):
            self.c_absent[i] = absent[i]


cdef inline bint _is(const sw_json_val* v, bytes want):
    """The located value is the string ``want`` (spelled without escapes)."""
    return (v.kind == SW_J_STRING and not v.escaped and v.len == len(want)
            and memcmp(v.start, <const char*>want, v.len) == 0)


cdef inline bint _none(const sw_json_val* v):
    return v.kind == SW_J_ABSENT or v.kind == SW_J_NULL


cdef object _NOT_TAKEN = object()
# Deltas are small; a larger payload goes to the full decode, so reading one never adds a UTF-8 copy of a large
# non-ASCII payload to the memory an event costs.
cdef Py_ssize_t _MAX_CHARS = 64 * 1024


cdef inline long long _small_int(const char* p, Py_ssize_t n) noexcept:
    """A validated JSON integer of at most 18 characters."""
    cdef long long value = 0
    cdef Py_ssize_t i = 1 if p[0] == b'-' else 0
    cdef bint negative = i == 1
    while i < n:
        value = value * 10 + (p[i] - 48)
        i += 1
    return -value if negative else value


cdef object _take(DeltaRule rule, object name, object data):
    """The event one payload makes, or _NOT_TAKEN."""
    cdef sw_json_val vals[16]
    cdef Py_ssize_t size
    cdef const char* text
    cdef const sw_json_val* v
    cdef const sw_json_val* chosen_text = NULL
    cdef PyObject* decoded
    cdef char digits[32]
    cdef int i
    case = rule.cases.get(name)
    if case is None or type(data) is not str or len(<str>data) > _MAX_CHARS:
        return _NOT_TAKEN
    if PyUnicode_IS_COMPACT_ASCII(data):  # the usual payload: its characters are its UTF-8
        text = <const char*>PyUnicode_DATA(data)
        size = PyUnicode_GET_LENGTH(data)
    else:
        try:
            text = PyUnicode_AsUTF8AndSize(data, &size)
        except UnicodeEncodeError:  # lone surrogates: the full decode keeps them
            return _NOT_TAKEN
    if not sw_json_locate(text, size, &rule.c_paths, vals):
        return _NOT_TAKEN
    expected = (<tuple>case)[0]
    if rule.type_path >= 0:
        if expected is None:
            if not _none(&vals[rule.type_path]):
                return _NOT_TAKEN
        elif not _is(&vals[rule.type_path], <bytes>expected):
            return _NOT_TAKEN
    for i in range(rule.n_nulls):
        if not _none(&vals[rule.c_nulls[i]]):
            return _NOT_TAKEN
    for i in range(rule.n_absent):
        if vals[rule.c_absent[i]].kind != SW_J_ABSENT:
            return _NOT_TAKEN
    chosen = None
    for variant in <tuple>(<tuple>case)[1]:
        tag = (<tuple>variant)[0]
        if (rule.tag_path < 0 or tag is None or (tag is True and vals[rule.tag_path].kind == SW_J_TRUE)
                or (type(tag) is bytes and _is(&vals[rule.tag_path], <bytes>tag))):
            chosen = (<tuple>variant)[1]
            break
    if chosen is None:
        return _NOT_TAKEN
    kind = None
    for candidate in <tuple>chosen:
        v = &vals[<int>(<tuple>candidate)[0]]
        if v.kind == SW_J_STRING:
            if v.len == 0:
                continue
            if kind is None:
                kind = (<tuple>candidate)[1]
                chosen_text = v
            elif kind != (<tuple>candidate)[1]:
                return _NOT_TAKEN  # two kinds of text in one payload: the full decode makes both events
        elif not _none(v):
            return _NOT_TAKEN
    if kind is None:
        return _NOT_TAKEN
    decoded = sw_json_string(chosen_text)
    if decoded is NULL:
        if PyErr_Occurred() is not NULL:
            raise MemoryError()
        return _NOT_TAKEN  # a lone surrogate
    delta = <object>decoded
    Py_DECREF(delta)
    seq = None
    if rule.seq_path >= 0:
        v = &vals[rule.seq_path]
        if v.kind == SW_J_INT and v.len <= 18:  # fits a long long
            seq = _small_int(v.start, v.len)
        elif v.kind == SW_J_INT and v.len < 32:
            memcpy(digits, v.start, v.len)
            digits[v.len] = 0
            seq = PyLong_FromString(digits, NULL, 10)
        elif not _none(v):
            return _NOT_TAKEN
    return _new_delta(kind, data, delta, seq)


def take_deltas(list events, Py_ssize_t start, DeltaRule rule, list out):
    """Append the delta events of ``events[start:]`` to ``out`` until the first event that is not one; return
    that event's index (``len(events)`` when every event was taken, ``start`` when ``use_types`` has not
    succeeded)."""
    cdef Py_ssize_t i = start, n = len(events)
    cdef PyObject* name
    cdef PyObject* data
    if _types is None:
        return start
    while i < n:
        event = events[i]
        name = sw_slots_get(&_event, event, 0) if sw_slots_is(&_event, event) else NULL
        data = sw_slots_get(&_event, event, 1) if name is not NULL else NULL
        if data is not NULL:  # the compiled scanners' event: its fields read directly
            made = _take(rule, <object>name, <object>data)
        else:
            made = _take(rule, event.event, event.data)
        if made is _NOT_TAKEN:
            break
        out.append(made)
        i += 1
    return i
