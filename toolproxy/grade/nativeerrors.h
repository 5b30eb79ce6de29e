/* The schema errors `nativeerrors.c` finds and `nativeschema.c` reads (see there). */
#ifndef TOOLPROXY_NATIVEERRORS_H
#define TOOLPROXY_NATIVEERRORS_H

#include "nativegrade.h"

#define MAX_ERRORS 50   /* schemastage.MAX_SCHEMA_ERRORS */
#define MAX_MESSAGE 300 /* schemastage.MAX_MESSAGE */
#define MAX_PATH 70     /* beyond glance's depth (64) */
#define STOP 3          /* MAX_ERRORS found: the walk ends there */

/* One step of a path: a property name (borrowed) or, with name NULL, a list index. */
typedef struct {
    PyObject *name;
    Py_ssize_t index;
} Step;

/* One error, as a QuickError holds it (keyword NULL: a false schema's, validator None). */
typedef struct {
    PyObject *message;           /* strong */
    PyObject *keyword, *value;   /* borrowed from the schema */
    PyObject *instance;          /* borrowed from the arguments */
    PyObject *schema;            /* additionalProperties': the schema it is in (borrowed) */
    Step path[MAX_PATH];
    int depth;
} Error;

typedef struct {
    Error *errors;
    int n;
    Step stack[MAX_PATH];  /* where the walk is */
    int depth;
} Walk;


/* quickerrors._Walk.descend (`pushed`: this walk took a step): 0, -1, HAND_BACK or STOP */
int walk(Walk *w, PyObject *schema, PyObject *instance, int pushed);
int plain(PyObject *v, int depth);  /* jsonfast.plain_json */
/* the instance's names that are no property of `schema` (a new list) */
PyObject *extra_names(PyObject *schema, PyObject *instance);

#endif
