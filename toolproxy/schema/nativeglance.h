/* What `nativeglance.c` gives other C modules through its capsule `_C_API` (see there):
   each answers 1 (yes), 0 (no) or -1 (ask the Python reading). */
#ifndef TOOLPROXY_NATIVEGLANCE_H
#define TOOLPROXY_NATIVEGLANCE_H

#include <Python.h>

typedef struct {
    int (*glance)(PyObject *schema, PyObject *value);  /* glance.glance */
    int (*fits)(PyObject *schema);                     /* glance.fits */
    int (*type_test)(PyObject *name, PyObject *value); /* accepts.type_test (-1: no type) */
    int (*plan_check)(PyObject *plan, PyObject *value); /* 1: proven valid, 0: ask glance */
} GlanceAPI;

/* Within the module (nativeglance.c, nativeplan.c) */
int is_key(PyObject *key, const char *lit, Py_ssize_t n);
int type_test(PyObject *name, PyObject *v);
int one_of(PyObject *const *options, Py_ssize_t n, PyObject *value);
int fits_entry(PyObject *schema);
int plan_check(PyObject *plan, PyObject *value);
PyObject *py_plan(PyObject *module, PyObject *schema);
PyObject *py_proves(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
