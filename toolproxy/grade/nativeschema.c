/* The schema stage of `nativegrade.c` for a call whose schema glance did not prove valid:
   `quickerrors.iter_errors` and `schemastage.check_schema` in C, for a schema that fits
   glance's subset (`glance.fits`: type, properties, required, additionalProperties,
   items, enum, const and the annotations) and arguments that are plain JSON
   (`jsonfast.plain_json`), the two conditions under which the Python grader words the
   errors by `quickerrors` too. The same errors in the same order (jsonschema's: each
   keyword as the schema lists it, a false schema's error one path step short, the extras
   of an additionalProperties schema walked as a set), then the same labels, notes and
   flagged arguments. What it does not read (an enum or const met by an object or list,
   a path deeper than MAX_PATH, more than MAX_FLAGGED flagged names, an errorless walk)
   hands the call back. The only Python asked is `schemastage.type_label` (which type
   errors are conversions). */
#include "nativegrade.h"

#include <math.h>

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

static int walk(Walk *w, PyObject *schema, PyObject *instance, int pushed);

/* jsonfast.plain_json: str keys, finite floats, JSON's own types only. */
static int plain(PyObject *v, int depth)
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
static PyObject *extra_names(PyObject *schema, PyObject *instance)
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

/* quickerrors._Walk.descend over glance's subset (`pushed`: this walk took a step). */
static int walk(Walk *w, PyObject *schema, PyObject *instance, int pushed)
{
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
    }  /* the rest are annotations: `fits` read every keyword */
    return status;
}

/* schemastage._path: a path's steps (and `last`, if any) as an argument's name. */
static PyObject *path_name(Step *steps, int depth, PyObject *last)
{
    int n = depth + (last != NULL);
    PyObject *only = last ? last : depth ? steps[0].name : NULL;
    if (n == 1 && only != NULL && PyUnicode_GET_LENGTH(only))
        return Py_NewRef(only);
    PyObject *parts = PyList_New(n), *dot;
    for (int i = 0; parts != NULL && i < n; i++) {
        PyObject *name = i < depth ? steps[i].name : last;
        PyObject *text = name ? Py_NewRef(name) : PyUnicode_FromFormat("%zd", steps[i].index);
        if (text == NULL)
            Py_CLEAR(parts);
        else
            PyList_SET_ITEM(parts, i, text);
    }
    if (parts == NULL || (dot = PyUnicode_FromString(".")) == NULL) {
        Py_XDECREF(parts);
        return NULL;
    }
    PyObject *joined = PyUnicode_Join(dot, parts);
    Py_DECREF(dot);
    Py_DECREF(parts);
    if (joined != NULL && PyUnicode_GET_LENGTH(joined) == 0)
        Py_SETREF(joined, Py_NewRef(S.arguments_path));
    return joined;
}

/* quickerrors._JSON_NAME (`^[a-zA-Z][a-zA-Z0-9_]*$`, whose `$` also takes a last "\n"). */
static int json_name(PyObject *name)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(name);
    if (n > 1 && PyUnicode_READ_CHAR(name, n - 1) == '\n')
        n--;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(name, i);
        int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!letter && (i == 0 || !((c >= '0' && c <= '9') || c == '_')))
            return 0;
    }
    return n > 0;
}

