/* A schema glance reads, compiled once: `plan(schema)` and `proves(plan, value)`.

   plan(schema) -> capsule | None       proves(plan, value) -> True | False

   `plan` compiles a schema that `fits` (glance's subset, read whole) into a tree of C
   records: each node's allowed types as bits, its enum or const, its items' node, its
   properties' nodes in order with their names, its required names and its
   additionalProperties' node. `proves` answers True only where glance would answer True
   (proven valid) and False for anything else, so a False is "ask glance", never
   "invalid": a value that fails, or that glance would hand back (a key that is not a str,
   a dict or list subclass), is read again by glance and the grader's schema stage.

   Why: a call checked against a schema already compiled (`compiling.compile_schema` makes
   the plan beside its quick accept) no longer reads the schema's dicts and compares each
   keyword's name: glance on a BFCL-shaped call read ~2,900 instructions of schema for a
   few dict lookups' worth of checking. `tests/schema/test_nativeplan.py` holds it to
   glance on generated schemas and values. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

#include "nativeglance.h"

#define CAPSULE "toolproxy.schema.nativeplan"

enum { STRING = 1, INTEGER = 2, NUMBER = 4, BOOLEAN = 8, OBJECT = 16, ARRAY = 32, NUL = 64 };

typedef struct Node Node;
struct Node {
    int always, never;       /* a true schema (or {}), a false schema */
    unsigned types;          /* allowed types' bits; 0: no `type` keyword */
    PyObject *choices;       /* `enum`'s list, borrowed (the plan holds the schema) */
    PyObject *constant;      /* `const`'s value, borrowed, when has_const */
    int has_const;
    Node *items;             /* `items`' node, or NULL */
    int shaped;              /* properties, required or additionalProperties are there */
    PyObject *properties;    /* the properties dict (borrowed), for names that are none */
    Py_ssize_t n_props, n_required;
    PyObject **names;        /* property names, then required names (borrowed) */
    Node **props;            /* each property's node */
    Node *extra;             /* additionalProperties' node (NULL: true) */
};

typedef struct {
    PyObject *schema;  /* strong: everything borrowed above lives in it */
    Node *root;
} Plan;

static unsigned type_bit(PyObject *name)
{
    static const struct { const char *text; Py_ssize_t n; unsigned bit; } all[] = {
        {"string", 6, STRING}, {"integer", 7, INTEGER}, {"number", 6, NUMBER},
        {"boolean", 7, BOOLEAN}, {"object", 6, OBJECT}, {"array", 5, ARRAY}, {"null", 4, NUL},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (is_key(name, all[i].text, all[i].n))
            return all[i].bit;
    return 0;
}

/* The type bits `value` has (accepts.type_test of each name, at once). */
static unsigned value_bits(PyObject *v)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type)
        return STRING;
    if (t == &PyLong_Type)
        return INTEGER | NUMBER;
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(v);
        return NUMBER | (isfinite(d) && d == floor(d) ? INTEGER : 0);
    }
    if (t == &PyBool_Type)
        return BOOLEAN;
    if (t == &PyDict_Type)
        return OBJECT;
    if (t == &PyList_Type)
        return ARRAY;
    return v == Py_None ? NUL : 0;
}

static void free_node(Node *n)
{
    if (n == NULL)
        return;
    free_node(n->items);
    free_node(n->extra);
    for (Py_ssize_t i = 0; n->props != NULL && i < n->n_props; i++)
        free_node(n->props[i]);
    PyMem_Free(n->props);
    PyMem_Free(n->names);
    PyMem_Free(n);
}

