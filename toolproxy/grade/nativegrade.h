/* What the parts of `nativegrade.c` share (each file's own functions are declared under
   its name below): the hooks `configure` was given, the strings they compare and build,
   the attributes they read, and one case's reading. See nativegrade.c. */
#ifndef TOOLPROXY_NATIVEGRADE_H
#define TOOLPROXY_NATIVEGRADE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#include "../schema/nativeglance.h"

#define MAX_CALLS 32  /* expected or observed calls in a case read here; more hand back */
#define HAND_BACK 2   /* a step's answer beside 0 (done) and -1 (a Python error is set) */

/* `nativeequal.c`'s reading, from its capsule: 1, 0, or -1 to ask the Python reading (and
   `nativeglance.c`'s, `GlanceAPI`) */
typedef int (*equal_fn)(PyObject *a, PyObject *b);

/* What `configure` was given (`checker.native_hooks`): the records built, the Python the
   grader hands parts to, the label order. Every object is a strong reference. */
typedef struct {
    int ready;
    PyObject *case_grade, *call_grade;  /* grades.case_grade_of, grades.call_grade_of */
    PyObject *call_view, *tool_call;                /* parsestage.Call, records.ToolCall */
    PyObject *grade_call;     /* checker._grade_call: a call the C does not read */
    PyObject *match_one;      /* semantic.match_one: an argument `match` must word */
    PyObject *matches;        /* matchers.matches: kinds other than exact/any_of/enum/any */
    PyObject *deep_equal;     /* equality.deep_equal_py: values nativeequal hands back */
    PyObject *literal_hint;   /* literalhint.literal_hint: a missing mapping's hint */
    PyObject *same_tool;      /* toolnames.same_tool: two names one ends with */
    PyObject *read_arguments; /* checker.read_arguments: a call the wire did not parse */
    PyObject *schema_proves;  /* checker.schema_proves: a schema glance hands back */
    PyObject *resolve;        /* resolving.resolve_schema: with real MCP schemas */
    PyObject *server_names;   /* checker.server_names: the MCP servers of server_tools */
    PyObject *precedence;     /* labels.PRECEDENCE: a tuple of str, the first wins */
    PyObject *incomplete_finish;  /* checker.INCOMPLETE_FINISH */
    PyObject *extra_note;     /* checker.EXTRA: an extra call to an expected tool, in words */
    PyObject *type_label;     /* schemastage.type_label: a type error's label */
    PyObject *show;           /* showing.show: a value nativeshow.c does not write */
    PyObject *coercions;      /* matchers.coercions: a str in other JSON types */
    equal_fn equal;
    const GlanceAPI *glance;
} Hooks;

extern Hooks H;

/* interned strings: attribute names, values compared, values written */
typedef struct {
    PyObject *expect, *calls, *order, *extra_calls, *id, *tools, *offered, *exchange_id,
        *session_id, *model, *complete, *finish_reason, *tool, *args, *allow_extra_args,
        *kind, *value, *values, *optional, *label, *bucket, *detail, *schema, *source, *name,
        *call_id, *arguments, *parse_error, *function, *parameters, *input_schema,
        *inputSchema;
    PyObject *call, *ordered, *allow, *forbid, *exact, *any_of, *enum_, *any, *judge;
    PyObject *ok, *missing, *hallucinated, *not_graded, *none, *selection, *semantic;
    PyObject *optional_absent, *required_absent, *not_expected, *empty;
    PyObject *properties, *required, *additionalProperties, *items, *const_, *type,
        *malformed, *schema_violation, *arguments_path, *dollar;
    PyObject *minimum, *maximum, *exclusiveMinimum, *exclusiveMaximum, *minLength, *maxLength,
        *minItems, *maxItems, *format, *anyOf, *allOf;
    PyObject *colon, *dot, *None_, *expected_, *got_, *none_of;  /* pieces of words */
    PyObject *wrong_tool, *parallel_collapse, *spurious_call, *missing_required,
        *hallucinated_param, *type_coercion;
} Strings;

extern Strings S;

/* Where one class's attribute is read from (`read_attr`): the class met last, its version
   tag then, and its getset descriptor's getter or its member descriptor's slot. */
typedef struct {
    PyTypeObject *type;  /* strong; NULL: none met yet */
    unsigned int version;
    getter get;
    void *closure;
    Py_ssize_t offset;   /* 0: none */
} Slot;

/* The attributes read, one Slot each: `GET(obj, case, expect)` reads case.expect. */
typedef struct {
    Slot case_expect, case_calls, case_order, case_extra_calls, case_id, case_tools;
    Slot obs_calls, obs_offered, obs_exchange_id, obs_session_id, obs_model, obs_complete,
        obs_finish_reason;
    Slot expected_tool, expected_args, expected_allow_extra_args;
    Slot matcher_kind, matcher_value, matcher_values, matcher_optional;
    Slot call_label, call_args, arg_name, arg_bucket, arg_detail, resolved_schema,
        resolved_source;
} Slots;

extern Slots A;
PyObject *read_attr(PyObject *obj, PyObject *name, Slot *slot);
#define GET(obj, cls, attr) read_attr((obj), S.attr, &A.cls##_##attr)

