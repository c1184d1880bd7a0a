/* Objects of a class whose fields are member descriptors (what __slots__ gives a Python class, and what the
 * compiled SSEEvent and EventStreamMessage have), read and built from C through the descriptors' offsets: the one
 * place ssewire finds, keeps and uses field offsets.
 *
 * sw_slots_init(c, type, names) finds the offset of each named field; 1 when every one is a plain object member
 * of `type`, 0 when one is not (nothing to use: the caller takes the Python route), -1 with an exception on
 * errors. sw_slots_install(c, type, sample, names, values) gives a compiled class whose fields have no member
 * descriptors (Cython's `cdef object` fields) plain ones: each offset is found in `sample`, an object of `type`
 * whose fields hold the distinct objects `values` (in `names`' order); the descriptors are kept in `c`, which must
 * live as long as the type (a static). Same returns; on 0 nothing changed. sw_slots_is(c, o): o is exactly of the type.
 * sw_slots_new(c, values) makes an object of the type holding new references to `values` (one per field, in order);
 * sw_slots_get(c, o, i) borrows field i of an object of exactly that type (NULL when unset).
 */
#ifndef SW_SLOTS_H
#define SW_SLOTS_H

#include <Python.h>
#include <string.h>

#ifndef Py_T_OBJECT_EX
#include "structmember.h"
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

#define SW_SLOTS_MAX 20

typedef struct {
    PyTypeObject *type; /* a borrowed reference: the caller keeps the type alive */
    Py_ssize_t n;
    Py_ssize_t offsets[SW_SLOTS_MAX];
    PyMemberDef members[SW_SLOTS_MAX + 1]; /* sw_slots_install's descriptors point here */
} sw_slots;

static inline int sw_slots_init(sw_slots *c, PyObject *type, PyObject *names) {
    Py_ssize_t i, n;
    c->type = NULL;
    if (!PyType_Check(type) || !PyTuple_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "sw_slots_init: a type and a tuple of field names");
        return -1;
    }
    n = PyTuple_GET_SIZE(names);
    if (n > SW_SLOTS_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        PyObject *descr = PyDict_GetItemWithError(((PyTypeObject *)type)->tp_dict, PyTuple_GET_ITEM(names, i));
        PyMemberDef *member;
        if (descr == NULL) {
            if (PyErr_Occurred())
                return -1;
            return 0;
        }
        if (Py_TYPE(descr) != &PyMemberDescr_Type)
            return 0;
        member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type != Py_T_OBJECT_EX || member->offset < (Py_ssize_t)sizeof(PyObject))
            return 0;
        c->offsets[i] = member->offset;
    }
    c->n = n;
    c->type = (PyTypeObject *)type;
    return 1;
}

static inline int sw_slots_install(sw_slots *c, PyObject *type, PyObject *sample, PyObject *names, PyObject *values) {
    PyTypeObject *t = (PyTypeObject *)type;
    PyObject **words = (PyObject **)sample;
    Py_ssize_t nwords, i, f, n;
    c->type = NULL;
    if (!PyType_Check(type) || Py_TYPE(sample) != t || !PyTuple_Check(names) || !PyTuple_Check(values) ||
        PyTuple_GET_SIZE(names) != PyTuple_GET_SIZE(values)) {
        PyErr_SetString(PyExc_TypeError, "sw_slots_install: a type, an object of it, names and as many values");
        return -1;
    }
    n = PyTuple_GET_SIZE(names);
    if (n > SW_SLOTS_MAX)
        return 0;
    nwords = t->tp_basicsize / (Py_ssize_t)sizeof(PyObject *);
    for (f = 0; f < n; f++) {
        c->offsets[f] = -1;
        for (i = (Py_ssize_t)(sizeof(PyObject) / sizeof(PyObject *)); i < nwords; i++) {
            if (words[i] == PyTuple_GET_ITEM(values, f)) {
                c->offsets[f] = i * (Py_ssize_t)sizeof(PyObject *);
                break;
            }
        }
        if (c->offsets[f] < 0)
            return 0;
    }
    for (f = 0; f < n; f++) {
        PyObject *name = PyTuple_GET_ITEM(names, f), *descr;
        PyMemberDef *m = &c->members[f];
        m->name = PyUnicode_AsUTF8(name); /* kept by the str, which the caller's names tuple keeps alive */
        if (m->name == NULL)
            return -1;
        m->type = Py_T_OBJECT_EX;
        m->offset = c->offsets[f];
        m->flags = 0;
        m->doc = NULL;
        descr = PyDescr_NewMember(t, m);
        if (descr == NULL)
            return -1;
        if (PyDict_SetItem(t->tp_dict, name, descr) < 0) {
            Py_DECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    memset(&c->members[n], 0, sizeof(PyMemberDef));
    PyType_Modified(t);
    c->n = n;
    c->type = t;
    return 1;
}

static inline int sw_slots_is(const sw_slots *c, PyObject *o) {
    return c->type != NULL && Py_TYPE(o) == c->type;
}

static inline PyObject *sw_slots_get(const sw_slots *c, PyObject *o, Py_ssize_t i) {
    return *(PyObject **)((char *)o + c->offsets[i]);
}

static inline PyObject *sw_slots_new(const sw_slots *c, PyObject **values) {
    PyObject *o = c->type->tp_alloc(c->type, 0);
    Py_ssize_t i;
    if (o == NULL)
        return NULL;
    for (i = 0; i < c->n; i++) {
        Py_INCREF(values[i]);
        *(PyObject **)((char *)o + c->offsets[i]) = values[i];
    }
    return o;
}

#endif /* SW_SLOTS_H */
