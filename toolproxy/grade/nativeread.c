/* How `nativegrade.c` reads one case and its observation (`Grading`): the observed
   calls' fields out of each `ToolCall`'s __dict__, the expected calls' tools and matchers,
   and `checker.offered_tools` over the offered tools; anything it does not read as
   `grade_case_py` would hands the case back, before any Python of the grader runs. */
#include "nativegrade.h"

/* checker.offered_tools: name -> parameters schema, or NULL (HAND_BACK in *status). */
static PyObject *offered_tools(PyObject *tools, int *status)
{
    PyObject *found = PyDict_New();
    if (found == NULL || !PyList_Check(tools))
        return found;
    if (!PyList_CheckExact(tools))
        goto hand_back;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(tools); i++) {
        PyObject *spec = PyList_GET_ITEM(tools, i), *inner, *name, *schema;
        if (!PyDict_Check(spec))
            continue;
        if (!PyDict_CheckExact(spec))
            goto hand_back;
        inner = PyDict_GetItemWithError(spec, S.function);
        if (inner != NULL && PyDict_Check(inner)) {
            if (!PyDict_CheckExact(inner))
                goto hand_back;
            spec = inner;
        }
        name = PyDict_GetItemWithError(spec, S.name);
        if (name == NULL || !PyUnicode_Check(name))
            continue;
        if (!PyUnicode_CheckExact(name))
            goto hand_back;
        if (PyDict_Contains(found, name))
            continue;
        schema = PyDict_GetItemWithError(spec, S.parameters);
        if (schema == NULL)
            schema = PyDict_GetItemWithError(spec, S.input_schema);
        if (schema == NULL)
            schema = PyDict_GetItemWithError(spec, S.inputSchema);
        if (PyDict_SetItem(found, name, schema ? schema : Py_None) < 0) {
            Py_DECREF(found);
            return NULL;
        }
    }
    return found;
hand_back:
    Py_DECREF(found);
    *status = HAND_BACK;
    return NULL;
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
    int status = 0;
    g->tools = offered_tools(offered, &status);
    Py_DECREF(offered);
    if (g->tools == NULL)
        return status ? status : -1;
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
    Py_XDECREF(g->tools);
    Py_XDECREF(g->servers);
    Py_XDECREF(g->observed);
    Py_XDECREF(g->case_calls);
}

