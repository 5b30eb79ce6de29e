/* The semantic stage of `nativegrade.c`: `semantic.match_args` in C, for a call whose
   arguments are an object. Each expected argument in the expectation's order: absent is
   ok when optional, else missing (`literalhint.literal_hint`'s words for a mapping);
   present and matching an exact, any_of, enum or any matcher is ok; anything else is
   graded by `semantic.match_one`, the Python the pure grader runs. Then, when the
   expectation allows no other argument, each other one is hallucinated. */
#include "nativegrade.h"

/* One failing argument: its label onto the stage's (the first by precedence wins), its
   detail onto the stage's errors (when they are kept). */
static int failed(Semantic *s, PyObject *label, PyObject *detail)
{
    if (outranks(label, s->label))
        s->label = label;
    if (s->errors == NULL || detail == NULL || detail == Py_None)
        return 0;
    int some = PyObject_IsTrue(detail);
    return some <= 0 ? some : PyList_Append(s->errors, detail);
}

/* An absent argument: ok when optional, else missing (with literal_hint's words). */
static int absent(PyObject *name, PyObject *m, PyObject *found, Semantic *s)
{
    PyObject *optional = GET(m, matcher, optional), *kind, *value, *hint = NULL;
    int may = optional ? PyObject_IsTrue(optional) : -1;
    Py_XDECREF(optional);
    if (may < 0)
        return -1;
    if (may)
        return add_arg(found, name, S.ok, S.optional_absent);
    if ((kind = GET(m, matcher, kind)) == NULL)
        return -1;
    int exact = str_is(kind, S.exact);
    Py_DECREF(kind);
    if (exact) {  /* literal_hint is None but for a non-empty mapping */
        if ((value = GET(m, matcher, value)) == NULL)
            return -1;
        if (PyDict_Check(value) && PyDict_GET_SIZE(value))
            hint = PyObject_CallOneArg(H.literal_hint, value);
        Py_DECREF(value);
        if (PyErr_Occurred())
            return -1;
    }
    PyObject *detail = Py_NewRef(S.required_absent);
    if (hint != NULL && hint != Py_None) {
        Py_SETREF(detail, PyUnicode_FromFormat("required, absent (%S)", hint));
        if (detail == NULL) {
            Py_DECREF(hint);
            return -1;
        }
    }
    Py_XDECREF(hint);
    int status = add_arg(found, name, S.missing, detail);
    if (status == 0)
        status = failed(s, S.missing_required, detail);
    Py_DECREF(detail);
    return status;
}

/* A present argument: ok here when its matcher is exact, any_of, enum or any and the
   value matches, else as semantic.match_one grades it. */
static int present(PyObject *name, PyObject *m, PyObject *value, PyObject *found, Semantic *s)
{
    int known, ok = choices_match(m, value, &known);
    if (ok < 0)
        return -1;
    if (!known) {  /* `any`: ok, as `match` grades it */
        PyObject *kind = GET(m, matcher, kind);
        if (kind == NULL)
            return -1;
        ok = str_is(kind, S.any);
        Py_DECREF(kind);
    }
    if (ok)
        return add_arg(found, name, S.ok, NULL);
    PyObject *args[5] = {name, m, value, s->judge, s->failed_before};
    PyObject *graded = PyObject_Vectorcall(H.match_one, args, 5, NULL), *grade, *bucket;
    if (graded == NULL)
        return -1;
    if (!PyTuple_CheckExact(graded) || PyTuple_GET_SIZE(graded) != 2) {
        Py_DECREF(graded);
        PyErr_SetString(PyExc_TypeError, "match_one must return (label, ArgGrade)");
        return -1;
    }
    grade = PyTuple_GET_ITEM(graded, 1);
    int status = PyList_Append(found, grade);  /* the list holds the grade and its fields */
    if (status == 0 && (bucket = GET(grade, arg, bucket)) != NULL) {
        s->not_graded |= str_is(bucket, S.not_graded);
        Py_DECREF(bucket);
    }
    if (status == 0 && PyTuple_GET_ITEM(graded, 0) != Py_None) {
        PyObject *label = canonical(PyTuple_GET_ITEM(graded, 0));
        PyObject *detail = label ? GET(grade, arg, detail) : NULL;
        status = detail ? failed(s, label, detail) : -1;
        Py_XDECREF(detail);
    }
    Py_DECREF(graded);
    return PyErr_Occurred() ? -1 : status;
}

/* Each argument the expectation does not name, when it allows none: hallucinated. */
static int invented(Wanted *e, PyObject *args, PyObject *found, Semantic *s)
{
    Py_ssize_t pos = 0;
    PyObject *name, *value;
    while (PyDict_Next(args, &pos, &name, &value)) {
        int named = PyDict_Contains(e->args, name);
        if (named < 0)
            return -1;
        if (!named && (add_arg(found, name, S.hallucinated, S.not_expected) < 0 ||
                       failed(s, S.hallucinated_param, S.not_expected) < 0))
            return -1;
    }
    return 0;
}

/* semantic.proven_args: every expected argument present and matching, as pairing found
   (`matches` is true only where match_one grades ok, with no detail). */
int proven_args(Wanted *e, PyObject *args, PyObject *found, Semantic *s)
{
    Py_ssize_t pos = 0;
    PyObject *name, *m;
    while (PyDict_Next(e->args, &pos, &name, &m))
        if (add_arg(found, name, S.ok, NULL) < 0)
            return -1;
    if (e->allow_extra || PyDict_GET_SIZE(e->args) >= PyDict_GET_SIZE(args))
        return 0;
    return invented(e, args, found, s);
}

int semantic_stage(Wanted *e, PyObject *args, PyObject *found, Semantic *s)
{
    Py_ssize_t pos = 0, given = 0;
    PyObject *name, *m, *value;
    while (PyDict_Next(e->args, &pos, &name, &m)) {
        value = PyDict_GetItemWithError(args, name);  /* str keys: no error */
        int status = value == NULL ? absent(name, m, found, s) : present(name, m, value, found, s);
        if (status < 0)
            return -1;
        given += value != NULL;
    }
    if (e->allow_extra || given >= PyDict_GET_SIZE(args))
        return 0;
    return invented(e, args, found, s);
}
