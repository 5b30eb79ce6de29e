/* `checker.grade_case_py` in C: the same CaseGrade, or "ask the Python one".

   configure(hooks)                                   once, by `checker` (`native_hooks`)
   grade(case, observation, judge, server_tools) -> CaseGrade | None

   A CaseGrade is `grade_case_py`'s own answer, field for field; None hands the case back
   (`checker.grade_case` asks this first, when the compiled core is built). Read here: a
   case expecting calls (`expect: call`) whose observation made 1 to MAX_CALLS calls, each
   a `ToolCall`, and at most MAX_CALLS expected calls with str tools and str argument
   names. Every stage runs here for such a case: selection (`nativepairing.c`), then for
   each paired call whose arguments the wire parser read as an object, the schema stage
   by `nativeglance.c`'s reading and the semantic stage by each matcher (exact, any_of,
   enum and any compared here, by `nativeequal.c`'s equality). What needs words or rules
   kept once in Python is asked of the Python that the pure grader runs:

     a call whose arguments need reading, or whose schema glance does not prove valid
         (the parse and schema stages' errors)                   checker._grade_call
     an argument that does not match, or of another matcher kind  semantic.match_one
     a schema glance hands back (a keyword it does not read)     checker.schema_proves
     a missing mapping's hint, two names one ends with, the MCP schema of a call
                             literalhint.literal_hint, toolnames.same_tool, resolve_schema

   so the grade is the Python grader's wherever it is not plain. Anything else (no call
   made, `expect: no_call` or `output`, a value of an unexpected type where the case is
   read) hands back before any of that Python runs, so a judge is never asked twice.

   Why: on BFCL-shaped cases the Python grader, compiled by mypyc, spent its time in the
   interpreter's generic calls, attribute reads and temporary objects around each call
   (the pairs, the views, the tuples of each reading), not in the comparisons.
   `tests/grade/test_nativegrade.py` holds it to `grade_case_py` on generated cases and
   on the control corpus. Built by scripts/compile_core.py with the mypyc core. */
#include "nativegrade.h"

Hooks H;
Strings S;

Slots A;

/* Learn where `type` keeps attribute `name`: a getset descriptor's getter (mypyc's native
   classes) or a member descriptor's slot (a class with __slots__), when the class reads
   attributes the generic way and has a version tag to tell when it changes. Data
   descriptors both: an instance's __dict__ never hides them. */
