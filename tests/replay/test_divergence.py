"""How a replayed turn's calls differ from the recorded ones (pure)."""

from __future__ import annotations

import json

from toolproxy.records import ToolCall
from toolproxy.replay.divergence import describe_divergence, pair_calls


def rc(name: str, **args) -> ToolCall:
    return ToolCall(name=name, arguments_raw=json.dumps(args), arguments=args)


def test_pair_calls_is_order_insensitive_and_by_value():
    a, b = rc("f", x=1), rc("g", y=[1, {"z": 2}])
    assert pair_calls([a, b], [rc("g", y=[1, {"z": 2.0}]), rc("f", x=1.0)]) == [1, 0]
    assert pair_calls([a, b], [a, a]) is None
    assert pair_calls([a], [a, b]) is None
    assert pair_calls([rc("f", x=True)], [rc("f", x=1)]) is None
    raw = ToolCall(name="f", arguments_raw="{bad")
    assert pair_calls([raw], [ToolCall(name="f", arguments_raw="{bad")]) == [0]


def test_describe_divergence_for_several_calls_names_the_call():
    got = describe_divergence([rc("f", x=1), rc("g", y=2)], [rc("f", x=1), rc("g", y=3, z=1)], None)
    assert got == "call 2: arguments differ: y 3 vs 2; extra z 1"
    assert describe_divergence([rc("f")], [], None) == "answered nothing instead of calling f"
    missing = describe_divergence([rc("f", a=1, b=2)], [rc("f")], None)
    assert missing == "arguments differ: no a (recorded 1); no b (recorded 2)"
    many = describe_divergence([rc("f", a=1, b=1, c=1, d=1)], [rc("f")], None)
    assert many.endswith("; 1 more")


def test_describe_divergence_says_each_way_calls_differ():
    f, g = rc("f", x=1), rc("g", y=2)
    assert describe_divergence([f], [], "sunny") == "answered in text instead of calling f"
    assert describe_divergence([], [f, g], None) == "called f, g instead of answering in text"
    assert describe_divergence([f], [f, g], None) == "made 2 calls (f, g) instead of 1 (f)"
    assert describe_divergence([f], [g], None) == "called g instead of f"
    cut = ToolCall(name="f", arguments_raw='{"x": ')
    assert describe_divergence([f], [cut], None) == "arguments differ: not valid JSON: '{\"x\": '"
    listed = ToolCall(name="f", arguments_raw="[1]", arguments=[1])
    assert describe_divergence([f], [listed], None) == "arguments differ: [1] vs {'x': 1}"