/* QuickError.json_path */
static PyObject *json_path(Error *e)
{
    PyObject *path = Py_NewRef(S.dollar);
    for (int i = 0; path != NULL && i < e->depth; i++) {
        PyObject *name = e->path[i].name, *part;
        if (name == NULL) {
            part = PyUnicode_FromFormat("[%zd]", e->path[i].index);
        } else if (json_name(name)) {
            part = PyUnicode_FromFormat(".%U", name);
        } else {
            PyObject *a = PyUnicode_FromString("\\"), *b = PyUnicode_FromString("\\\\");
            PyObject *c = PyUnicode_FromString("'"), *d = PyUnicode_FromString("\\'");
            PyObject *once = a && b ? PyUnicode_Replace(name, a, b, -1) : NULL;
            PyObject *twice = once && c && d ? PyUnicode_Replace(once, c, d, -1) : NULL;
            part = twice ? PyUnicode_FromFormat("['%U']", twice) : NULL;
            Py_XDECREF(a), Py_XDECREF(b), Py_XDECREF(c), Py_XDECREF(d);
            Py_XDECREF(once), Py_XDECREF(twice);
        }
        PyObject *longer = part ? PyUnicode_Concat(path, part) : NULL;
        Py_XDECREF(part);
        Py_SETREF(path, longer);
    }
    return path;
}

/* Flag argument `name` (stolen) with `label`: the earliest label of each name wins
   (`outranks`); `detail` (borrowed) is "keyword: message". 0, -1, or HAND_BACK. */
static int flag(Findings *found, PyObject *name, PyObject *label, PyObject *bucket,
                PyObject *detail)
{
    if (name == NULL)
        return -1;
    for (int i = 0; i < found->n_flags; i++) {
        Flag *f = &found->flags[i];
        if (PyUnicode_Compare(f->name, name) == 0) {
            Py_DECREF(name);
            if (outranks(label, f->label)) {
                f->label = label, f->bucket = bucket;
                Py_SETREF(f->detail, Py_NewRef(detail));
            }
            return 0;
        }
    }
    if (found->n_flags >= MAX_FLAGGED) {
        Py_DECREF(name);
        return HAND_BACK;
    }
    Flag *f = &found->flags[found->n_flags++];
    f->name = name, f->label = label, f->bucket = bucket, f->detail = Py_NewRef(detail);
    return 0;
}

/* schemastage._label_error and check_schema's reading of one error. */
static int read_error(Error *e, Findings *found)
{
    PyObject *label = S.schema_violation, *bucket = S.malformed, *keyword = e->keyword;
    if (keyword == S.type) {
        PyObject *named = PyObject_CallFunctionObjArgs(H.type_label, e->instance, e->value, NULL);
        label = named ? canonical(named) : NULL;
        Py_XDECREF(named);
        if (label == NULL)
            return -1;
    } else if (keyword == S.required) {
        label = S.missing_required, bucket = S.missing;
    } else if (keyword == S.additionalProperties) {
        label = S.hallucinated_param, bucket = S.hallucinated;
    } else if (keyword == S.enum_ || keyword == S.const_) {
        bucket = S.hallucinated;  /* a wrong value */
    }
    if (outranks(label, found->label))
        found->label = label;
    Py_ssize_t size = PyUnicode_GET_LENGTH(e->message);
    PyObject *message = size > MAX_MESSAGE ? PyUnicode_Substring(e->message, 0, MAX_MESSAGE)
                                           : Py_NewRef(e->message);
    PyObject *where = message ? json_path(e) : NULL;
    PyObject *note = where ? PyUnicode_FromFormat("%U: %U", where, message) : NULL;
    PyObject *detail = !note ? NULL
                       : keyword ? PyUnicode_FromFormat("%U: %U", keyword, message)
                                 : PyUnicode_FromFormat("None: %U", message);
    int status = detail && PyList_Append(found->notes, note) == 0 ? 0 : -1;
    if (status == 0 && keyword == S.required) {  /* every required name absent, each time */
        for (Py_ssize_t i = 0; status == 0 && i < PyList_GET_SIZE(e->value); i++) {
            PyObject *name = PyList_GET_ITEM(e->value, i);
            int given = PyDict_Contains(e->instance, name);
            if (given < 0)
                status = -1;
            else if (!given)
                status = flag(found, path_name(e->path, e->depth, name), label, bucket, detail);
        }
    } else if (status == 0 && keyword == S.additionalProperties) {  /* each extra name */
        PyObject *extras = extra_names(e->schema, e->instance);
        Py_ssize_t n = extras ? PyList_GET_SIZE(extras) : 0;
        status = extras ? 0 : -1;
        for (Py_ssize_t i = 0; status == 0 && i < (n ? n : 1); i++) {  /* none: the object */
            PyObject *x = n ? PyList_GET_ITEM(extras, i) : NULL;
            x = x && PyUnicode_GET_LENGTH(x) ? x : NULL;
            status = flag(found, path_name(e->path, e->depth, x), label, bucket, detail);
        }
        Py_XDECREF(extras);
    } else if (status == 0) {
        status = flag(found, path_name(e->path, e->depth, NULL), label, bucket, detail);
    }
    Py_XDECREF(message);
    Py_XDECREF(where);
    Py_XDECREF(note);
    Py_XDECREF(detail);
    return status;
}

