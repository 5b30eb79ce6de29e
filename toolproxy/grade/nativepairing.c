/* The selection stage of `nativegrade.c`: `pairing.pair_calls` and `checker._selection`
   in C, on one case's reading (`Grading`). The same pairs, labels and words; the Python
   it asks is `toolnames.same_tool` (two names one of which ends with the other),
   `matchers.matches` (a matcher kind other than exact, any_of, enum and any),
   `equality.deep_equal_py` (values `nativeequal.c` hands back) and `checker.read_arguments`
   (a call the wire parser did not read as an object). */
#include "nativegrade.h"

/* ToolNames.same: does the called name mean the expected tool? (`expected` an exact str) */
int same(Grading *g, PyObject *observed, PyObject *expected)
{
    if (observed == Py_None || PyUnicode_GET_LENGTH(observed) == 0)
        return 0;
    if (offers_any(g) && offered_schema(g, observed) == NULL)
        return 0;  /* a name that was not offered: never */
    if (str_is(observed, expected))
        return 1;
    if (PyUnicode_GET_LENGTH(expected) == 0)
        return 0;
    /* same_tool: a prefixed name ends with the bare one; else they differ */
    Py_ssize_t ends = PyUnicode_Tailmatch(observed, expected, 0, PY_SSIZE_T_MAX, 1);
    if (ends == 0)
        ends = PyUnicode_Tailmatch(expected, observed, 0, PY_SSIZE_T_MAX, 1);
    if (ends <= 0)
        return (int)ends;
    PyObject *servers = g->has_servers ? g->servers : NULL;
    PyObject *none = PyTuple_New(0);
    if (none == NULL)
        return -1;
    PyObject *found = PyObject_CallFunctionObjArgs(H.same_tool, observed, expected,
                                                   servers ? servers : none, NULL);
    Py_DECREF(none);
    if (found == NULL)
        return -1;
    int yes = PyObject_IsTrue(found);
    Py_DECREF(found);
    return yes;
}

/* matchers.matches for exact, any_of and enum (`*known` 0 for any other kind): 1, 0, -1 */
int choices_match(PyObject *m, PyObject *value, int *known)
{
    PyObject *kind = GET(m, matcher, kind);
    if (kind == NULL)
        return -1;
    int exact = str_is(kind, S.exact);
    int any_of = !exact && (str_is(kind, S.any_of) || str_is(kind, S.enum_));
    Py_DECREF(kind);
    *known = exact || any_of;
    if (!*known)
        return 0;
    if (exact) {
        PyObject *want = GET(m, matcher, value);
        if (want == NULL)
            return -1;
        int found = json_equal(want, value);
        Py_DECREF(want);
        return found;
    }
    /* matchers._choices: `values`, else `value` when a list, else [value] */
    PyObject *choices = GET(m, matcher, values);
    if (choices == NULL)
        return -1;
    if (choices == Py_None) {
        Py_DECREF(choices);
        choices = GET(m, matcher, value);
        if (choices == NULL)
            return -1;
        if (!PyList_CheckExact(choices)) {
            int found = json_equal(choices, value);
            Py_DECREF(choices);
            return found;
        }
    } else if (!PyList_CheckExact(choices)) {  /* some other iterable: Python's loop */
        Py_DECREF(choices);
        *known = 0;
        return 0;
    }
    int found = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(choices) && found == 0; i++)
        found = json_equal(PyList_GET_ITEM(choices, i), value);
    Py_DECREF(choices);
    return found;
}

/* matchers.matches: 1, 0, -1 */
int args_match(PyObject *m, PyObject *value)
{
    int known, found = choices_match(m, value, &known);
    if (found < 0 || known)
        return found;
    PyObject *kind = GET(m, matcher, kind);
    if (kind == NULL)
        return -1;
    int any = str_is(kind, S.any), judge = str_is(kind, S.judge);
    Py_DECREF(kind);
    if (any || judge)
        return any;  /* `any` always matches, a judge never does here */
    PyObject *answer = PyObject_CallFunctionObjArgs(H.matches, m, value, NULL);
    if (answer == NULL)
        return -1;
    found = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    return found;
}

