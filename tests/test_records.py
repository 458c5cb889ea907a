"""Record: the immutable value base the bus events and the permission and journal
records share. It must behave as the frozen dataclasses it stands for."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError
from typing import ClassVar

import pytest

from app.records import Record, field


class Point(Record):
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    unit: ClassVar[str] = "px"


class Labelled(Point):
    label: str = ""


def test_fields_in_order_from_bases_first_class_vars_left_out() -> None:
    assert Point.record_fields == ("x", "y", "tags")
    assert Labelled.record_fields == ("x", "y", "tags", "label")


def test_positional_keyword_and_default_arguments() -> None:
    point = Labelled(1, label="a")
    assert (point.x, point.y, point.tags, point.label) == (1, 0, [], "a")
    assert Labelled(1, 2, ["t"], "b").as_dict() == {"x": 1, "y": 2, "tags": ["t"], "label": "b"}


def test_each_instance_gets_its_own_factory_default() -> None:
    first, second = Point(1), Point(2)
    first.tags.append("a")
    assert second.tags == []


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Point(), "missing required argument 'x'"),
        (lambda: Point(1, 2, [], 4), "takes 3 arguments but 4 were given"),
        (lambda: Point(1, x=2), "got multiple values for argument 'x'"),
        (lambda: Point(1, z=2), "got an unexpected keyword argument 'z'"),
    ],
)
def test_wrong_arguments_are_type_errors(make, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        make()


def test_frozen() -> None:
    point = Point(1)
    with pytest.raises(FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del point.x  # type: ignore[misc]
    assert point.x == 1


def test_equality_and_hash_by_class_and_values() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(1, 3)
    assert Point(1) != Labelled(1)
    assert hash(Point(1, 2, ())) == hash(Point(1, 2, ()))  # type: ignore[arg-type]
    assert {Point(1, 2, ()), Point(1, 2, ())} == {Point(1, 2, ())}  # type: ignore[arg-type]


class Measured(Record):
    value: int
    note: str = field(default="", compare=False)


def test_a_field_left_out_of_comparisons_keeps_its_value() -> None:
    assert Measured(1, "a") == Measured(1, "b")
    assert hash(Measured(1, "a")) == hash(Measured(1))
    assert Measured(1, "a").note == "a"
    assert Measured(1).note == ""
    assert Measured(1) != Measured(2)


def test_repr_names_every_field() -> None:
    assert repr(Labelled(1, label="a")) == "Labelled(x=1, y=0, tags=[], label='a')"


def test_replace_makes_a_changed_copy() -> None:
    point = Point(1, 2)
    moved = point.replace(y=5)
    assert (point.y, moved.y, moved.x) == (2, 5, 1)
    with pytest.raises(TypeError, match="unexpected keyword argument .z."):
        point.replace(z=1)


def test_copies_and_pickles_keep_the_values() -> None:
    point = Labelled(1, 2, ["t"], "b")
    assert copy.deepcopy(point) == point
    assert pickle.loads(pickle.dumps(point)) == point
