"""How a LangGraph store item is written into a kioku memory and read back out of it.

The pure half of :mod:`kioku.integrations.langgraph_store`: no store, no clock. An item
``(namespace, key, value)`` becomes a knowledge memory whose

* **id** is derived from the owner scope, the namespace and the key (:func:`memory_id`), so
  finding an item is one read by id;
* **source id** (provenance, which kioku never rewrites) is :func:`item_source`: a marker
  naming the namespace, the key and the write that created the memory, from which
  :func:`parse_source` gives the namespace and key back;
* **trigger** is the value as JSON (:func:`encode_value`): kioku's consolidation may rewrite a
  knowledge item's content, never its trigger, so the value read back is exactly the value
  written;
* **content** is the item's searchable text (:func:`item_text`): the strings at the index
  fields, as LangGraph's ``index={"fields": [...]}`` chooses them, every string of the value
  by default.

:func:`matches_filter` and :func:`matches_namespace` apply LangGraph's search filters and
namespace conditions to values and namespaces read back.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from kioku.core.validate import MAX_ID_CHARS
from kioku.errors import ValidationError

__all__ = [
    "SOURCE_PREFIX",
    "decode_value",
    "encode_value",
    "item_source",
    "item_text",
    "matches_filter",
    "matches_namespace",
    "memory_id",
    "parse_source",
]

#: What every item's source id starts with; other memories of the scope are not items.
SOURCE_PREFIX: Final = "langgraph-store:"
#: The comparison operators of LangGraph's search filters.
_OPERATORS: Final = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def memory_id(user_id: str, agent_id: str, namespace: tuple[str, ...], key: str) -> str:
    """The id of the memory holding ``key`` in ``namespace`` for this owner."""
    ident = json.dumps([user_id, agent_id, list(namespace), key], ensure_ascii=True)
    return "lg" + hashlib.sha256(ident.encode("ascii")).hexdigest()[:40]


def item_source(namespace: tuple[str, ...], key: str, write: str) -> str:
    """The source id naming the item and the write that created it (ASCII, so never a
    control character). Erasing a memory refuses its source ids for ever, so each creation
    has its own: a key deleted and put again is a new memory with a new source id."""
    source = SOURCE_PREFIX + json.dumps([list(namespace), key, write], ensure_ascii=True)
    if len(source) > MAX_ID_CHARS:
        raise ValidationError(
            "key",
            key if len(key) <= 40 else key[:40] + "...",
            f"a namespace and key of at most about {MAX_ID_CHARS - 60} characters together",
            hint="use a shorter key, such as a hash of the long one",
        )
    return source


def parse_source(source: str) -> tuple[tuple[str, ...], str] | None:
    """``(namespace, key)`` from a source id made by :func:`item_source`, else None."""
    if not source.startswith(SOURCE_PREFIX):
        return None
    try:
        namespace, key, _ = json.loads(source[len(SOURCE_PREFIX) :])
    except (ValueError, TypeError):
        return None
    if not isinstance(key, str) or not isinstance(namespace, list):
        return None
    if not all(isinstance(label, str) for label in namespace):
        return None
    return tuple(namespace), key


def _check_json(value: object, where: str) -> None:
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(
                "value", where, "finite numbers", hint="JSON has no NaN or infinity"
            )
        return
    if isinstance(value, Mapping):
        for name, inner in value.items():
            if not isinstance(name, str):
                raise ValidationError(
                    "value", f"{where}[{name!r}]", "string keys", hint="JSON keys are strings"
                )
            _check_json(inner, f"{where}.{name}")
        return
    if isinstance(value, list | tuple):
        for n, inner in enumerate(value):
            _check_json(inner, f"{where}[{n}]")
        return
    raise ValidationError(
        "value",
        f"{where} ({type(value).__name__})",
        "JSON values: dicts, lists, strings, numbers, booleans and None",
        hint="convert it to one of these (a date to an ISO 8601 string) before storing it",
    )


def encode_value(value: object) -> str:
    """The value as JSON, refusing what JSON cannot give back as it was."""
    if not isinstance(value, Mapping):
        raise ValidationError("value", type(value).__name__, "a dict (or None to delete the item)")
    _check_json(value, "$")
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_plain)


def _plain(value: object) -> object:
    """A mapping that is not a dict, as a dict (the only other thing :func:`_check_json`
    lets through)."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def decode_value(text: str) -> dict[str, Any] | None:
    """The value kept as ``text``; None when it is not a JSON object (an edited trigger)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _strings(value: object) -> Iterator[str]:
    """Every string in ``value``, depth first, in the order the value holds them."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def item_text(value: Mapping[str, Any], key: str, fields: Sequence[str] | None) -> str:
    """The searchable text of an item: the text at each of ``fields`` (LangGraph's path
    syntax; ``"$"`` is every string of the value), one per line; the key when there is
    none (``fields`` empty: the item is not indexed)."""
    from langgraph.store.base import get_text_at_path, tokenize_path

    texts: list[str] = []
    for path in fields or ():
        if path == "$":
            texts.extend(_strings(value))
        else:
            texts.extend(get_text_at_path(dict(value), tokenize_path(path)))
    lines = [" ".join(text.split()) for text in texts]
    text = "\n".join(line for line in lines if line)
    return text or key


# -- search filters and namespace conditions ---------------------------------------------------


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _compare(actual: object, operator: str, expected: object) -> bool:
    if operator == "$eq":
        return actual == expected
    if operator == "$ne":
        return actual != expected
    if operator not in _OPERATORS:
        raise ValidationError(
            "filter", operator, "one of " + ", ".join(_OPERATORS), hint="or a value to match"
        )
    left, right = _number(actual), _number(expected)
    if left is not None and right is not None:
        order = (left > right) - (left < right)
    elif isinstance(actual, str) and isinstance(expected, str):
        order = (actual > expected) - (actual < expected)
    else:
        return False  # no order between a number and a string, nor with anything else
    return {"$gt": order > 0, "$gte": order >= 0, "$lt": order < 0, "$lte": order <= 0}[operator]


def _matches(actual: object, wanted: object) -> bool:
    """Whether ``actual`` satisfies ``wanted``: operators, a nested dict (its fields), a
    list (the same elements) or an equal value."""
    if isinstance(wanted, Mapping):
        if any(str(name).startswith("$") for name in wanted):
            return all(_compare(actual, str(op), arg) for op, arg in wanted.items())
        if not isinstance(actual, Mapping):
            return False
        return all(_matches(actual.get(name), inner) for name, inner in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(_matches(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return actual == wanted


def matches_filter(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes a LangGraph search filter (every field must)."""
    if not flt:
        return True
    return all(_matches(value.get(name), wanted) for name, wanted in flt.items())


def matches_namespace(namespace: tuple[str, ...], match_type: str, path: Sequence[str]) -> bool:
    """Whether ``namespace`` starts (``prefix``) or ends (``suffix``) with ``path``, where a
    ``"*"`` label matches any label."""
    labels = (path,) if isinstance(path, str) else tuple(path)
    if len(namespace) < len(labels):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, labels, strict=False)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(labels), strict=False)
    else:
        raise ValidationError("match_type", match_type, "prefix or suffix")
    return all(want == "*" or have == want for have, want in pairs)
