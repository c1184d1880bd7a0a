/* Objects of a class whose fields are member descriptors (what __slots__ gives a Python class, and what the
 * compiled SSEEvent has), read and built from C through the descriptors' offsets.
 *
 * sw_slots_init(c, type, names) finds the offset of each named field; 1 when every one is a plain object member
 * of `type`, 0 when one is not (nothing to use: the caller takes the Python route), -1 with an exception on
 * errors. sw_slots_is(c, o): o is exactly of the type. sw_slots_new(c, values) makes an object of the type holding new
 * references to `values` (one per field, in order); sw_slots_get(c, o, i) borrows field i of an object of exactly that
 * type (NULL when unset).
 */
#ifndef SW_SLOTS_H
#define SW_SLOTS_H

#include <Python.h>

#ifndef Py_T_OBJECT_EX
#include "structmember.h"
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

#define SW_SLOTS_MAX 20

typedef struct {
    PyTypeObject *type; /* a borrowed reference: the caller keeps the type alive */
    Py_ssize_t n;
    Py_ssize_t offsets[SW_SLOTS_MAX];
} sw_slots;

static int sw_slots_init(sw_slots *c, PyObject *type, PyObject *names) {
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

static inline int sw_slots_is(const sw_slots *c, PyObject *o) {
    return c->type != NULL && Py_TYPE(o) == c->type;
}

static inline PyObject *sw_slots_get(const sw_slots *c, PyObject *o, Py_ssize_t i) {
    return *(PyObject **)((char *)o + c->offsets[i]);
}

static PyObject *sw_slots_new(const sw_slots *c, PyObject **values) {
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
