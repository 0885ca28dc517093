"""A shared base for kioku's frozen dataclasses: equality, hash and repr written once.

``@dataclass`` writes and compiles each method of each class when the class is created: for
a frozen class about six small functions, a millisecond or more per class on a modest
machine. A Claude Code hook starts a fresh interpreter for every prompt and creates about forty
of these classes, so the records on that path are declared with ``eq=False, repr=False`` and
inherit the three methods from :class:`Record` instead. They behave as the generated ones do:
equal when of the same class with equal fields (compared as a tuple, so the same object is
equal to itself even if it is NaN), a hash of that tuple, and ``Name(field=value, ...)``,
leaving out fields declared with ``compare=False`` or ``repr=False``.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import Any

__all__ = ["Record"]

_Getter = Callable[[Any], tuple[object, ...]]
_KEYS: dict[type, _Getter] = {}
_SHOWN: dict[type, tuple[str, ...]] = {}


def _key_of(cls: type) -> _Getter:
    getter = _KEYS.get(cls)
    if getter is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.compare)

        def getter(obj: Any, _names: tuple[str, ...] = names) -> tuple[object, ...]:
            return tuple([getattr(obj, name) for name in _names])

        _KEYS[cls] = getter
    return getter


def _shown(cls: type) -> tuple[str, ...]:
    names = _SHOWN.get(cls)
    if names is None:
        names = _SHOWN[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.repr)
    return names


class Record:
    """Base of frozen dataclasses declared with ``eq=False, repr=False``."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = _key_of(self.__class__)
        return key(self) == key(other)

    def __hash__(self) -> int:
        return hash(_key_of(self.__class__)(self))

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _shown(self.__class__))
        return f"{self.__class__.__qualname__}({fields})"