/* checker._merged on flat lists (`grades.call_grade_of`): each argument's grade, the
   schema stage's where it flagged the name, then the names only the schema flagged. */
PyObject *merged_args(PyObject *matched, Findings *f)
{
    PyObject *out = PyList_New(0);
    char used[MAX_FLAGGED] = {0};
    Py_ssize_t i = 0, n = PyList_GET_SIZE(matched);
    while (out != NULL && i < n) {
        PyObject *item = PyList_GET_ITEM(matched, i);
        int flat = PyUnicode_CheckExact(item);  /* a name, its bucket and detail; else a grade */
        PyObject *name = flat ? Py_NewRef(item) : GET(item, arg, name);
        int hit = -1, status = name ? 0 : -1;
        for (int k = 0; name != NULL && k < f->n_flags && hit < 0; k++)
            if (PyUnicode_Compare(f->flags[k].name, name) == 0)
                hit = k;
        Py_XDECREF(name);
        if (hit >= 0) {
            used[hit] = 1;
            status = add_arg(out, f->flags[hit].name, f->flags[hit].bucket, f->flags[hit].detail);
        } else if (status == 0) {
            for (Py_ssize_t k = i; status == 0 && k < i + (flat ? 3 : 1); k++)
                status = PyList_Append(out, PyList_GET_ITEM(matched, k));
        }
        if (status < 0)
            Py_CLEAR(out);
        i += flat ? 3 : 1;
    }
    for (int k = 0; out != NULL && k < f->n_flags; k++)
        if (!used[k] && add_arg(out, f->flags[k].name, f->flags[k].bucket, f->flags[k].detail) < 0)
            Py_CLEAR(out);
    return out;
}

void release_findings(Findings *found)
{
    for (int i = 0; i < found->n_flags; i++) {
        Py_DECREF(found->flags[i].name);
        Py_DECREF(found->flags[i].detail);
    }
    found->n_flags = 0;
    Py_CLEAR(found->notes);
}

int schema_errors(PyObject *schema, PyObject *args, Findings *found)
{
    found->label = NULL, found->notes = NULL, found->n_flags = 0;
    if (H.glance->fits(schema) != 1 || !plain(args, 0))
        return HAND_BACK;  /* the Python grader asks jsonschema itself */
    Walk w;
    w.n = w.depth = 0;
    if ((w.errors = PyMem_Malloc(MAX_ERRORS * sizeof(Error))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int status = walk(&w, schema, args, 0);
    if (status == STOP)
        status = 0;
    if (status == 0 && w.n == 0)
        status = HAND_BACK;  /* glance and the walk disagree: the Python grader's call */
    if (status == 0 && (found->notes = PyList_New(0)) == NULL)
        status = -1;
    for (int i = 0; status == 0 && i < w.n; i++)
        status = read_error(&w.errors[i], found);
    for (int i = 0; i < w.n; i++)
        Py_DECREF(w.errors[i].message);
    PyMem_Free(w.errors);
    if (status != 0)
        release_findings(found);
    return status;
}
