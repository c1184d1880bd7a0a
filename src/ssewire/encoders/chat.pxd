# ChatWriter's state as C fields and the methods it writes as cpdef (see base.pxd). Read by the build only.

from ssewire.encoders.base cimport Call, Writer


cdef class ChatWriter(Writer):
    cdef public bint include_usage
    cdef public str _reasoning_key, _head
    cdef public object _usage_written, _annotations

    cpdef _init_state(self)
    cpdef str on_start(self)
    cpdef str on_text(self, text)
    cpdef str on_reasoning(self, text)
    cpdef object text_run(self, kind)
    cpdef str on_citations(self, citations)
    cpdef str on_call_start(self, Call call)
    cpdef str on_call_arguments(self, Call call, text)
    cpdef str on_call_done(self, Call call, event)
    cpdef str on_done(self, stop, native)
