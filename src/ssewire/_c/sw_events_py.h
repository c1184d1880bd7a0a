/* ssewire event objects: the compiled SSEEvent type gets plain member descriptors (what __slots__ gives a
 * Python class; through sw_slots_py.h, the one home of field offsets) and a C constructor with a small free list.
 * Included by _scan/scanner_c.pyx through _scan/kernels.pxd. */
#ifndef SSEWIRE_EVENTS_H
#define SSEWIRE_EVENTS_H

#include <Python.h>

#include "sw_slots_py.h"

#define SSEWIRE_EVENT_FIELDS 4 /* event, data, id, retry: the order of ssewire_event_new's arguments */
static sw_slots ssewire_event_slots;
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
        Py_CLEAR(*(PyObject **)(base + ssewire_event_slots.offsets[f]));
#if SSEWIRE_FREE_EVENTS
    if (t == ssewire_event_type && ssewire_free_count < SSEWIRE_FREE_EVENTS)
        ssewire_free_events[ssewire_free_count++] = o;
    else
#endif
        t->tp_free(o);
    if (PyType_HasFeature(ssewire_event_type, Py_TPFLAGS_HEAPTYPE))
        Py_DECREF(t); /* a heap type's objects hold a reference to it (PyObject_Init takes it again) */
}

/* Give the event type plain member descriptors (what __slots__ gives a Python class) in place of Cython's
   property-style ones, and the generic attribute lookup, so the interpreter's specialised attribute loads
   apply to ev.data and friends: sw_slots_install over `names` (the four fields, in ssewire_event_new's order),
   found in `sample`, whose fields hold the distinct objects `values`. Returns 1, or 0 when the layout is not as
   expected (nothing changed), -1 with an exception. */
static int ssewire_use_member_fields(PyTypeObject *t, PyObject *sample, PyObject *names, PyObject *values) {
    int done;
    if (PyTuple_Check(names) && PyTuple_GET_SIZE(names) != SSEWIRE_EVENT_FIELDS)
        return 0;
    done = sw_slots_install(&ssewire_event_slots, (PyObject *)t, sample, names, values);
    if (done != 1)
        return done;
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
    *(PyObject **)(base + ssewire_event_slots.offsets[0]) = event;
    Py_INCREF(data);
    *(PyObject **)(base + ssewire_event_slots.offsets[1]) = data;
    Py_INCREF(id);
    *(PyObject **)(base + ssewire_event_slots.offsets[2]) = id;
    Py_INCREF(retry);
    *(PyObject **)(base + ssewire_event_slots.offsets[3]) = retry;
    return o;
}

#endif /* SSEWIRE_EVENTS_H */
