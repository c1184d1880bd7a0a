# cython: language_level=3, auto_pickle=False
"""The compiled hot path of the normalisers: a batch's text and reasoning delta events, read from each payload's
JSON text without decoding it (strict JSON validation and member lookup in C, ``_c/sw_json.h``) and built in C
(``_c/sw_slots_py.h``: the ``Unified`` and ``LazyPayload`` classes' own ``__slots__``, filled through their member
descriptors, so the objects are exactly those the Python factories make).

``take_deltas(events, start, rule, out)`` appends to ``out`` the delta events of ``events[start:]`` that ``rule``
describes, in order, and returns the index of the first event it did not take (``len(events)`` when it took them
all). It stops at the first event that is not such a delta, or that the full decode might read differently:
anything but strict JSON, a key spelled with an escape, a lone surrogate, an unexpected type; and at payloads
over 64 Ki characters (no delta is that large). The caller
normalises that event the slow way and calls again. The events it makes equal the slow path's, field for field
(tests/normalizers/test_delta_reader.py proves it on every recording and on generated adversarial payloads).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from libc.string cimport memcmp, memcpy

from .json_fields cimport (
    SW_J_ABSENT,
    SW_J_INT,
    SW_J_NULL,
    SW_J_OBJECT,
    SW_J_OTHER,
    SW_J_STRING,
    SW_J_TRUE,
    SW_JSON_MAX_EACH,
    SW_JSON_MAX_PATHS,
    SW_JSON_MAX_STEPS,
    SW_JSON_ONLY,
    SW_JSON_COMPACT_ROOM,
    SW_JSON_SHAPE_MAX,
    SW_JSON_SHAPE_SIZE,
    SW_SLOTS_MAX,
    sw_json_compact,
    sw_json_learn,
    sw_json_locate,
    sw_json_locate_each,
    sw_json_low,
    sw_json_utf8_of,
    sw_json_utf8_room,
    sw_json_match,
    sw_json_shape,
    sw_json_paths,
    sw_json_prepare,
    sw_json_string,
    sw_json_val,
    sw_slots,
    sw_slots_get,
    sw_slots_init,
    sw_slots_is,
    sw_slots_new,
)
from cpython.mem cimport PyMem_Realloc

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except? NULL
    bint PyUnicode_IS_COMPACT_ASCII(object s)
    void* PyUnicode_DATA(object s)
    Py_ssize_t PyUnicode_GET_LENGTH(object s)
    PyObject* PyErr_Occurred()
    int PyUnicode_KIND(object s)
    PyObject* PyDict_GetItem(object d, object key)
    PyObject* PyDict_GetItemWithError(object d, object key) except? NULL
    long PyLong_AsLong(object o) noexcept  # only on the small ints DeltaRule stores
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)
    object PyLong_FromString(const char* s, char** end, int base)

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
    "without_member",
    "take_texts",
    "use_types",
    "write_texts",
]

#: The limits of the C structures, from the headers' macros (``_c/sw_json.h``, ``_c/sw_slots_py.h``): the paths a
#: ``DeltaRule`` reads, the steps of one path, the ``__slots__`` of a type the reader builds.
#: The largest payload (characters) the reader reads, but for an ASCII one (read in place) of an event that makes no
#: text (a generated image's base64 in a progress event ...): a larger one is left to the caller.
MAX_CHARS: int = 64 * 1024
MAX_PATHS: int = SW_JSON_MAX_PATHS
MAX_STEPS: int = SW_JSON_MAX_STEPS
MAX_SLOTS: int = SW_SLOTS_MAX

# -- the objects it reads and makes -------------------------------------------------------------------------------

cdef sw_slots _unified, _lazy, _event, _call
cdef object _types = None  # keeps the types and the defaults alive; None until use_types() succeeded
cdef PyObject* _defaults[SW_SLOTS_MAX]
cdef Py_ssize_t _type_at = 0, _text_at = 0, _sequence_at = 0, _raw_at = 0
cdef Py_ssize_t _id_at = 0, _name_at = 0, _fragment_at = 0, _server_at = 0, _signature_at = 0
cdef Py_ssize_t _citations_at = 0
cdef object _undecoded = None
_TOOL_DELTA = "tool_call_delta"
cdef str _TEXT = "text_delta", _REASONING = "reasoning_delta"


def use_types(unified, tuple fields, tuple defaults, lazy, undecoded, event, call):
    """Tell the reader what to build: ``unified`` (``Unified``: its ``__slots__`` ``fields``, each starting as the
    matching one of ``defaults``) and ``lazy`` (``LazyPayload``: ``text``, and ``_value`` starting as
    ``undecoded``); ``event``, the compiled scanners' event type, whose ``event`` and ``data`` it reads
    directly; and ``call`` (``OpenCall``), whose ``id``, ``name``, ``server`` and ``parts`` a tool argument delta
    reads and extends. Returns whether every type has the fields named as plain slots (False: the reader stays
    off)."""
    global _types, _type_at, _text_at, _sequence_at, _raw_at, _id_at, _name_at, _fragment_at, _server_at
    global _signature_at, _citations_at, _undecoded
    cdef Py_ssize_t i
    if len(fields) != len(defaults) or len(fields) > SW_SLOTS_MAX:  # refused before anything changes
        raise ValueError(f"one default per field, at most {SW_SLOTS_MAX} fields (SW_SLOTS_MAX), not {len(fields)}")
    _types = None
    if (sw_slots_init(&_unified, unified, fields) != 1 or sw_slots_init(&_lazy, lazy, ("text", "_value")) != 1
            or sw_slots_init(&_event, event, ("event", "data")) != 1
            or sw_slots_init(&_call, call, ("id", "name", "server", "parts")) != 1):
        return False
    _type_at, _text_at = fields.index("type"), fields.index("text")
    _sequence_at, _raw_at = fields.index("sequence"), fields.index("_raw")
    _id_at, _name_at = fields.index("tool_call_id"), fields.index("tool_name")
    _fragment_at, _server_at = fields.index("arguments_delta"), fields.index("server")
    _signature_at, _citations_at = fields.index("signature"), fields.index("citations")
    for i in range(len(defaults)):
        _defaults[i] = <PyObject*>defaults[i]
    _undecoded = undecoded
    _types = (unified, lazy, event, call, defaults)
    return True


cdef object _new_lazy(object data):
    """``LazyPayload(data)``: a payload decoded the first time it is read."""
    cdef PyObject* lazy_values[2]
    lazy_values[0] = <PyObject*>data
    lazy_values[1] = <PyObject*>_undecoded
    return sw_slots_new(&_lazy, lazy_values)


cdef object _new_event(object kind, object lazy, object text, object sequence, object call):
    """``Unified(kind, text=text, sequence=sequence)`` whose ``raw`` is ``lazy`` (a ``LazyPayload``); for a tool
    argument delta (``call`` not None) ``text`` is the ``arguments_delta`` and the call's id, name and server are
    set."""
    cdef PyObject* values[SW_SLOTS_MAX]
    memcpy(values, _defaults, _unified.n * sizeof(PyObject*))
    values[_type_at] = <PyObject*>kind
    values[_sequence_at] = <PyObject*>sequence
    values[_raw_at] = <PyObject*>lazy
    if call is None:
        values[_text_at] = <PyObject*>text
    else:
        values[_fragment_at] = <PyObject*>text
        values[_id_at] = sw_slots_get(&_call, call, 0)
        values[_name_at] = sw_slots_get(&_call, call, 1)
        values[_server_at] = sw_slots_get(&_call, call, 2)
    return sw_slots_new(&_unified, values)


# -- where the text of a run can go instead of events --------------------------------------------------------------

cdef class TextSink:
    """Where :func:`take_deltas` puts the text of the text and reasoning deltas it takes, instead of making their
    events (what an accumulator that only joins them needs): ``texts`` and ``reasonings`` get each delta's text in
    order; ``fragments`` (a dict, call id -> list) the argument fragment of each tool argument delta of a call it
    names (a call it does not name gets its event); ``taken`` counts them all, and ``sequence`` is the last sequence
    number of any event taken (None: none had one). The reader of the sink resets ``taken`` and ``sequence``."""

    cdef public list texts, reasonings
    cdef public dict fragments
    cdef public Py_ssize_t taken
    cdef public object sequence

    def __init__(self, list texts, list reasonings, dict fragments=None):
        self.texts, self.reasonings = texts, reasonings
        self.fragments = {} if fragments is None else fragments
        self.taken = 0
        self.sequence = None


# -- the rules ----------------------------------------------------------------------------------------------------

cdef enum:
    MAX_CASES = 24
    MAX_VARIANTS = 8
    MAX_CANDIDATES = 4
    MAX_TAGS = 6  # the conditions of one variant (see DeltaRule)
    MAX_NOTES = 4
    BY_TYPE = MAX_CASES  # the shapes bucket of the payloads whose type names their case

cdef enum:
    TAG_ANY = 0
    TAG_TRUE = 1
    TAG_STRING = 2
    TAG_OBJECT = 3  # an object
    TAG_NONE = 4  # absent or null

cdef struct Candidate:
    int path
    int kind  # index into DeltaRule.kinds

cdef struct Tag:
    int path  # the path whose value is matched
    int tag  # TAG_*
    const char* text  # TAG_STRING: the string
    Py_ssize_t len

cdef struct Variant:
    int n_tags  # the conditions, all of which must hold (none: the variant applies)
    Tag tags[MAX_TAGS]
    int n
    int only  # the kind (index into DeltaRule.kinds) a payload of this variant must make, or -1 for any
    Candidate candidates[MAX_CANDIDATES]

cdef struct Case:
    const char* expected  # NULL: absent or null
    Py_ssize_t expected_len
    int n
    Variant variants[MAX_VARIANTS]


cdef class _Spec:
    """What a :class:`DeltaRule` says, compiled (see there); never changed once built, so any number of rules and
    threads share one."""

    cdef tuple args  # what DeltaRule() was given (for copies and pickles)
    cdef sw_json_paths c_paths
    cdef tuple keep  # the bytes and str objects the C structures point into or name
    cdef tuple kinds  # the event kinds candidates name, by index
    cdef dict case_at  # SSE event name -> index into c_cases
    cdef Case c_cases[MAX_CASES]
    cdef int n_cases
    cdef bint by_type  # an event whose name no case has: its case is the one its payload's type names
    cdef int n_nulls, n_absent, n_not_true, n_zeros
    cdef int c_not_true[SW_JSON_MAX_PATHS]
    cdef int c_zeros[SW_JSON_MAX_PATHS]
    cdef int c_nulls[SW_JSON_MAX_PATHS]
    cdef int c_absent[SW_JSON_MAX_PATHS]
    cdef int type_path, tag_path, seq_path, key_path
    cdef int tool_kind  # the index of tool_call_delta in kinds, or -1
    cdef int text_kind, reasoning_kind  # the indexes of text_delta and reasoning_delta in kinds, or -1
    cdef int n_notes
    cdef int c_notes[MAX_NOTES]
    cdef int c_note_kinds[MAX_NOTES]  # SW_J_STRING, SW_J_INT or SW_J_OBJECT
    cdef int n_media
    cdef int c_media[SW_JSON_MAX_PATHS]


cdef class DeltaRule:
    """Which events of a stream are plain deltas, and how to read one (built by ``ssewire.normalizers._fast.typed``).

    A rule as built only reads: it is safe to share (a module's rule, any thread). :meth:`fresh` gives a copy for
    one stream that also learns the shape of the payloads it takes (see ``sw_json_learn`` in ``_c/sw_json.h``) and
    reads the next ones by it; the copy shares the compiled rule and owns only what it learned (at most two shapes
    per case, each as large as the payload it came from, at most ``SW_JSON_SHAPE_MAX`` characters). A copy is for
    one stream at a time: what it learned is the only state :func:`take_deltas` changes on a rule.

    ``paths``: up to ``MAX_PATHS`` paths into the payload object, each 1 to ``MAX_STEPS`` steps: a member key, or 0
    for the one element of an array (an array with more elements there is not this shape). ``cases``: SSE event name
    (None for an event without one) -> ``(type, variants)``: the payload's ``paths[type_path]`` must be the string
    ``type`` (``type`` None: absent or null). The first variant ``(tag, candidates)`` whose tag matches
    ``paths[tag_path]`` applies: a string tag matches that string, ``True`` the JSON ``true``, ``dict`` an object,
    ``type(None)`` a member absent or null, None anything (with ``tag_path`` -1 the first variant applies); a tag
    may also be a tuple of up to ``MAX_TAGS`` ``(path index, tag)`` conditions on paths of its own, all of which
    must hold (a variant that a value deeper in the payload decides); a
    variant may name a third item, the one kind of event a payload of it must make (else it is not taken). Its
    candidates ``(text_path, kind)`` must each be a string, null or
    absent; the first non-empty string is the event's text and kind, and any other non-empty one must be of the same
    kind. A variant without candidates makes a ``raw`` event. A candidate of kind ``tool_call_delta`` is a tool
    call's argument fragment: ``paths[key_path]`` (a non-empty string without escapes, or an integer) must name an
    open call in the ``calls`` given to :func:`take_deltas`; the fragment joins the call's parts and the event
    carries its id, name and server flag.
    ``zeros``: paths that, where they are integers, must be 0 (a choice index: any other value is read as 0).
    ``nulls``: paths that must be absent or null; ``absent``: paths that must not be there at all; ``not_true``:
    paths that must not be the JSON ``true``.
    ``by_type``: an event whose SSE name no case has (a server that names no events) takes the case whose ``type``
    is the payload's ``paths[type_path]`` (a string spelled without escapes), as the full decode dispatches on the
    payload's type.
    ``seq_path``: an integer member (absent or null: None) that becomes the event's ``sequence``, or -1.
    ``notes``: up to 4 ``(path, kind)`` whose values a taken payload reports in the ``notes`` list given to
    :func:`take_deltas` (the latest one wins) when the value is of that kind: ``"string"`` as its str, ``"int"``
    as its int, ``"object"`` as the payload's whole text (decode it when it is needed); a value of another kind
    leaves its note as it was.
    ``media``: paths of media (an image, audio: base64 data in an object): a payload none of whose candidates gives
    text makes a ``raw`` event when one of them holds an object. Payloads over ``MAX_CHARS`` characters are read
    only when ASCII (read in place) and of a case that makes no text, or of a rule with media paths.
    ``each_step``: a step index (0: none) where some paths have 0, whose array is read element by element: a payload
    with several elements there makes the event each of them makes as the one element (read as a payload of one
    element is, every check included; the events in order), and is taken only when every one of them is (never one
    whose elements are tool call fragments); its shape is learned with up to 4 elements there.
    """

    cdef _Spec spec
    cdef bint c_learns  # a copy made by fresh(): learns shapes
    # per case, the shapes of the last payloads taken (NULL: none yet); the last bucket, BY_TYPE, holds those of
    # payloads whose case their type named (by_type)
    cdef sw_json_shape* shapes[MAX_CASES + 1][2]
    cdef unsigned char next_shape[MAX_CASES + 1]  # per bucket, the one to learn into next

    def __init__(self, paths, cases, int type_path, int tag_path=-1, int seq_path=-1, nulls=(), absent=(),
                 int key_path=-1, notes=(), not_true=(), bint by_type=False, zeros=(), media=(), int each_step=0):
        if self.spec is not None:
            raise TypeError("a DeltaRule is built once")
        self.spec = _compile(paths, cases, type_path, tag_path, seq_path, nulls, absent, key_path, notes, not_true,
                             by_type, zeros, media, each_step)
        self.spec.args = (paths, cases, type_path, tag_path, seq_path, nulls, absent, key_path, notes, not_true,
                          by_type, zeros, media, each_step)

    def fresh(self):
        """A copy of this rule for one stream: the same compiled rule (shared, not copied), nothing learned yet,
        and it learns."""
        cdef DeltaRule copy = DeltaRule.__new__(DeltaRule)
        copy.spec = self.spec
        copy.c_learns = True
        return copy

    def __copy__(self):
        """A rule that only reads is shared; a copy of one that learns is :meth:`fresh` (what it learned is a
        cache: the copy relearns it)."""
        return self.fresh() if self.c_learns else self

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        return _rebuilt, (self.spec.args, self.c_learns)

    @property
    def learns(self):
        """Whether the rule learns payload shapes (a copy made by :meth:`fresh`)."""
        return self.c_learns

    @property
    def learned(self):
        """How many payload shapes the rule holds now (0 for a rule that does not learn)."""
        cdef int i, j, n = 0
        for i in range(MAX_CASES + 1):
            for j in range(2):
                if self.shapes[i][j] is not NULL and self.shapes[i][j].len > 0:
                    n += 1
        return n

    def __dealloc__(self):
        cdef int i
        for i in range(MAX_CASES + 1):
            PyMem_Free(self.shapes[i][0])
            PyMem_Free(self.shapes[i][1])


def _rebuilt(tuple args, bint learns):
    """A pickled :class:`DeltaRule` built again (nothing learned)."""
    rule = DeltaRule(*args)
    return rule.fresh() if learns else rule


cdef _set_tag(Tag* found, at, tag, Py_ssize_t n_paths, list keep):
    """One condition of a variant: the value at path ``at`` matches ``tag`` (see :class:`DeltaRule`)."""
    if type(at) is not int or not 0 <= at < n_paths:
        raise ValueError(f"path index {at!r} out of range")
    if not (tag is None or tag is True or tag is dict or tag is type(None) or type(tag) is str):
        raise ValueError(f"a variant's tag is a string, True, dict, type(None) or None, not {tag!r}")
    found.path, found.tag, found.text, found.len = at, TAG_ANY, NULL, 0
    if tag is True:
        found.tag = TAG_TRUE
    elif tag is dict:
        found.tag = TAG_OBJECT
    elif tag is type(None):
        found.tag = TAG_NONE
    elif tag is not None:
        text = tag.encode("utf-8")
        keep.append(text)
        found.tag, found.text, found.len = TAG_STRING, text, len(text)


cdef inline bint _holds(const Variant* variant, const sw_json_val* vals):
    """Whether every condition of ``variant`` holds for the located values."""
    cdef int i
    cdef const Tag* tag
    cdef const sw_json_val* v
    for i in range(variant.n_tags):
        tag = &variant.tags[i]
        v = &vals[tag.path]
        if not (tag.tag == TAG_ANY
                or (tag.tag == TAG_TRUE and v.kind == SW_J_TRUE)
                or (tag.tag == TAG_STRING and _is(v, tag.text, tag.len))
                or (tag.tag == TAG_OBJECT and v.kind == SW_J_OBJECT)
                or (tag.tag == TAG_NONE and _none(v))):
            return False
    return True


cdef _Spec _compile(paths, cases, int type_path, int tag_path, int seq_path, nulls, absent, int key_path, notes,
                    not_true, bint by_type, zeros, media, int each_step):
    """A :class:`DeltaRule`'s arguments checked and compiled (ValueError naming the limit for any out of it)."""
    cdef _Spec spec = _Spec.__new__(_Spec)
    cdef list keys = [], keep = [], kinds = []
    cdef int i, j, k
    cdef Case* case
    cdef Variant* variant
    if not 0 < len(paths) <= SW_JSON_MAX_PATHS:
        raise ValueError(f"a DeltaRule reads 1 to {SW_JSON_MAX_PATHS} paths, not {len(paths)}")
    for path in paths:
        if not 1 <= len(path) <= SW_JSON_MAX_STEPS or any(
            not (type(step) is str or (type(step) is int and step == 0)) for step in path
        ):
            raise ValueError(f"a path is 1 to {SW_JSON_MAX_STEPS} keys or 0 (the only element), not {path!r}")
        keys.append(tuple(None if type(step) is int else step.encode("utf-8") for step in path))
    note_kinds = {"string": SW_J_STRING, "int": SW_J_INT, "object": SW_J_OBJECT}
    if any(len(note) != 2 or note[1] not in note_kinds for note in notes):
        raise ValueError("a note is (path index, 'string' | 'int' | 'object')")
    note_paths = [note[0] for note in notes]
    for index in (type_path, tag_path, seq_path, key_path, *nulls, *absent, *note_paths, *not_true, *zeros, *media):
        if not -1 <= index < len(paths):
            raise ValueError(f"path index {index} out of range")
    if (len(nulls) > SW_JSON_MAX_PATHS or len(absent) > SW_JSON_MAX_PATHS or len(not_true) > SW_JSON_MAX_PATHS
            or len(zeros) > SW_JSON_MAX_PATHS or len(media) > SW_JSON_MAX_PATHS
            or -1 in (*nulls, *absent, *note_paths, *not_true, *zeros, *media)):
        raise ValueError("nulls, absent, not_true, zeros, media and notes name paths of the rule")
    if len(notes) > MAX_NOTES:
        raise ValueError(f"a DeltaRule has at most {MAX_NOTES} notes")
    if len(cases) > MAX_CASES:
        raise ValueError(f"a DeltaRule has at most {MAX_CASES} cases")
    if by_type and type_path < 0:
        raise ValueError("cases named by the payload's type need a type path")
    if each_step and not any(len(path) > each_step > 0 and path[each_step] == 0 for path in paths):
        raise ValueError(f"each_step {each_step} is the step of an array (0) of some path, or 0 for none")
    keep.append(tuple(keys))
    spec.c_paths.n = len(keys)
    for i in range(len(keys)):
        spec.c_paths.steps[i] = len(keys[i])
        for j in range(len(keys[i])):
            step = keys[i][j]
            if step is None:
                spec.c_paths.key[i][j] = NULL
                spec.c_paths.len[i][j] = SW_JSON_ONLY
            else:
                spec.c_paths.key[i][j] = step
                spec.c_paths.len[i][j] = len(step)
    spec.c_paths.each_depth = each_step
    sw_json_prepare(&spec.c_paths)
    spec.case_at = {}
    for i, (name, (expected, variants)) in enumerate(cases.items()):
        case = &spec.c_cases[i]
        spec.case_at[name] = i
        if expected is not None and type_path < 0:
            raise ValueError("a type to match needs a type path")
        if len(variants) > MAX_VARIANTS:
            raise ValueError(f"a case has at most {MAX_VARIANTS} variants")
        case.expected, case.expected_len = NULL, 0
        if expected is not None:
            text = expected.encode("utf-8")
            keep.append(text)
            case.expected, case.expected_len = text, len(text)
        case.n = len(variants)
        for j, described in enumerate(variants):
            if not 2 <= len(described) <= 3:
                raise ValueError("a variant is (tag, candidates) or (tag, candidates, the one kind it makes)")
            tag, candidates = described[0], described[1]
            only = described[2] if len(described) == 3 else None
            variant = &case.variants[j]
            if type(tag) is tuple:  # conditions on paths of the variant's own
                if len(tag) > MAX_TAGS or any(type(cond) is not tuple or len(cond) != 2 for cond in tag):
                    raise ValueError(f"a variant's conditions are at most {MAX_TAGS} (path index, tag) pairs")
                conditions = tag
            else:  # a tag on tag_path (any tag's spelling is checked, with or without that path)
                _set_tag(&variant.tags[0], 0, tag, len(paths), keep)
                conditions = ((tag_path, tag),) if tag_path >= 0 and tag is not None else ()
            if len(candidates) > MAX_CANDIDATES:
                raise ValueError(f"a variant has at most {MAX_CANDIDATES} candidates")
            if only is not None and only not in [kind for _, kind in candidates]:
                raise ValueError(f"the one kind a variant makes is one of its candidates', not {only!r}")
            variant.n_tags = len(conditions)
            for k, (at, tag) in enumerate(conditions):
                _set_tag(&variant.tags[k], at, tag, len(paths), keep)
            variant.n = len(candidates)
            for k, (text_path, kind) in enumerate(candidates):
                if not 0 <= text_path < len(paths):
                    raise ValueError(f"text path index {text_path} out of range")
                if kind == _TOOL_DELTA and key_path < 0:
                    raise ValueError("a tool_call_delta candidate needs a key path")
                if kind not in kinds:
                    kinds.append(kind)
                variant.candidates[k].path = text_path
                variant.candidates[k].kind = kinds.index(kind)
            variant.only = -1 if only is None else kinds.index(only)
    spec.tool_kind = kinds.index(_TOOL_DELTA) if _TOOL_DELTA in kinds else -1
    spec.text_kind = kinds.index(_TEXT) if _TEXT in kinds else -1
    spec.reasoning_kind = kinds.index(_REASONING) if _REASONING in kinds else -1
    kinds.append("raw")
    spec.kinds = tuple(kinds)
    spec.keep = tuple(keep)
    spec.type_path, spec.tag_path, spec.seq_path, spec.key_path = type_path, tag_path, seq_path, key_path
    spec.n_nulls, spec.n_absent = len(nulls), len(absent)
    for i in range(spec.n_nulls):
        spec.c_nulls[i] = nulls[i]
        spec.c_paths.veto_value |= 1u << spec.c_nulls[i]  # (a payload ruled out by one: the walk stops there)
    for i in range(spec.n_absent):
        spec.c_absent[i] = absent[i]
        spec.c_paths.veto_present |= 1u << spec.c_absent[i]
    spec.n_not_true = len(not_true)
    for i in range(spec.n_not_true):
        spec.c_not_true[i] = not_true[i]
    spec.n_zeros = len(zeros)
    for i in range(spec.n_zeros):
        spec.c_zeros[i] = zeros[i]
    spec.n_media = len(media)
    for i in range(spec.n_media):
        spec.c_media[i] = media[i]
    spec.n_cases = len(cases)
    spec.by_type = by_type
    spec.n_notes = len(notes)
    for i in range(spec.n_notes):
        spec.c_notes[i] = notes[i][0]
        spec.c_note_kinds[i] = note_kinds[notes[i][1]]
    return spec


cdef inline bint _is(const sw_json_val* v, const char* want, Py_ssize_t n):
    """The located value is the string ``want`` (spelled without escapes)."""
    return v.kind == SW_J_STRING and not v.escaped and v.len == n and memcmp(v.start, want, n) == 0


cdef inline bint _zero(const sw_json_val* v):
    """The located integer is 0 (spelled ``0`` or ``-0``)."""
    return (v.len == 1 and v.start[0] == b'0') or (v.len == 2 and v.start[0] == b'-' and v.start[1] == b'0')


cdef inline bint _none(const sw_json_val* v):
    return v.kind == SW_J_ABSENT or v.kind == SW_J_NULL


cdef object _NOT_TAKEN = object()
cdef object _SUNK = object()
# Deltas are small; a larger payload goes to the full decode, so reading one never adds a UTF-8 copy of a large
# payload to the memory an event costs (a large ASCII one of an event that makes no text is read in place).
cdef Py_ssize_t _MAX_CHARS = MAX_CHARS


cdef inline long long _small_int(const char* p, Py_ssize_t n) noexcept:
    """A validated JSON integer of at most 18 characters."""
    cdef long long value = 0
    cdef Py_ssize_t i = 1 if p[0] == b'-' else 0
    cdef bint negative = i == 1
    while i < n:
        value = value * 10 + (p[i] - 48)
        i += 1
    return -value if negative else value


cdef object _integer(const sw_json_val* v):
    """A located JSON integer as a Python int."""
    cdef char digits[32]
    if v.len <= 18:  # fits a long long
        return _small_int(v.start, v.len)
    if v.len >= 32:
        return None
    memcpy(digits, v.start, v.len)
    digits[v.len] = 0
    return PyLong_FromString(digits, NULL, 10)


cdef void _learn(DeltaRule rule, int at, const char* text, Py_ssize_t size, int n_paths,
                 const sw_json_val* vals, const sw_json_val* each_vals, int count) noexcept:
    """Learn the shape of a payload of bucket ``at`` (its case, or BY_TYPE) taken after no shape matched it, in place
    of the older of the bucket's two; the shape grows to the payload's size (in steps of 256, at most
    SW_JSON_SHAPE_MAX: a longer payload is never learned)."""
    cdef int which = rule.next_shape[at]
    cdef sw_json_shape* shape = rule.shapes[at][which]
    cdef sw_json_shape* grown
    cdef Py_ssize_t room = size if size < SW_JSON_SHAPE_MAX else SW_JSON_SHAPE_MAX  # what the trimmed text needs
    if shape is NULL or shape.room < room:
        room = (room + 255) & ~(<Py_ssize_t>255)
        if room > SW_JSON_SHAPE_MAX:
            room = SW_JSON_SHAPE_MAX
        grown = <sw_json_shape*>PyMem_Realloc(shape, SW_JSON_SHAPE_SIZE(room))
        if grown is NULL:
            return  # no memory for a shape: payloads are located the full way (the old shape stays)
        rule.shapes[at][which] = shape = grown
        shape.room = room
        shape.len = 0
    if sw_json_learn(shape, text, size, n_paths, vals, each_vals, count, rule.spec.c_paths.through_each):
        rule.next_shape[at] ^= 1


cdef inline bint _spells(object text, const sw_json_val* v, bint ascii):
    """``text`` is the str the located string spells (checked for an ASCII payload's strings without escapes)."""
    return (ascii and not v.escaped and type(text) is str and PyUnicode_IS_COMPACT_ASCII(text)
            and PyUnicode_GET_LENGTH(text) == v.len and memcmp(PyUnicode_DATA(text), v.start, v.len) == 0)


cdef object _note(_Spec spec, int i, const sw_json_val* v, object data, bint ascii, list notes):
    """What note ``i`` of a taken payload reports: None for nothing, _NOT_TAKEN for a string with a lone
    surrogate. A string equal to the one the note decoded last is that str again (no new object)."""
    cdef PyObject* found
    if v.kind != spec.c_note_kinds[i]:
        return None
    if v.kind == SW_J_OBJECT:
        return data
    if v.kind == SW_J_INT:
        return _integer(v)
    last = notes[spec.n_notes + i]
    if _spells(last, v, ascii):
        return last
    found = sw_json_string(v, ascii)
    if found is NULL:
        if PyErr_Occurred() is not NULL:
            raise MemoryError()
        return _NOT_TAKEN
    value = <object>found
    Py_DECREF(value)
    return value


cdef inline bint _makes_no_text(const Case* case) noexcept:
    """Every variant of ``case`` makes a ``raw`` event (reads no text): an event that changes only the cursor."""
    cdef int i
    for i in range(case.n):
        if case.variants[i].n:
            return False
    return True


cdef int _case_of(_Spec spec, const sw_json_val* kind) noexcept:
    """The case whose type the located value is (a string spelled without escapes), or -1."""
    cdef int i
    cdef Case* case
    for i in range(spec.n_cases):
        case = &spec.c_cases[i]
        if case.expected is not NULL and _is(kind, case.expected, case.expected_len):
            return i
    return -1


cdef object _made(_Spec spec, int kind, object delta, object seq, object call, object data, object lazy,
                  TextSink sink):
    """The event of a taken payload (or of one element of it), its ``raw`` ``lazy`` (None: made of ``data``), or
    _SUNK when ``sink`` took its text."""
    cdef PyObject* found
    if sink is not None:
        if seq is not None:
            sink.sequence = seq
        if kind == spec.text_kind or kind == spec.reasoning_kind:
            (sink.texts if kind == spec.text_kind else sink.reasonings).append(delta)
            sink.taken += 1
            return _SUNK
        if call is not None and sink.fragments:
            found = PyDict_GetItemWithError(sink.fragments, <object>sw_slots_get(&_call, call, 0))
            if found is not NULL and type(<object>found) is list:
                (<list><object>found).append(delta)
                sink.taken += 1
                return _SUNK
    return _new_event(spec.kinds[kind], _new_lazy(data) if lazy is None else lazy, delta, seq, call)


cdef enum:
    SMALL_UTF8 = 8192  # the UTF-8 of a non-ASCII payload up to this many bytes is written on the stack


cdef bint _take(DeltaRule rule, object name, object data, object calls, object notes, TextSink sink,
                list out) except -1:
    """Whether the payload is taken: its event (the event of each element, for a payload of several at the
    rule's ``each_step``) appended to ``out``, or its text put in ``sink``. A non-ASCII payload is read in its UTF-8,
    written here (``sw_json_utf8_of``: several times faster than the str's own UTF-8, which the str would also keep,
    as large again, for as long as it lives)."""
    cdef Py_ssize_t size, room, n
    cdef char small[SMALL_UTF8]
    cdef char* heap = NULL
    cdef char* buffer
    cdef Case* case
    cdef PyObject* found
    cdef bint ascii
    cdef _Spec spec = rule.spec
    cdef int at, bucket, kind
    found = PyDict_GetItem(spec.case_at, name)  # borrowed; never raises for str and None
    if (found is NULL and not spec.by_type) or type(data) is not str:
        return False
    ascii = PyUnicode_IS_COMPACT_ASCII(data)
    if found is not NULL:
        at = bucket = PyLong_AsLong(<object>found)
        case = &spec.c_cases[at]
    else:  # the case is the one the payload's type names (below)
        at, bucket, case = -1, BY_TYPE, NULL
    n = PyUnicode_GET_LENGTH(data)
    # a large payload: only an ASCII one (read in place) of a case that makes no text, or of a rule with media
    # (the bulk of such a payload is never built)
    if n > _MAX_CHARS and (not ascii or case is NULL or not (spec.n_media or _makes_no_text(case))):
        return False
    if ascii:  # the usual payload: its characters are its UTF-8
        return _read(rule, case, at, bucket, <const char*>PyUnicode_DATA(data), n, data, True, calls, notes, sink, out)
    kind = PyUnicode_KIND(data)
    room = sw_json_utf8_room(kind, n)
    if room > SMALL_UTF8:
        heap = <char*>PyMem_Malloc(room)
        if heap is NULL:
            raise MemoryError()
    buffer = <char*>small if heap is NULL else heap
    try:
        size = sw_json_utf8_of(kind, PyUnicode_DATA(data), n, buffer)
        if size < 0:  # lone surrogates: the full decode keeps them
            return False
        return _read(rule, case, at, bucket, buffer, size, data, False, calls, notes, sink, out)
    finally:
        PyMem_Free(heap)


cdef bint _read(DeltaRule rule, Case* case, int at, int bucket, const char* text, Py_ssize_t size, object data,
                bint ascii, object calls, object notes, TextSink sink, list out) except -1:
    """:func:`_take` of a payload whose UTF-8 is ``text[:size]`` (its case None where its type names it)."""
    cdef sw_json_val vals[SW_JSON_MAX_PATHS]
    cdef sw_json_val each_vals[(SW_JSON_MAX_EACH - 1) * SW_JSON_MAX_PATHS]  # (elements 1 ... at each_step)
    cdef const sw_json_val* v
    cdef const sw_json_val* chosen_text
    cdef unsigned bits
    cdef bint matched = False
    cdef const Variant* variant
    cdef PyObject* found
    cdef PyObject* parts = NULL
    cdef int i, j, n_noted, kind
    cdef int count = 0, element = 0
    cdef bint media
    cdef PyObject* noted[MAX_NOTES]
    cdef _Spec spec = rule.spec
    cdef list each = None  # the delta and sequence of each element read so far, for a payload of several
    cdef int each_kinds[SW_JSON_MAX_EACH]
    for i in range(2):
        if (rule.shapes[bucket][i] is not NULL
                and sw_json_match(rule.shapes[bucket][i], text, size, spec.c_paths.n, vals, each_vals, &count)):
            matched = True
            break
    if not matched and (not sw_json_locate_each(text, size, &spec.c_paths, vals, each_vals, &count)
                        or count > SW_JSON_MAX_EACH):
        return False
    if case is NULL:
        at = _case_of(spec, &vals[spec.type_path])
        if at < 0:
            return False
        case = &spec.c_cases[at]
    while True:  # each element at each_step in turn, read as the one element (one pass for any other payload)
        if spec.type_path >= 0:
            if case.expected is NULL:
                if not _none(&vals[spec.type_path]):
                    return False
            elif not _is(&vals[spec.type_path], case.expected, case.expected_len):
                return False
        for i in range(spec.n_nulls):
            if not _none(&vals[spec.c_nulls[i]]):
                return False
        for i in range(spec.n_absent):
            if vals[spec.c_absent[i]].kind != SW_J_ABSENT:
                return False
        for i in range(spec.n_not_true):
            if vals[spec.c_not_true[i]].kind == SW_J_TRUE:
                return False
        for i in range(spec.n_zeros):
            v = &vals[spec.c_zeros[i]]
            if v.kind == SW_J_INT and not _zero(v):
                return False
        variant = NULL
        for i in range(case.n):
            variant = &case.variants[i]
            if _holds(variant, vals):
                break
            variant = NULL
        if variant is NULL:
            return False
        kind = -1
        chosen_text = NULL
        for i in range(variant.n):
            v = &vals[variant.candidates[i].path]
            if v.kind == SW_J_STRING:
                if v.len == 0:
                    continue
                if kind < 0:
                    kind = variant.candidates[i].kind
                    chosen_text = v
                elif kind != variant.candidates[i].kind:
                    return False  # two kinds of text in one payload: the full decode makes both events
            elif not _none(v):
                return False
        if variant.only >= 0 and kind != variant.only:
            return False
        media = False
        if kind < 0:  # no text: a media payload (an image, audio) is a raw event
            for i in range(spec.n_media):
                if vals[spec.c_media[i]].kind == SW_J_OBJECT:
                    media = True
                    break
        seq = None
        if spec.seq_path >= 0:
            v = &vals[spec.seq_path]
            if v.kind == SW_J_INT:
                seq = _integer(v)
                if seq is None:
                    return False
            elif not _none(v):
                return False
        if not matched and rule.c_learns and element == 0:  # read the next payloads of this case by their shape
            _learn(rule, bucket, text, size, spec.c_paths.n, vals, each_vals, count)
        call = None
        if variant.n == 0 or media:  # an event that is only ever raw, or media
            kind = len(spec.kinds) - 1
            delta = ""
        elif kind < 0:
            return False
        else:
            if kind == spec.tool_kind:
                v = &vals[spec.key_path]
                if count > 1 or calls is None or not (
                    (v.kind == SW_J_STRING and not v.escaped and v.len > 0) or v.kind == SW_J_INT
                ):
                    return False  # (and fragments of several calls in one payload: the full decode)
                key = _integer(v) if v.kind == SW_J_INT else PyUnicode_DecodeUTF8(v.start, v.len, NULL)
                if key is None:
                    return False
                found = PyDict_GetItemWithError(<dict>calls, key)
                if found is NULL or not sw_slots_is(&_call, <object>found):
                    return False
                call = <object>found
                parts = sw_slots_get(&_call, call, 3)
                if parts is NULL or type(<object>parts) is not list:
                    return False
            found = sw_json_string(chosen_text, ascii)
            if found is NULL:
                if PyErr_Occurred() is not NULL:
                    raise MemoryError()
                return False  # a lone surrogate
            delta = <object>found
            Py_DECREF(delta)
        if count <= 1:
            break
        if each is None:
            each = []
        each.append(delta)
        each.append(seq)
        each_kinds[element] = kind
        element += 1
        if element == count:
            break
        bits = spec.c_paths.through_each  # the next element's values in place of this one's
        while bits:
            i = sw_json_low(bits)
            vals[i] = each_vals[(element - 1) * SW_JSON_MAX_PATHS + i]
            bits &= bits - 1
    n_noted = spec.n_notes if notes is not None else 0
    for i in range(n_noted):  # every note read before anything changes: one may refuse the payload
        value = _note(spec, i, &vals[spec.c_notes[i]], data, ascii, notes)
        if value is _NOT_TAKEN:
            for j in range(i):
                Py_DECREF(<object>noted[j])
            return False
        Py_INCREF(value)
        noted[i] = <PyObject*>value
    # taken: nothing below can fail
    if call is not None:
        (<list><object>parts).append(delta)
    for i in range(n_noted):
        if noted[i] != <PyObject*>None:
            notes[i] = <object>noted[i]
            if spec.c_note_kinds[i] == SW_J_STRING:
                notes[spec.n_notes + i] = <object>noted[i]
        Py_DECREF(<object>noted[i])
    if each is None:
        made = _made(spec, kind, delta, seq, call, data, None, sink)
        if made is not _SUNK:
            out.append(made)
        return True
    lazy = _new_lazy(data)  # (the events of one payload share its one decode, as the full decode's share its dict)
    for i in range(count):
        made = _made(spec, each_kinds[i], each[2 * i], each[2 * i + 1], None, data, lazy, sink)
        if made is not _SUNK:
            out.append(made)
    return True


def take_deltas(list events, Py_ssize_t start, DeltaRule rule not None, list out, dict calls=None, list notes=None,
                TextSink sink=None):
    """Append the delta events of ``events[start:]`` to ``out`` until the first event that is not one; return
    that event's index (``len(events)`` when every event was taken, ``start`` when ``use_types`` has not
    succeeded). ``calls``: the open tool calls by key, for rules that read argument deltas; ``notes``: two items per
    note of the rule: first the value each note reported last (set by each payload taken that reports it; the
    caller clears it once read), then, for string notes, the str decoded last (kept: a payload that spells the same
    string reports that str again); ``sink``: where the text of text and reasoning deltas
    goes instead of their events (see :class:`TextSink`)."""
    if notes is not None and len(notes) != 2 * rule.spec.n_notes:
        raise ValueError(f"two items per note of the rule ({2 * rule.spec.n_notes}), not {len(notes)}")
    cdef Py_ssize_t i = start, n = len(events)
    cdef PyObject* name
    cdef PyObject* data
    cdef bint taken
    if _types is None:
        return start
    while i < n:
        event = events[i]
        name = sw_slots_get(&_event, event, 0) if sw_slots_is(&_event, event) else NULL
        data = sw_slots_get(&_event, event, 1) if name is not NULL else NULL
        if data is not NULL:  # the compiled scanners' event: its fields read directly
            taken = _take(rule, <object>name, <object>data, calls, notes, sink, out)
        elif getattr(event, "utf8", None) is not None:  # a large event held as UTF-8: no delta (its text unbuilt)
            break
        else:
            taken = _take(rule, event.event, event.data, calls, notes, sink, out)
        if not taken:
            break
        i += 1
    return i


# -- one member's compact text -------------------------------------------------------------------------------------

cdef class MemberPath:
    """A path to one member of a payload object, for :func:`compact_member` and :func:`without_member` (steps as a
    ``DeltaRule`` path); ``string``: the member :func:`without_member` writes as ``null`` is a string (else an object
    or an array)."""

    cdef sw_json_paths c_paths
    cdef tuple keys
    cdef readonly bint string

    def __init__(self, path, string=False):
        self.string = bool(string)
        if not 1 <= len(path) <= SW_JSON_MAX_STEPS or any(
            not (type(step) is str or (type(step) is int and step == 0)) for step in path
        ):
            raise ValueError(f"a path is 1 to {SW_JSON_MAX_STEPS} keys or 0 (the only element), not {path!r}")
        self.keys = tuple(None if type(step) is int else step.encode("utf-8") for step in path)
        self.c_paths.n = 1
        self.c_paths.steps[0] = len(self.keys)
        for j in range(len(self.keys)):
            step = self.keys[j]
            if step is None:
                self.c_paths.key[0][j] = NULL
                self.c_paths.len[0][j] = SW_JSON_ONLY
            else:
                self.c_paths.key[0][j] = step
                self.c_paths.len[0][j] = len(step)
        sw_json_prepare(&self.c_paths)


def without_member(data, MemberPath path):
    """The JSON text ``data`` (UTF-8 bytes, or an ASCII str: read in place) as UTF-8 with the member at ``path`` (an
    object or an array; a string where the path says ``string``) written as ``null``: what a payload decodes to
    without a member that costs the most and is not read. None when the payload is not strict JSON or the member is
    not there as such a value (see ``sw_json_locate``), and for a str with a character past ASCII; with a key
    repeated, the member the full decode keeps (the last) is the one written as ``null``."""
    cdef sw_json_val val
    cdef const char* text
    cdef Py_ssize_t size, start, length
    cdef char* p
    if type(data) is bytes:
        text, size = PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data)
    elif type(data) is str and PyUnicode_IS_COMPACT_ASCII(data):
        text, size = <const char*>PyUnicode_DATA(data), PyUnicode_GET_LENGTH(data)
    else:
        return None
    if not sw_json_locate(text, size, &path.c_paths, &val):
        return None
    if path.string:
        if val.kind != SW_J_STRING or val.start == NULL:
            return None
        start, length = val.start - text - 1, val.len + 2  # (the value's text within its quotes: the quotes too)
    elif val.kind == SW_J_OBJECT or (val.kind == SW_J_OTHER and val.start != NULL and val.start[0] == b'['):
        start, length = val.start - text, val.len
    else:
        return None
    out = PyBytes_FromStringAndSize(NULL, size - length + 4)
    p = PyBytes_AS_STRING(out)
    memcpy(p, text, <size_t>start)
    memcpy(p + start, b"null", 4)
    memcpy(p + start + 4, text + start + length, <size_t>(size - start - length))
    return out


