"""The three-stage checker: (case, observation) -> CaseGrade with exactly one label.

Stages run in strict order and the first that fails names the label (`labels.PRECEDENCE`
breaks ties inside a stage and across calls):

selection  `expect: no_call` and any call -> spurious_call; no call -> no_call; a call whose
           tool is not an expected one (names compared with `toolnames.same_tool`, so
           `mcp__srv__get` is `get`, and `srv_get` too when `srv` is a real MCP server;
           a name that was not offered, or a call out of order when `order: ordered`)
           -> wrong_tool; fewer calls than expected, all of expected tools
           -> parallel_collapse. Extra calls to expected tools are not failures (metrics
           count them as over-tooling); they are listed with `expected_tool=None`.
           Pairing: `ordered` walks the expectation in order, taking each tool's next call;
           `unordered` pairs by tool, then by the best argument match.
parse      `parsestage.classify`: truncation, escaping_error, malformed_json (a text that
           fails to parse in an observation that ended early, `complete=False` or a
           length finish, is truncation). Every expected argument is bucket `malformed`.
schema     against `schema.resolving.resolve_schema` (the MCP server's schema, else the offered
           one; `schema_source` says which), validators from `compile_schema` (a schema
           object met the first time is read as it stands, `schema.glance`; when that
           proves the call valid, it is not compiled):
           required -> missing_required; type, when the value converts losslessly ("5",
           "true", 1 for "1") -> type_coercion; additionalProperties/unevaluatedProperties
           -> hallucinated_param; anything else -> schema_violation. An anyOf/oneOf whose
           alternatives fail alike takes their label. An unusable schema skips the stage.
semantic   each expected argument through its matcher: absent and not optional ->
           missing_required; present and wrong -> hallucinated_param; an argument the
           expectation does not name with `allow_extra_args: false` -> hallucinated_param.
           Two refinements keep buckets honest: a wrong value that matches once its type is
           converted is type_coercion, and a string that matches once its backslashes are
           read correctly (`{"path": "C:\\new"}` gave a newline) is escaping_error; both are
           bucket `malformed`, not `hallucinated`.

Buckets (labels.BUCKETS) are kept per argument for every expected argument, and for every
argument the schema flagged, whenever the arguments parsed, even when the schema stage
already failed, so the rates see all of them. Schema errors per bucket: required -> missing;
enum, const, minimum/maximum, multipleOf, invented names -> hallucinated (wrong values);
type, format, pattern, lengths and the rest -> malformed. A missing argument is never
hallucinated. Selection failures grade no arguments.

Judge fields: with no judge (or after an earlier stage failed, to save calls) a judge
argument is `not_graded`. A case with no label but some `not_graded` argument gets
`passed=False, label=None, not_graded=True`: not a pass, not a failure; metrics exclude it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from toolproxy.grade.equality import deep_equal_py
from toolproxy.grade.grades import ArgGrade, CallGrade, CaseGrade, call_grade_of, case_grade_of
from toolproxy.grade.labels import PRECEDENCE, Label, Stage, first_label, outranks
from toolproxy.grade.literalhint import literal_hint
from toolproxy.grade.matchers import Judge, coercions, matches
from toolproxy.grade.model import Case, ExpectedCall, Observation
from toolproxy.grade.pairing import Pair, ToolNames, pair_calls
from toolproxy.grade.parsestage import Call, call_arguments, views
from toolproxy.grade.schemastage import Flagged, check_schema, type_label
from toolproxy.grade.semantic import match_args, match_one, proven_args
from toolproxy.grade.showing import show
from toolproxy.records import ToolCall
from toolproxy.schema.compiling import CompiledSchema, compile_unless_proven
from toolproxy.schema.resolving import offered_schema, resolve_schema
from toolproxy.util.absent import ABSENT
from toolproxy.util.compiled import native
from toolproxy.wire.leaked import find_leaked_calls
from toolproxy.wire.toolnames import same_tool

__all__ = ["Pair", "ToolNames", "grade_case", "grade_case_py", "make_grader", "offered_tools"]

Grader = Callable[[Case, Observation], CaseGrade]
Compiler = Callable[[Any], CompiledSchema]
ServerTool = tuple[str, str, Any]

EXTRA: Final = "extra call to an expected tool"
NO_LIMIT: Final = float("inf")  # parsed once: `float("inf")` per case parsed the text
INCOMPLETE_FINISH: Final = frozenset({"length", "max_tokens", "max_output_tokens", "incomplete"})


def make_grader(judge: Judge | None = None, server_tools: Sequence[ServerTool] = ()) -> Grader:
    """A grader with its settings bound: `judge(criterion, value) -> (score, reason)` for
    judge matchers, `server_tools` = (server, tool, input_schema) real MCP schemas."""
    tools = tuple(server_tools)

    def grade(case: Case, observation: Observation) -> CaseGrade:
        return grade_case(case, observation, judge, tools)

    return grade


def offered_tools(tools: Any) -> dict[str, Any]:
    """Offered tools as name -> parameters schema (the first of a name wins, as in
    `resolve_schema`), from `{name, parameters}` dicts or any of the wire shapes
    (`{"type": "function", "function": {...}}`, `input_schema`)."""
    found: dict[str, Any] = {}
    if not isinstance(tools, list):
        return found
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        spec: dict[Any, Any] = tool  # typed: mypyc reads it with dict calls, not methods
        inner = spec.get("function")
        if isinstance(inner, dict):
            spec = inner
        name = spec.get("name")
        if isinstance(name, str) and name not in found:
            # the keys in turn, one lookup each (a loop over them built a tuple)
            schema = spec.get("parameters", ABSENT)
            if schema is ABSENT:
                schema = spec.get("input_schema", ABSENT)
            found[name] = spec.get("inputSchema") if schema is ABSENT else schema
    return found


# `nativegrade.c`'s grader (the same grade, or None: ask `grade_case_py`)
NATIVE_GRADE: Final = native("toolproxy.grade.nativegrade", "grade")


def grade_case(
    case: Case,
    observation: Observation,
    judge: Judge | None = None,
    server_tools: Sequence[ServerTool] = (),
    *,
    compiler: Compiler | None = None,
) -> CaseGrade:
    """Grade one case. Never raises on any observation. Graded in C when the compiled core
    is built (`nativegrade.c`, which hands back what it does not read), else, and with a
    `compiler`, by `grade_case_py`."""
    if NATIVE_GRADE is not None and compiler is None:
        found: CaseGrade | None = NATIVE_GRADE(case, observation, judge, server_tools)
        if found is not None:
            return found
    return grade_case_py(case, observation, judge, server_tools, compiler=compiler)


def grade_case_py(
    case: Case,
    observation: Observation,
    judge: Judge | None = None,
    server_tools: Sequence[ServerTool] = (),
    *,
    compiler: Compiler | None = None,
) -> CaseGrade:
    """`grade_case` in Python only (what the C grader is held to); `compiler` (when None,
    `compile_unless_proven`, called directly rather than through a function object) is for
    benchmarks."""
    observed = views(observation.calls)
    base = CaseGrade(
        case_id=case.id,
        passed=True,
        exchange_id=observation.exchange_id,
        session_id=observation.session_id,
        model=observation.model,
        called_tools=[c.name or "" for c in observed],
        expected_tools=[e.tool for e in case.calls],
    )
    if case.expect == "no_call":
        return _finish(base, [_selection(None, c, "spurious_call") for c in observed])
    if not observed:
        missing = [_selection(e, None, "no_call") for e in case.calls]
        grade = _finish(base, missing or [_selection(None, None, "no_call")])
        return _leaked(grade, case, observation, judge, server_tools, compiler)
    tools = offered_tools(observation.offered or case.tools)
    names = ToolNames(tools, server_names(server_tools) if server_tools else ())
    pairs = pair_calls(case, observed, names)
    if any(label for _, _, label in pairs):
        return _finish(
            base, [_selection(e, o, label, _extra(e, label), names) for e, o, label in pairs]
        )
    incomplete = not observation.complete or observation.finish_reason in INCOMPLETE_FINISH
    grades = []
    allowed = _extras_allowed(case)
    for e, o, _ in pairs:
        if o is None:
            continue
        if e is None and case.calls:
            allowed -= 1
            grades.append(_extra_call(o, case) if allowed < 0 else _selection(None, o, None, EXTRA))
            continue
        grades.append(_grade_call(e, o, tools, server_tools, judge, incomplete, compiler))
    return _finish(base, grades)


def _leaked(
    grade: CaseGrade,
    case: Case,
    observation: Observation,
    judge: Judge | None,
    server_tools: Sequence[ServerTool],
    compiler: Compiler | None,
) -> CaseGrade:
    """A no_call whose text holds calls (`wire.leaked`) keeps its label; the format is
    noted, and the calls graded as if the server had emitted them (`leaked_label`)."""
    names = set(offered_tools(observation.offered or case.tools))
    leak = find_leaked_calls(observation.text, names)
    if leak is None:
        return grade
    emitted = observation.model_copy(update={"calls": list(leak.calls), "text": None})
    would = grade_case(case, emitted, judge, server_tools, compiler=compiler)
    grade.leaked_format = leak.format
    grade.leaked_label = "passed" if would.passed else would.label  # None: not graded
    return grade


def _extras_allowed(case: Case) -> float:
    """How many extra calls to expected tools the case allows (`extra_calls`)."""
    if case.extra_calls == "allow":
        return NO_LIMIT
    return 0 if case.extra_calls == "forbid" else case.extra_calls


def _extra_call(o: Call, case: Case) -> CallGrade:
    """An extra call to an expected tool beyond what the case allows: a spurious_call."""
    limit = "none" if case.extra_calls == "forbid" else f"at most {case.extra_calls}"
    why = f"an extra call to {o.name!r}: the case allows {limit} (extra_calls)"
    return _selection(None, o, "spurious_call", why)


def _extra(e: ExpectedCall | None, label: Label | None) -> str | None:
    return EXTRA if e is None and label is None else None


def _finish(base: CaseGrade, calls: list[CallGrade]) -> CaseGrade:
    label: Label | None = None  # the first by PRECEDENCE (`first_label`), no list built
    for c in calls:
        if c.label is not None and outranks(c.label, label):
            label = c.label
    not_graded = label is None and any(a.bucket == "not_graded" for c in calls for a in c.args)
    base.calls, base.label, base.not_graded = calls, label, not_graded
    base.passed = label is None and not not_graded
    return base


def _selection(
    e: ExpectedCall | None,
    o: Call | None,
    label: Label | None,
    note: str | None = None,
    names: ToolNames | None = None,
) -> CallGrade:
    text = note or (_selection_why(e, o, label, names) if label else None)
    return CallGrade(
        expected_tool=e.tool if e else None,
        actual_tool=o.name if o else None,
        call_id=o.call_id if o else None,
        stage_failed="selection" if label else None,
        label=label,
        errors=[text] if text else [],
    )


def _selection_why(
    e: ExpectedCall | None, o: Call | None, label: Label, names: ToolNames | None
) -> str | None:
    """Why the selection stage gave `label` (None for a label it never gives)."""
    if label == "spurious_call":
        return "no tool call was expected"
    if label == "no_call":
        return "no tool call was made"
    if label == "wrong_tool":
        return _wrong_tool(e, o, names or ToolNames())
    if label == "parallel_collapse":
        return f"expected call to {e.tool if e else None!r} was not made"
    return None


def _wrong_tool(e: ExpectedCall | None, o: Call | None, names: ToolNames) -> str:
    called = o.name if o else None
    if e is None:
        return f"an extra call to {called!r}, which no expected call names"
    if called and names.offered and called not in names.offered:
        return f"called {called!r}, which was not offered; expected {e.tool!r}"
    order = " (out of order)" if o and names.same(called, e.tool) else ""
    return f"called {called!r}, expected {e.tool!r}{order}"


def _grade_call(
    e: ExpectedCall | None,
    o: Call,
    tools: dict[str, Any],
    server_tools: Sequence[ServerTool],
    judge: Judge | None,
    incomplete: bool,
    compiler: Compiler | None,
) -> CallGrade:
    if server_tools:
        resolved = resolve_schema(o.name, tools, server_tools)
        schema, source = resolved.schema, resolved.source
    else:  # the offered schema: a pair, no record built
        schema, source = offered_schema(o.name, tools)
    expected = e.tool if e else None
    args, label, why = call_arguments(o, incomplete)
    if args is None:
        wanted = e.args if e else {}
        malformed = [ArgGrade(name=k, bucket="malformed", detail=why) for k in wanted]
        return CallGrade(expected, o.name, o.call_id, "parse", label, source, [why], malformed)
    errors: list[str] = []
    flagged: Flagged | None = None  # the arguments the schema stage flagged, when it ran
    schema_labels: list[Label] | None = None
    if schema is not None:
        compiled = compile_unless_proven(schema, args) if compiler is None else compiler(schema)
        if compiled is None or compiled.accepts(args):
            pass  # certainly valid: nothing for the schema stage to say
        elif not compiled.usable:
            errors.append(f"schema not checked: {compiled.error}")
        else:
            flagged = {}
            schema_labels = check_schema(compiled, args, flagged, errors)
    failed: list[tuple[Label, ArgGrade]] = []  # the arguments the semantic stage failed
    schema_failed = bool(schema_labels)
    if e is not None and o.proven is e:  # pairing matched every argument (`matches`)
        matched = proven_args(e, args, failed)
    else:
        matched = match_args(e, args, None if schema_failed else judge, schema_failed, failed)
    stage: Stage | None = None
    if schema_labels:
        stage, label = "schema", first_label(schema_labels)
    elif failed:
        stage, label = "semantic", first_label([lab for lab, _ in failed])
        errors.extend(a.detail for _, a in failed if a.detail)
    found = _merged(matched, flagged) if flagged else matched
    # built once its fields are known: built first, its empty lists were made to be replaced
    return CallGrade(expected, o.name, o.call_id, stage, label, source, errors, found)


def _merged(matched: list[ArgGrade], flagged: Flagged) -> list[ArgGrade]:
    """Each argument's grade, the schema stage's where it flagged one; then the arguments
    only the schema stage named."""
    found = [flagged[a.name][1] if a.name in flagged else a for a in matched]
    names = {a.name for a in matched}
    return found + [grade for name, (_, grade) in flagged.items() if name not in names]


def server_names(server_tools: Sequence[ServerTool]) -> tuple[str, ...]:
    """The real MCP servers `server_tools` name (a tool name's prefix counts for them)."""
    return tuple({s for s, _, _ in server_tools})


def read_arguments(call: ToolCall) -> Any:
    """A call's arguments as pairing reads them: the object, or None (`call_arguments`)."""
    return call_arguments(Call(call), incomplete=False)[0]


def schema_proves(schema: Any, args: dict[str, Any]) -> bool:
    """Is `args` proven valid against `schema`, as `_grade_call` asks it (without a
    compile, or by the quick path)? `nativegrade.c` asks where its glance hands back; when
    not proven, `_grade_call` grades the call and words the errors (looking for them here
    too had them walked twice)."""
    compiled = compile_unless_proven(schema, args)
    return compiled is None or compiled.accepts(args)


def native_hooks(equal_api: Any, glance_api: Any) -> dict[str, Any]:
    """What `nativegrade.configure` is given: the records it builds, the Python it asks
    (see nativegrade.c), and the C readings of `nativeequal.c` and `nativeglance.c` (their
    `_C_API` capsules)."""
    return {
        "case_grade": case_grade_of, "call_grade": call_grade_of, "Call": Call,
        "ToolCall": ToolCall, "grade_call": _grade_call, "match_one": match_one,
        "matches": matches, "deep_equal": deep_equal_py, "literal_hint": literal_hint,
        "same_tool": same_tool, "read_arguments": read_arguments,
        "schema_proves": schema_proves, "resolve": resolve_schema,
        "server_names": server_names, "precedence": PRECEDENCE,
        "incomplete_finish": INCOMPLETE_FINISH, "extra_note": EXTRA, "type_label": type_label,
        "show": show, "coercions": coercions,
        "equal": equal_api, "glance": glance_api,
    }  # fmt: skip


def _configure_native() -> None:
    configure = native("toolproxy.grade.nativegrade", "configure")
    if configure is not None:
        equal = native("toolproxy.grade.nativeequal", "_C_API")
        configure(native_hooks(equal, native("toolproxy.schema.nativeglance", "_C_API")))


_configure_native()
