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
    return some <= 0 ? some : append(s->errors, detail);
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

/* parsestage.json_type of a JSON value (NULL: another type's name, Python's to say). */
static const char *json_type(PyObject *v)
{
    if (v == Py_None)
        return "null";
    if (PyBool_Check(v))
        return "boolean";
    if (PyLong_Check(v) || PyFloat_Check(v))
        return "number";
    if (PyDict_CheckExact(v))
        return "object";
    if (PyList_CheckExact(v))
        return "array";
    return PyUnicode_CheckExact(v) ? "string" : NULL;
}

/* matchers.coercions: the value in other JSON types, losslessly (a new list). */
static PyObject *coercions(PyObject *v)
{
    PyObject *text;
    if (PyBool_Check(v))
        text = PyUnicode_FromString(v == Py_True ? "true" : "false");
    else if (PyFloat_CheckExact(v))
        text = PyObject_Repr(v);
    else if (PyLong_CheckExact(v))
        text = PyObject_Str(v);
    else if (PyUnicode_Check(v) || PyLong_Check(v) || PyFloat_Check(v))
        return PyObject_CallOneArg(H.coercions, v);  /* a str's rules, a subclass: Python's */
    else
        return PyList_New(0);
    PyObject *found = text ? PyList_New(1) : NULL;
    if (found == NULL)
        Py_XDECREF(text);
    else
        PyList_SET_ITEM(found, 0, text);
    return found;
}

/* semantic._misescaped_as's first test: could `value` be `want` misescaped? */
static int maybe_misescaped(PyObject *want, PyObject *value)
{
    if (!PyUnicode_Check(want) || PyUnicode_Compare(want, value) == 0)
        return 0;
    return PyUnicode_FindChar(want, '\\', 0, PY_SSIZE_T_MAX, 1) >= 0 ||
           PyUnicode_FindChar(value, '\\', 0, PY_SSIZE_T_MAX, 1) >= 0 ||
           PyUnicode_FindChar(want, '"', 0, PY_SSIZE_T_MAX, 1) >= 0;
}

/* The words of an exact, any_of or enum matcher's mismatch (`matchers._exact`,
   `_any_of`), or NULL with no error: words Python must add (literal_hint's). */
static PyObject *mismatch_words(PyObject *m, int exact, PyObject *value, PyObject **choices)
{
    PyObject *want = GET(m, matcher, value), *shown, *words = NULL;
    if (want == NULL)
        return NULL;
    if (exact && PyDict_Check(want) && PyDict_GET_SIZE(want)) {
        Py_DECREF(want);
        return NULL;  /* a mapping that may be a matcher written wrong: literal_hint */
    }
    if (!exact) {  /* matchers._choices: values (a list here), else value, else [value] */
        PyObject *values = GET(m, matcher, values);
        if (values != Py_None) {
            Py_SETREF(want, values);
        } else {
            Py_XDECREF(values);
            if (!PyList_CheckExact(want)) {
                PyObject *one = PyList_New(1);
                if (one != NULL)
                    PyList_SET_ITEM(one, 0, want);
                want = one;
            }
        }
        if (want == NULL)
            return NULL;
    }
    PyObject *got = show(value);
    if (got != NULL && (shown = show(want)) != NULL) {
        words = exact ? concat((PyObject *[]){S.expected_, shown, S.got_, got}, 4)
                      : concat((PyObject *[]){got, S.none_of, shown}, 3);
        Py_DECREF(shown);
    }
    Py_XDECREF(got);
    *choices = want;  /* the expected value, or the choices */
    if (words == NULL)
        Py_CLEAR(*choices);
    return words;
}

/* semantic.match_one for an exact, any_of or enum argument that does not match: a value
   right in another JSON type is type_coercion, anything else hallucinated_param. 0, -1,
   or HAND_BACK (words Python must write: a hint, or a string maybe misescaped). */
static int mismatch(PyObject *name, PyObject *m, int exact, PyObject *value, PyObject *found,
                    Semantic *s)
{
    PyObject *choices = NULL, *detail = mismatch_words(m, exact, value, &choices), *why;
    if (detail == NULL)
        return PyErr_Occurred() ? -1 : HAND_BACK;
    PyObject *other = coercions(value);
    int status = other ? 0 : -1, known;
    for (Py_ssize_t i = 0; status == 0 && i < PyList_GET_SIZE(other); i++)
        if ((status = choices_match(m, PyList_GET_ITEM(other, i), &known)) == 1) {
            const char *type = json_type(value);
            PyObject *got = type ? show(value) : NULL;
            why = got ? PyUnicode_FromFormat("%U is right in another JSON type (%s given)",
                                             got, type) : NULL;
            status = why == NULL ? (type ? -1 : HAND_BACK)
                     : add_arg(found, name, S.malformed, why) < 0 ? -1
                                                                  : failed(s, S.type_coercion, why);
            Py_XDECREF(got);
            Py_XDECREF(why);
            status = status == 0 ? 1 : status;
        }
    Py_XDECREF(other);
    if (status == 0 && PyUnicode_Check(value)) {  /* semantic._misescaped's candidates */
        Py_ssize_t n = exact ? 1 : 0;
        PyObject *values = exact ? NULL : GET(m, matcher, values);
        if (!exact && values != NULL && PyList_CheckExact(values))
            n = PyList_GET_SIZE(values);  /* any_of and enum: `values or []` */
        for (Py_ssize_t i = 0; status == 0 && i < n; i++)
            if (maybe_misescaped(exact ? choices : PyList_GET_ITEM(values, i), value))
                status = HAND_BACK;
        Py_XDECREF(values);
        status = PyErr_Occurred() ? -1 : status;
    }
    if (status == 0 && (add_arg(found, name, S.hallucinated, detail) < 0 ||
                        failed(s, S.hallucinated_param, detail) < 0))
        status = -1;
    Py_DECREF(detail);
    Py_XDECREF(choices);
    return status == 1 ? 0 : status;
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
    if (known) {  /* an exact, any_of or enum that does not match */
        PyObject *kind = GET(m, matcher, kind);
        int exact = kind ? str_is(kind, S.exact) : -1;
        Py_XDECREF(kind);
        int status = exact < 0 ? -1 : mismatch(name, m, exact, value, found, s);
        if (status != HAND_BACK)
            return status;
    }
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
    int status = append(found, grade);  /* the list holds the grade and its fields */
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