def compact_member(str data, MemberPath path):
    """``json.dumps(member, ensure_ascii=False, separators=(",", ":"))`` of the member of the JSON object ``data``
    at ``path`` (an object or an array), written from the payload text without decoding it; None when the payload
    is not strict JSON, the member is not there or is another kind of value, or its text cannot be promised (see
    ``sw_json_compact`` in ``_c/sw_json.h``: a repeated key, a key with an escape ...)."""
    cdef sw_json_val val
    cdef Py_ssize_t size, n
    cdef const char* text
    cdef char* buffer
    if len(data) > _MAX_CHARS:
        return None
    if PyUnicode_IS_COMPACT_ASCII(data):
        text = <const char*>PyUnicode_DATA(data)
        size = PyUnicode_GET_LENGTH(data)
    else:
        try:
            text = PyUnicode_AsUTF8AndSize(data, &size)
        except UnicodeEncodeError:
            return None
    if not sw_json_locate(text, size, &path.c_paths, &val):
        return None
    if not (val.kind == SW_J_OBJECT or (val.kind == SW_J_OTHER and val.start != NULL and val.start[0] == b'[')):
        return None
    buffer = <char*>PyMem_Malloc(SW_JSON_COMPACT_ROOM(val.len))
    if buffer is NULL:
        raise MemoryError()
    try:
        n = sw_json_compact(val.start, val.len, buffer)
        if n < 0:
            return None
        return PyUnicode_DecodeUTF8(buffer, n, NULL)
    finally:
        PyMem_Free(buffer)


