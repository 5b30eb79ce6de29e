/* What `nativeglance.c` gives other C modules through its capsule `_C_API` (see there):
   each answers 1 (yes), 0 (no) or -1 (ask the Python reading; `conforms`: an error). */
#ifndef TOOLPROXY_NATIVEGLANCE_H
#define TOOLPROXY_NATIVEGLANCE_H

#include <Python.h>

typedef struct {
    int (*glance)(PyObject *schema, PyObject *value);  /* glance.glance */
    int (*fits)(PyObject *schema);                     /* glance.fits */
    int (*type_test)(PyObject *name, PyObject *value); /* accepts.type_test (-1: no type) */
    /* formats.format_conforms (set_conforms'): 1, 0, or -1 with a Python error set */
    int (*conforms)(PyObject *value, PyObject *name);
} GlanceAPI;


#endif