static void learn(Slot *slot, PyTypeObject *type, PyObject *name)
{
    Py_XSETREF(slot->type, (PyTypeObject *)Py_NewRef(type));
    slot->get = NULL, slot->closure = NULL, slot->offset = 0;
    PyObject *found = type->tp_getattro == PyObject_GenericGetAttr ? _PyType_Lookup(type, name)
                                                                    : NULL;
    slot->version = type->tp_version_tag;
    if (found == NULL || slot->version == 0 ||
        !(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
        return;
    if (Py_IS_TYPE(found, &PyGetSetDescr_Type)) {
        PyGetSetDef *def = ((PyGetSetDescrObject *)found)->d_getset;
        slot->get = def->get, slot->closure = def->closure;
    } else if (Py_IS_TYPE(found, &PyMemberDescr_Type)) {
        PyMemberDef *def = ((PyMemberDescrObject *)found)->d_member;
        if (def->type == Py_T_OBJECT_EX && !(def->flags & Py_AUDIT_READ))
            slot->offset = def->offset;
    }
}

/* obj.name, read through the descriptor `slot` learnt for obj's class (PyObject_GetAttr's
   lookup of the class's MRO and the call of its descriptor, each time, cost about a
   hundred instructions a read). */
PyObject *read_attr(PyObject *obj, PyObject *name, Slot *slot)
{
    PyTypeObject *type = Py_TYPE(obj);
    if (type != slot->type || type->tp_version_tag != slot->version || slot->version == 0)
        learn(slot, type, name);
    if (slot->get != NULL)
        return slot->get(obj, slot->closure);
    if (slot->offset) {
        PyObject *value = *(PyObject **)((char *)obj + slot->offset);
        if (value != NULL)
            return Py_NewRef(value);
    }
    return PyObject_GetAttr(obj, name);  /* anything else, and an unset slot's error */
}

/* An exact str equal to the interned `constant` (anything else: no). */
int str_is(PyObject *s, PyObject *constant)
{
    if (s == constant)
        return 1;
    return PyUnicode_CheckExact(s) && PyUnicode_GET_LENGTH(s) == PyUnicode_GET_LENGTH(constant) &&
           PyUnicode_Compare(s, constant) == 0;
}

/* equality.deep_equal: two strs, ints or floats here, else nativeequal.c, else Python. */
int json_equal(PyObject *a, PyObject *b)
{
    PyTypeObject *t = Py_TYPE(a);
    if (t == Py_TYPE(b)) {
        if (t == &PyUnicode_Type)
            return a == b || PyUnicode_Compare(a, b) == 0;
        if (t == &PyFloat_Type)  /* by value: NaN is not itself */
            return PyFloat_AS_DOUBLE(a) == PyFloat_AS_DOUBLE(b);
        if (t == &PyLong_Type)
            return PyObject_RichCompareBool(a, b, Py_EQ);
    }
    int found = H.equal(a, b);
    if (found >= 0)
        return found;
    PyObject *answer = PyObject_CallFunctionObjArgs(H.deep_equal, a, b, NULL);
    if (answer == NULL)
        return -1;
    found = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    return found;
}

/* One of grade.grades' records, from its fields in order, by `make` (`call_grade_of`,
   `case_grade_of`). */
PyObject *call_record(PyObject *make, PyObject *const *args, Py_ssize_t n)
{
    return PyObject_Vectorcall(make, args, (size_t)n, NULL);
}

/* An argument's grade onto a call's flat list (`grades.call_grade_of`): its name, bucket
   and detail (NULL: none) in a row. 0, or -1. */
int add_arg(PyObject *found, PyObject *name, PyObject *bucket, PyObject *detail)
{
    if (PyList_Append(found, name) < 0 || PyList_Append(found, bucket) < 0)
        return -1;
    return PyList_Append(found, detail ? detail : Py_None);
}

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
static int read_case(Grading *g)
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

static void release(Grading *g)
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

/* What a graded call says of the case: its label (borrowed: the CallGrade holds it) and
   whether an argument was left ungraded. */
typedef struct {
    PyObject *label;
    int not_graded;
} Outcome;

/* labels.RANK: the label's place in PRECEDENCE (past the end: not a label). */
static Py_ssize_t rank(PyObject *label)
{
    Py_ssize_t n = PyTuple_GET_SIZE(H.precedence);
    for (Py_ssize_t i = 0; i < n; i++)
        if (str_is(label, PyTuple_GET_ITEM(H.precedence, i)))
            return i;
    return n;
}

/* The PRECEDENCE entry equal to `label` (borrowed: the tuple holds it), or NULL with a
   ValueError (labels.RANK has no such key). */
PyObject *canonical(PyObject *label)
{
    Py_ssize_t at = rank(label);
    if (at < PyTuple_GET_SIZE(H.precedence))
        return PyTuple_GET_ITEM(H.precedence, at);
    PyErr_Format(PyExc_ValueError, "not a label: %R", label);
    return NULL;
}

/* labels.outranks: does `label` win over `other` (NULL: none yet)? */
int outranks(PyObject *label, PyObject *other)
{
    return other == NULL || rank(label) < rank(other);
}

/* A CallGrade made in Python: its label, and whether some argument is not_graded. */
static int outcome_of(PyObject *grade, Outcome *out)
{
    PyObject *label = GET(grade, call, label), *args;
    if (label == NULL)
        return -1;
    out->label = label == Py_None ? NULL : canonical(label);
    Py_DECREF(label);
    if (label != Py_None && out->label == NULL)
        return -1;
    if ((args = GET(grade, call, args)) == NULL)
        return -1;
    PyObject *iter = PyObject_GetIter(args), *arg;
    Py_DECREF(args);
    if (iter == NULL)
        return -1;
    while (!out->not_graded && (arg = PyIter_Next(iter)) != NULL) {
        PyObject *bucket = GET(arg, arg, bucket);
        Py_DECREF(arg);
        if (bucket == NULL)
            break;
        out->not_graded = str_is(bucket, S.not_graded);
        Py_DECREF(bucket);
    }
    Py_DECREF(iter);
    return PyErr_Occurred() ? -1 : 0;
}

/* The call graded by checker._grade_call, as the Python grader grades it. */
static PyObject *python_call(Grading *g, Wanted *e, Seen *o, Outcome *out)
{
    PyObject *complete = GET(g->observation, obs, complete), *finish, *view;
    int done = complete ? PyObject_IsTrue(complete) : -1, incomplete = 0;
    Py_XDECREF(complete);
    if (done < 0)
        return NULL;
    if (done) {  /* not observation.complete or finish_reason in INCOMPLETE_FINISH */
        if ((finish = GET(g->observation, obs, finish_reason)) == NULL)
            return NULL;
        incomplete = PySequence_Contains(H.incomplete_finish, finish);
        Py_DECREF(finish);
        if (incomplete < 0)
            return NULL;
    }
    if ((view = PyObject_CallOneArg(H.call_view, o->call)) == NULL)
        return NULL;
    PyObject *args[7] = {
        e ? e->call : Py_None, view, g->tools, g->server_tools, g->judge,
        done && !incomplete ? Py_False : Py_True, Py_None,
    };
    PyObject *grade = PyObject_Vectorcall(H.grade_call, args, 7, NULL);
    Py_DECREF(view);
    if (grade != NULL && outcome_of(grade, out) < 0)
        Py_CLEAR(grade);
    return grade;
}

/* The call's schema and its source (strong references), as checker._grade_call picks. */
static int call_schema(Grading *g, Seen *o, PyObject **schema, PyObject **source)
{
    if (g->has_servers) {
        PyObject *resolved =
            PyObject_CallFunctionObjArgs(H.resolve, o->name, g->tools, g->server_tools, NULL);
        if (resolved == NULL)
            return -1;
        *schema = GET(resolved, resolved, schema);
        *source = GET(resolved, resolved, source);
        Py_DECREF(resolved);
        return *schema && *source ? 0 : -1;
    }
    PyObject *found = o->name == Py_None ? NULL : PyDict_GetItemWithError(g->tools, o->name);
    *schema = found ? found : Py_None;
    *source = found ? S.offered : S.none;
    Py_INCREF(*schema);
    Py_INCREF(*source);
    return 0;
}

/* glance's answer for the call (1 valid, 0 not proven), or, where it hands back,
   schema_proves' (1, or 2: the Python grader grades the call). -1: an error. */
static int glanced(PyObject *schema, PyObject *args)
{
    if (schema == Py_None)
        return 1;
    int found = H.glance->glance(schema, args);
    if (found >= 0)
        return found;
    PyObject *answer = PyObject_CallFunctionObjArgs(H.schema_proves, schema, args, NULL);
    if (answer == NULL)
        return -1;
    found = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    return found < 0 ? -1 : found ? 1 : HAND_BACK;
}

/* The schema stage failed (`f`): the semantic stage still grades each argument (no judge
   asked), then the schema's flagged arguments take their place (`checker._merged`). */
static PyObject *schema_failed(Wanted *e, Seen *o, PyObject *source, Findings *f, Outcome *out)
{
    Semantic stage = {Py_None, Py_True, NULL, NULL, 0};
    PyObject *found = PyList_New(0), *args = NULL, *grade = NULL;
    if (found != NULL && (e == NULL || semantic_stage(e, o->arguments, found, &stage) == 0))
        args = merged_args(found, f);
    if (args != NULL) {
        out->label = f->label;
        PyObject *fields[8] = {
            e ? e->tool : Py_None, o->name, o->call_id, S.schema, f->label, source, f->notes,
            args,
        };
        grade = call_record(H.call_grade, fields, 8);
    }
    Py_XDECREF(found);
    Py_XDECREF(args);
    return grade;
}

/* checker._grade_call: one paired call's CallGrade. */
static PyObject *grade_call(Grading *g, Wanted *e, Seen *o, Outcome *out)
{
    PyObject *schema, *source, *found = NULL, *grade = NULL;
    Semantic stage = {g->judge, Py_False, NULL, NULL, 0};
    Findings findings;
    if (call_schema(g, o, &schema, &source) < 0)
        return NULL;
    int status = o->parsed ? glanced(schema, o->arguments) : HAND_BACK;
    if (status == 0) {  /* not proven valid: the schema stage's errors */
        status = schema_errors(schema, o->arguments, &findings);
        if (status == 0) {
            grade = schema_failed(e, o, source, &findings, out);
            release_findings(&findings);
            goto done;
        }
    }
    if (status == HAND_BACK)
        grade = python_call(g, e, o, out);
    if (status != 1)
        goto done;
    if ((found = PyList_New(0)) == NULL || (stage.errors = PyList_New(0)) == NULL)
        goto done;
    if (e != NULL && (o->proven == 1 + (int)(e - g->wanted)
                          ? proven_args(e, o->arguments, found, &stage)
                          : semantic_stage(e, o->arguments, found, &stage)) < 0)
        goto done;
    out->label = stage.label, out->not_graded = stage.not_graded;
    PyObject *fields[8] = {
        e ? e->tool : Py_None, o->name, o->call_id, stage.label ? S.semantic : Py_None,
        stage.label ? stage.label : Py_None, source, stage.errors, found,
    };
    grade = call_record(H.call_grade, fields, 8);
done:
    Py_DECREF(schema);
    Py_DECREF(source);
    Py_XDECREF(found);
    Py_XDECREF(stage.errors);
    return grade;
}

/* checker._extra_call: an extra call beyond what the case allows (`limit` in words). */
static PyObject *extra_call_grade(Grading *g, Pair *p, PyObject *limit)
{
    PyObject *why = PyUnicode_FromFormat("an extra call to %R: the case allows %U (extra_calls)",
                                         g->seen[p->o].name, limit);
    if (why == NULL)
        return NULL;
    Pair spurious = {p->e, p->o, S.spurious_call};
    PyObject *grade = selection_grade(g, &spurious, why);
    Py_DECREF(why);
    return grade;
}

/* checker._extras_allowed for a case with extra calls: 0, HAND_BACK, or -1. */
static int extras_allowed(Grading *g, long long *allowed, PyObject **limit)
{
    PyObject *extra = GET(g->case_, case, extra_calls);
    if (extra == NULL)
        return -1;
    int status = 0;
    if (str_is(extra, S.allow)) {
        *allowed = LLONG_MAX;
    } else if (str_is(extra, S.forbid)) {
        *allowed = 0;
        *limit = PyUnicode_FromString("none");
    } else if (PyLong_CheckExact(extra)) {
        int overflow;
        *allowed = PyLong_AsLongLongAndOverflow(extra, &overflow);
        status = overflow ? HAND_BACK : 0;
        *limit = status ? NULL : PyUnicode_FromFormat("at most %S", extra);
    } else {
        status = HAND_BACK;
    }
    Py_DECREF(extra);
    if (status == 0 && *allowed != LLONG_MAX && *limit == NULL)
        return -1;
    return status;
}

/* The CallGrade of each pair, in order (labels and not_graded into `out`). */
static PyObject *graded_calls(Grading *g, Outcome *outs, int selection, int *status)
{
    long long allowed = LLONG_MAX;
    PyObject *limit = NULL;
    int extras = 0;
    for (int k = 0; k < g->n_pairs; k++)
        extras += g->pairs[k].e < 0 && g->n_wanted > 0;
    if (!selection && extras && (*status = extras_allowed(g, &allowed, &limit)) != 0)
        return NULL;
    PyObject *calls = PyList_New(g->n_pairs);
    for (int k = 0; calls != NULL && k < g->n_pairs; k++) {
        Pair *p = &g->pairs[k];
        PyObject *grade;
        outs[k].label = p->label, outs[k].not_graded = 0;
        if (selection)  /* checker._extra: an extra call to an expected tool is noted */
            grade = selection_grade(g, p, p->e < 0 && !p->label ? H.extra_note : NULL);
        else if (p->e < 0 && g->n_wanted > 0 && --allowed < 0)
            grade = extra_call_grade(g, p, limit), outs[k].label = S.spurious_call;
        else if (p->e < 0 && g->n_wanted > 0)
            grade = selection_grade(g, p, H.extra_note);
        else if (p->o >= 0)
            grade = grade_call(g, p->e >= 0 ? &g->wanted[p->e] : NULL, &g->seen[p->o], &outs[k]);
        else  /* a pair without a call always has a label (parallel_collapse) */
            grade = PyErr_Format(PyExc_AssertionError, "a pair without a call or label");
        if (grade == NULL)
            Py_CLEAR(calls);
        else
            PyList_SET_ITEM(calls, k, grade);
    }
    Py_XDECREF(limit);
    return calls;
}

/* checker._finish: the case's grade from its calls'. */
static PyObject *case_grade(Grading *g, int selection)
{
    Outcome outs[2 * MAX_CALLS];
    int status = 0;
    PyObject *calls = graded_calls(g, outs, selection, &status);
    if (calls == NULL)
        return status == HAND_BACK ? Py_NewRef(Py_None) : NULL;
    PyObject *label = NULL;
    int not_graded = 0;
    for (int k = 0; k < g->n_pairs; k++) {
        if (outs[k].label && outranks(outs[k].label, label))
            label = outs[k].label;
        not_graded |= outs[k].not_graded;
    }
    not_graded = label == NULL && not_graded;
    PyObject *called = PyList_New(g->n_seen), *expected = PyList_New(g->n_wanted);
    PyObject *fields[10] = {NULL};
    PyObject *grade = NULL;
    if (called == NULL || expected == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < g->n_seen; j++) {  /* c.name or "" */
        PyObject *name = g->seen[j].name;
        name = name != Py_None && PyUnicode_GET_LENGTH(name) ? name : S.empty;
        PyList_SET_ITEM(called, j, Py_NewRef(name));
    }
    for (Py_ssize_t i = 0; i < g->n_wanted; i++)
        PyList_SET_ITEM(expected, i, Py_NewRef(g->wanted[i].tool));
    if ((fields[0] = GET(g->case_, case, id)) == NULL ||
        (fields[2] = GET(g->observation, obs, exchange_id)) == NULL ||
        (fields[3] = GET(g->observation, obs, session_id)) == NULL ||
        (fields[4] = GET(g->observation, obs, model)) == NULL)
        goto done;
    fields[1] = label == NULL && !not_graded ? Py_True : Py_False;
    fields[5] = label ? label : Py_None;
    fields[6] = not_graded ? Py_True : Py_False;
    fields[7] = calls, fields[8] = called, fields[9] = expected;
    grade = call_record(H.case_grade, fields, 10);
done:
    for (int k = 0; k < 5; k++)
        if (k != 1)
            Py_XDECREF(fields[k]);
    Py_XDECREF(called);
    Py_XDECREF(expected);
    Py_DECREF(calls);
    return grade;
}

static PyObject *py_grade(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "grade(case, observation, judge, server_tools) takes 4 arguments");
        return NULL;
    }
    if (!H.ready) {
        PyErr_SetString(PyExc_RuntimeError, "nativegrade.configure(hooks) was not called");
        return NULL;
    }
    Grading g;
    memset(&g, 0, offsetof(Grading, seen));  /* the entries: set as they are read */
    g.n_seen = g.n_wanted = 0;
    g.case_ = args[0], g.observation = args[1], g.judge = args[2], g.server_tools = args[3];
    PyObject *grade = NULL;
    int status = read_case(&g);
    if (status == 0)
        status = pair_calls(&g);
    if (status == 0) {
        int selection = 0;
        for (int k = 0; k < g.n_pairs; k++)
            selection |= g.pairs[k].label != NULL;
        grade = case_grade(&g, selection);
    }
    release(&g);
    if (status == HAND_BACK)
        Py_RETURN_NONE;
    return grade;
}

