# The C types of bedrock_chunks_py.py, which the build compiles as bedrock_chunks_c (see setup.py): Cython reads this
# file beside the copy it compiles, so the one .py source runs as plain C calls. Keep it in step with the .py.

cimport cython

cdef str CHUNK_PREFIX, TYPE_PREFIX, METRICS
cdef tuple FAILED


@cython.locals(opened=Py_ssize_t, end=Py_ssize_t)
cpdef str type_of(str text)


@cython.locals(index=Py_ssize_t, end=Py_ssize_t, size=Py_ssize_t, close=Py_ssize_t, data=str, raw=bytes, text=str)
cpdef Py_ssize_t unwrap_chunks(list events, Py_ssize_t start, list out, object make_event) except? -1