# -- the accumulator's hot path -----------------------------------------------------------------------------------


cdef inline bint _kind_is(PyObject* kind, str want):
    return kind == <PyObject*>want or (type(<object>kind) is str and <str><object>kind == want)


def take_texts(list events, Py_ssize_t start, list texts, list reasonings):
    """``Accumulator``'s hot path: append the ``text`` of each ``text_delta`` (to ``texts``) and
    ``reasoning_delta`` (to ``reasonings``) without a signature, from ``events[start]`` on, until the first other
    event. Returns ``(index of that event, the last non-None sequence among them or None)``."""
    cdef Py_ssize_t i = start, n = len(events)
    cdef PyObject* kind
    cdef PyObject* sequence = NULL
    cdef PyObject* value
    if _types is None:
        return start, None
    while i < n:
        event = events[i]
        if not sw_slots_is(&_unified, event):
            break
        if sw_slots_get(&_unified, event, _signature_at) != <PyObject*>None:
            break
        kind = sw_slots_get(&_unified, event, _type_at)
        if kind is NULL:
            break
        if _kind_is(kind, _TEXT):
            target = texts
        elif _kind_is(kind, _REASONING):
            target = reasonings
        else:
            break
        value = sw_slots_get(&_unified, event, _text_at)
        if value is NULL:
            break
        target.append(<object>value)
        value = sw_slots_get(&_unified, event, _sequence_at)
        if value is not NULL and value != <PyObject*>None:
            sequence = value
        i += 1
    return i, (None if sequence is NULL else <object>sequence)


