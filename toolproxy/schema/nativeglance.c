/* `schema.glance`'s first look, in C: the same answers, sooner, or "ask the Python one".

   glance(schema, value) -> True | False | None      fits(schema) -> True | False | None

   True and False are `glance.glance`'s (and `glance.fits`') own answers; None hands the
   question back to them (`glance.py` asks this first, when the compiled core is built).
   Read here: `type`, `description`, `properties`, `required`, `additionalProperties`,
   `items`, `enum` and `const`, the numeric bounds (`minimum`, `maximum` and the exclusive
   two), the lengths (`minLength`, `maxLength`, `minItems`, `maxItems`), `anyOf` and
   `allOf`, `format` (through the format checker glance.py gives, `set_conforms`; until
   then a value under a `format` hands back), and the annotations (`title`, `$comment`,
   `default`, `examples`, `deprecated`, `readOnly`, `writeOnly`); any other keyword
   (`pattern`, which needs Python's re, keywords the metaschema knows or does not) hands
   back, as do a key that is not a str, more than 8 required names (`quick.repeats` then
   builds a set) and a value's key that is not a str. No Python code runs here but that
   checker, and nothing raises: strs are compared as code points, numbers by CPython's own
   int/float comparison.

   Why: on 1,000 BFCL-shaped cases reading a schema met for the first time was 19-21 % of a
   fresh pass; read here, 2,960 instructions a call, not 6,718, and the pass ~1.09x faster
   (docs/benchmarks.md, "thirtieth session"). `tests/schema/test_nativeglance.py` holds it
   to the Python reading. Built by scripts/compile_core.py with the mypyc core. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "nativeglance.h"

#define MAX_DEPTH 64   /* quick.MAX_DEPTH (a test compares them) */
#define PROVEN 1
#define NOT_PROVEN 0
#define ASK_PYTHON -1

static int node(PyObject *spec, PyObject *value, int present, int depth);

/* Is `key` (an exact str) the ASCII literal `lit` of `n` characters? */
static int is_key(PyObject *key, const char *lit, Py_ssize_t n)
{
    return PyUnicode_GET_LENGTH(key) == n && PyUnicode_KIND(key) == PyUnicode_1BYTE_KIND &&
           memcmp(PyUnicode_DATA(key), lit, (size_t)n) == 0;
}

/* The JSON types as bits: a type name's (`type_bit`), a value's (`value_types`). */
enum { T_STRING = 1, T_INTEGER = 2, T_NUMBER = 4, T_BOOLEAN = 8, T_OBJECT = 16, T_ARRAY = 32,
       T_NULL = 64 };

/* The bit of the type `name` (an exact str) names, 0 for a name that is no type's. */
static unsigned type_bit(PyObject *name)
{
    static const struct {
        const char *name;
        Py_ssize_t length;
    } types[] = {{"string", 6}, {"integer", 7}, {"number", 6}, {"boolean", 7},
                 {"object", 6}, {"array", 5},   {"null", 4}};
    for (int i = 0; i < 7; i++)
        if (is_key(name, types[i].name, types[i].length))
            return 1u << i;
    return 0;
}

/* The type bits `value` answers to: accepts.type_test's, each name at once (an integral
   finite float is an integer; a bool is neither; subclasses are no type). */
static unsigned value_types(PyObject *v)
{
    if (Py_IS_TYPE(v, &PyUnicode_Type))
        return T_STRING;
    if (Py_IS_TYPE(v, &PyLong_Type))
        return T_INTEGER | T_NUMBER;
    if (Py_IS_TYPE(v, &PyFloat_Type)) {
        double d = PyFloat_AS_DOUBLE(v);
        return T_NUMBER | (isfinite(d) && d == floor(d) ? T_INTEGER : 0);
    }
    if (Py_IS_TYPE(v, &PyBool_Type))
        return T_BOOLEAN;
    if (Py_IS_TYPE(v, &PyDict_Type))
        return T_OBJECT;
    if (Py_IS_TYPE(v, &PyList_Type))
        return T_ARRAY;
    return v == Py_None ? T_NULL : 0;
}

/* accepts.type_test: 1 or 0, -1 for a name that is no type's (`name` an exact str). */
static int type_test(PyObject *name, PyObject *v)
{
    unsigned bit = type_bit(name);
    return bit ? (value_types(v) & bit) != 0 : -1;
}

/* quick.repeats on a list of exact strs: 1 when a name comes twice; ASK_PYTHON past 8. */
static int repeats(PyObject *names)
{
    Py_ssize_t n = PyList_GET_SIZE(names);
    if (n > 8)
        return ASK_PYTHON;
    for (Py_ssize_t i = 1; i < n; i++)
        for (Py_ssize_t j = 0; j < i; j++)
            if (PyUnicode_Compare(PyList_GET_ITEM(names, i), PyList_GET_ITEM(names, j)) == 0)
                return 1;
    return 0;
}

