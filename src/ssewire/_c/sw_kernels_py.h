/* The CPython glue of sw_kernels.h: str objects decoded from UTF-8 by its kernels, exactly as
 * PyUnicode_DecodeUTF8(s, n, "replace") builds them. Included by _scan/scanner_c.pyx through _scan/kernels.pxd. */
#ifndef SSEWIRE_KERNELS_PY_H
#define SSEWIRE_KERNELS_PY_H

#include <Python.h>

#include "sw_kernels.h"

/* ssewire_fill's widths are CPython's str kinds, and its sizes are Py_ssize_t (sw_types.h): checked here, where
   both are known (a negative array size fails the build). */
typedef char ssewire_kinds_are_widths[PyUnicode_1BYTE_KIND == 1 && PyUnicode_2BYTE_KIND == 2 &&
                                              PyUnicode_4BYTE_KIND == 4 && sizeof(sw_ssize) == sizeof(Py_ssize_t)
                                          ? 1
                                          : -1];

/* str(s[0:n], "utf-8", "replace"), exactly as PyUnicode_DecodeUTF8 builds it (same kind, same code points):
   one vector pass sizes the str (code points, widest kind), a second validates the UTF-8 and writes the code
   points straight into it (no widening copies). Invalid input goes to PyUnicode_DecodeUTF8, which makes the
   replacements. */
static PyObject *ssewire_decode_sized(const char *s, Py_ssize_t n, unsigned maxb, Py_ssize_t cont);

static PyObject *ssewire_decode(const char *s, Py_ssize_t n) {
    const unsigned char *p = (const unsigned char *)s;
    Py_ssize_t cont, i;
    unsigned maxb;
    PyObject *u;
    if (n < 32)
        return PyUnicode_DecodeUTF8(s, n, "replace");
    i = ssewire_ascii_run(p, n);
    if (i == n) {
        u = PyUnicode_New(n, 0x7F);
        if (u != NULL)
            memcpy(PyUnicode_DATA(u), s, (size_t)n);
        return u;
    }
    maxb = ssewire_byte_stats(p + i, n - i, &cont); /* the ASCII prefix adds nothing */
    return ssewire_decode_sized(s, n, maxb, cont);
}

/* ssewire_decode() for s[0:n] whose largest byte (maxb) and UTF-8 continuation bytes (cont) are known. */
static PyObject *ssewire_decode_sized(const char *s, Py_ssize_t n, unsigned maxb, Py_ssize_t cont) {
    const unsigned char *p = (const unsigned char *)s;
    Py_ssize_t chars;
    Py_UCS4 maxc;
    PyObject *u;
    int bad;
    if (n < 32)
        return PyUnicode_DecodeUTF8(s, n, "replace");
    if (maxb < 0x80) {
        u = PyUnicode_New(n, 0x7F);
        if (u != NULL)
            memcpy(PyUnicode_DATA(u), s, (size_t)n);
        return u;
    }
    if (maxb < 0xC2 || maxb > 0xF4) /* continuation bytes without a lead, or bytes never valid */
        return PyUnicode_DecodeUTF8(s, n, "replace");
    if (maxb >= 0xF0)
        maxc = 0x10FFFF;
    else if (maxb >= 0xC4) /* two-byte sequences from 0xC4 and all three-byte ones are above U+00FF */
        maxc = 0xFFFF;
    else
        maxc = 0xFF;
    chars = n - cont;
    u = PyUnicode_New(chars, maxc);
    if (u == NULL)
        return NULL;
    bad = ssewire_fill((int)PyUnicode_KIND(u), PyUnicode_DATA(u), p, p + n, chars);
    if (!bad)
        return u;
    Py_DECREF(u); /* invalid UTF-8: let CPython make the replacements */
    return PyUnicode_DecodeUTF8(s, n, "replace");
}

#endif /* SSEWIRE_KERNELS_PY_H */