/* The strings compared and written, interned once. */
static int intern_strings(void)
{
    struct { PyObject **slot; const char *text; } all[] = {
        {&S.expect, "expect"}, {&S.calls, "calls"}, {&S.order, "order"},
        {&S.extra_calls, "extra_calls"}, {&S.id, "id"}, {&S.tools, "tools"},
        {&S.offered, "offered"}, {&S.exchange_id, "exchange_id"},
        {&S.session_id, "session_id"}, {&S.model, "model"}, {&S.complete, "complete"},
        {&S.finish_reason, "finish_reason"}, {&S.tool, "tool"}, {&S.args, "args"},
        {&S.allow_extra_args, "allow_extra_args"}, {&S.kind, "kind"}, {&S.value, "value"},
        {&S.values, "values"}, {&S.optional, "optional"}, {&S.label, "label"},
        {&S.bucket, "bucket"}, {&S.detail, "detail"}, {&S.schema, "schema"},
        {&S.source, "source"}, {&S.name, "name"}, {&S.call_id, "call_id"},
        {&S.arguments, "arguments"}, {&S.parse_error, "parse_error"},
        {&S.function, "function"}, {&S.parameters, "parameters"},
        {&S.input_schema, "input_schema"}, {&S.inputSchema, "inputSchema"},
        {&S.call, "call"}, {&S.ordered, "ordered"}, {&S.allow, "allow"},
        {&S.forbid, "forbid"}, {&S.exact, "exact"}, {&S.any_of, "any_of"},
        {&S.enum_, "enum"}, {&S.any, "any"}, {&S.judge, "judge"}, {&S.ok, "ok"},
        {&S.missing, "missing"}, {&S.hallucinated, "hallucinated"},
        {&S.not_graded, "not_graded"}, {&S.none, "none"}, {&S.selection, "selection"},
        {&S.semantic, "semantic"}, {&S.optional_absent, "optional, absent"},
        {&S.required_absent, "required, absent"}, {&S.not_expected, "not in the expectation"},
        {&S.empty, ""}, {&S.properties, "properties"}, {&S.required, "required"},
        {&S.additionalProperties, "additionalProperties"}, {&S.items, "items"},
        {&S.const_, "const"}, {&S.type, "type"}, {&S.malformed, "malformed"},
        {&S.arguments_path, "(arguments)"}, {&S.dollar, "$"},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i].slot == NULL && (*all[i].slot = PyUnicode_InternFromString(all[i].text)) == NULL)
            return -1;
    return 0;
}

