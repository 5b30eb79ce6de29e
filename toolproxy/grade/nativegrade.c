/* `checker.grade_case_py` in C: the same CaseGrade, or "ask the Python one".

   configure(hooks)                                   once, by `checker` (`native_hooks`)
   grade(case, observation, judge, server_tools) -> CaseGrade | None

   A CaseGrade is `grade_case_py`'s own answer, field for field; None hands the case back
   (`checker.grade_case` asks this first, when the compiled core is built). One module of
   several files: this one (the stages in turn, the module), nativehooks.c (configure,
   the strings and attributes every part reads), nativeread.c (the case read),
   nativepairing.c (selection), nativeerrors.c and nativeschema.c (the schema stage's
   errors), nativesemantic.c (the matchers) and nativeshow.c (a value in words). Read: a
   case expecting calls (`expect: call`) whose observation made 1 to MAX_CALLS calls, each
   a `ToolCall`, and at most MAX_CALLS expected calls with str tools and str argument
   names. Every stage runs here for such a case: selection (`nativepairing.c`), then for
   each paired call whose arguments the wire parser read as an object, the schema stage by
   `nativeglance.c`'s reading (and, where it does not prove the call valid, the errors of
   a schema of glance's subset: `nativeerrors.c`, `nativeschema.c`) and the semantic stage
   by each matcher (exact, any_of, enum and any compared by `nativeequal.c`'s equality, a
   mismatch worded by `nativeshow.c`). What needs rules or words kept once in Python is
   asked of the Python the pure grader runs:

     a call whose arguments need reading, or whose schema is outside glance's subset
                                                                  checker._grade_call
     another matcher kind, a judge, a mismatch whose words are Python's (a mapping that
     may be a matcher written wrong, a string maybe misescaped)   semantic.match_one
     a schema glance hands back (a keyword it does not read)     checker.schema_proves
     a type error's label, a str's coercions, a value reprlib shows, two names one ends
     with, a mapping's hint, the MCP schema of a call             schemastage.type_label,
             matchers.coercions, showing.show, toolnames.same_tool, literal_hint, ...

   so the grade is the Python grader's wherever it is not plain. Anything else (no call
   made, `expect: no_call` or `output`, a value of an unexpected type where the case is
   read) hands back before any of that Python runs, so a judge is never asked twice.

   Why: on BFCL-shaped cases the Python grader, compiled by mypyc, spent its time in the
   interpreter's generic calls, attribute reads and temporary objects around each call,
   not in the comparisons: in process it ran 1.75x BFCL's checker fresh and 1.72x warm per
   round, 2.35x and 2.61x with this (docs/benchmarks.md, "thirty-seventh session").
   `tests/grade/test_native*.py` hold it to `grade_case_py` in both cores, on generated
   cases and on the control corpus. Built by scripts/compile_core.py with the mypyc core. */
#include "nativegrade.h"

/* What a graded call says of the case: its label (borrowed: the CallGrade holds it) and
   whether an argument was left ungraded. */
typedef struct {
    PyObject *label;
    int not_graded;
} Outcome;

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
    PyObject *tools = offered_dict(g);
    if (tools == NULL || (view = PyObject_CallOneArg(H.call_view, o->call)) == NULL)
        return NULL;
    PyObject *args[7] = {
        e ? e->call : Py_None, view, tools, g->server_tools, g->judge,
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
        PyObject *tools = offered_dict(g), *resolved = NULL;
        if (tools != NULL)
            resolved = PyObject_CallFunctionObjArgs(H.resolve, o->name, tools, g->server_tools,
                                                    NULL);
        if (resolved == NULL)
            return -1;
        *schema = GET(resolved, resolved, schema);
        *source = GET(resolved, resolved, source);
        Py_DECREF(resolved);
        return *schema && *source ? 0 : -1;
    }
    PyObject *found = o->name == Py_None ? NULL : offered_schema(g, o->name);
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

static PyObject *py_show(PyObject *module, PyObject *value)
{
    if (!H.ready) {
        PyErr_SetString(PyExc_RuntimeError, "nativegrade.configure(hooks) was not called");
        return NULL;
    }
    return show(value);
}

static Slot test_slot;  /* `read`'s: one slot, learnt again as classes come */

static PyObject *py_read(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "read(obj, name) takes an object and a str");
        return NULL;
    }
    return read_attr(args[0], args[1], &test_slot);
}

static PyMethodDef methods[] = {
    {"grade", (PyCFunction)(void (*)(void))py_grade, METH_FASTCALL,
     "grade(case, observation, judge, server_tools): a CaseGrade, or None (ask "
     "checker.grade_case_py)"},
    {"show", py_show, METH_O, "show(value): showing.show, as the grader writes it in C"},
    {"read", (PyCFunction)(void (*)(void))py_read, METH_FASTCALL,
     "read(obj, name): obj.name, as the grader reads an attribute (for tests)"},
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