/* One observed call: its ToolCall's fields (borrowed from its __dict__, held here). */
typedef struct {
    PyObject *call;       /* the ToolCall (borrowed: the observation's list holds it) */
    PyObject *fields;     /* its __dict__ (strong) */
    PyObject *name, *call_id, *arguments, *parse_error;  /* borrowed from fields */
    PyObject *read;       /* pairing's reading of its arguments, once asked (strong) */
    int parsed;           /* the wire parser's reading is an exact dict: read it here */
    int proven;           /* pairing found every argument of expected call `proven - 1`
                             present and matching (0: not): pairing._prove */
} Seen;

/* One expected call. */
typedef struct {
    PyObject *call;       /* the ExpectedCall (borrowed: the case's list holds it) */
    PyObject *tool, *args;  /* strong; args an exact dict of str -> Matcher */
    int allow_extra;
} Wanted;

/* One pair of the selection stage: indexes (-1: none) and its label (borrowed from S). */
typedef struct {
    int e, o;
    PyObject *label;
} Pair;

/* One offered tool, as checker.offered_tools reads it (strong references). */
#define HELD_TOOLS 16  /* offered tools read into an array; a case offering more, a dict */
typedef struct {
    PyObject *name, *schema;  /* an exact str; the schema, or None */
    Py_hash_t hash;           /* the name's: a lookup compares these first */
} Offered;

/* One case as read. */
typedef struct {
    PyObject *case_, *observation, *judge, *server_tools;  /* borrowed: the arguments */
    int has_servers;
    int n_held;           /* tools in `held`, in the order offered, each name once */
    PyObject *tools;      /* offered_tools' dict of every offered tool (strong), or NULL:
                             built when more than HELD_TOOLS are offered or a Python hook
                             is given it (`offered_dict`) */
    PyObject *servers;    /* server_names(server_tools) when has_servers (strong) */
    PyObject *case_calls, *observed;  /* the lists (strong) */
    Seen seen[MAX_CALLS];
    Wanted wanted[MAX_CALLS];
    Py_ssize_t n_seen, n_wanted;
    Pair pairs[2 * MAX_CALLS];
    int n_pairs;
    Offered held[HELD_TOOLS];
} Grading;

/* nativepairing.c */
int pair_calls(Grading *g);            /* fills g->pairs: 0, -1, or HAND_BACK */
PyObject *selection_grade(Grading *g, Pair *p, PyObject *note);  /* a CallGrade */
int same(Grading *g, PyObject *observed, PyObject *expected);     /* 1, 0, -1 */
int args_match(PyObject *matcher, PyObject *value);               /* matches(): 1, 0, -1 */
int choices_match(PyObject *matcher, PyObject *value, int *known);  /* exact/any_of/enum */

/* What the schema stage found of a call (nativeschema.c): its label, its notes (the call's
   errors) and the arguments it flagged, each with the label that flagged it, its bucket
   and its detail, in the order first flagged (schemastage.check_schema's `flagged`). */
#define MAX_FLAGGED 64
typedef struct {
    PyObject *name, *label, *bucket, *detail;  /* name, detail strong; label, bucket borrowed */
} Flag;

typedef struct {
    PyObject *label;  /* the first by precedence (borrowed from H.precedence) */
    PyObject *notes;  /* list of str (strong) */
    Flag flags[MAX_FLAGGED];
    int n_flags;
} Findings;

int schema_errors(PyObject *schema, PyObject *args, Findings *found);  /* 0, -1, HAND_BACK */
void release_findings(Findings *found);

/* What the semantic stage is given and found (nativesemantic.c). */
typedef struct {
    PyObject *judge;          /* borrowed: the judge, or None */
    PyObject *failed_before;  /* Py_True: the schema stage failed (no judge is asked) */
    PyObject *errors;         /* the failures' details go here, when not NULL */
    PyObject *label;          /* the first failure's by precedence (borrowed) */
    int not_graded;           /* some argument's bucket is not_graded */
} Semantic;

int semantic_stage(Wanted *e, PyObject *args, PyObject *found, Semantic *s);  /* 0, -1 */
int proven_args(Wanted *e, PyObject *args, PyObject *found, Semantic *s);     /* 0, -1 */
PyObject *merged_args(PyObject *matched, Findings *f);  /* checker._merged, flat */

/* nativeshow.c: showing.show (a new str) */
PyObject *show(PyObject *value);

/* nativeread.c */
int read_case(Grading *g);  /* 0, -1, or HAND_BACK */
PyObject *offered_schema(Grading *g, PyObject *name);  /* borrowed; NULL: not offered */
int offers_any(Grading *g);                            /* was any tool offered? */
PyObject *offered_dict(Grading *g);  /* offered_tools' dict (borrowed), or NULL: an error */
void release(Grading *g);

/* nativehooks.c */
int intern_strings(void);
PyObject *py_configure(PyObject *module, PyObject *hooks);
int str_is(PyObject *s, PyObject *constant);  /* an exact str equal to an interned one */
PyObject *canonical(PyObject *label);  /* labels.PRECEDENCE's entry (borrowed), or NULL */
int outranks(PyObject *label, PyObject *other);  /* labels.outranks (other NULL: none) */
int json_equal(PyObject *a, PyObject *b);     /* equality.deep_equal: 1, 0, -1 */
PyObject *call_record(PyObject *make, PyObject *const *args, Py_ssize_t n);
int add_arg(PyObject *found, PyObject *name, PyObject *bucket, PyObject *detail);
int append(PyObject *list, PyObject *item);   /* on a list made here: 0, -1 */
PyObject *concat(PyObject *const *parts, int n);  /* "".join of strs, NULL-safe */

#endif