/* The node of `spec`, a schema that fits (so its keywords are glance's, well formed). */
static Node *build(PyObject *spec)
{
    Node *n = PyMem_Calloc(1, sizeof(Node));
    if (n == NULL)
        return NULL;
    if (spec == Py_True || spec == Py_False) {
        n->always = spec == Py_True, n->never = spec == Py_False;
        return n;
    }
    PyObject *key, *sub, *props = NULL, *required = NULL;
    Py_ssize_t pos = 0;
    int failed = 0;
    while (!failed && PyDict_Next(spec, &pos, &key, &sub)) {
        if (is_key(key, "type", 4)) {
            if (PyUnicode_Check(sub))
                n->types = type_bit(sub);
            for (Py_ssize_t i = 0; PyList_Check(sub) && i < PyList_GET_SIZE(sub); i++)
                n->types |= type_bit(PyList_GET_ITEM(sub, i));
        } else if (is_key(key, "enum", 4)) {
            n->choices = sub;
        } else if (is_key(key, "const", 5)) {
            n->constant = sub, n->has_const = 1;
        } else if (is_key(key, "items", 5)) {
            failed = (n->items = build(sub)) == NULL;
        } else if (is_key(key, "properties", 10)) {
            props = sub, n->shaped = 1;
        } else if (is_key(key, "required", 8)) {
            required = sub, n->shaped = 1;
        } else if (is_key(key, "additionalProperties", 20)) {
            n->shaped = 1;
            failed = sub != Py_True && (n->extra = build(sub)) == NULL;
        }  /* the annotations say nothing of a value */
    }
    if (!failed && n->shaped) {
        n->properties = props;
        n->n_props = props ? PyDict_GET_SIZE(props) : 0;
        n->n_required = required ? PyList_GET_SIZE(required) : 0;
        n->names = PyMem_Calloc((size_t)(n->n_props + n->n_required) + 1, sizeof(PyObject *));
        n->props = PyMem_Calloc((size_t)n->n_props + 1, sizeof(Node *));
        failed = n->names == NULL || n->props == NULL;
        pos = 0;
        for (Py_ssize_t i = 0; !failed && props && PyDict_Next(props, &pos, &key, &sub); i++)
            n->names[i] = key, failed = (n->props[i] = build(sub)) == NULL;
        for (Py_ssize_t i = 0; !failed && i < n->n_required; i++)
            n->names[n->n_props + i] = PyList_GET_ITEM(required, i);
    }
    if (failed) {
        free_node(n);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return NULL;
    }
    return n;
}

/* Does `n` prove `v` valid (1), or must glance read it (0)? */
static int check(Node *n, PyObject *v)
{
    if (n->always)
        return 1;
    if (n->never)
        return 0;
    if (n->types && !(n->types & value_bits(v)))
        return 0;
    if (n->choices && one_of(((PyListObject *)n->choices)->ob_item,
                             PyList_GET_SIZE(n->choices), v) != 1)
        return 0;
    if (n->has_const && one_of(&n->constant, 1, v) != 1)
        return 0;
    if (n->items && PyList_Check(v)) {
        if (!PyList_CheckExact(v))
            return 0;  /* a list subclass: left to jsonschema */
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++)
            if (!check(n->items, PyList_GET_ITEM(v, i)))
                return 0;
    }
    if (!n->shaped || !PyDict_Check(v))
        return 1;
    if (!PyDict_CheckExact(v))
        return 0;  /* a dict subclass: left to jsonschema */
    Py_ssize_t pos = 0, found = 0;
    PyObject *name, *item;
    while (PyDict_Next(v, &pos, &name, &item))
        if (!PyUnicode_CheckExact(name))
            return 0;  /* glance hands such a value back */
    for (Py_ssize_t i = 0; i < n->n_props; i++) {
        item = PyDict_GetItemWithError(v, n->names[i]);  /* str keys: no error */
        if (item != NULL && (found++, !check(n->props[i], item)))
            return 0;
    }
    if (found < PyDict_GET_SIZE(v) && n->extra != NULL) {  /* names that are no property */
        pos = 0;
        while (PyDict_Next(v, &pos, &name, &item))
            if ((n->properties == NULL || PyDict_GetItemWithError(n->properties, name) == NULL) &&
                !check(n->extra, item))
                return 0;
    }
    for (Py_ssize_t i = 0; i < n->n_required; i++)
        if (PyDict_GetItemWithError(v, n->names[n->n_props + i]) == NULL)
            return 0;
    return 1;
}

static void free_plan(PyObject *capsule)
{
    Plan *plan = PyCapsule_GetPointer(capsule, CAPSULE);
    if (plan == NULL)
        return;
    free_node(plan->root);
    Py_DECREF(plan->schema);
    PyMem_Free(plan);
}

PyObject *py_plan(PyObject *module, PyObject *schema)
{
    if (fits_entry(schema) != 1)
        Py_RETURN_NONE;
    Plan *plan = PyMem_Malloc(sizeof(Plan));
    if (plan == NULL)
        return PyErr_NoMemory();
    if ((plan->root = build(schema)) == NULL) {
        PyMem_Free(plan);
        return NULL;
    }
    plan->schema = Py_NewRef(schema);
    PyObject *capsule = PyCapsule_New(plan, CAPSULE, free_plan);
    if (capsule == NULL) {
        free_node(plan->root);
        Py_DECREF(plan->schema);
        PyMem_Free(plan);
    }
    return capsule;
}

int plan_check(PyObject *capsule, PyObject *value)
{
    Plan *plan = PyCapsule_GetPointer(capsule, CAPSULE);
    if (plan == NULL) {
        PyErr_Clear();
        return 0;
    }
    return check(plan->root, value);
}

PyObject *py_proves(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCapsule_IsValid(args[0], CAPSULE)) {
        PyErr_SetString(PyExc_TypeError, "proves(plan, value): plan as plan() made it");
        return NULL;
    }
    return PyBool_FromLong(plan_check(args[0], args[1]));
}