/* `type`: one name, or a list of distinct names. */
static int typed(PyObject *spec, PyObject *value, int present)
{
    if (Py_IS_TYPE(spec, &PyUnicode_Type)) {
        int found = type_test(spec, value);
        return found == 1 || (found == 0 && !present);
    }
    if (!Py_IS_TYPE(spec, &PyList_Type) || PyList_GET_SIZE(spec) == 0)
        return NOT_PROVEN;
    Py_ssize_t n = PyList_GET_SIZE(spec);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(spec, i);
        if (!Py_IS_TYPE(name, &PyUnicode_Type) || type_test(name, Py_None) < 0)
            return NOT_PROVEN;
    }
    int twice = repeats(spec);
    if (twice)
        return twice == 1 ? NOT_PROVEN : ASK_PYTHON;
    if (!present)
        return PROVEN;
    for (Py_ssize_t i = 0; i < n; i++)
        if (type_test(PyList_GET_ITEM(spec, i), value) == 1)
            return PROVEN;
    return NOT_PROVEN;
}

/* accepts.scalar_key's kind: 's', 'b', 'n', '0', or 0 for no scalar (NaN included). */
static char scalar_kind(PyObject *v)
{
    if (Py_IS_TYPE(v, &PyUnicode_Type))
        return 's';
    if (Py_IS_TYPE(v, &PyBool_Type))
        return 'b';
    if (Py_IS_TYPE(v, &PyLong_Type))
        return 'n';
    if (Py_IS_TYPE(v, &PyFloat_Type))
        return isnan(PyFloat_AS_DOUBLE(v)) ? 0 : 'n';
    return v == Py_None ? '0' : 0;
}

/* glance._one_of over `n` options: is `value` one of them, compared by scalar_key? */
static int one_of(PyObject *const *options, Py_ssize_t n, PyObject *value)
{
    char kind = scalar_kind(value);
    if (!kind)
        return NOT_PROVEN;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *option = options[i];
        if (scalar_kind(option) != kind)
            continue;
        if (kind == 's') {
            if (PyUnicode_Compare(option, value) == 0)
                return PROVEN;
        } else if (kind == 'n') {  /* int and float: CPython's exact comparison, no Python code */
            int same = PyObject_RichCompareBool(option, value, Py_EQ);
            if (same < 0) {
                PyErr_Clear();
                return ASK_PYTHON;
            }
            if (same)
                return PROVEN;
        } else if (option == value) {  /* True, False, None: singletons */
            return PROVEN;
        }
    }
    return NOT_PROVEN;
}

/* `items`: every item of a non-empty list valid against `spec`, else `spec` read alone. */
static int items(PyObject *spec, PyObject *value, int present, int depth)
{
    if (present && Py_IS_TYPE(value, &PyList_Type) && PyList_GET_SIZE(value)) {
        Py_ssize_t n = PyList_GET_SIZE(value);
        for (Py_ssize_t i = 0; i < n; i++) {
            int ok = node(spec, PyList_GET_ITEM(value, i), 1, depth + 1);
            if (ok != PROVEN)
                return ok;
        }
        return PROVEN;
    }
    if (present && !Py_IS_TYPE(value, &PyList_Type) && PyList_Check(value))
        return NOT_PROVEN;  /* a list subclass: left to jsonschema */
    return node(spec, Py_None, 0, depth + 1);
}

/* `minimum` and the rest (quick.is_bound, accepts.numeric): a finite int or float bound;
   with a value, an int or float on its side, `holds_op` the comparison that says so (NaN, a
   bool and other int or float subclasses not proven; other types pass). */
static int bounded(int holds_op, PyObject *bound, PyObject *value, int present)
{
    if (!Py_IS_TYPE(bound, &PyLong_Type) &&
        !(Py_IS_TYPE(bound, &PyFloat_Type) && isfinite(PyFloat_AS_DOUBLE(bound))))
        return NOT_PROVEN;
    if (!present)
        return PROVEN;
    if (!Py_IS_TYPE(value, &PyLong_Type) && !Py_IS_TYPE(value, &PyFloat_Type))
        return PyLong_Check(value) || PyFloat_Check(value) ? NOT_PROVEN : PROVEN;
    if (Py_IS_TYPE(value, &PyFloat_Type) && isnan(PyFloat_AS_DOUBLE(value)))
        return NOT_PROVEN;
    int holds = PyObject_RichCompareBool(value, bound, holds_op);  /* int, float: exact */
    if (holds < 0) {
        PyErr_Clear();
        return ASK_PYTHON;
    }
    return holds ? PROVEN : NOT_PROVEN;
}

/* `minLength`, `maxLength` (code points of a str), `minItems`, `maxItems` (items of a
   list): quick.is_count (an int, at least 0) and accepts.sized (other types pass). */
