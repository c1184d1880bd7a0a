/* ssewire event objects: the compiled SSEEvent type gets plain member descriptors (what __slots__ gives a
 * Python class) and a C constructor with a small free list. Included by _scanner_c.pyx through _kernels.pxd. */
#ifndef SSEWIRE_EVENTS_H
#define SSEWIRE_EVENTS_H

#include <Python.h>

#ifndef Py_T_OBJECT_EX
#include "structmember.h"
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif
#define SSEWIRE_EVENT_FIELDS 4
static PyMemberDef ssewire_event_members[SSEWIRE_EVENT_FIELDS + 1];
static const char *const ssewire_event_field_names[SSEWIRE_EVENT_FIELDS] = {"event", "data", "id", "retry"};

/* Give the event type plain member descriptors (what __slots__ gives a Python class) in place of Cython's
   property-style ones, and the generic attribute lookup, so the interpreter's specialised attribute loads
   apply to ev.data and friends. The field offsets are found in `sample`, whose fields hold the distinct
   objects `values` (in field order). Returns 1, or 0 when the layout is not as expected (nothing changed). */
static Py_ssize_t ssewire_event_offsets[SSEWIRE_EVENT_FIELDS];
static PyTypeObject *ssewire_event_type = NULL;

/* Free list of event objects (not in free-threaded builds, where it would need a lock). */
#ifdef Py_GIL_DISABLED
#define SSEWIRE_FREE_EVENTS 0
#else
#define SSEWIRE_FREE_EVENTS 256
static PyObject *ssewire_free_events[SSEWIRE_FREE_EVENTS];
static int ssewire_free_count = 0;
#endif

/* The event type's tp_dealloc: drop the fields, keep the object for reuse (exact type only: a subclass's
   objects go back to the allocator), else free it. */
static void ssewire_event_dealloc(PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    char *base = (char *)o;
    int f;
    for (f = 0; f < SSEWIRE_EVENT_FIELDS; f++)
        Py_CLEAR(*(PyObject **)(base + ssewire_event_offsets[f]));
#if SSEWIRE_FREE_EVENTS
    if (t == ssewire_event_type && ssewire_free_count < SSEWIRE_FREE_EVENTS)
        ssewire_free_events[ssewire_free_count++] = o;
    else
#endif
        t->tp_free(o);
    if (PyType_HasFeature(ssewire_event_type, Py_TPFLAGS_HEAPTYPE))
        Py_DECREF(t); /* a heap type's objects hold a reference to it (PyObject_Init takes it again) */
}

static int ssewire_use_member_fields(PyTypeObject *t, PyObject *sample, PyObject *values) {
    PyObject **words = (PyObject **)sample;
    Py_ssize_t nwords = t->tp_basicsize / (Py_ssize_t)sizeof(PyObject *), *offsets = ssewire_event_offsets, i;
    int f;
    for (f = 0; f < SSEWIRE_EVENT_FIELDS; f++) {
        PyObject *value = PyTuple_GET_ITEM(values, f);
        offsets[f] = -1;
        for (i = (Py_ssize_t)(sizeof(PyObject) / sizeof(PyObject *)); i < nwords; i++) {
            if (words[i] == value) {
                offsets[f] = i * (Py_ssize_t)sizeof(PyObject *);
                break;
            }
        }
        if (offsets[f] < 0)
            return 0;
    }
    for (f = 0; f < SSEWIRE_EVENT_FIELDS; f++) {
        PyObject *descr;
        ssewire_event_members[f].name = ssewire_event_field_names[f];
        ssewire_event_members[f].type = Py_T_OBJECT_EX;
        ssewire_event_members[f].offset = offsets[f];
        ssewire_event_members[f].flags = 0;
        ssewire_event_members[f].doc = NULL;
        descr = PyDescr_NewMember(t, &ssewire_event_members[f]);
        if (descr == NULL)
            return -1;
        if (PyDict_SetItemString(t->tp_dict, ssewire_event_field_names[f], descr) < 0) {
            Py_DECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    t->tp_getattro = PyObject_GenericGetAttr;
    t->tp_dealloc = ssewire_event_dealloc;
    ssewire_event_type = t;
    PyType_Modified(t);
    return 1;
}

/* A new event holding new references to the four fields (the scanners' constructor: no None placeholders
   to set and drop, recycled objects from a small free list where the build has a GIL). */
static PyObject *ssewire_event_new(PyObject *event, PyObject *data, PyObject *id, PyObject *retry) {
    PyObject *o;
    char *base;
#if SSEWIRE_FREE_EVENTS
    if (ssewire_free_count > 0) {
        o = ssewire_free_events[--ssewire_free_count];
        (void)PyObject_Init(o, ssewire_event_type);
    } else
#endif
    {
        o = ssewire_event_type->tp_alloc(ssewire_event_type, 0);
        if (o == NULL)
            return NULL;
    }
    base = (char *)o;
    Py_INCREF(event);
    *(PyObject **)(base + ssewire_event_offsets[0]) = event;
    Py_INCREF(data);
    *(PyObject **)(base + ssewire_event_offsets[1]) = data;
    Py_INCREF(id);
    *(PyObject **)(base + ssewire_event_offsets[2]) = id;
    Py_INCREF(retry);
    *(PyObject **)(base + ssewire_event_offsets[3]) = retry;
    return o;
}

#endif /* SSEWIRE_EVENTS_H */
