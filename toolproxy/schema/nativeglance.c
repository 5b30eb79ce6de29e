/* `schema.glance`'s first look, in C: the same answers, sooner, or "ask the Python one".

   glance(schema, value) -> True | False | None      fits(schema) -> True | False | None

   True and False are `glance.glance`'s (and `glance.fits`') own answers; None hands the
   question back to them (`glance.py` asks this first, when the compiled core is built).
   Read here: `type`, `description`, `properties`, `required`, `additionalProperties`,
   `items`, `enum` and `const`, the numeric bounds (`minimum`, `maximum` and the exclusive
   two), the lengths (`minLength`, `maxLength`, `minItems`, `maxItems`), `anyOf` and
   `allOf`, `format` (through the format checker glance.py gives, `set_conforms`; until
   then a value under a `format` hands back), and the annotations (`title`, `$comment`,
   `default`, `examples`, `deprecated`, `readOnly`, `writeOnly`); any other keyword
   (`pattern`, which needs Python's re, keywords the metaschema knows or does not) hands
   back, as do a key that is not a str, more than 8 required names (`quick.repeats` then
   builds a set) and a value's key that is not a str. No Python code runs here but that
   checker, and nothing raises: strs are compared as code points, numbers by CPython's own
   int/float comparison.

   Why: on 1,000 BFCL-shaped cases reading a schema met for the first time was 19-21 % of a
   fresh pass; read here, 2,960 instructions a call, not 6,718, and the pass ~1.09x faster
   (docs/benchmarks.md, "thirtieth session"). `tests/schema/test_nativeglance.py` holds it
   to the Python reading. Built by scripts/compile_core.py with the mypyc core. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "nativeglance.h"

#define MAX_DEPTH 64   /* quick.MAX_DEPTH (a test compares them) */
#define PROVEN 1
#define NOT_PROVEN 0
#define ASK_PYTHON -1

static int node(PyObject *spec, PyObject *value, int present, int depth);

/* Is `key` (an exact str) the ASCII literal `lit` of `n` characters? */
static int is_key(PyObject *key, const char *lit, Py_ssize_t n)
{
    return PyUnicode_GET_LENGTH(key) == n && PyUnicode_KIND(key) == PyUnicode_1BYTE_KIND &&
           memcmp(PyUnicode_DATA(key), lit, (size_t)n) == 0;
}

/* accepts.type_test: 1 or 0, -1 for a name that is no type's (`name` an exact str). */
static int type_test(PyObject *name, PyObject *v)
{
    if (is_key(name, "string", 6))
        return Py_IS_TYPE(v, &PyUnicode_Type);
    if (is_key(name, "integer", 7)) {
        if (Py_IS_TYPE(v, &PyLong_Type))
            return 1;
        if (Py_IS_TYPE(v, &PyFloat_Type)) {  /* float.is_integer() */
            double d = PyFloat_AS_DOUBLE(v);
            return isfinite(d) && d == floor(d);
        }
        return 0;
    }
    if (is_key(name, "number", 6))
        return Py_IS_TYPE(v, &PyLong_Type) || Py_IS_TYPE(v, &PyFloat_Type);
    if (is_key(name, "boolean", 7))
        return Py_IS_TYPE(v, &PyBool_Type);
    if (is_key(name, "object", 6))
        return Py_IS_TYPE(v, &PyDict_Type);
    if (is_key(name, "array", 5))
        return Py_IS_TYPE(v, &PyList_Type);
    if (is_key(name, "null", 4))
        return v == Py_None;
    return -1;
}

/* quick.repeats on a list of exact strs: 1 when a name comes twice; ASK_PYTHON past 8. */
static int repeats(PyObject *names)
{
    Py_ssize_t n = PyList_GET_SIZE(names);
    if (n > 8)
        return ASK_PYTHON;
    for (Py_ssize_t i = 1; i < n; i++)
        for (Py_ssize_t j = 0; j < i; j++)
            if (PyUnicode_Compare(PyList_GET_ITEM(names, i), PyList_GET_ITEM(names, j)) == 0)
                return 1;
    return 0;
}

