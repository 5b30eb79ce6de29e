/* `quickerrors.iter_errors` in C, part of `nativegrade.c`, over glance's subset of JSON
   Schema: type, properties, required, additionalProperties, items, enum, const, the numeric
   bounds, the lengths, format, allOf, anyOf where an alternative is proven, and the
   annotations (`glance.fits`), for arguments that are plain JSON. The same errors in the
   same order as jsonschema gives them: each keyword as the schema lists it, a false
   schema's error one path step short, the extras of an additionalProperties schema walked
   as a set, those of a false one sorted in its message. An enum or const met by an object
   or a list, a path deeper than MAX_PATH, a type name that is none hand the call back.
   `nativeschema.c` reads the errors as `schemastage.check_schema` does. */
#include "nativeerrors.h"

#include <math.h>


/* jsonfast.plain_json: str keys, finite floats, JSON's own types only. */
int plain(PyObject *v, int depth)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type || t == &PyLong_Type || t == &PyBool_Type || v == Py_None)
        return 1;
    if (t == &PyFloat_Type)
        return isfinite(PyFloat_AS_DOUBLE(v));
    if (depth > MAX_PATH)
        return 0;
    if (t == &PyList_Type) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++)
            if (!plain(PyList_GET_ITEM(v, i), depth + 1))
                return 0;
        return 1;
    }
    if (t != &PyDict_Type)
        return 0;
    Py_ssize_t pos = 0;
    PyObject *key, *item;
    while (PyDict_Next(v, &pos, &key, &item))
        if (!PyUnicode_CheckExact(key) || !plain(item, depth + 1))
            return 0;
    return 1;
}

/* An error at `depth` steps of the walk's path (`message` stolen). */
static int add_error(Walk *w, PyObject *message, PyObject *keyword, PyObject *value,
                     PyObject *instance, int depth)
{
    if (message == NULL)
        return -1;
    Error *e = &w->errors[w->n++];
    e->message = message, e->keyword = keyword, e->value = value, e->instance = instance;
    e->schema = NULL, e->depth = depth;
    memcpy(e->path, w->stack, (size_t)depth * sizeof(Step));
    return w->n >= MAX_ERRORS ? STOP : 0;
}

/* Walk `sub` with `instance` one step further down (`name`, else `index`). */
static int step(Walk *w, PyObject *sub, PyObject *instance, PyObject *name, Py_ssize_t index)
{
    if (w->depth >= MAX_PATH)
        return HAND_BACK;
    w->stack[w->depth].name = name, w->stack[w->depth].index = index;
    w->depth++;
    int status = walk(w, sub, instance, 1);
    w->depth--;
    return status;
}

/* ", ".join(repr(x) for x in items) */
static PyObject *reprs(PyObject *items)
{
    Py_ssize_t n = PyList_GET_SIZE(items);
    PyObject *parts = PyList_New(n), *comma, *joined;
    for (Py_ssize_t i = 0; parts != NULL && i < n; i++) {
        PyObject *text = PyObject_Repr(PyList_GET_ITEM(items, i));
        if (text == NULL)
            Py_CLEAR(parts);
        else
            PyList_SET_ITEM(parts, i, text);
    }
    if (parts == NULL || (comma = PyUnicode_FromString(", ")) == NULL) {
        Py_XDECREF(parts);
        return NULL;
    }
    joined = PyUnicode_Join(comma, parts);
    Py_DECREF(comma);
    Py_DECREF(parts);
    return joined;
}

static int type_keyword(Walk *w, PyObject *types, PyObject *instance)
{
    int one = PyUnicode_Check(types);
    Py_ssize_t n = one ? 1 : PyList_GET_SIZE(types);
    for (Py_ssize_t i = 0; i < n; i++) {
        int found = H.glance->type_test(one ? types : PyList_GET_ITEM(types, i), instance);
        if (found != 0)
            return found == 1 ? 0 : HAND_BACK;  /* no such type: fits refuses it */
    }
    PyObject *names = one ? PyList_New(1) : Py_NewRef(types);  /* [types] for a name */
    if (names == NULL)
        return -1;
    if (one)
        PyList_SET_ITEM(names, 0, Py_NewRef(types));
    PyObject *listed = reprs(names);
    Py_DECREF(names);
    if (listed == NULL)
        return -1;
    PyObject *message = PyUnicode_FromFormat("%R is not of type %U", instance, listed);
    Py_DECREF(listed);
    return add_error(w, message, S.type, types, instance, w->depth);
}