static int sized(int of_list, int at_least, PyObject *limit, PyObject *value, int present)
{
    if (!Py_IS_TYPE(limit, &PyLong_Type))
        return NOT_PROVEN;
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(limit, &overflow);
    if (overflow < 0 || (overflow == 0 && n < 0))
        return NOT_PROVEN;  /* (an exact int: no error) */
    if (!present)
        return PROVEN;
    if (!Py_IS_TYPE(value, of_list ? &PyList_Type : &PyUnicode_Type))
        return PROVEN;
    Py_ssize_t size = of_list ? PyList_GET_SIZE(value) : PyUnicode_GET_LENGTH(value);
    if (overflow > 0)  /* past any size */
        return at_least ? NOT_PROVEN : PROVEN;
    return (at_least ? size >= n : size <= n) ? PROVEN : NOT_PROVEN;
}

/* The format checker's `conforms` (glance.CONFORMS, given by `set_conforms`; strong), or
   NULL: a `format` met with a value hands back. */
static PyObject *conforms;

/* formats.format_conforms: 1, 0, or -1 with an error set (none given, or it raised). */
static int conforms_entry(PyObject *value, PyObject *name)
{
    if (conforms == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "nativeglance: set_conforms was not called");
        return -1;
    }
    PyObject *args[2] = {value, name};
    PyObject *found = PyObject_Vectorcall(conforms, args, 2, NULL);
    if (found == NULL)
        return -1;
    int yes = PyObject_IsTrue(found);
    Py_DECREF(found);
    return yes;
}

/* `format`: a str; with a value, one the format checker takes (glance_py's answer to a
   checker that raises: not proven). */
static int formatted(PyObject *name, PyObject *value, int present)
{
    if (!Py_IS_TYPE(name, &PyUnicode_Type))
        return NOT_PROVEN;
    if (!present)
        return PROVEN;
    if (conforms == NULL)
        return ASK_PYTHON;
    int yes = conforms_entry(value, name);
    if (yes < 0) {
        int caught = PyErr_ExceptionMatches(PyExc_Exception);  /* as glance_py catches */
        PyErr_Clear();
        return caught ? NOT_PROVEN : ASK_PYTHON;
    }
    return yes ? PROVEN : NOT_PROVEN;
}

/* glance._alternatives: `anyOf` (`one`) or `allOf`, a non-empty list of schemas each in
   the subset; with a value, one of them (anyOf) or each (allOf) proving it valid. */
static int alternatives(PyObject *subs, PyObject *value, int present, int depth, int one)
{
    if (!Py_IS_TYPE(subs, &PyList_Type) || PyList_GET_SIZE(subs) == 0)
        return NOT_PROVEN;
    int found = !(one && present);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subs); i++) {
        PyObject *sub = PyList_GET_ITEM(subs, i);
        int ok = node(sub, present ? value : Py_None, present, depth + 1);
        if (ok == ASK_PYTHON)
            return ASK_PYTHON;
        if (ok == PROVEN) {
            found |= present;
            continue;
        }
        if (!present || !one)
            return NOT_PROVEN;
        ok = node(sub, Py_None, 0, depth + 1);  /* anyOf: is it one the compiler takes? */
        if (ok != PROVEN)
            return ok;
    }
    return found ? PROVEN : NOT_PROVEN;
}

/* glance._object: `properties`, `required` and `additionalProperties` at once. */
static int object(PyObject *props, PyObject *required, PyObject *extra, PyObject *value,
                  int present, int depth)
{
    if (!Py_IS_TYPE(props, &PyDict_Type) || !Py_IS_TYPE(required, &PyList_Type))
        return NOT_PROVEN;
    Py_ssize_t n_required = PyList_GET_SIZE(required);
    for (Py_ssize_t i = 0; i < n_required; i++)
        if (!Py_IS_TYPE(PyList_GET_ITEM(required, i), &PyUnicode_Type))
            return NOT_PROVEN;
    int twice = repeats(required);
    if (twice)
        return twice == 1 ? NOT_PROVEN : ASK_PYTHON;
    PyObject *given = NULL;  /* the object's names and values, when it is one */
    Py_ssize_t pos = 0, found = 0;
    PyObject *name, *sub, *item;
    if (present) {
        if (Py_IS_TYPE(value, &PyDict_Type))
            given = value;
        else if (PyDict_Check(value))
            return NOT_PROVEN;  /* a dict subclass: left to jsonschema */
    }
    while (given && PyDict_Next(given, &pos, &name, &item))  /* str keys only: then no */
        if (!Py_IS_TYPE(name, &PyUnicode_Type))              /* lookup below runs Python */
            return ASK_PYTHON;                               /* code (an __eq__) */
    pos = 0;
    while (PyDict_Next(props, &pos, &name, &sub)) {
        if (!Py_IS_TYPE(name, &PyUnicode_Type))
            return ASK_PYTHON;
        item = given ? PyDict_GetItemWithError(given, name) : NULL;  /* str keys: no error */
        int ok = item ? node(sub, item, 1, depth + 1) : node(sub, Py_None, 0, depth + 1);
        found += item != NULL;
        if (ok != PROVEN)
            return ok;
    }
    int ok = node(extra, Py_None, 0, depth + 1);
    if (ok != PROVEN)
        return ok;
    if (given && found < PyDict_GET_SIZE(given)) {  /* some name is no property */
        pos = 0;
        while (PyDict_Next(given, &pos, &name, &item)) {
            if (PyDict_GetItemWithError(props, name) == NULL) {  /* str keys both */
                ok = node(extra, item, 1, depth + 1);
                if (ok != PROVEN)
                    return ok;
            }
        }
    }
    if (given)
        for (Py_ssize_t i = 0; i < n_required; i++)
            if (PyDict_GetItemWithError(given, PyList_GET_ITEM(required, i)) == NULL)
                return NOT_PROVEN;
    return PROVEN;
}