/* hooks[key], which must be there (a new reference in *slot). */
static int hook(PyObject *hooks, const char *key, PyObject **slot)
{
    PyObject *found = PyDict_GetItemString(hooks, key);
    if (found == NULL) {
        PyErr_Format(PyExc_KeyError, "nativegrade.configure: no hook %s", key);
        return -1;
    }
    *slot = Py_NewRef(found);
    return 0;
}

/* The C function behind a capsule hook. */
static void *capsule(PyObject *hooks, const char *key, const char *name)
{
    PyObject *found = PyDict_GetItemString(hooks, key);
    if (found == NULL) {
        PyErr_Format(PyExc_KeyError, "nativegrade.configure: no hook %s", key);
        return NULL;
    }
    return PyCapsule_GetPointer(found, name);
}

/* Each object hook of `h`: (field, key) pairs. */
#define OBJECT_HOOKS(h)                                                                   \
    {&(h)->case_grade, "case_grade"}, {&(h)->call_grade, "call_grade"},                  \
        {&(h)->call_view, "Call"}, {&(h)->tool_call, "ToolCall"},                        \
        {&(h)->grade_call, "grade_call"}, {&(h)->match_one, "match_one"},                \
        {&(h)->matches, "matches"}, {&(h)->deep_equal, "deep_equal"},                    \
        {&(h)->literal_hint, "literal_hint"}, {&(h)->same_tool, "same_tool"},            \
        {&(h)->read_arguments, "read_arguments"}, {&(h)->schema_proves, "schema_proves"}, \
        {&(h)->resolve, "resolve"}, {&(h)->server_names, "server_names"},                \
        {&(h)->precedence, "precedence"}, {&(h)->incomplete_finish, "incomplete_finish"}, \
        {&(h)->extra_note, "extra_note"}, {&(h)->type_label, "type_label"},               \
        {&(h)->show, "show"}, {&(h)->coercions, "coercions"}