/* `type`: one name, or a list of distinct names. */
static int typed(PyObject *spec, PyObject *value, int present)
{
    if (Py_IS_TYPE(spec, &PyUnicode_Type)) {
        int found = type_test(spec, value);
        return found == 1 || (found == 0 && !present);
    }
    if (!Py_IS_TYPE(spec, &PyList_Type) || PyList_GET_SIZE(spec) == 0)
        return NOT_PROVEN;
    Py_ssize_t n = PyList_GET_SIZE(spec);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(spec, i);
        if (!Py_IS_TYPE(name, &PyUnicode_Type) || type_test(name, Py_None) < 0)
            return NOT_PROVEN;
    }
    int twice = repeats(spec);
    if (twice)
        return twice == 1 ? NOT_PROVEN : ASK_PYTHON;
    if (!present)
        return PROVEN;
    for (Py_ssize_t i = 0; i < n; i++)
        if (type_test(PyList_GET_ITEM(spec, i), value) == 1)
            return PROVEN;
    return NOT_PROVEN;
}

/* accepts.scalar_key's kind: 's', 'b', 'n', '0', or 0 for no scalar (NaN included). */
static char scalar_kind(PyObject *v)
{
    if (Py_IS_TYPE(v, &PyUnicode_Type))
        return 's';
    if (Py_IS_TYPE(v, &PyBool_Type))
        return 'b';
    if (Py_IS_TYPE(v, &PyLong_Type))
        return 'n';
    if (Py_IS_TYPE(v, &PyFloat_Type))
        return isnan(PyFloat_AS_DOUBLE(v)) ? 0 : 'n';
    return v == Py_None ? '0' : 0;
}

/* glance._one_of over `n` options: is `value` one of them, compared by scalar_key? */
static int one_of(PyObject *const *options, Py_ssize_t n, PyObject *value)
{
    char kind = scalar_kind(value);
    if (!kind)
        return NOT_PROVEN;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *option = options[i];
        if (scalar_kind(option) != kind)
            continue;
        if (kind == 's') {
            if (PyUnicode_Compare(option, value) == 0)
                return PROVEN;
        } else if (kind == 'n') {  /* int and float: CPython's exact comparison, no Python code */
            int same = PyObject_RichCompareBool(option, value, Py_EQ);
            if (same < 0) {
                PyErr_Clear();
                return ASK_PYTHON;
            }
            if (same)
                return PROVEN;
        } else if (option == value) {  /* True, False, None: singletons */
            return PROVEN;
        }
    }
    return NOT_PROVEN;
}

/* `items`: every item of a non-empty list valid against `spec`, else `spec` read alone. */
static int items(PyObject *spec, PyObject *value, int present, int depth)
{
    if (present && Py_IS_TYPE(value, &PyList_Type) && PyList_GET_SIZE(value)) {
        Py_ssize_t n = PyList_GET_SIZE(value);
        for (Py_ssize_t i = 0; i < n; i++) {
            int ok = node(spec, PyList_GET_ITEM(value, i), 1, depth + 1);
            if (ok != PROVEN)
                return ok;
        }
        return PROVEN;
    }
    if (present && !Py_IS_TYPE(value, &PyList_Type) && PyList_Check(value))
        return NOT_PROVEN;  /* a list subclass: left to jsonschema */
    return node(spec, Py_None, 0, depth + 1);
}

/* `minimum` and the rest (quick.is_bound, accepts.numeric): a finite int or float bound;
   with a value, an int or float on its side, `holds_op` the comparison that says so (NaN, a
   bool and other int or float subclasses not proven; other types pass). */
static int bounded(int holds_op, PyObject *bound, PyObject *value, int present)
{
    if (!Py_IS_TYPE(bound, &PyLong_Type) &&
        !(Py_IS_TYPE(bound, &PyFloat_Type) && isfinite(PyFloat_AS_DOUBLE(bound))))
        return NOT_PROVEN;
    if (!present)
        return PROVEN;
    if (!Py_IS_TYPE(value, &PyLong_Type) && !Py_IS_TYPE(value, &PyFloat_Type))
        return PyLong_Check(value) || PyFloat_Check(value) ? NOT_PROVEN : PROVEN;
    if (Py_IS_TYPE(value, &PyFloat_Type) && isnan(PyFloat_AS_DOUBLE(value)))
        return NOT_PROVEN;
    int holds = PyObject_RichCompareBool(value, bound, holds_op);  /* int, float: exact */
    if (holds < 0) {
        PyErr_Clear();
        return ASK_PYTHON;
    }
    return holds ? PROVEN : NOT_PROVEN;
}

