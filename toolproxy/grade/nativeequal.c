/* `equality.deep_equal` over JSON's types, in C: the same answers, or "ask the Python one".

   equal(a, b) -> True | False | None

   True and False are `equality.deep_equal_py`'s own answers; None hands the question back
   (`deep_equal` asks this first, when the compiled core is built, for values that are not
   two strs, two ints or two floats, which it compares itself). Read here: exact str, int,
   float, bool, None, list, tuple and dict with str keys, nested at most MAX_DEPTH deep;
   anything else met before the answer hands back. The rules are `deep_equal`'s: numbers by
   value (1 is 1.0, NaN equals nothing), a bool or None only itself, a list and a tuple
   item by item, dicts by their keys as a set and then each key's value. Nothing here runs
   Python code or raises: strs are compared as code points, numbers by CPython's own
   int/float comparison.

   Why: matched arguments that are lists or objects went through `deep_equal`'s stack of
   pairs: 1,901 instructions a fresh BFCL-shaped call, 723 with this (docs/benchmarks.md,
   "thirtieth session"). `tests/grade/test_nativeequal.py` holds it to the Python one. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MAX_DEPTH 64   /* deeper values are compared by the Python loop (no stack to spend) */
#define EQUAL 1
#define UNEQUAL 0
#define ASK_PYTHON -1

enum kind { OTHER, STR, INT, FLOAT, BOOL, NONE, DICT, SEQUENCE };

static enum kind kind_of(PyObject *v)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type)
        return STR;
    if (t == &PyLong_Type)
        return INT;
    if (t == &PyFloat_Type)
        return FLOAT;
    if (t == &PyBool_Type)
        return BOOL;
    if (v == Py_None)
        return NONE;
    if (t == &PyDict_Type)
        return DICT;
    if (t == &PyList_Type || t == &PyTuple_Type)
        return SEQUENCE;
    return OTHER;
}

static int equal(PyObject *a, PyObject *b, int depth);

/* Two exact dicts: the same keys (as a set), then each key's values equal. */
static int dicts(PyObject *a, PyObject *b, int depth)
{
    if (PyDict_GET_SIZE(a) != PyDict_GET_SIZE(b))
        return UNEQUAL;
    Py_ssize_t pos = 0;
    PyObject *key, *value, *other;
    while (PyDict_Next(b, &pos, &key, &value))  /* str keys only: then no lookup below */
        if (!Py_IS_TYPE(key, &PyUnicode_Type))  /* runs Python code (an __eq__) */
            return ASK_PYTHON;
    int answer = EQUAL;
    pos = 0;
    while (PyDict_Next(a, &pos, &key, &value)) {
        if (!Py_IS_TYPE(key, &PyUnicode_Type))
            return ASK_PYTHON;
        other = PyDict_GetItemWithError(b, key);  /* str keys both: no error */
        if (other == NULL)
            return UNEQUAL;  /* the keys differ: deep_equal compares them first */
        int found = equal(value, other, depth + 1);
        if (found == ASK_PYTHON)
            return ASK_PYTHON;
        if (found == UNEQUAL)
            answer = UNEQUAL;  /* the other keys still read: one of them may hand back */
    }
    return answer;
}

/* Two lists or tuples, in any mix: item by item. */
static int sequences(PyObject *a, PyObject *b, int depth)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(a);
    if (n != PySequence_Fast_GET_SIZE(b))
        return UNEQUAL;
    PyObject **xs = PySequence_Fast_ITEMS(a), **ys = PySequence_Fast_ITEMS(b);
    int answer = EQUAL;
    for (Py_ssize_t i = 0; i < n; i++) {
        int found = equal(xs[i], ys[i], depth + 1);
        if (found == ASK_PYTHON)
            return ASK_PYTHON;
        if (found == UNEQUAL)
            answer = UNEQUAL;
    }
    return answer;
}

/* Two numbers (int or float, not bool): by value, as CPython compares them. */
static int numbers(PyObject *a, PyObject *b)
{
    PyObject *same = PyObject_RichCompare(a, b, Py_EQ);  /* no identity shortcut: NaN */
    if (same == NULL) {
        PyErr_Clear();
        return ASK_PYTHON;
    }
    int found = same == Py_True;
    Py_DECREF(same);
    return found;
}

static int equal(PyObject *a, PyObject *b, int depth)
{
    if (depth > MAX_DEPTH)
        return ASK_PYTHON;
    enum kind ka = kind_of(a), kb = kind_of(b);
    if (ka == OTHER || kb == OTHER)
        return ASK_PYTHON;
    if (ka == SEQUENCE && kb == SEQUENCE)
        return sequences(a, b, depth);
    if (ka == DICT && kb == DICT)
        return dicts(a, b, depth);
    if ((ka == INT || ka == FLOAT) && (kb == INT || kb == FLOAT))
        return numbers(a, b);
    if (ka == STR && kb == STR)
        return PyUnicode_Compare(a, b) == 0;
    return a == b;  /* two bools or Nones: each only itself; two kinds: unequal */
}

/* The C reading `nativegrade.c` calls directly, through the capsule `_C_API`. */
static int equal_entry(PyObject *a, PyObject *b)
{
    return equal(a, b, 0);
}

static PyObject *py_equal(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "equal(a, b) takes 2 arguments");
        return NULL;
    }
    int found = equal(args[0], args[1], 0);
    if (found == EQUAL)
        Py_RETURN_TRUE;
    if (found == UNEQUAL)
        Py_RETURN_FALSE;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"equal", (PyCFunction)(void (*)(void))py_equal, METH_FASTCALL,
     "equal(a, b): True, False, or None (ask equality.deep_equal)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "toolproxy.grade.nativeequal",
    "equality.deep_equal over JSON's types in C (see nativeequal.c)", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_nativeequal(void)
{
    PyObject *module = PyModule_Create(&definition);
    if (module == NULL)
        return NULL;
    /* equal_entry for other C modules: 1 equal, 0 unequal, -1 ask deep_equal_py */
    PyObject *api = PyCapsule_New((void *)equal_entry, "toolproxy.grade.nativeequal._C_API", NULL);
    int failed = PyModule_AddIntConstant(module, "MAX_DEPTH", MAX_DEPTH) < 0 ||
                 PyModule_AddObjectRef(module, "_C_API", api) < 0;
    Py_XDECREF(api);
    if (failed) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