static int properties_keyword(Walk *w, PyObject *properties, PyObject *instance)
{
    if (!PyDict_CheckExact(instance))
        return 0;
    Py_ssize_t pos = 0;
    PyObject *name, *sub, *item;
    int status = 0;
    while (status == 0 && PyDict_Next(properties, &pos, &name, &sub))
        if ((item = PyDict_GetItemWithError(instance, name)) != NULL)
            status = step(w, sub, item, name, 0);
    return status;
}

static int required_keyword(Walk *w, PyObject *required, PyObject *instance)
{
    if (!PyDict_CheckExact(instance))
        return 0;
    int status = 0;
    for (Py_ssize_t i = 0; status == 0 && i < PyList_GET_SIZE(required); i++) {
        PyObject *name = PyList_GET_ITEM(required, i);
        int given = PyDict_Contains(instance, name);
        if (given < 0)
            return -1;
        if (!given)
            status = add_error(w, PyUnicode_FromFormat("%R is a required property", name),
                               S.required, required, instance, w->depth);
    }
    return status;
}

/* The instance's names that are no property of `schema`, in the instance's order. */
PyObject *extra_names(PyObject *schema, PyObject *instance)
{
    PyObject *props = PyDict_GetItemWithError(schema, S.properties);
    PyObject *extras = PyList_New(0), *name, *item;
    Py_ssize_t pos = 0;
    while (extras != NULL && PyDict_Next(instance, &pos, &name, &item)) {
        int named = props && PyDict_Check(props) ? PyDict_Contains(props, name) : 0;
        if (named < 0 || (!named && PyList_Append(extras, name) < 0))
            Py_CLEAR(extras);
    }
    return extras;
}

static int additional_keyword(Walk *w, PyObject *extra, PyObject *instance, PyObject *schema)
{
    if (!PyDict_CheckExact(instance) || extra == Py_True)
        return 0;
    PyObject *extras = extra_names(schema, instance);
    if (extras == NULL)
        return -1;
    int status = 0;
    if (PyDict_CheckExact(extra)) {  /* each extra's value, walked as a set, as jsonschema */
        PyObject *set = PySet_New(extras), *iter = set ? PyObject_GetIter(set) : NULL, *name;
        while (iter != NULL && status == 0 && (name = PyIter_Next(iter)) != NULL) {
            status = step(w, extra, PyDict_GetItemWithError(instance, name), name, 0);
            Py_DECREF(name);  /* the instance holds it */
        }
        status = iter == NULL || PyErr_Occurred() ? -1 : status;
        Py_XDECREF(iter);
        Py_XDECREF(set);
    } else if (extra == Py_False && PyList_GET_SIZE(extras)) {
        PyObject *listed = PyList_Sort(extras) < 0 ? NULL : reprs(extras);
        const char *verb = PyList_GET_SIZE(extras) == 1 ? "was" : "were";
        status = listed == NULL ? -1 : add_error(w,
            PyUnicode_FromFormat("Additional properties are not allowed (%U %s unexpected)",
                                 listed, verb),
            S.additionalProperties, extra, instance, w->depth);
        if (status >= 0)
            w->errors[w->n - 1].schema = schema;
        Py_XDECREF(listed);
    } else if (extra != Py_False) {
        status = HAND_BACK;
    }
    Py_DECREF(extras);
    return status;
}

static int items_keyword(Walk *w, PyObject *items, PyObject *instance)
{
    Py_ssize_t n = PyList_CheckExact(instance) ? PyList_GET_SIZE(instance) : 0;
    if (n == 0)
        return 0;
    if (items == Py_False) {
        PyObject *rest = n != 1 ? instance : PyList_GET_ITEM(instance, 0);
        return add_error(w,
            PyUnicode_FromFormat("Expected at most 0 items but found %zd extra: %R", n, rest),
            S.items, items, instance, w->depth);
    }
    int status = 0;
    for (Py_ssize_t i = 0; status == 0 && i < n; i++)
        status = step(w, items, PyList_GET_ITEM(instance, i), NULL, i);
    return status;
}

