/* How `nativegrade.c` reads one case and its observation (`Grading`): the observed
   calls' fields out of each `ToolCall`'s __dict__, the expected calls' tools and matchers,
   and `checker.offered_tools` over the offered tools; anything it does not read as
   `grade_case_py` would hands the case back, before any Python of the grader runs. */
#include "nativegrade.h"

/* The held tool named `name` (an exact str), or NULL. */
static Offered *held(Grading *g, PyObject *name, Py_hash_t hash)
{
    for (int i = 0; i < g->n_held; i++) {
        Offered *t = &g->held[i];
        if (t->hash == hash && str_is(name, t->name))
            return t;
    }
    return NULL;
}

/* The tools held, as a new dict in the order offered, into g->tools. 0, or -1. */
static int spill(Grading *g)
{
    if ((g->tools = PyDict_New()) == NULL)
        return -1;
    for (int i = 0; i < g->n_held; i++)
        if (PyDict_SetItem(g->tools, g->held[i].name, g->held[i].schema) < 0)
            return -1;
    return 0;
}

/* checker.offered_tools, read into g->held (g->tools past HELD_TOOLS): each name once, the
   first offered under it kept. A dict per case was ~1,000 instructions, ~4 % of a warm
   BFCL-shaped call; a lookup here compares cached hashes in one array. 0, -1, HAND_BACK. */
static int read_offered(Grading *g, PyObject *tools)
{
    if (!PyList_Check(tools))
        return 0;
    if (!PyList_CheckExact(tools))
        return HAND_BACK;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(tools); i++) {
        PyObject *spec = PyList_GET_ITEM(tools, i), *inner, *name, *schema;
        if (!PyDict_Check(spec))
            continue;
        if (!PyDict_CheckExact(spec))
            return HAND_BACK;
        inner = PyDict_GetItemWithError(spec, S.function);
        if (inner != NULL && PyDict_Check(inner)) {
            if (!PyDict_CheckExact(inner))
                return HAND_BACK;
            spec = inner;
        }
        name = PyDict_GetItemWithError(spec, S.name);
        if (name == NULL || !PyUnicode_Check(name))
            continue;
        if (!PyUnicode_CheckExact(name))
            return HAND_BACK;
        Py_hash_t hash = PyObject_Hash(name);  /* an exact str's: cached, no error */
        if (g->tools == NULL && held(g, name, hash))
            continue;
        if (g->tools != NULL && PyDict_Contains(g->tools, name))
            continue;
        schema = PyDict_GetItemWithError(spec, S.parameters);
        if (schema == NULL)
            schema = PyDict_GetItemWithError(spec, S.input_schema);
        if (schema == NULL)
            schema = PyDict_GetItemWithError(spec, S.inputSchema);
        schema = schema ? schema : Py_None;
        if (g->tools == NULL && g->n_held < HELD_TOOLS) {
            g->held[g->n_held++] =
                (Offered){.name = Py_NewRef(name), .schema = Py_NewRef(schema), .hash = hash};
            continue;
        }
        if ((g->tools == NULL && spill(g) < 0) || PyDict_SetItem(g->tools, name, schema) < 0)
            return -1;
    }
    return 0;
}

PyObject *offered_schema(Grading *g, PyObject *name)
{
    if (g->tools != NULL)
        return PyDict_GetItemWithError(g->tools, name);  /* str keys: no error */
    Offered *t = held(g, name, PyObject_Hash(name));
    return t ? t->schema : NULL;
}

int offers_any(Grading *g)
{
    return g->n_held > 0;  /* the array fills first */
}

PyObject *offered_dict(Grading *g)
{
    return g->tools != NULL || spill(g) == 0 ? g->tools : NULL;
}

/* An exact dict whose keys are all exact strs? */
static int str_keys(PyObject *d)
{
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(d, &pos, &key, &value))
        if (!PyUnicode_CheckExact(key))
            return 0;
    return 1;
}

