/* The schema stage of `nativegrade.c` for a call whose schema glance did not prove valid:
   `schemastage.check_schema` in C over the errors `nativeerrors.c` finds, for a schema
   that fits glance's subset (`glance.fits`) and arguments that are plain JSON
   (`jsonfast.plain_json`), the two conditions under which the Python grader words them
   by `quickerrors` too: each error's label, its note (`json_path: message`) and the
   arguments it flags, the earliest label of each name winning; then `checker._merged`.
   What it does not read (more than MAX_FLAGGED flagged names, an errorless walk, what
   the walk hands back) goes back to the Python grader's call. The only Python asked is
   `schemastage.type_label` (which type errors are conversions). */
#include "nativeerrors.h"

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
            Py_SETREF(path, concat((PyObject *[]){path, S.dot, name}, 3));
            continue;
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
    } else if (keyword == S.enum_ || keyword == S.const_ || keyword == S.minimum ||
               keyword == S.maximum || keyword == S.exclusiveMinimum ||
               keyword == S.exclusiveMaximum) {
        bucket = S.hallucinated;  /* a wrong value (schemastage.WRONG_VALUE_KEYWORDS) */
    }
    if (outranks(label, found->label))
        found->label = label;
    Py_ssize_t size = PyUnicode_GET_LENGTH(e->message);
    PyObject *message = size > MAX_MESSAGE ? PyUnicode_Substring(e->message, 0, MAX_MESSAGE)
                                           : Py_NewRef(e->message);
    PyObject *where = message ? json_path(e) : NULL;
    PyObject *note = concat((PyObject *[]){where, S.colon, message}, 3);
    PyObject *detail =
        note ? concat((PyObject *[]){keyword ? keyword : S.None_, S.colon, message}, 3) : NULL;
    int status = detail && append(found->notes, note) == 0 ? 0 : -1;
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
                status = append(out, PyList_GET_ITEM(matched, k));
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