/* call_arguments(o, incomplete=False)[0]: the wire parser's object, else the Python
   reading (borrowed: held by the call's reading). NULL with an error set. */
static PyObject *reading(Seen *o)
{
    if (o->parsed)
        return o->arguments;
    if (o->read == NULL)
        o->read = PyObject_CallOneArg(H.read_arguments, o->call);
    return o->read;
}

/* pairing._score: 2 an argument present and matching, 1 present; -1 on an error */
static int score(Wanted *e, PyObject *args)
{
    if (!PyDict_Check(args))
        return 0;
    int total = 0;
    Py_ssize_t pos = 0;
    PyObject *name, *m;
    while (PyDict_Next(e->args, &pos, &name, &m)) {
        PyObject *value = PyDict_GetItemWithError(args, name);  /* str keys: no error */
        if (value == NULL)
            continue;
        int found = args_match(m, value);
        if (found < 0)
            return -1;
        total += found ? 2 : 1;
    }
    return total;
}

/* pairing._in_place: every call where it was expected? */
static int in_place(Grading *g)
{
    if (g->n_wanted != g->n_seen)
        return 0;
    for (Py_ssize_t i = 0; i < g->n_wanted; i++) {
        int found = same(g, g->seen[i].name, g->wanted[i].tool);
        if (found <= 0)
            return found;
    }
    return 1;
}

/* pairing._full_diagonal: each expected call's own call matches every argument, all
   expectations naming as many? */
static int full_diagonal(Grading *g)
{
    Py_ssize_t size = PyDict_GET_SIZE(g->wanted[0].args);
    for (Py_ssize_t i = 0; i < g->n_wanted; i++) {
        if (PyDict_GET_SIZE(g->wanted[i].args) != size)
            return 0;
        PyObject *args = reading(&g->seen[i]);
        if (args == NULL)
            return -1;
        int found = score(&g->wanted[i], args);
        if (found != 2 * size)
            return found < 0 ? -1 : 0;
    }
    return 1;
}

/* pairing._prove: call j's arguments parsed, and every one of expectation i's matched. */
static void prove(Grading *g, int i, int j)
{
    PyObject *args = g->seen[j].parsed ? g->seen[j].arguments : g->seen[j].read;
    if (args != NULL && PyDict_Check(args))
        g->seen[j].proven = i + 1;
}