static PyObject *no_properties, *no_names;  /* read only */

#define NOT_AN_ANNOTATION -2

/* An annotation's reading (PROVEN or NOT_PROVEN: its value's type), or NOT_AN_ANNOTATION. */
static int annotation(PyObject *key, PyObject *sub)
{
    if (is_key(key, "description", 11))
        return Py_IS_TYPE(sub, &PyUnicode_Type);
    if (is_key(key, "title", 5) || is_key(key, "$comment", 8))
        return PyUnicode_Check(sub);
    if (is_key(key, "default", 7))
        return PROVEN;
    if (is_key(key, "examples", 8))
        return PyList_Check(sub);
    if (is_key(key, "deprecated", 10) || is_key(key, "readOnly", 8) || is_key(key, "writeOnly", 9))
        return PyBool_Check(sub);
    return NOT_AN_ANNOTATION;
}

/* glance._node: is `spec` in the subset, and, when `present`, `value` valid against it? */
static int node(PyObject *spec, PyObject *value, int present, int depth)
{
    if (spec == Py_True)
        return PROVEN;
    if (spec == Py_False)
        return present ? NOT_PROVEN : PROVEN;
    if (!Py_IS_TYPE(spec, &PyDict_Type) || depth > MAX_DEPTH)
        return NOT_PROVEN;
    PyObject *props = no_properties, *required = no_names, *extra = Py_True;
    PyObject *key, *sub;
    int shaped = 0, ok = PROVEN;
    Py_ssize_t pos = 0;
    while (PyDict_Next(spec, &pos, &key, &sub)) {
        if (!Py_IS_TYPE(key, &PyUnicode_Type))
            return ASK_PYTHON;
        if (is_key(key, "type", 4))
            ok = typed(sub, value, present);
        else if (is_key(key, "description", 11))  /* (the commonest, read first) */
            ok = Py_IS_TYPE(sub, &PyUnicode_Type);
        else if (is_key(key, "properties", 10))
            props = sub, shaped = 1;
        else if (is_key(key, "required", 8))
            required = sub, shaped = 1;
        else if (is_key(key, "additionalProperties", 20))
            extra = sub, shaped = 1;
        else if (is_key(key, "enum", 4))
            ok = !Py_IS_TYPE(sub, &PyList_Type) ? NOT_PROVEN
                 : present ? one_of(((PyListObject *)sub)->ob_item, PyList_GET_SIZE(sub), value)
                           : PROVEN;
        else if (is_key(key, "items", 5))
            ok = items(sub, value, present, depth);
        else if (is_key(key, "const", 5))
            ok = present ? one_of(&sub, 1, value) : PROVEN;
        else if ((ok = annotation(key, sub)) != NOT_AN_ANNOTATION)
            ;
        else if (is_key(key, "minimum", 7))
            ok = bounded(Py_GE, sub, value, present);
        else if (is_key(key, "maximum", 7))
            ok = bounded(Py_LE, sub, value, present);
        else if (is_key(key, "exclusiveMinimum", 16))
            ok = bounded(Py_GT, sub, value, present);
        else if (is_key(key, "exclusiveMaximum", 16))
            ok = bounded(Py_LT, sub, value, present);
        else if (is_key(key, "minLength", 9))
            ok = sized(0, 1, sub, value, present);
        else if (is_key(key, "maxLength", 9))
            ok = sized(0, 0, sub, value, present);
        else if (is_key(key, "minItems", 8))
            ok = sized(1, 1, sub, value, present);
        else if (is_key(key, "maxItems", 8))
            ok = sized(1, 0, sub, value, present);
        else if (is_key(key, "format", 6))
            ok = formatted(sub, value, present);
        else if (is_key(key, "anyOf", 5))
            ok = alternatives(sub, value, present, depth, 1);
        else if (is_key(key, "allOf", 5))
            ok = alternatives(sub, value, present, depth, 0);
        else
            return ASK_PYTHON;  /* pattern, and every other keyword */
        if (ok != PROVEN)
            return ok;
    }
    if (!shaped)
        return PROVEN;
    return object(props, required, extra, value, present, depth);
}

