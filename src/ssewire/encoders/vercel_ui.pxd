# VercelUIWriter's state as C fields and its own methods cpdef (the base's cpdef methods it overrides need no
# line here: Cython takes their signatures from base.pxd). Read by the build only.

from ssewire.encoders.base cimport Writer


cdef class VercelUIWriter(Writer):
    cdef public Py_ssize_t _parts, _sources
    cdef public object _open
    cdef public str _open_id, _delta_head

    cpdef str _switch(self, kind)
    cpdef str _close_open(self, metadata=*)
