/* What every part of `nativegrade.c` reads: the hooks `configure` takes (all of them, or
   none), the strings interned once, the attributes read through their descriptors, the
   comparisons of strs, JSON values and labels, and the records made through
   `grades.call_grade_of` and `case_grade_of`. */
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

/* Room for `more` items past the end of `list` (an exact list this grader made), made
   twice as large when short: PyList_Append grows a list in small steps, each a realloc
   (~19 a call on BFCL-shaped cases, 3 % of a warm call's instructions). 0, or -1. */
static int reserve(PyObject *list, Py_ssize_t more)
{
    PyListObject *l = (PyListObject *)list;
    Py_ssize_t need = Py_SIZE(l) + more;
    if (l->allocated >= need)
        return 0;
    Py_ssize_t room = need < 12 ? 12 : 2 * need;
    PyObject **items = PyMem_Realloc(l->ob_item, (size_t)room * sizeof(PyObject *));
    if (items == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    l->ob_item = items, l->allocated = room;
    return 0;
}

/* list.append(item) on a list this grader made, grown by `reserve`. 0, or -1. */
int append(PyObject *list, PyObject *item)
{
    if (reserve(list, 1) < 0)
        return -1;
    PyList_SET_ITEM(list, Py_SIZE(list), Py_NewRef(item));
    Py_SET_SIZE(list, Py_SIZE(list) + 1);
    return 0;
}

/* An argument's grade onto a call's flat list (`grades.call_grade_of`): its name, bucket
   and detail (NULL: none) in a row. 0, or -1. */
int add_arg(PyObject *found, PyObject *name, PyObject *bucket, PyObject *detail)
{
    if (reserve(found, 3) < 0)
        return -1;
    Py_ssize_t n = Py_SIZE(found);
    PyList_SET_ITEM(found, n, Py_NewRef(name));
    PyList_SET_ITEM(found, n + 1, Py_NewRef(bucket));
    PyList_SET_ITEM(found, n + 2, Py_NewRef(detail ? detail : Py_None));
    Py_SET_SIZE(found, n + 3);
    return 0;
}

/* "".join(parts) for `n` strs (NULL: a step before failed, its error set), in one
   allocation: PyUnicode_FromFormat parses its format and writes through a growing
   buffer (~1,100 instructions for "%U: %U"). A new str, or NULL. */
PyObject *concat(PyObject *const *parts, int n)
{
    Py_ssize_t size = 0;
    Py_UCS4 widest = 0;
    for (int i = 0; i < n; i++) {
        if (parts[i] == NULL)
            return NULL;
        size += PyUnicode_GET_LENGTH(parts[i]);
        Py_UCS4 top = PyUnicode_MAX_CHAR_VALUE(parts[i]);
        widest = top > widest ? top : widest;
    }
    PyObject *out = PyUnicode_New(size, widest);
    for (Py_ssize_t i = 0, at = 0; out != NULL && i < n; i++) {
        Py_ssize_t length = PyUnicode_GET_LENGTH(parts[i]);
        if (length && PyUnicode_CopyCharacters(out, at, parts[i], 0, length) < 0)
            Py_CLEAR(out);
        at += length;
    }
    return out;
}

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

/* The strings compared and written, interned once. */
int intern_strings(void)
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
        {&S.arguments_path, "(arguments)"}, {&S.dollar, "$"}, {&S.minimum, "minimum"},
        {&S.maximum, "maximum"}, {&S.exclusiveMinimum, "exclusiveMinimum"},
        {&S.exclusiveMaximum, "exclusiveMaximum"}, {&S.minLength, "minLength"},
        {&S.maxLength, "maxLength"}, {&S.minItems, "minItems"}, {&S.maxItems, "maxItems"},
        {&S.format, "format"}, {&S.anyOf, "anyOf"}, {&S.allOf, "allOf"}, {&S.colon, ": "},
        {&S.dot, "."}, {&S.None_, "None"},
        {&S.expected_, "expected "}, {&S.got_, ", got "}, {&S.none_of, " is none of "},
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
PyObject *py_configure(PyObject *module, PyObject *hooks)
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