/* Read the case and its observation into `g`: 0, -1, or HAND_BACK. */
int read_case(Grading *g)
{
    PyObject *expect = GET(g->case_, case, expect);
    if (expect == NULL)
        return -1;
    int calls = str_is(expect, S.call);
    Py_DECREF(expect);
    if (!calls)
        return HAND_BACK;
    if ((g->observed = GET(g->observation, obs, calls)) == NULL ||
        (g->case_calls = GET(g->case_, case, calls)) == NULL)
        return -1;
    if (!PyList_CheckExact(g->observed) || !PyList_CheckExact(g->case_calls))
        return HAND_BACK;
    Py_ssize_t n_o = PyList_GET_SIZE(g->observed), n_e = PyList_GET_SIZE(g->case_calls);
    if (n_o == 0 || n_o > MAX_CALLS || n_e > MAX_CALLS)
        return HAND_BACK;
    for (Py_ssize_t j = 0; j < n_o; j++) {
        Seen *o = &g->seen[g->n_seen++];  /* counted first: `release` frees what it holds */
        o->fields = o->read = NULL, o->proven = 0;
        o->call = PyList_GET_ITEM(g->observed, j);
        if (Py_TYPE(o->call) != (PyTypeObject *)H.tool_call)
            return HAND_BACK;
        if ((o->fields = PyObject_GenericGetDict(o->call, NULL)) == NULL)
            return -1;
        if (!PyDict_CheckExact(o->fields))
            return HAND_BACK;
        o->name = PyDict_GetItemWithError(o->fields, S.name);
        o->call_id = PyDict_GetItemWithError(o->fields, S.call_id);
        o->arguments = PyDict_GetItemWithError(o->fields, S.arguments);
        o->parse_error = PyDict_GetItemWithError(o->fields, S.parse_error);
        if (!o->name || !o->call_id || !o->arguments || !o->parse_error)
            return HAND_BACK;
        if (o->name != Py_None && !PyUnicode_CheckExact(o->name))
            return HAND_BACK;
        o->parsed = PyDict_CheckExact(o->arguments) && o->parse_error == Py_None;
    }
    for (Py_ssize_t i = 0; i < n_e; i++) {
        Wanted *e = &g->wanted[g->n_wanted++];
        e->tool = e->args = NULL;
        e->call = PyList_GET_ITEM(g->case_calls, i);
        if ((e->tool = GET(e->call, expected, tool)) == NULL ||
            (e->args = GET(e->call, expected, args)) == NULL)
            return -1;
        if (!PyUnicode_CheckExact(e->tool) || !PyDict_CheckExact(e->args) || !str_keys(e->args))
            return HAND_BACK;
        PyObject *extra = GET(e->call, expected, allow_extra_args);
        if (extra == NULL || (e->allow_extra = PyObject_IsTrue(extra)) < 0) {
            Py_XDECREF(extra);
            return -1;
        }
        Py_DECREF(extra);
    }
    /* observation.offered or case.tools */
    PyObject *offered = GET(g->observation, obs, offered);
    int some = offered ? PyObject_IsTrue(offered) : -1;
    if (some == 0) {
        Py_DECREF(offered);
        offered = GET(g->case_, case, tools);
    }
    if (some < 0 || offered == NULL) {
        Py_XDECREF(offered);
        return -1;
    }
    int status = read_offered(g, offered);
    Py_DECREF(offered);
    if (status != 0)
        return status;
    if ((g->has_servers = PyObject_IsTrue(g->server_tools)) < 0)
        return -1;
    if (g->has_servers &&
        (g->servers = PyObject_CallOneArg(H.server_names, g->server_tools)) == NULL)
        return -1;
    return 0;
}

void release(Grading *g)
{
    for (Py_ssize_t i = 0; i < g->n_seen; i++) {
        Py_XDECREF(g->seen[i].fields);
        Py_XDECREF(g->seen[i].read);
    }
    for (Py_ssize_t i = 0; i < g->n_wanted; i++) {
        Py_XDECREF(g->wanted[i].tool);
        Py_XDECREF(g->wanted[i].args);
    }
    for (int i = 0; i < g->n_held; i++) {
        Py_DECREF(g->held[i].name);
        Py_DECREF(g->held[i].schema);
    }
    Py_XDECREF(g->tools);
    Py_XDECREF(g->servers);
    Py_XDECREF(g->observed);
    Py_XDECREF(g->case_calls);
}

