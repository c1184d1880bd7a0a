# ChatWriter's state as C fields and its own methods cpdef (the base's cpdef methods it overrides need no
# line here: Cython takes their signatures from base.pxd). Read by the build only.

from ssewire.encoders.base cimport Writer


cdef class ChatWriter(Writer):
    cdef public bint include_usage
    cdef public str _reasoning_key, _head
    cdef public object _usage_written, _annotations