# -- the encoders' hot path: a run of deltas written as one text ----------------------------------------------------

cdef extern from "Python.h":
    int PyUnicode_KIND(object s)
    unsigned int PyUnicode_READ(int kind, void* data, Py_ssize_t i)
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)

cdef extern from "stdio.h":
    int snprintf(char* s, size_t n, const char* fmt, ...)


cdef struct _Out:
    char* p
    Py_ssize_t len
    Py_ssize_t cap


cdef int _room(_Out* out, Py_ssize_t more) except -1:
    """At least ``more`` bytes free at the end of ``out``."""
    cdef Py_ssize_t cap = out.cap
    cdef char* grown
    if out.len + more <= cap:
        return 0
    while cap < out.len + more:
        cap = cap * 2 if cap else 256
    grown = <char*>PyMem_Realloc(out.p, <size_t>cap)
    if grown is NULL:
        raise MemoryError()
    out.p, out.cap = grown, cap
    return 0


cdef int _put(_Out* out, const char* s, Py_ssize_t n) except -1:
    _room(out, n)
    memcpy(out.p + out.len, s, <size_t>n)
    out.len += n
    return 0


cdef const char* _HEX = b"0123456789abcdef"
cdef const char* _SHORT_ESCAPES = b"........btn.fr"  # by code point: \b (8), \t (9), \n (10), \f (12), \r (13)