/* `minLength`, `maxLength` (code points of a str), `minItems`, `maxItems` (items of a
   list): quick.is_count (an int, at least 0) and accepts.sized (other types pass). */
static int sized(int of_list, int at_least, PyObject *limit, PyObject *value, int present)
{
    if (!Py_IS_TYPE(limit, &PyLong_Type))
        return NOT_PROVEN;
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(limit, &overflow);
    if (overflow < 0 || (overflow == 0 && n < 0))
        return NOT_PROVEN;  /* (an exact int: no error) */
    if (!present)
        return PROVEN;
    if (!Py_IS_TYPE(value, of_list ? &PyList_Type : &PyUnicode_Type))
        return PROVEN;
    Py_ssize_t size = of_list ? PyList_GET_SIZE(value) : PyUnicode_GET_LENGTH(value);
    if (overflow > 0)  /* past any size */
        return at_least ? NOT_PROVEN : PROVEN;
    return (at_least ? size >= n : size <= n) ? PROVEN : NOT_PROVEN;
}

/* The format checker's `conforms` (glance.CONFORMS, given by `set_conforms`; strong), or
   NULL: a `format` met with a value hands back. */
static PyObject *conforms;

/* formats.format_conforms: 1, 0, or -1 with an error set (none given, or it raised). */
static int conforms_entry(PyObject *value, PyObject *name)
{
    if (conforms == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "nativeglance: set_conforms was not called");
        return -1;
    }
    PyObject *args[2] = {value, name};
    PyObject *found = PyObject_Vectorcall(conforms, args, 2, NULL);
    if (found == NULL)
        return -1;
    int yes = PyObject_IsTrue(found);
    Py_DECREF(found);
    return yes;
}

/* `format`: a str; with a value, one the format checker takes (glance_py's answer to a
   checker that raises: not proven). */
static int formatted(PyObject *name, PyObject *value, int present)
{
    if (!Py_IS_TYPE(name, &PyUnicode_Type))
        return NOT_PROVEN;
    if (!present)
        return PROVEN;
    if (conforms == NULL)
        return ASK_PYTHON;
    int yes = conforms_entry(value, name);
    if (yes < 0) {
        int caught = PyErr_ExceptionMatches(PyExc_Exception);  /* as glance_py catches */
        PyErr_Clear();
        return caught ? NOT_PROVEN : ASK_PYTHON;
    }
    return yes ? PROVEN : NOT_PROVEN;
}

/* glance._alternatives: `anyOf` (`one`) or `allOf`, a non-empty list of schemas each in
   the subset; with a value, one of them (anyOf) or each (allOf) proving it valid. */
static int alternatives(PyObject *subs, PyObject *value, int present, int depth, int one)
{
    if (!Py_IS_TYPE(subs, &PyList_Type) || PyList_GET_SIZE(subs) == 0)
        return NOT_PROVEN;
    int found = !(one && present);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subs); i++) {
        PyObject *sub = PyList_GET_ITEM(subs, i);
        int ok = node(sub, present ? value : Py_None, present, depth + 1);
        if (ok == ASK_PYTHON)
            return ASK_PYTHON;
        if (ok == PROVEN) {
            found |= present;
            continue;
        }
        if (!present || !one)
            return NOT_PROVEN;
        ok = node(sub, Py_None, 0, depth + 1);  /* anyOf: is it one the compiler takes? */
        if (ok != PROVEN)
            return ok;
    }
    return found ? PROVEN : NOT_PROVEN;
}