typedef struct {
    PyObject **slot;
    const char *key;
} HookSlot;

static void release_hooks(Hooks *h)
{
    HookSlot all[] = {OBJECT_HOOKS(h)};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        Py_CLEAR(*all[i].slot);
}

/* S's label strings: `precedence`'s own entries (a label is then compared by identity),
   or -1 with a ValueError when one is missing. */
static int labels(PyObject *precedence, int set)
{
    struct { PyObject **slot; const char *text; } all[] = {
        {&S.wrong_tool, "wrong_tool"}, {&S.parallel_collapse, "parallel_collapse"},
        {&S.spurious_call, "spurious_call"}, {&S.missing_required, "missing_required"},
        {&S.hallucinated_param, "hallucinated_param"}, {&S.schema_violation, "schema_violation"},
        {&S.type_coercion, "type_coercion"},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        PyObject *text = PyUnicode_FromString(all[i].text), *label = NULL;
        for (Py_ssize_t k = 0; text != NULL && k < PyTuple_GET_SIZE(precedence); k++)
            if (str_is(PyTuple_GET_ITEM(precedence, k), text))
                label = PyTuple_GET_ITEM(precedence, k);
        if (label == NULL && text != NULL)
            PyErr_Format(PyExc_ValueError, "configure: precedence has no %R", text);
        Py_XDECREF(text);
        if (label == NULL)
            return -1;
        if (set)
            *all[i].slot = label;  /* borrowed: H.precedence holds it */
    }
    return 0;
}

