# GeminiWriter's state as C fields and its own methods cpdef (the base's cpdef methods it overrides need no
# line here: Cython takes their signatures from base.pxd). Read by the build only.

from ssewire.encoders.base cimport Writer


cdef class GeminiWriter(Writer):
    cdef public str _head, _tail
    cdef public object _sources