/* glance._object: `properties`, `required` and `additionalProperties` at once. */
static int object(PyObject *props, PyObject *required, PyObject *extra, PyObject *value,
                  int present, int depth)
{
    if (!Py_IS_TYPE(props, &PyDict_Type) || !Py_IS_TYPE(required, &PyList_Type))
        return NOT_PROVEN;
    Py_ssize_t n_required = PyList_GET_SIZE(required);
    for (Py_ssize_t i = 0; i < n_required; i++)
        if (!Py_IS_TYPE(PyList_GET_ITEM(required, i), &PyUnicode_Type))
            return NOT_PROVEN;
    int twice = repeats(required);
    if (twice)
        return twice == 1 ? NOT_PROVEN : ASK_PYTHON;
    PyObject *given = NULL;  /* the object's names and values, when it is one */
    Py_ssize_t pos = 0, found = 0;
    PyObject *name, *sub, *item;
    if (present) {
        if (Py_IS_TYPE(value, &PyDict_Type))
            given = value;
        else if (PyDict_Check(value))
            return NOT_PROVEN;  /* a dict subclass: left to jsonschema */
    }
    while (given && PyDict_Next(given, &pos, &name, &item))  /* str keys only: then no */
        if (!Py_IS_TYPE(name, &PyUnicode_Type))              /* lookup below runs Python */
            return ASK_PYTHON;                               /* code (an __eq__) */
    pos = 0;
    while (PyDict_Next(props, &pos, &name, &sub)) {
        if (!Py_IS_TYPE(name, &PyUnicode_Type))
            return ASK_PYTHON;
        item = given ? PyDict_GetItemWithError(given, name) : NULL;  /* str keys: no error */
        int ok = item ? node(sub, item, 1, depth + 1) : node(sub, Py_None, 0, depth + 1);
        found += item != NULL;
        if (ok != PROVEN)
            return ok;
    }
    int ok = node(extra, Py_None, 0, depth + 1);
    if (ok != PROVEN)
        return ok;
    if (given && found < PyDict_GET_SIZE(given)) {  /* some name is no property */
        pos = 0;
        while (PyDict_Next(given, &pos, &name, &item)) {
            if (PyDict_GetItemWithError(props, name) == NULL) {  /* str keys both */
                ok = node(extra, item, 1, depth + 1);
                if (ok != PROVEN)
                    return ok;
            }
        }
    }
    if (given)
        for (Py_ssize_t i = 0; i < n_required; i++)
            if (PyDict_GetItemWithError(given, PyList_GET_ITEM(required, i)) == NULL)
                return NOT_PROVEN;
    return PROVEN;
}

static PyObject *no_properties, *no_names;  /* read only */

/* glance._node: is `spec` in the subset, and, when `present`, `value` valid against it? */
static int node(PyObject *spec, PyObject *value, int present, int depth)
{
    if (spec == Py_True)
        return PROVEN;
    if (spec == Py_False)
        return present ? NOT_PROVEN : PROVEN;
    if (!Py_IS_TYPE(spec, &PyDict_Type) || depth > MAX_DEPTH)
        return NOT_PROVEN;
    PyObject *props = no_properties, *required = no_names, *extra = Py_True;
    PyObject *key, *sub;
    int shaped = 0, ok = PROVEN;
    Py_ssize_t pos = 0;
    while (PyDict_Next(spec, &pos, &key, &sub)) {
        if (!Py_IS_TYPE(key, &PyUnicode_Type))
            return ASK_PYTHON;
        if (is_key(key, "type", 4))
            ok = typed(sub, value, present);
        else if (is_key(key, "description", 11))
            ok = Py_IS_TYPE(sub, &PyUnicode_Type);
        else if (is_key(key, "properties", 10))
            props = sub, shaped = 1;
        else if (is_key(key, "required", 8))
            required = sub, shaped = 1;
        else if (is_key(key, "additionalProperties", 20))
            extra = sub, shaped = 1;
        else if (is_key(key, "enum", 4))
            ok = !Py_IS_TYPE(sub, &PyList_Type) ? NOT_PROVEN
                 : present ? one_of(((PyListObject *)sub)->ob_item, PyList_GET_SIZE(sub), value)
                           : PROVEN;
        else if (is_key(key, "items", 5))
            ok = items(sub, value, present, depth);
        else if (is_key(key, "const", 5))
            ok = present ? one_of(&sub, 1, value) : PROVEN;
        else if (is_key(key, "title", 5) || is_key(key, "$comment", 8))
            ok = PyUnicode_Check(sub);
        else if (is_key(key, "default", 7))
            ok = PROVEN;
        else if (is_key(key, "examples", 8))
            ok = PyList_Check(sub);
        else if (is_key(key, "deprecated", 10) || is_key(key, "readOnly", 8) ||
                 is_key(key, "writeOnly", 9))
            ok = PyBool_Check(sub);
        else if (is_key(key, "minimum", 7))
            ok = bounded(Py_GE, sub, value, present);
        else if (is_key(key, "maximum", 7))
            ok = bounded(Py_LE, sub, value, present);
        else if (is_key(key, "exclusiveMinimum", 16))
            ok = bounded(Py_GT, sub, value, present);
        else if (is_key(key, "exclusiveMaximum", 16))
            ok = bounded(Py_LT, sub, value, present);
        else if (is_key(key, "minLength", 9))
            ok = sized(0, 1, sub, value, present);
        else if (is_key(key, "maxLength", 9))
            ok = sized(0, 0, sub, value, present);
        else if (is_key(key, "minItems", 8))
            ok = sized(1, 1, sub, value, present);
        else if (is_key(key, "maxItems", 8))
            ok = sized(1, 0, sub, value, present);
        else if (is_key(key, "format", 6))
            ok = formatted(sub, value, present);
        else if (is_key(key, "anyOf", 5))
            ok = alternatives(sub, value, present, depth, 1);
        else if (is_key(key, "allOf", 5))
            ok = alternatives(sub, value, present, depth, 0);
        else
            return ASK_PYTHON;  /* pattern, and every other keyword */
        if (ok != PROVEN)
            return ok;
    }
    if (!shaped)
        return PROVEN;
    return object(props, required, extra, value, present, depth);
}