/* ---- A compiled schema read into one block (a program) ----

   On a warm pass every call re-read its tool's schema: each keyword of each property,
   its description's type, the properties the call left out (is each one the compiler
   takes?). What of that is the schema's alone is the same at every reading, and schemas
   are immutable once seen (`compiling.compile_schema`'s contract). So a schema compiled
   (`remember`, which `compile_schema` calls) and in the subset below is read into a
   program: per node, its value checks in its keywords' order, then its properties (name,
   node) in theirs. Running it reads only the value, and gives `node`'s answer: the same
   checks in the same order, what `node` answers of the schema alone (absent properties,
   `fits`) answered once. A fresh pass, which compiles little, reads as before.
   Held: `type`, `enum`, `const`, `items`, `properties`, `required`,
   `additionalProperties` and the annotations; a schema with any other keyword (bounds,
   lengths, `format`, `anyOf`, `allOf`, which `node` reads) or one `node` does not prove
   fits gets no program. `clear` forgets them all (`compiling.clear_caches`). */

enum { N_TRUE, N_FALSE, N_DICT };

typedef struct {
    char what;         /* 't' type, 'e' enum, 'c' const, 'i' items */
    unsigned types;    /* 't': the type names' bits */
    PyObject *of;      /* 'e': the list; 'c': the value (borrowed: the schema holds them) */
    int child;         /* 'i': the items' node */
} Check;

typedef struct {
    PyObject *name;    /* borrowed */
    Py_hash_t hash;    /* the name's: a value's key is matched by it first */
    int node, required;
} Prop;

typedef struct {
    char kind;         /* N_TRUE, N_FALSE, N_DICT */
    int shaped;        /* properties, required or additionalProperties given */
    int first_check, n_checks, first_prop, n_props, extra;
    int n_required;    /* required names that are properties */
    int required_others;  /* required names that are not: looked up in the value */
    PyObject *required;  /* borrowed: the schema's list */
} Node;

typedef struct {
    Node *nodes;
    Check *checks;
    Prop *props;
    int n_nodes, n_checks, n_props, cap_nodes, cap_checks, cap_props;
    int packed;        /* its arrays follow it in its own allocation (`pack`) */
} Program;

#define GROW(arr, n, cap)                                                             \
    ((n) < (cap) ? 0                                                                  \
     : ((cap) = (cap) ? 2 * (cap) : 8,                                                \
        ((arr) = PyMem_Realloc((arr), (size_t)(cap) * sizeof(*(arr)))) == NULL ? -1 : 0))

#define NO_PROGRAM -1  /* build: outside the compiled subset, or not proven to fit */
#define NO_MEMORY -2

/* An exact str's hash: the one it caches (PyUnicode_Compare and PyObject_Hash each cost
   more than a lookup's worth here). */
static Py_hash_t str_hash(PyObject *s)
{
    Py_hash_t hash = ((PyASCIIObject *)s)->hash;
    return hash != -1 ? hash : PyObject_Hash(s);  /* (a str's: no error) */
}

/* Do two exact strs of equal hashes hold the same code points? */
static int same_str(PyObject *a, PyObject *b)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    int kind = PyUnicode_KIND(a);
    return a == b || (n == PyUnicode_GET_LENGTH(b) && kind == PyUnicode_KIND(b) &&
                      memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)n * kind) == 0);
}

/* The index among node `n`'s properties of the one named `name` (an exact str), or -1. */
static int prop_of(const Program *p, const Node *n, PyObject *name)
{
    Py_hash_t hash = str_hash(name);
    const Prop *q = &p->props[n->first_prop];
    for (int i = 0; i < n->n_props; i++)
        if (q[i].hash == hash && same_str(q[i].name, name))
            return i;
    return -1;
}

/* Read `spec` into `p`: its node's index, NO_PROGRAM or NO_MEMORY. A node's checks and
   properties each sit in one run of `p`'s arrays (its children's after or before). */
