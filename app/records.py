"""Immutable records: classes of named fields that cost nothing to define.

A frozen dataclass writes and compiles its methods when its class is defined (on Python
3.11, six per class), so every start of a one-shot command pays for each one on its
import path. A `Record` subclass declares its fields the same way, as annotations with
optional defaults (`field(...)` for a default made per record, or a field left out of
comparisons), and shares one `__init__`,
`__eq__`, `__hash__` and `__repr__` written here; type checkers read it as a frozen
dataclass (`typing.dataclass_transform`).

Fields are every annotation of the class and its bases, bases first, except
`ClassVar`s. A default is a class attribute of the field's name. Instances are frozen:
`replace(**changes)` makes a changed copy, `as_dict()` gives the fields by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import Any, ClassVar, TypeVar, dataclass_transform

_T = TypeVar("_T")
_R = TypeVar("_R", bound="Record")


_NO_DEFAULT: Any = object()


class _Field:
    """What `field` leaves in the class body until the class is made (see there)."""

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None, compare: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare


def field(
    *, default: Any = _NO_DEFAULT, default_factory: Callable[[], _T] | None = None, compare: bool = True
) -> Any:
    """A field with a default made anew for each record (``default_factory()``), or one
    left out of ``==`` and ``hash`` (``compare=False``), as dataclasses' ``field``."""
    return _Field(default, default_factory, compare)


def _is_class_var(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Record:
    """Base of immutable records (module doc)."""

    record_fields: ClassVar[tuple[str, ...]] = ()
    """The fields' names in order: what positional arguments fill."""
    compared_fields: ClassVar[tuple[str, ...]] = ()
    """The fields ``==`` and ``hash`` look at: all but those made with ``compare=False``."""
    _field_names: ClassVar[frozenset[str]] = frozenset()
    _factories: ClassVar[dict[str, Callable[[], Any]]] = {}
    _without_default: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = [
            name
            for name, annotation in cls.__dict__.get("__annotations__", {}).items()
            if not _is_class_var(annotation)
        ]
        factories = dict(cls._factories)
        not_compared = set(cls.record_fields) - set(cls.compared_fields)
        for name in own:
            factories.pop(name, None)  # a default of its own (or none) replaces a base's
            not_compared.discard(name)
            spec = cls.__dict__.get(name)
            if isinstance(spec, _Field):
                delattr(cls, name)
                if spec.default is not _NO_DEFAULT:
                    setattr(cls, name, spec.default)
                if spec.default_factory is not None:
                    factories[name] = spec.default_factory
                if not spec.compare:
                    not_compared.add(name)
        cls.record_fields = (*cls.record_fields, *(name for name in own if name not in cls.record_fields))
        cls.compared_fields = tuple(name for name in cls.record_fields if name not in not_compared)
        cls._field_names = frozenset(cls.record_fields)
        cls._factories = factories
        cls._without_default = tuple(
            name for name in cls.record_fields if name in factories or not hasattr(cls, name)
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        values = self.__dict__
        if args:
            names = cls.record_fields
            if len(args) > len(names):
                raise TypeError(
                    f"{cls.__qualname__}() takes {len(names)} arguments but {len(args)} were given"
                )
            values.update(zip(names, args, strict=False))
            if kwargs and not values.keys().isdisjoint(kwargs):
                twice = next(name for name in kwargs if name in values)
                raise TypeError(f"{cls.__qualname__}() got multiple values for argument {twice!r}")
        if kwargs:
            if not cls._field_names.issuperset(kwargs):
                unknown = next(name for name in kwargs if name not in cls._field_names)
                raise TypeError(f"{cls.__qualname__}() got an unexpected keyword argument {unknown!r}")
            values.update(kwargs)
        if len(values) < len(cls.record_fields):
            self._fill_defaults(values)

    def _fill_defaults(self, values: dict[str, Any]) -> None:
        """Fields not given: a factory's new value, or an error for a field without a
        default (a class attribute's default needs nothing: attribute lookup finds it)."""
        cls = type(self)
        for name in cls._without_default:
            if name not in values:
                if name not in cls._factories:
                    raise TypeError(f"{cls.__qualname__}() missing required argument {name!r}")
                values[name] = cls._factories[name]()

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.compared_fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.record_fields)
        return f"{type(self).__qualname__}({shown})"

    def replace(self: _R, **changes: Any) -> _R:
        """A new record with ``changes`` applied, built as the class builds any (unknown
        names are a TypeError); values computed on first use are not carried over."""
        return type(self)(**{**self.as_dict(), **changes})

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, in order (values as they are, not copied)."""
        return {name: getattr(self, name) for name in self.record_fields}