/* jsonschema's `equal` of an option and a scalar instance: 1, 0, or HAND_BACK. */
static int scalar_equal(PyObject *option, PyObject *instance)
{
    if (option == instance)
        return 1;
    if (PyUnicode_Check(option) || PyUnicode_Check(instance))
        return PyUnicode_CheckExact(option) && PyUnicode_CheckExact(instance) &&
               PyUnicode_Compare(option, instance) == 0;
    if (PyBool_Check(option) || PyBool_Check(instance) || option == Py_None ||
        instance == Py_None)
        return 0;  /* each only itself (`unbool`) */
    if ((PyLong_CheckExact(option) || PyFloat_CheckExact(option)) &&
        (PyLong_CheckExact(instance) || PyFloat_CheckExact(instance))) {
        int same = PyObject_RichCompareBool(option, instance, Py_EQ);
        return same < 0 ? -1 : same;
    }
    return PyList_CheckExact(option) || PyDict_CheckExact(option) ? 0 : HAND_BACK;
}

static int is_scalar(PyObject *v)
{
    return !PyList_CheckExact(v) && !PyDict_CheckExact(v);  /* plain JSON */
}

static int enum_keyword(Walk *w, PyObject *options, PyObject *instance, PyObject *keyword)
{
    if (!is_scalar(instance))
        return HAND_BACK;  /* jsonschema compares lists and objects its own way */
    int is_enum = keyword == S.enum_;
    Py_ssize_t n = is_enum ? PyList_GET_SIZE(options) : 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int same = scalar_equal(is_enum ? PyList_GET_ITEM(options, i) : options, instance);
        if (same != 0)
            return same == 1 ? 0 : same;
    }
    PyObject *message = is_enum ? PyUnicode_FromFormat("%R is not one of %R", instance, options)
                                : PyUnicode_FromFormat("%R was expected", options);
    return add_error(w, message, keyword, options, instance, w->depth);
}

/* quickerrors._bound: a number (bool is none) past `bound`, `test` the comparison that
   fails it, in jsonschema's words. */
static int bound_keyword(Walk *w, PyObject *keyword, PyObject *bound, PyObject *instance,
                         int test, const char *words)
{
    if (!PyLong_CheckExact(instance) && !PyFloat_CheckExact(instance))
        return 0;
    int past = PyObject_RichCompareBool(instance, bound, test);  /* int, float: exact */
    if (past <= 0)
        return past;
    return add_error(w, PyUnicode_FromFormat("%R is %s %R", instance, words, bound), keyword,
                     bound, instance, w->depth);
}

/* quickerrors._size: a str's code points or a list's items fewer (`at_least`) or more
   than `limit` (an int, at least 0: `fits` read it), in jsonschema's words, which differ
   at an edge (at least 1, at most 0). */
static int size_keyword(Walk *w, PyObject *keyword, PyObject *limit, PyObject *instance,
                        int of_list, int at_least)
{
    if (!Py_IS_TYPE(instance, of_list ? &PyList_Type : &PyUnicode_Type))
        return 0;
    Py_ssize_t n = of_list ? PyList_GET_SIZE(instance) : PyUnicode_GET_LENGTH(instance);
    int overflow;
    long long bound = PyLong_AsLongLongAndOverflow(limit, &overflow);
    if (overflow < 0 || (overflow == 0 && bound < 0))
        return HAND_BACK;  /* not a count: fits refuses it */
    int past = overflow > 0 ? at_least : at_least ? n < bound : n > bound;
    if (!past)
        return 0;
    const char *words = at_least ? (overflow == 0 && bound == 1 ? "should be non-empty"
                                                                : "is too short")
                                 : (overflow == 0 && bound == 0 ? "is expected to be empty"
                                                                : "is too long");
    return add_error(w, PyUnicode_FromFormat("%R %s", instance, words), keyword, limit,
                     instance, w->depth);
}

/* quickerrors._format: the format checker's words for a value it does not take
   (`FormatChecker.check`'s, whose answer `conforms` gives); a checker that raises hands
   the call back (the Python grader notes the schema not checked). */
static int format_keyword(Walk *w, PyObject *name, PyObject *instance)
{
    int yes = H.glance->conforms(instance, name);
    if (yes < 0) {
        PyErr_Clear();
        return HAND_BACK;
    }
    if (yes)
        return 0;
    return add_error(w, PyUnicode_FromFormat("%R is not a %R", instance, name), S.format,
                     name, instance, w->depth);
}

