/* The one type the pure C headers share with CPython: sw_ssize, a signed size. It is Py_ssize_t itself when Python.h
 * came first (as in every module Cython writes, so pointers to either are the same type), else ptrdiff_t, which has
 * Py_ssize_t's width wherever CPython builds (both are as wide as size_t). The glue headers check that width. */
#ifndef SW_TYPES_H
#define SW_TYPES_H

#include <stddef.h>

#ifdef PY_SSIZE_T_MAX
typedef Py_ssize_t sw_ssize;
#else
typedef ptrdiff_t sw_ssize;
#endif

#endif /* SW_TYPES_H */
