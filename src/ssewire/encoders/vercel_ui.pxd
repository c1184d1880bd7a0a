# VercelUIWriter's state as C fields and the methods it writes as cpdef (see base.pxd). Read by the build only.

from ssewire.encoders.base cimport Call, Writer


cdef class VercelUIWriter(Writer):
    cdef public Py_ssize_t _parts, _sources
    cdef public object _open
    cdef public str _open_id, _delta_head

    cpdef str _switch(self, kind)
    cpdef str _close_open(self, metadata=*)
    cpdef _init_state(self)
    cpdef str on_start(self)
    cpdef str on_text(self, text)
    cpdef str on_reasoning(self, text)
    cpdef object text_run(self, kind)
    cpdef object open_run(self, kind)
    cpdef str on_citations(self, citations)
    cpdef str on_signature(self, signature)
    cpdef str on_call_start(self, Call call)
    cpdef str on_call_arguments(self, Call call, text)
    cpdef str on_call_done(self, Call call, event)
    cpdef str on_done(self, stop, native)
