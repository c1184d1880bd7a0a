# The compiled encoders' base (see ``Writer`` in base.py): its state as C fields, its per-event methods cpdef (a
# target's writer redeclares those it writes in its own .pxd). Read by the build only; the source runs as Python.

cpdef str quote_text(text)
cpdef bytes utf8(text)
cpdef Py_ssize_t _fill_marks(text, runs, list out) except -1


cdef class Call:
    cdef public object id, name, item_id, parts, pending, signature
    cdef public Py_ssize_t index
    cdef public bint closed, opened, server, streamed


cdef class Writer:
    cdef public object model, response_id, created, source, _dropped, usage, stop, _went_on
    cdef public dict calls
    cdef public list held
    cdef public Py_ssize_t client_calls
    cdef public bint started, ended, failed, _usage_late, _flowing, writes_raw

    cpdef _init_state(self)
    cpdef str hold(self, list pieces)
    cpdef list pieces(self, text)
    cpdef list pieces_each(self, list texts)
    cpdef str write(self, event)
    cpdef str _write(self, event)
    cpdef object text_run(self, kind)
    cpdef object open_run(self, kind)
    cpdef wrote_texts(self, count)
    cpdef str _start(self)
    cpdef _start_meta(self)
    cpdef tuple _start_call(self, event)
    cpdef str _open_call(self, Call call)
    cpdef str _fragment(self, Call call, text)
    cpdef str _done_call(self, event)
    cpdef _take_usage(self, raw)
    cpdef str _end(self)
    cpdef str on_start(self)
    cpdef str on_text(self, text)
    cpdef str on_reasoning(self, text)
    cpdef str on_call_start(self, Call call)
    cpdef str on_call_arguments(self, Call call, text)
    cpdef str on_call_done(self, Call call, event)
    cpdef str on_signature(self, signature)
    cpdef str on_raw(self, event)
    cpdef str on_citations(self, citations)
    cpdef str on_done(self, stop, native)