/* configure(hooks): all of them taken, or none (a grader configured before stays so). */
static PyObject *py_configure(PyObject *module, PyObject *hooks)
{
    if (!PyDict_Check(hooks)) {
        PyErr_SetString(PyExc_TypeError, "configure(hooks) takes a dict");
        return NULL;
    }
    Hooks next = {0};
    HookSlot all[] = {OBJECT_HOOKS(&next)};
    int failed = 0;
    for (size_t i = 0; !failed && i < sizeof all / sizeof all[0]; i++)
        failed = hook(hooks, all[i].key, all[i].slot) < 0;
    if (!failed && (!PyType_Check(next.tool_call) || !PyTuple_CheckExact(next.precedence) ||
                    !PyUnicode_CheckExact(next.extra_note))) {
        PyErr_SetString(PyExc_TypeError,
                        "configure: ToolCall a class, precedence a tuple, extra_note a str");
        failed = 1;
    }
    if (!failed) {
        next.equal = (equal_fn)capsule(hooks, "equal", "toolproxy.grade.nativeequal._C_API");
        next.glance = capsule(hooks, "glance", "toolproxy.schema.nativeglance._C_API");
        failed = next.equal == NULL || next.glance == NULL || labels(next.precedence, 0) < 0;
    }
    if (failed) {
        release_hooks(&next);
        return NULL;
    }
    release_hooks(&H);
    H = next;
    H.ready = 1;
    labels(H.precedence, 1);
    Py_RETURN_NONE;
}

static PyObject *py_show(PyObject *module, PyObject *value)
{
    if (!H.ready) {
        PyErr_SetString(PyExc_RuntimeError, "nativegrade.configure(hooks) was not called");
        return NULL;
    }
    return show(value);
}

static PyMethodDef methods[] = {
    {"grade", (PyCFunction)(void (*)(void))py_grade, METH_FASTCALL,
     "grade(case, observation, judge, server_tools): a CaseGrade, or None (ask "
     "checker.grade_case_py)"},
    {"show", py_show, METH_O, "show(value): showing.show, as the grader writes it in C"},
    {"configure", py_configure, METH_O,
     "configure(hooks): the records and the Python the grader asks (checker.native_hooks)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "toolproxy.grade.nativegrade",
    "checker.grade_case_py in C (see nativegrade.c)", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_nativegrade(void)
{
    if (intern_strings() < 0)
        return NULL;
    PyObject *module = PyModule_Create(&definition);
    if (module != NULL && PyModule_AddIntConstant(module, "MAX_CALLS", MAX_CALLS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