static int by_key(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* pairing._pair_unordered: each expected call's observed one in `taken` (-1: none). */
static int pair_unordered(Grading *g, int *taken)
{
    int n_e = (int)g->n_wanted, n_o = (int)g->n_seen;
    int placed = n_e == n_o ? in_place(g) : 0, found;
    if (placed < 0)
        return -1;
    if (placed && (found = full_diagonal(g)) != 0) {
        for (int i = 0; i < n_e && found > 0; i++)
            taken[i] = i, prove(g, i, i);
        return found < 0 ? -1 : 0;
    }
    uint32_t rows[MAX_CALLS], columns = 0;  /* rows[i]: the calls naming expectation i's tool */
    int ambiguous = 0;
    for (int i = 0; i < n_e; i++) {
        int earlier = -1;
        for (int k = 0; k < i && earlier < 0; k++)
            if (str_is(g->wanted[k].tool, g->wanted[i].tool))
                earlier = k;
        if (earlier >= 0) {
            rows[i] = rows[earlier];
            ambiguous |= rows[i] != 0;
        } else {
            rows[i] = 0;
            for (int j = 0; j < n_o; j++) {
                if ((found = same(g, g->seen[j].name, g->wanted[i].tool)) < 0)
                    return -1;
                if (found) {
                    ambiguous |= (columns >> j) & 1;
                    rows[i] |= (uint32_t)1 << j;
                    columns |= (uint32_t)1 << j;
                }
            }
        }
        ambiguous |= (rows[i] & (rows[i] - 1)) != 0;  /* more than one call */
    }
    uint32_t used = 0;
    if (!ambiguous) {
        for (int i = 0; i < n_e; i++)
            for (int j = 0; j < n_o; j++)
                if ((rows[i] >> j & 1) && !(used >> j & 1)) {
                    taken[i] = j;
                    used |= (uint32_t)1 << j;
                    break;
                }
        return 0;
    }
    for (int j = 0; j < n_o; j++)
        if (reading(&g->seen[j]) == NULL)
            return -1;
    if (!placed && n_o >= n_e) {  /* _in_order: each call at its own place a candidate */
        int diagonal = 1;
        for (int i = 0; i < n_e && diagonal; i++)
            diagonal = rows[i] >> i & 1;
        if (diagonal && (found = full_diagonal(g)) != 0) {
            for (int i = 0; i < n_e && found > 0; i++)
                taken[i] = i, prove(g, i, i);
            return found < 0 ? -1 : 0;
        }
    }
    /* argument scores, best first: (best - score, i, j) as one int, sorted */
    int64_t keys[MAX_CALLS * MAX_CALLS];
    int n_keys = 0, best = 0;
    for (int i = 0; i < n_e; i++) {
        int size = 2 * (int)PyDict_GET_SIZE(g->wanted[i].args);
        best = size > best ? size : best;
    }
    for (int i = 0; i < n_e; i++)
        for (int j = 0; j < n_o; j++)
            if (rows[i] >> j & 1) {
                if ((found = score(&g->wanted[i], reading(&g->seen[j]))) < 0)
                    return -1;
                keys[n_keys++] = ((int64_t)(best - found) * n_e + i) * n_o + j;
            }
    qsort(keys, (size_t)n_keys, sizeof keys[0], by_key);
    uint32_t paired = 0;  /* expectations taken */
    for (int k = 0; k < n_keys; k++) {
        int i = (int)(keys[k] / n_o % n_e), j = (int)(keys[k] % n_o);
        if (!(paired >> i & 1) && !(used >> j & 1)) {
            taken[i] = j;
            paired |= (uint32_t)1 << i;
            used |= (uint32_t)1 << j;
            if (best - keys[k] / ((int64_t)n_o * n_e) == 2 * PyDict_GET_SIZE(g->wanted[i].args))
                prove(g, i, j);  /* a full score */
        }
    }
    return 0;
}

static void add(Grading *g, int e, int o, PyObject *label)
{
    Pair *p = &g->pairs[g->n_pairs++];
    p->e = e, p->o = o, p->label = label;
}

/* pairing.pair_calls: g->pairs, each with its selection label (NULL: none). */
int pair_calls(Grading *g)
{
    int n_e = (int)g->n_wanted, n_o = (int)g->n_seen, taken[MAX_CALLS], found;
    g->n_pairs = 0;
    if (n_e == 0) {  /* "some call" expected: every call passes selection */
        for (int j = 0; j < n_o; j++)
            add(g, -1, j, NULL);
        return 0;
    }
    if (n_e == 1 && n_o == 1) {
        if ((found = same(g, g->seen[0].name, g->wanted[0].tool)) != 0) {
            add(g, 0, 0, NULL);
            return found < 0 ? -1 : 0;
        }
    }
    for (int i = 0; i < n_e; i++)
        taken[i] = -1;
    PyObject *order = GET(g->case_, case, order);
    if (order == NULL)
        return -1;
    int ordered = str_is(order, S.ordered);
    Py_DECREF(order);
    if (ordered) {
        if ((found = in_place(g)) != 0) {
            for (int i = 0; i < n_e && found > 0; i++)
                add(g, i, i, NULL);
            return found < 0 ? -1 : 0;
        }
        for (int i = 0, start = 0; i < n_e; i++)
            for (int j = start; j < n_o; j++) {
                if ((found = same(g, g->seen[j].name, g->wanted[i].tool)) < 0)
                    return -1;
                if (found) {
                    taken[i] = j, start = j + 1;
                    break;
                }
            }
    } else if (pair_unordered(g, taken) < 0) {
        return -1;
    }
    int count = 0, used[MAX_CALLS] = {0}, left_e[MAX_CALLS], left_o[MAX_CALLS];
    int wrong[MAX_CALLS], n_left_e = 0, n_left_o = 0;
    for (int i = 0; i < n_e; i++)
        if (taken[i] >= 0)
            count++, used[taken[i]] = 1;
    if (count == n_e && n_e == n_o) {  /* each call paired: nothing left over */
        for (int i = 0; i < n_e; i++)
            add(g, i, taken[i], NULL);
        return 0;
    }
    for (int i = 0; i < n_e; i++) {
        wrong[i] = -1;
        if (taken[i] < 0)
            left_e[n_left_e++] = i;
    }
    for (int j = 0; j < n_o; j++)
        if (!used[j])
            left_o[n_left_o++] = j;
    for (int k = 0; k < n_left_e && k < n_left_o; k++)
        wrong[left_e[k]] = left_o[k];
    for (int i = 0; i < n_e; i++) {
        if (taken[i] >= 0)
            add(g, i, taken[i], NULL);
        else if (wrong[i] >= 0)
            add(g, i, wrong[i], S.wrong_tool);
        else
            add(g, i, -1, S.parallel_collapse);
    }
    for (int k = n_left_e; k < n_left_o; k++) {
        int j = left_o[k], known = 0;
        for (int i = 0; i < n_e && !known; i++)
            if ((known = same(g, g->seen[j].name, g->wanted[i].tool)) < 0)
                return -1;
        add(g, -1, j, known ? NULL : S.wrong_tool);
    }
    return 0;
}

/* checker._wrong_tool: why a call is the wrong tool, in words (a new str). */
static PyObject *wrong_tool_why(Grading *g, Pair *p)
{
    PyObject *called = p->o >= 0 ? g->seen[p->o].name : Py_None;
    if (p->e < 0)
        return PyUnicode_FromFormat("an extra call to %R, which no expected call names", called);
    PyObject *tool = g->wanted[p->e].tool;
    if (called != Py_None && PyUnicode_GET_LENGTH(called) && offers_any(g) &&
        offered_schema(g, called) == NULL)
        return PyUnicode_FromFormat("called %R, which was not offered; expected %R", called,
                                    tool);
    int in_order = p->o >= 0 ? same(g, called, tool) : 0;
    if (in_order < 0)
        return NULL;
    return PyUnicode_FromFormat("called %R, expected %R%s", called, tool,
                                in_order ? " (out of order)" : "");
}

/* checker._selection: a pair's CallGrade at the selection stage (`note`: its words, if
   given; else, when it has a label, why). */
PyObject *selection_grade(Grading *g, Pair *p, PyObject *note)
{
    PyObject *text = note;
    Py_XINCREF(text);
    if (text == NULL && p->label == S.wrong_tool)
        text = wrong_tool_why(g, p);
    else if (text == NULL && p->label == S.parallel_collapse)
        text = PyUnicode_FromFormat("expected call to %R was not made", g->wanted[p->e].tool);
    if (text == NULL && PyErr_Occurred())
        return NULL;
    PyObject *errors = text ? PyList_New(1) : PyList_New(0), *args = PyList_New(0);
    if (errors == NULL || args == NULL) {
        Py_XDECREF(text);
        Py_XDECREF(errors);
        Py_XDECREF(args);
        return NULL;
    }
    if (text)
        PyList_SET_ITEM(errors, 0, text);  /* steals it */
    Seen *o = p->o >= 0 ? &g->seen[p->o] : NULL;
    PyObject *fields[8] = {
        p->e >= 0 ? g->wanted[p->e].tool : Py_None,
        o ? o->name : Py_None,
        o ? o->call_id : Py_None,
        p->label ? S.selection : Py_None,
        p->label ? p->label : Py_None,
        Py_None,
        errors,
        args,
    };
    PyObject *grade = call_record(H.call_grade, fields, 8);
    Py_DECREF(errors);
    Py_DECREF(args);
    return grade;
}