static int build(Program *p, PyObject *spec, int depth)
{
    if (GROW(p->nodes, p->n_nodes, p->cap_nodes) < 0)
        return NO_MEMORY;
    int at = p->n_nodes++;
    Node n = {.kind = spec == Py_True ? N_TRUE : spec == Py_False ? N_FALSE : N_DICT};
    p->nodes[at] = n;
    if (n.kind != N_DICT)
        return at;
    if (!Py_IS_TYPE(spec, &PyDict_Type) || depth > MAX_DEPTH)
        return NO_PROGRAM;
    PyObject *props = no_properties, *required = no_names, *extra = Py_True, *key, *sub;
    Check checks[4];  /* type, enum, const, items: each once in a dict */
    Py_ssize_t pos = 0;
    while (PyDict_Next(spec, &pos, &key, &sub)) {
        if (!Py_IS_TYPE(key, &PyUnicode_Type))
            return NO_PROGRAM;
        Check c = {0};
        int noted = annotation(key, sub);
        if (noted != NOT_AN_ANNOTATION) {
            if (noted != PROVEN)
                return NO_PROGRAM;
            continue;
        }
        if (is_key(key, "type", 4)) {
            if (typed(sub, Py_None, 0) != PROVEN)  /* a known name, or distinct known names */
                return NO_PROGRAM;
            if (Py_IS_TYPE(sub, &PyUnicode_Type))
                c.types = type_bit(sub);
            else
                for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sub); i++)
                    c.types |= type_bit(PyList_GET_ITEM(sub, i));
            c.what = 't';
        } else if (is_key(key, "enum", 4)) {
            if (!Py_IS_TYPE(sub, &PyList_Type))
                return NO_PROGRAM;
            c.what = 'e', c.of = sub;
        } else if (is_key(key, "const", 5)) {
            c.what = 'c', c.of = sub;
        } else if (is_key(key, "items", 5)) {
            if ((c.child = build(p, sub, depth + 1)) < 0)
                return c.child;
            c.what = 'i';
        } else if (is_key(key, "properties", 10)) {
            props = sub, n.shaped = 1;
            continue;
        } else if (is_key(key, "required", 8)) {
            required = sub, n.shaped = 1;
            continue;
        } else if (is_key(key, "additionalProperties", 20)) {
            extra = sub, n.shaped = 1;
            continue;
        } else {
            return NO_PROGRAM;  /* read by `node` at every sighting */
        }
        checks[n.n_checks++] = c;
    }
    n.first_check = p->n_checks;
    for (int i = 0; i < n.n_checks; i++) {
        if (GROW(p->checks, p->n_checks, p->cap_checks) < 0)
            return NO_MEMORY;
        p->checks[p->n_checks++] = checks[i];
    }
    if (n.shaped) {
        /* object()'s reading of the schema alone: then, with a value, only the value's */
        if (object(props, required, extra, Py_None, 0, depth) != PROVEN)
            return NO_PROGRAM;
        n.required = required;
        n.first_prop = p->n_props, n.n_props = (int)PyDict_GET_SIZE(props);
        for (int i = 0; i < n.n_props; i++, p->n_props++)  /* their run, filled below */
            if (GROW(p->props, p->n_props, p->cap_props) < 0)
                return NO_MEMORY;
        pos = 0;
        for (int i = 0; PyDict_Next(props, &pos, &key, &sub); i++) {
            int child = build(p, sub, depth + 1);
            if (child < 0)
                return child;
            p->props[n.first_prop + i] =
                (Prop){.name = key, .hash = str_hash(key), .node = child};
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(required); i++) {  /* distinct strs */
            int at_prop = prop_of(p, &n, PyList_GET_ITEM(required, i));
            if (at_prop >= 0)
                p->props[n.first_prop + at_prop].required = 1, n.n_required++;
            else
                n.required_others++;
        }
        if ((n.extra = build(p, extra, depth + 1)) < 0)
            return n.extra;
    }
    p->nodes[at] = n;
    return at;
}

static int run(const Program *p, int at, PyObject *value);

/* items() with a value, the schema proven to fit. */
static int run_items(const Program *p, int child, PyObject *value)
{
    if (!Py_IS_TYPE(value, &PyList_Type))
        return PyList_Check(value) ? NOT_PROVEN : PROVEN;  /* a subclass: left to jsonschema */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
        int ok = run(p, child, PyList_GET_ITEM(value, i));
        if (ok != PROVEN)
            return ok;
    }
    return PROVEN;
}

#define MATCHED 32  /* properties matched on the stack; a node with more allocates */

/* object() with a value, the schema proven to fit: the same steps in the same order, each
   of the value's names matched to its property by hash in the program (a dict lookup of
   each property in the value was ~200 instructions). */
static int run_object(const Program *p, const Node *n, PyObject *value)
{
    if (!Py_IS_TYPE(value, &PyDict_Type))
        return PyDict_Check(value) ? NOT_PROVEN : PROVEN;
    PyObject *local[MATCHED], **matched = local, *name, *item;
    if (n->n_props > MATCHED && (matched = PyMem_Malloc(n->n_props * sizeof(*matched))) == NULL) {
        PyErr_Clear();
        return ASK_PYTHON;  /* no memory: the Python reading answers */
    }
    memset(matched, 0, (size_t)n->n_props * sizeof(*matched));
    Py_ssize_t pos = 0;
    int others = 0, required = 0, ok = PROVEN;
    while (PyDict_Next(value, &pos, &name, &item)) {
        if (!Py_IS_TYPE(name, &PyUnicode_Type)) {
            ok = ASK_PYTHON;  /* a lookup would run Python code (an __eq__) */
            goto done;
        }
        int at = prop_of(p, n, name);
        if (at >= 0)
            matched[at] = item;
        else
            others = 1;
    }
    for (int i = 0; i < n->n_props; i++) {  /* in the properties' order */
        if (matched[i] == NULL)
            continue;
        const Prop *q = &p->props[n->first_prop + i];
        required += q->required;
        if ((ok = run(p, q->node, matched[i])) != PROVEN)
            goto done;
    }
    for (pos = 0; others && PyDict_Next(value, &pos, &name, &item);)  /* in the value's */
        if (prop_of(p, n, name) < 0 && (ok = run(p, n->extra, item)) != PROVEN)
            goto done;
    if (required < n->n_required) {
        ok = NOT_PROVEN;
        goto done;
    }
    for (Py_ssize_t i = 0; n->required_others && i < PyList_GET_SIZE(n->required); i++) {
        PyObject *wanted = PyList_GET_ITEM(n->required, i);
        if (prop_of(p, n, wanted) < 0 && PyDict_GetItemWithError(value, wanted) == NULL) {
            ok = NOT_PROVEN;
            goto done;
        }
    }
done:
    if (matched != local)
        PyMem_Free(matched);
    return ok;
}

