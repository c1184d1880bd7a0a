/* The CPython glue of sw_json.h: a located string as a str, and the compact text with Python's float repr.
 * Included by normalizers/_fast/deltas_c.pyx through normalizers/_fast/json_fields.pxd. */
#ifndef SW_JSON_PY_H
#define SW_JSON_PY_H

#include <Python.h>
#include <math.h>

#include "sw_json.h"

/* sw_json.h's sizes are Py_ssize_t (sw_types.h): checked here (a negative array size fails the build). */
typedef char sw_json_sizes_are_py_ssize[sizeof(sw_ssize) == sizeof(Py_ssize_t) ? 1 : -1];

/* A located (validated) string as a Python str (`ascii`: the text it was located in is ASCII); NULL without an
 * exception set when it holds a lone surrogate (the full decode keeps those), NULL with an exception on memory
 * errors. */
static PyObject *sw_json_string(const sw_json_val *v, int ascii) {
    char *buf;
    Py_ssize_t len;
    PyObject *out;
    if (!v->escaped && ascii) { /* its bytes are its characters */
        out = PyUnicode_New(v->len, 127);
        if (out)
            memcpy(PyUnicode_1BYTE_DATA(out), v->start, (size_t)v->len);
        return out;
    }
    if (!v->escaped)
        return PyUnicode_DecodeUTF8(v->start, v->len, NULL);
    buf = (char *)PyMem_Malloc((size_t)v->len + 1); /* unescaping never lengthens the UTF-8 */
    if (!buf)
        return PyErr_NoMemory();
    len = sw_json_unescape(v, buf);
    out = len < 0 ? NULL : PyUnicode_DecodeUTF8(buf, len, NULL);
    PyMem_Free(buf);
    return out;
}

/* sw_json_float_text as json.dumps(json.loads(digits)) writes the number: repr() of the double it rounds to; -1
 * when that double is not finite (json.dumps would write Infinity, not a number). Never leaves an exception set. */
static int sw_json_py_float_text(const char *digits, char *out) {
    double value = PyOS_string_to_double(digits, NULL, NULL);
    char *repr;
    size_t len;
    if (value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    if (!isfinite(value))
        return -1;
    repr = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!repr) {
        PyErr_Clear();
        return -1;
    }
    len = strlen(repr); /* at most SW_JSON_FLOAT_TEXT_MAX: "-2.2250738585072014e-308" is the longest */
    memcpy(out, repr, len);
    PyMem_Free(repr);
    return (int)len;
}

/* The compact text of the valid JSON value p[0..n), Python's floats included (see sw_json_compact_with). */
static Py_ssize_t sw_json_compact(const char *p, Py_ssize_t n, char *out) {
    return sw_json_compact_with(p, n, out, sw_json_py_float_text);
}

#endif /* SW_JSON_PY_H */
