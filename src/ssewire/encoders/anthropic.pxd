# AnthropicWriter's state as C fields and its own methods cpdef (the base's cpdef methods it overrides need no
# line here: Cython takes their signatures from base.pxd). Read by the build only.

from ssewire.encoders.base cimport Writer


cdef class AnthropicWriter(Writer):
    cdef public Py_ssize_t _blocks
    cdef public object _open, _starts
    cdef public str _head

    cpdef tuple _begin(self, block)
    cpdef tuple _block_head(self)
    cpdef str _close_open(self)
    cpdef str _open_block(self, kind)
