# The C side of the compiled scanners, declared for _scanner_c.pyx: the vector kernels (pure C, _c/sw_kernels.h) and
# the str objects decoded with them (_c/sw_kernels_py.h), the event type's member fields and constructor
# (_c/sw_events_py.h) and the event-stream CRC-32 (pure C, _c/sw_crc32.h). The C is in those headers, formatted with
# clang-format (.clang-format) and checked by .ci/run; this file only says what Cython may call.

from cpython.object cimport PyObject
from libc.stdint cimport uint32_t

cdef extern from "_c/sw_kernels.h":
    int ssewire_select_simd(int allow_avx2)
    int ssewire_utf8_check(const unsigned char* p, Py_ssize_t n) noexcept nogil
    Py_ssize_t ssewire_eol(const char* p, Py_ssize_t pos, Py_ssize_t n, unsigned* maxb, Py_ssize_t* cont) noexcept nogil

    ctypedef struct ssewire_walk:
        Py_ssize_t depth
        int in_str
        int esc
        unsigned max_byte
        Py_ssize_t cont
    Py_ssize_t ssewire_walk64(const unsigned char* p, Py_ssize_t pos, Py_ssize_t n, ssewire_walk* w,
                              int* done) noexcept nogil

cdef extern from "_c/sw_kernels_py.h":
    object ssewire_decode(const char* s, Py_ssize_t n)
    object ssewire_decode_sized(const char* s, Py_ssize_t n, unsigned maxb, Py_ssize_t cont)

cdef extern from "_c/sw_slots_py.h":
    enum: SW_SLOTS_MAX
    ctypedef struct sw_slots:
        Py_ssize_t n
    int sw_slots_init(sw_slots* c, object type, object names) except -1
    int sw_slots_install(sw_slots* c, object type, object sample, object names, object values) except -1
    object sw_slots_new(const sw_slots* c, PyObject** values)

cdef extern from "_c/sw_events_py.h":
    int ssewire_use_member_fields(type t, object sample, tuple names, tuple values) except -1
    object ssewire_event_new(object event, object data, object id, object retry)

cdef extern from "_c/sw_crc32.h":
    void ssewire_crc32_init() noexcept nogil
    int ssewire_crc32_select(int allow_clmul) noexcept nogil
    uint32_t ssewire_crc32(uint32_t crc, const unsigned char* p, size_t n) noexcept nogil
