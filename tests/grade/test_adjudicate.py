"""Two reviewers' labels compared and merged: `label --adjudicate A B [--resolved R]`."""

from __future__ import annotations

from pathlib import Path

import yaml

from toolproxy.cli.main import main
from toolproxy.grade.adjudicate import ABSENT, Disagreement, adjudicate
from toolproxy.grade.expectations import load_cases

A = """
- {id: w, exchange_id: e1, calls: [{tool: wx, args: {city: Paris, unit: c}}], notes: ana}
- {id: t, exchange_id: e2, calls: [{tool: get_time, args: {tz: UTC}}]}
- {id: q, exchange_id: e3, expect: no_call}
- {id: only-a, exchange_id: e4, expect: no_call}
"""
B = """
- {id: w, exchange_id: e1, calls: [{tool: wx, args: {city: {match: text, value: paris}, unit: c}}]}
- {id: t, exchange_id: e2, calls: [{tool: get_time, args: {tz: UTC}}]}
- {id: q, exchange_id: e3, calls: [{tool: wx, args: {city: Paris}}]}
"""


def files(tmp_path: Path, **texts: str) -> dict[str, Path]:
    out = {}
    for name, text in texts.items():
        out[name] = tmp_path / f"{name}.yaml"
        out[name].write_text(text)
    return out


def test_every_disagreement_is_listed_field_by_field(tmp_path: Path) -> None:
    f = files(tmp_path, a=A, b=B)
    done = adjudicate(load_cases([f["a"]]), load_cases([f["b"]]))
    assert done.agreed == 1 and [c.id for c in done.merged] == ["t"]
    found = {(d.case_id, d.where): (d.a, d.b) for d in done.open}
    assert found[("w", "calls[0].args.city")] == ("Paris", {"match": "text", "value": "paris"})
    assert found[("q", "expect")] == ("no_call", "call")
    assert found[("q", "calls")] == (ABSENT, [{"tool": "wx", "args": {"city": "Paris"}}])
    assert found[("only-a", "(the case)")][1] == ABSENT
    assert not any(d.where == "notes" for d in done.open)  # notes are free text


def test_a_number_and_a_boolean_are_not_the_same_label() -> None:
    from toolproxy.grade.adjudicate import differences
    from toolproxy.grade.model import Case, ExpectedCall, Matcher

    def case(v: object) -> Case:
        return Case(
            id="x", exchange_id="e", calls=[ExpectedCall(tool="t", args={"n": Matcher(value=v)})]
        )

    assert differences("x", case(1), case(True)) == [Disagreement("x", "calls[0].args.n", 1, True)]
    assert differences("x", case(1), case(1)) == []


def test_the_round_trip_disagree_resolve_merge(tmp_path: Path, capsys) -> None:
    f = files(tmp_path, a=A, b=B)
    out = tmp_path / "merged.yaml"
    assert main(["label", "--adjudicate", str(f["a"]), str(f["b"]), "-o", str(out)]) == 1
    listed = capsys.readouterr().out
    assert "calls[0].args.city" in listed and "(the case)" in listed
    assert "4 disagreement(s) in 3 case(s); nothing written" in listed
    assert not out.exists()
    # the reviewers settle two cases in a resolutions file: one is still open
    settled = files(
        tmp_path,
        r="""
- {id: w, exchange_id: e1, calls: [{tool: wx, args: {city: {match: text, value: Paris}, unit: c}}]}
- {id: q, exchange_id: e3, expect: no_call}
""",
    )
    argv = ["label", "--adjudicate", str(f["a"]), str(f["b"]), "-o", str(out)]
    assert main([*argv, "--resolved", str(settled["r"])]) == 1
    assert "only-a" in capsys.readouterr().out and not out.exists()
    (tmp_path / "b.yaml").write_text(B + "- {id: only-a, exchange_id: e4, expect: no_call}\n")
    assert main([*argv, "--resolved", str(settled["r"])]) == 0
    assert "wrote 4 cases" in capsys.readouterr().out
    merged = load_cases([out])
    assert [c.id for c in merged] == ["w", "t", "q", "only-a"]
    assert merged[0].calls[0].args["city"].kind == "text"  # the resolution's version
    assert merged[2].expect == "no_call"
    assert "2 agreed, 2 resolved" in out.read_text().splitlines()[0]
    assert yaml.safe_load(out.read_text())[1]["id"] == "t"


def test_resolved_needs_adjudicate(tmp_path: Path, capsys) -> None:
    assert main(["label", "--resolved", "x.yaml", "-o", str(tmp_path / "o.yaml")]) == 2
    assert "--resolved goes with --adjudicate" in capsys.readouterr().err


def test_provenance_never_disagrees_and_the_merge_names_both_reviewers(tmp_path: Path) -> None:
    a = "- {id: t, exchange_id: e2, expect: no_call, provenance: {by: alice, at: '1', via: label, session_id: s9}}\n"  # noqa: E501
    b = "- {id: t, exchange_id: e2, expect: no_call, provenance: {by: bob, at: '2', via: tui}}\n"
    r = "- {id: t, exchange_id: e2, expect: no_call, provenance: {by: carol, via: meeting}}\n"
    f = files(tmp_path, a=a, b=b, r=r)
    done = adjudicate(load_cases([f["a"]]), load_cases([f["b"]]), at="2026-11-24T12:00:00+00:00")
    assert done.open == [] and done.agreed == 1
    p = done.merged[0].provenance
    assert p is not None
    assert (p.by, p.via, p.at, p.session_id) == (
        "alice + bob", "adjudicated", "2026-11-24T12:00:00+00:00", "s9",
    )  # fmt: skip
    # a resolution that says who wrote it keeps its own provenance
    kept = adjudicate(load_cases([f["a"]]), load_cases([f["b"]]), load_cases([f["r"]]), at="x")
    assert kept.merged[0].provenance is not None and kept.merged[0].provenance.by == "carol"
