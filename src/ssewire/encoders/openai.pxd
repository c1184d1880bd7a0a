# ResponsesWriter's state as C fields and its own methods cpdef (the base's cpdef methods it overrides need no
# line here: Cython takes their signatures from base.pxd). Read by the build only.

from ssewire.encoders.base cimport Writer


cdef class _Item:
    cdef public str id, kind
    cdef public Py_ssize_t index
    cdef public object parts, signature
    cdef public list annotations


cdef class ResponsesWriter(Writer):
    cdef public Py_ssize_t _seq, _output_chars, _items
    cdef public str _stem, _delta_head, _part_added, _head, _model
    cdef public _Item _open
    cdef public object _error
    cdef public list _output

    cpdef tuple _response_ends(self, status, members=*, usage=*)
    cpdef _set_stem(self)
    cpdef _Item _new_item(self, prefix, kind)
    cpdef str _switch(self, kind)
    cpdef str _text(self, text, kind)
    cpdef str _close_open(self)
    cpdef str _written(self, index, events, done, end, parts, size)
    cpdef str _final(self, kind, status, error=*, reason=*)
    cpdef str _members(self, kind, members)