/* node(spec, value, 1, depth) for the spec read into node `at`. */
static int run(const Program *p, int at, PyObject *value)
{
    const Node *n = &p->nodes[at];
    if (n->kind != N_DICT)
        return n->kind == N_TRUE ? PROVEN : NOT_PROVEN;
    for (int i = 0; i < n->n_checks; i++) {
        const Check *c = &p->checks[n->first_check + i];
        PyObject *of = c->of;
        int ok = c->what == 't'   ? (value_types(value) & c->types ? PROVEN : NOT_PROVEN)
                 : c->what == 'e' ? one_of(((PyListObject *)of)->ob_item, PyList_GET_SIZE(of),
                                           value)
                 : c->what == 'c' ? one_of(&of, 1, value)
                                  : run_items(p, c->child, value);
        if (ok != PROVEN)
            return ok;
    }
    return n->shaped ? run_object(p, n, value) : PROVEN;
}

static void drop_program(Program *p)
{
    if (p == NULL)
        return;
    if (!p->packed) {
        PyMem_Free(p->nodes);
        PyMem_Free(p->checks);
        PyMem_Free(p->props);
    }
    PyMem_Free(p);
}

/* `p` (dropped) and its arrays in one allocation, in the order a run reads them: a pass
   over many schemas meets each program cold, and one block is fewer lines to fetch than
   four apart. NULL: no memory (`p` kept). */
static Program *pack(Program *p)
{
    size_t nodes = (size_t)p->n_nodes * sizeof(Node), checks = (size_t)p->n_checks * sizeof(Check);
    size_t props = (size_t)p->n_props * sizeof(Prop);  /* (each size a multiple of 8) */
    Program *q = PyMem_Malloc(sizeof(Program) + nodes + checks + props);
    if (q == NULL)
        return NULL;
    *q = *p;
    q->nodes = (Node *)(q + 1);
    q->checks = (Check *)((char *)q->nodes + nodes);
    q->props = (Prop *)((char *)q->checks + checks);
    memcpy(q->nodes, p->nodes, nodes);
    if (checks)
        memcpy(q->checks, p->checks, checks);
    if (props)
        memcpy(q->props, p->props, props);
    q->packed = 1;
    drop_program(p);
    return q;
}

/* `schema`'s program (owned by the caller), NULL when it has none; NO_MEMORY in *failed. */
static Program *compile_program(PyObject *schema, int *failed)
{
    Program *p = PyMem_Calloc(1, sizeof(Program));
    int at = p ? build(p, schema, 0) : NO_MEMORY;
    Program *packed = at >= 0 ? pack(p) : NULL;
    if (packed == NULL) {
        drop_program(p);
        *failed = at >= 0 || at == NO_MEMORY;
        return NULL;
    }
    return packed;
}

/* The schemas compiled, by address (each held: its address is not reused), in one
   open-addressed table, with their programs (NULL: none, read as it stands). */
typedef struct {
    PyObject *schema;  /* strong, or NULL: a free slot */
    Program *program;
} Compiled;

#define MIN_SLOTS 1024
#define MAX_SLOTS (1 << 16)  /* half of them used at most: then the table starts again */
static Compiled *table;
static size_t slots, used;

static size_t slot_of(PyObject *schema, size_t n)
{
    uint64_t h = (uint64_t)(uintptr_t)schema * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (n - 1);
}

static Compiled *probe(Compiled *t, size_t n, PyObject *schema)
{
    size_t i = slot_of(schema, n);
    while (t[i].schema != NULL && t[i].schema != schema)
        i = (i + 1) & (n - 1);
    return &t[i];
}

/* Forget every schema and program (compiling.clear_caches: what a fresh process knows). */
static void forget(void)
{
    Compiled *t = table;
    size_t n = slots;
    table = NULL, slots = used = 0;
    for (size_t i = 0; i < n; i++) {
        drop_program(t[i].program);
        Py_XDECREF(t[i].schema);
    }
    PyMem_Free(t);
}

