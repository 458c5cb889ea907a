"""Walking the config models by key: which keys a section has, what a key holds.

The environment layer, the save helper and the error hints all need to answer "what is
at this key path?" from the models themselves, so the answer never drifts from them.
"""

from __future__ import annotations

from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel


def _strip(annotation: Any) -> Any:
    """Drop ``Annotated`` wrappers and ``| None``, which never change what a key holds."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        members = [a for a in get_args(annotation) if a is not NoneType]
        if len(members) == 1:
            return _strip(members[0])
    return annotation


def section_model(annotation: Any) -> type[BaseModel] | None:
    """The model class when ``annotation`` is a section with fixed keys."""
    annotation = _strip(annotation)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def map_values(annotation: Any) -> Any | None:
    """The value type when ``annotation`` is a map with free keys (``dict[str, X]``)."""
    annotation = _strip(annotation)
    return get_args(annotation)[1] if get_origin(annotation) is dict else None


def holds_text(annotation: Any) -> bool:
    """True when the key holds a plain string (or a choice of strings), so raw text fits as is."""
    annotation = _strip(annotation)
    if get_origin(annotation) is Literal:
        return all(isinstance(choice, str) for choice in get_args(annotation))
    return annotation is str


def key_names(model: type[BaseModel]) -> list[str]:
    """The keys a section accepts, as written in JSON."""
    return [field.alias or name for name, field in model.model_fields.items()]


def find_field(model: type[BaseModel], key: str, *, ignore_case: bool = False) -> tuple[str, str, Any] | None:
    """Match ``key`` against the alias or the Python name of a field of ``model``.
    Returns (alias, python name, annotation), or None when no field matches."""
    def same(a: str, b: str) -> bool:
        return a.lower() == b.lower() if ignore_case else a == b

    for name, field in model.model_fields.items():
        alias = field.alias or name
        if same(key, alias) or same(key, name):
            return alias, name, field.annotation
    return None
