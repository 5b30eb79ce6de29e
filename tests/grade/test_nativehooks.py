"""What every part of the C grader reads (`nativehooks.c`, part of `nativegrade.c`): its
hooks, taken all or none; attributes read through each class's descriptors, learnt again
when the class is another or has changed."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from tests.grade.test_nativegrade import agrees, hooks, native_grader, weather_case
from toolproxy.grade.model import Matcher


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


def test_configure_takes_every_hook_or_none(native):
    taken = hooks()
    with pytest.raises(KeyError, match="no hook match_one"):
        native.configure({k: v for k, v in taken.items() if k != "match_one"})
    with pytest.raises(ValueError, match="precedence has no 'wrong_tool'"):
        native.configure(taken | {"precedence": ("no_call",)})
    with pytest.raises(TypeError):
        native.configure([])
    case, observation = weather_case()  # configured as before
    assert agrees(native, case, observation) is not None


class Slotted:
    __slots__ = ("kind",)

    def __init__(self, kind: Any) -> None:
        self.kind = kind


class Plain:
    def __init__(self, kind: Any) -> None:
        self.kind = kind


def test_an_attribute_is_read_from_whatever_class_comes(native):
    m = Matcher(kind="regex", pattern="x")  # compiled: a getset descriptor; pure: a slot
    assert native.read(m, "kind") == "regex"
    assert native.read(Slotted("a"), "kind") == "a"  # a member descriptor, learnt anew
    assert native.read(Plain("b"), "kind") == "b"  # an instance __dict__: as getattr reads
    assert native.read(m, "kind") == "regex"  # and the first class's again
    with pytest.raises(AttributeError):
        native.read(Slotted.__new__(Slotted), "kind")  # a slot never set


def test_a_class_changed_after_its_descriptor_was_learnt(native):
    class Changing:
        __slots__ = ("kind",)

    one = Changing()
    one.kind = "exact"
    assert native.read(one, "kind") == "exact"
    Changing.kind = property(lambda self: "any")  # type: ignore[assignment]
    assert native.read(one, "kind") == "any"  # its version tag changed: learnt again