/* Hold `schema` and its program (if it has one): 1, 0 (it has none), or -1 (no memory). */
static int remember(PyObject *schema)
{
    if (table != NULL && probe(table, slots, schema)->schema != NULL)
        return probe(table, slots, schema)->program != NULL;
    int failed = 0;
    Program *program = compile_program(schema, &failed);
    if (failed)
        return -1;
    if (2 * (used + 1) > slots) {  /* grow, or start again once at MAX_SLOTS */
        size_t n = slots ? 2 * slots : MIN_SLOTS;
        if (n > MAX_SLOTS) {
            forget();
            n = MIN_SLOTS;
        }
        Compiled *t = PyMem_Calloc(n, sizeof(Compiled));
        if (t == NULL) {
            drop_program(program);
            return -1;
        }
        for (size_t i = 0; i < slots; i++)
            if (table[i].schema != NULL)
                *probe(t, n, table[i].schema) = table[i];
        PyMem_Free(table);
        table = t, slots = n;
    }
    *probe(table, slots, schema) = (Compiled){.schema = Py_NewRef(schema), .program = program};
    used++;
    return program != NULL;
}

/* glance(schema, value): `node`'s answer, from the schema's program when compiled. */
static int glance_value(PyObject *schema, PyObject *value)
{
    if (table != NULL) {
        Compiled *c = probe(table, slots, schema);
        if (c->program != NULL)
            return run(c->program, 0, value);
    }
    return node(schema, value, 1, 0);
}

static PyObject *answer(int found)
{
    if (found == PROVEN)
        Py_RETURN_TRUE;
    if (found == NOT_PROVEN)
        Py_RETURN_FALSE;
    Py_RETURN_NONE;
}

/* The C readings `nativegrade.c` calls directly, through the capsule `_C_API`. */
static int glance_entry(PyObject *schema, PyObject *value)
{
    return glance_value(schema, value);
}

static int fits_entry(PyObject *schema)
{
    return node(schema, Py_None, 0, 0);
}

static const GlanceAPI entries = {glance_entry, fits_entry, type_test, conforms_entry};

static PyObject *py_glance(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "glance(schema, value) takes 2 arguments");
        return NULL;
    }
    return answer(glance_value(args[0], args[1]));
}

static PyObject *py_fits(PyObject *module, PyObject *schema)
{
    return answer(node(schema, Py_None, 0, 0));
}

static PyObject *py_set_conforms(PyObject *module, PyObject *found)
{
    if (!PyCallable_Check(found)) {
        PyErr_SetString(PyExc_TypeError, "set_conforms(conforms): a callable");
        return NULL;
    }
    Py_XSETREF(conforms, Py_NewRef(found));
    Py_RETURN_NONE;
}

static PyObject *py_clear(PyObject *module, PyObject *unused)
{
    forget();
    Py_RETURN_NONE;
}

static PyObject *py_programs(PyObject *module, PyObject *unused)
{
    Py_ssize_t made = 0;
    for (size_t i = 0; i < slots; i++)
        made += table[i].program != NULL;
    return Py_BuildValue("nn", (Py_ssize_t)used, made);
}

static PyObject *py_remember(PyObject *module, PyObject *schema)
{
    int made = remember(schema);
    if (made < 0)
        return PyErr_NoMemory();
    return PyBool_FromLong(made);
}

static PyMethodDef methods[] = {
    {"glance", (PyCFunction)(void (*)(void))py_glance, METH_FASTCALL,
     "glance(schema, value): True, False, or None (ask schema.glance)"},
    {"fits", py_fits, METH_O, "fits(schema): True, False, or None (ask schema.glance)"},
    {"remember", py_remember, METH_O,
     "remember(schema): hold it and the program made of it (False: it has none)"},
    {"clear", py_clear, METH_NOARGS, "clear(): forget every schema remembered"},
    {"programs", py_programs, METH_NOARGS,
     "programs(): (schemas remembered, of them with a program): for tests"},
    {"set_conforms", py_set_conforms, METH_O,
     "set_conforms(conforms): the format checker `format` is read with (glance.CONFORMS)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "toolproxy.schema.nativeglance",
    "schema.glance's first look in C (see nativeglance.c)", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_nativeglance(void)
{
    if (no_properties == NULL && (no_properties = PyDict_New()) == NULL)
        return NULL;
    if (no_names == NULL && (no_names = PyList_New(0)) == NULL)
        return NULL;
    PyObject *module = PyModule_Create(&definition);
    if (module == NULL)
        return NULL;
    /* `entries` for other C modules (nativeglance.h) */
    PyObject *api =
        PyCapsule_New((void *)&entries, "toolproxy.schema.nativeglance._C_API", NULL);
    int failed = PyModule_AddIntConstant(module, "MAX_DEPTH", MAX_DEPTH) < 0 ||
                 PyModule_AddObjectRef(module, "_C_API", api) < 0;
    Py_XDECREF(api);
    if (failed) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