static PyObject *answer(int found)
{
    if (found == PROVEN)
        Py_RETURN_TRUE;
    if (found == NOT_PROVEN)
        Py_RETURN_FALSE;
    Py_RETURN_NONE;
}

/* The C readings `nativegrade.c` calls directly, through the capsule `_C_API`. */
static int glance_entry(PyObject *schema, PyObject *value)
{
    return node(schema, value, 1, 0);
}

static int fits_entry(PyObject *schema)
{
    return node(schema, Py_None, 0, 0);
}

static const GlanceAPI entries = {glance_entry, fits_entry, type_test, conforms_entry};

static PyObject *py_glance(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "glance(schema, value) takes 2 arguments");
        return NULL;
    }
    return answer(node(args[0], args[1], 1, 0));
}

static PyObject *py_fits(PyObject *module, PyObject *schema)
{
    return answer(node(schema, Py_None, 0, 0));
}

static PyObject *py_set_conforms(PyObject *module, PyObject *found)
{
    if (!PyCallable_Check(found)) {
        PyErr_SetString(PyExc_TypeError, "set_conforms(conforms): a callable");
        return NULL;
    }
    Py_XSETREF(conforms, Py_NewRef(found));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"glance", (PyCFunction)(void (*)(void))py_glance, METH_FASTCALL,
     "glance(schema, value): True, False, or None (ask schema.glance)"},
    {"fits", py_fits, METH_O, "fits(schema): True, False, or None (ask schema.glance)"},
    {"set_conforms", py_set_conforms, METH_O,
     "set_conforms(conforms): the format checker `format` is read with (glance.CONFORMS)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "toolproxy.schema.nativeglance",
    "schema.glance's first look in C (see nativeglance.c)", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_nativeglance(void)
{
    if (no_properties == NULL && (no_properties = PyDict_New()) == NULL)
        return NULL;
    if (no_names == NULL && (no_names = PyList_New(0)) == NULL)
        return NULL;
    PyObject *module = PyModule_Create(&definition);
    if (module == NULL)
        return NULL;
    /* `entries` for other C modules (nativeglance.h) */
    PyObject *api =
        PyCapsule_New((void *)&entries, "toolproxy.schema.nativeglance._C_API", NULL);
    int failed = PyModule_AddIntConstant(module, "MAX_DEPTH", MAX_DEPTH) < 0 ||
                 PyModule_AddObjectRef(module, "_C_API", api) < 0;
    Py_XDECREF(api);
    if (failed) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
