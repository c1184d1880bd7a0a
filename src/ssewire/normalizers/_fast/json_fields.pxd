# The C side of the compiled delta reader (_deltas_c.pyx): strict JSON validation that locates a few members of a
# payload object without building it (pure C, _c/sw_json.h; its strings and compact text as Python objects,
# _c/sw_json_py.h), and objects with __slots__ read and built through their member descriptors (_c/sw_slots_py.h).
# All formatted with clang-format and checked by .ci/run. Every array sized by a limit is sized by the header's
# macro (declared here), never by a literal: raising a macro resizes them all.

from cpython.object cimport PyObject

cdef extern from "_c/sw_json.h":
    enum:
        SW_JSON_MAX_PATHS
        SW_JSON_MAX_STEPS
        SW_JSON_ONLY
        SW_JSON_MAX_EACH
        SW_J_ABSENT
        SW_J_STRING
        SW_J_INT
        SW_J_NULL
        SW_J_TRUE
        SW_J_OBJECT
        SW_J_OTHER
    ctypedef struct sw_json_val:
        int kind
        int escaped
        const char* start
        Py_ssize_t len
    ctypedef struct sw_json_paths:
        int n
        int steps[SW_JSON_MAX_PATHS]
        const char* key[SW_JSON_MAX_PATHS][SW_JSON_MAX_STEPS]
        Py_ssize_t len[SW_JSON_MAX_PATHS][SW_JSON_MAX_STEPS]
        unsigned veto_present
        unsigned veto_value
        int each_depth
        unsigned through_each
    void sw_json_prepare(sw_json_paths* paths) noexcept
    int sw_json_low(unsigned bits) noexcept
    enum:
        SW_JSON_SHAPE_MAX
    ctypedef struct sw_json_shape:
        Py_ssize_t len
        Py_ssize_t room
    size_t SW_JSON_SHAPE_SIZE(Py_ssize_t room)
    int sw_json_learn(sw_json_shape* shape, const char* text, Py_ssize_t n, int n_paths, const sw_json_val* vals,
                      const sw_json_val* each_vals, int count, unsigned through) noexcept
    int sw_json_match(const sw_json_shape* shape, const char* text, Py_ssize_t n, int n_paths, sw_json_val* vals,
                      sw_json_val* each_vals, int* count) noexcept
    Py_ssize_t SW_JSON_COMPACT_ROOM(Py_ssize_t n)
    int sw_json_locate(const char* text, Py_ssize_t n, const sw_json_paths* paths, sw_json_val* vals) noexcept
    Py_ssize_t sw_json_utf8_room(int kind, Py_ssize_t n) noexcept
    Py_ssize_t sw_json_utf8_of(int kind, const void* data, Py_ssize_t n, char* out) noexcept
    int sw_json_locate_each(const char* text, Py_ssize_t n, const sw_json_paths* paths, sw_json_val* vals,
                            sw_json_val* each_vals, int* count) noexcept

cdef extern from "_c/sw_json_py.h":
    Py_ssize_t sw_json_compact(const char* p, Py_ssize_t n, char* out) noexcept
    # a new reference; NULL with no exception set for a string the full decode must read (a lone surrogate)
    PyObject* sw_json_string(const sw_json_val* v, int ascii)

cdef extern from "_c/sw_slots_py.h":
    enum:
        SW_SLOTS_MAX
    ctypedef struct sw_slots:
        Py_ssize_t n
    int sw_slots_init(sw_slots* c, object type, object names) except -1
    PyObject* sw_slots_get(const sw_slots* c, object o, Py_ssize_t i)
    object sw_slots_new(const sw_slots* c, PyObject** values)
    bint sw_slots_is(const sw_slots* c, object o)