cdef int _put_quoted(_Out* out, str text) except -1:
    """``text`` as a JSON string literal in UTF-8: what ``json.encoder.encode_basestring`` writes (quote, backslash
    and control characters escaped, ``\\u00XX`` in lower case; everything else as it is), then encoded as an
    encoder's text is (``utf8()``: ``backslashreplace``, a lone surrogate as its escape ``\\udXXX``)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    cdef unsigned int c
    cdef char* w
    _room(out, 6 * n + 2)  # (the most one character takes: \u00XX; a 4-byte UTF-8 character is 1 of them)
    w = out.p + out.len
    w[0] = 34  # "
    w += 1
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c < 0x80:
            if c >= 0x20 and c != 34 and c != 92:
                w[0] = <char>c
                w += 1
            elif c == 34 or c == 92:
                w[0] = 92
                w[1] = <char>c
                w += 2
            elif c == 8 or c == 12 or c == 10 or c == 13 or c == 9:
                w[0] = 92
                w[1] = _SHORT_ESCAPES[c]  # b, t, n, f or r
                w += 2
            else:
                w[0], w[1], w[2], w[3] = 92, 117, 48, 48  # \u00
                w[4] = _HEX[c >> 4]
                w[5] = _HEX[c & 15]
                w += 6
        elif c < 0x800:
            w[0] = <char>(0xC0 | (c >> 6))
            w[1] = <char>(0x80 | (c & 0x3F))
            w += 2
        elif 0xD800 <= c < 0xE000:  # a lone surrogate (UTF-8 cannot hold one): its escape, as backslashreplace
            w[0], w[1], w[2], w[3] = 92, 117, 100, _HEX[(c >> 8) & 15]  # \ud and the 2nd hex digit
            w[4] = _HEX[(c >> 4) & 15]
            w[5] = _HEX[c & 15]
            w += 6
        elif c < 0x10000:
            w[0] = <char>(0xE0 | (c >> 12))
            w[1] = <char>(0x80 | ((c >> 6) & 0x3F))
            w[2] = <char>(0x80 | (c & 0x3F))
            w += 3
        else:
            w[0] = <char>(0xF0 | (c >> 18))
            w[1] = <char>(0x80 | ((c >> 12) & 0x3F))
            w[2] = <char>(0x80 | ((c >> 6) & 0x3F))
            w[3] = <char>(0x80 | (c & 0x3F))
            w += 4
    w[0] = 34
    w += 1
    out.len = w - out.p
    return 0


def write_texts(list events, Py_ssize_t start, str kind, str head, str tail, parts, object seq, str seq_end):
    """An encoder's hot path: the text a target writes for the run of ``kind`` deltas (``text_delta`` or
    ``reasoning_delta``) with neither signature nor citations from ``events[start]`` on, each one
    ``head + quoted text + tail`` (then, where ``seq`` is an int, ``str(seq) + seq_end``, ``seq`` counting up), a
    delta with no text writing nothing; each text is quoted as ``json.encoder.encode_basestring`` quotes it. Unless
    ``parts`` is None, the run's texts quoted, without the quotes, as UTF-8 (the bytes between the quotes of the
    run's whole text quoted) are appended to it, one bytes object for the run. Returns ``(the text as UTF-8, index
    of the first other event, the deltas written)``: the bytes ``utf8()`` makes of the text (a lone surrogate in a
    delta as its escape ``\\udXXX``); ``(b"", start, 0)`` where ``head``, ``tail`` or ``seq_end`` hold a lone
    surrogate."""
    cdef Py_ssize_t i = start, n = len(events), written = 0, number = 0, h, t, e, digits, mark
    cdef const char* hp
    cdef const char* tp
    cdef const char* ep
    cdef PyObject* value
    cdef bint counted = seq is not None
    cdef char number_text[24]
    cdef _Out out
    cdef _Out inner  # (the run's texts quoted, without their quotes: for ``parts``)
    cdef bint keep = parts is not None
    if _types is None:
        return b"", start, 0
    try:
        hp = PyUnicode_AsUTF8AndSize(head, &h)
        tp = PyUnicode_AsUTF8AndSize(tail, &t)
        ep = PyUnicode_AsUTF8AndSize(seq_end, &e)
    except UnicodeEncodeError:  # (a made-up id or model with a lone surrogate: the caller writes each delta)
        return b"", start, 0
    if counted:
        number = seq
    out.p, out.len, out.cap = NULL, 0, 0
    inner.p, inner.len, inner.cap = NULL, 0, 0
    try:
        while i < n:
            event = events[i]
            if not sw_slots_is(&_unified, event):
                break
            if (sw_slots_get(&_unified, event, _signature_at) != <PyObject*>None
                    or sw_slots_get(&_unified, event, _citations_at) != <PyObject*>None):
                break
            value = sw_slots_get(&_unified, event, _type_at)
            if value is NULL or not _kind_is(value, kind):
                break
            value = sw_slots_get(&_unified, event, _text_at)
            if value is NULL or type(<object>value) is not str:
                break
            i += 1
            text = <str><object>value
            if not text:
                continue
            _put(&out, hp, h)
            mark = out.len
            _put_quoted(&out, text)
            if keep:
                _put(&inner, out.p + mark + 1, out.len - mark - 2)
            _put(&out, tp, t)
            if counted:
                digits = snprintf(number_text, sizeof(number_text), "%zd", number + written)
                _put(&out, number_text, digits)
                _put(&out, ep, e)
            written += 1
        if inner.len:
            parts.append(PyBytes_FromStringAndSize(inner.p, inner.len))
        return PyBytes_FromStringAndSize(out.p, out.len) if out.len else b"", i, written
    finally:
        PyMem_Free(out.p)
        PyMem_Free(inner.p)
