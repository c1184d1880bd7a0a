# AnthropicWriter's state as C fields and the methods it writes as cpdef (see base.pxd). Read by the build only.

from ssewire.encoders.base cimport Call, Writer


cdef class AnthropicWriter(Writer):
    cdef public Py_ssize_t _blocks
    cdef public object _open, _starts
    cdef public str _head

    cpdef tuple _begin(self, block)
    cpdef tuple _block_head(self)
    cpdef str _close_open(self)
    cpdef str _open_block(self, kind)
    cpdef _init_state(self)
    cpdef str on_start(self)
    cpdef str on_text(self, text)
    cpdef str on_reasoning(self, text)
    cpdef object text_run(self, kind)
    cpdef object open_run(self, kind)
    cpdef str on_citations(self, citations)
    cpdef str on_signature(self, signature)
    cpdef str on_raw(self, event)
    cpdef str on_call_start(self, Call call)
    cpdef str on_call_arguments(self, Call call, text)
    cpdef str on_call_done(self, Call call, event)
    cpdef str on_done(self, stop, native)