/* quickerrors._all_of: each alternative's errors, at this instance's path. */
static int all_of_keyword(Walk *w, PyObject *subs, PyObject *instance)
{
    int status = 0;
    for (Py_ssize_t i = 0; status == 0 && i < PyList_GET_SIZE(subs); i++)
        status = walk(w, PyList_GET_ITEM(subs, i), instance, 0);
    return status;
}

/* quickerrors._any_of where an alternative proves the instance valid (glance: then its
   walk finds no error, and anyOf gives none). None proven hands the call back: the
   Python grader words anyOf's error with its context. */
static int any_of_keyword(PyObject *subs, PyObject *instance)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subs); i++) {
        int found = H.glance->glance(PyList_GET_ITEM(subs, i), instance);
        if (found == 1)
            return 0;
        if (found < 0)
            break;
    }
    return HAND_BACK;
}

/* The bounds (quickerrors.KEYWORDS' `_bound`s): the comparison that fails each, its words. */
static const struct Bound {
    PyObject **keyword;
    int test;
    const char *words;
} BOUNDS[] = {
    {&S.minimum, Py_LT, "less than the minimum of"},
    {&S.maximum, Py_GT, "greater than the maximum of"},
    {&S.exclusiveMinimum, Py_LE, "less than or equal to the minimum of"},
    {&S.exclusiveMaximum, Py_GE, "greater than or equal to the maximum of"},
};

/* The lengths (`_size`s): of a list's items or a str's code points, at least or at most. */
static const struct Size {
    PyObject **keyword;
    int of_list, at_least;
} SIZES[] = {
    {&S.minLength, 0, 1}, {&S.maxLength, 0, 0}, {&S.minItems, 1, 1}, {&S.maxItems, 1, 0},
};

static const struct Bound *bound_of(PyObject *k)
{
    for (size_t i = 0; i < sizeof BOUNDS / sizeof BOUNDS[0]; i++)
        if (str_is(k, *BOUNDS[i].keyword))
            return &BOUNDS[i];
    return NULL;
}

static const struct Size *size_of(PyObject *k)
{
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++)
        if (str_is(k, *SIZES[i].keyword))
            return &SIZES[i];
    return NULL;
}

/* quickerrors._Walk.descend over glance's subset (`pushed`: this walk took a step). */
int walk(Walk *w, PyObject *schema, PyObject *instance, int pushed)
{
    const struct Bound *bound;
    const struct Size *size;
    if (schema == Py_True)
        return 0;
    if (schema == Py_False)  /* jsonschema's quirk: no path step at this level */
        return add_error(w, PyUnicode_FromFormat("False schema does not allow %R", instance),
                         NULL, NULL, instance, w->depth - pushed);
    if (!PyDict_CheckExact(schema))
        return HAND_BACK;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    int status = 0;
    while (status == 0 && PyDict_Next(schema, &pos, &k, &v)) {
        if (str_is(k, S.type))
            status = type_keyword(w, v, instance);
        else if (str_is(k, S.properties))
            status = properties_keyword(w, v, instance);
        else if (str_is(k, S.required))
            status = required_keyword(w, v, instance);
        else if (str_is(k, S.additionalProperties))
            status = additional_keyword(w, v, instance, schema);
        else if (str_is(k, S.items))
            status = items_keyword(w, v, instance);
        else if (str_is(k, S.enum_))
            status = enum_keyword(w, v, instance, S.enum_);
        else if (str_is(k, S.const_))
            status = enum_keyword(w, v, instance, S.const_);
        else if ((bound = bound_of(k)) != NULL)
            status = bound_keyword(w, *bound->keyword, v, instance, bound->test, bound->words);
        else if ((size = size_of(k)) != NULL)
            status = size_keyword(w, *size->keyword, v, instance, size->of_list, size->at_least);
        else if (str_is(k, S.format))
            status = format_keyword(w, v, instance);
        else if (str_is(k, S.allOf))
            status = all_of_keyword(w, v, instance);
        else if (str_is(k, S.anyOf))
            status = any_of_keyword(v, instance);
    }  /* the rest are annotations: `fits` read every keyword */
    return status;
}

