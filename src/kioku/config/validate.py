"""Turn a raw, partial configuration mapping into the frozen :class:`~kioku.config.schema.Config`.

``raw`` holds only what the user set (a parsed file merged with environment overrides);
everything else keeps its default. Every problem raises :class:`~kioku.errors.ConfigError`
naming the dotted key, the value, where it came from and what is allowed. The first
problem found wins: unknown keys and wrong types while walking ``raw`` in order, then
per-key ranges, then the rules that tie several keys together.
"""

from __future__ import annotations

import difflib
import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from functools import cache
from types import MappingProxyType, UnionType
from typing import Any, Literal, NoReturn, Union, get_args, get_origin, get_type_hints

from kioku.config.render import config_to_dict
from kioku.config.schema import CategoryRange, Config, RetentionConfig
from kioku.errors import ConfigError

__all__ = ["CATEGORY_NAME_PATTERN", "is_string_key", "validate_config"]

#: A category name: lower-case ASCII, starting with a letter, at most 32 characters.
CATEGORY_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
_CATEGORY_NAME = re.compile(CATEGORY_NAME_PATTERN)
_CATEGORIES = "retention.decay_by_category"
_RATIOS = ("level1_ratio", "level2_ratio", "level3_ratio")
#: Keys that are no longer settings: a file that sets one loads, with this one-line warning.
_DEPRECATED: Mapping[str, str] = {
    "compression.delete_ratio": (
        "compression.delete_ratio is no longer used and is ignored: the archive's share is "
        "what level1_ratio + level2_ratio + level3_ratio leave; remove it"
    ),
}
_log = logging.getLogger(__name__)
_WARNED: set[tuple[str, str | None]] = set()
_LEVELS = ("level1_threshold", "level2_threshold", "level3_threshold")
_RATIO_TOLERANCE = 1e-6
#: The kind of a key that is ``"auto"`` or a count (``int | Literal["auto"]`` in the schema).
_AUTO_OR_COUNT = "auto or a count"


@dataclass(frozen=True, slots=True)
class _Bound:
    """A closed or open interval; ``None`` leaves that side unbounded."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def contains(self, value: float) -> bool:
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return not (
            self.high is not None and (value >= self.high if self.high_open else value > self.high)
        )

    def describe(self) -> str:
        def num(x: float) -> str:
            return str(int(x)) if float(x).is_integer() else repr(x)

        left = "" if self.low is None else f"{num(self.low)} {'<' if self.low_open else '<='} "
        right = "" if self.high is None else f" {'<' if self.high_open else '<='} {num(self.high)}"
        if self.low is not None and self.high is None:
            return f"value {'>' if self.low_open else '>='} {num(self.low)}"
        return f"{left}value{right}"


_DECAY = _Bound(0, 1, low_open=True, high_open=True)
_UNIT = _Bound(0, 1)
_NON_NEGATIVE = _Bound(0)
_PERCENT = _Bound(0, 100)

#: Range rules by dotted key (numbers) — keys not listed accept any value of their type.
_BOUNDS: Mapping[str, _Bound] = {
    "retention.base_decay_coefficient": _DECAY,
    "retention.max_decay_coefficient": _DECAY,
    **{f"levels.{k}": _PERCENT for k in _LEVELS},
    "recall.decay_coefficient_boost": _Bound(0, 1, high_open=True),
    "recall.memory_days_reduction": _UNIT,
    "recall.recall_count_weight": _NON_NEGATIVE,
    "resonance.valence_match_bonus": _NON_NEGATIVE,
    "resonance.arousal_proximity_bonus": _NON_NEGATIVE,
    "resonance.tags_overlap_weight": _NON_NEGATIVE,
    "resonance.priority_weight_alpha": _NON_NEGATIVE,
    "mood.window": _Bound(1, 1000),
    "mood.max_negative_share": _UNIT,
    "mood.high_intensity": _PERCENT,
    "mood.shift_strength": _Bound(0, 5),
    **{f"compression.{k}": _UNIT for k in _RATIOS},
    "compression.schedule_hour": _Bound(0, 23),
    "compression.interval_hours": _Bound(0, low_open=True),
    "compression.ratio_min_memories": _NON_NEGATIVE,
    "batch.max_auto_catch_up_days": _Bound(1, 3660),
    "relations.score_proximity_threshold": _NON_NEGATIVE,
    "relations.auto_link_similarity_threshold": _Bound(-1, 1),
    "relations.max_relations_per_memory": _NON_NEGATIVE,
    "relations.relation_traversal_depth": _Bound(0, 10),
    "retrieval.top_k": _Bound(1, 1000),
    "retrieval.relevance_threshold": _NON_NEGATIVE,
    "retrieval.budget_chars": _Bound(200, 100_000),
    "retrieval.vector_weight": _UNIT,
    "retrieval.lexical_weight": _UNIT,
    "retrieval.retention_exponent": _Bound(0, 2),
    "retrieval.recency_weight": _Bound(0, 10),
    "retrieval.temporal_recency_weight": _Bound(0, 10),
    "retrieval.recency_half_life_days": _Bound(0, 36500, low_open=True),
    "retrieval.category_weight": _Bound(0, 10),
    "retrieval.candidates": _Bound(1, 10_000),
    "retrieval.context_weight": _UNIT,
    "retrieval.min_relevance": _UNIT,
    "retrieval.ann_min_vectors": _NON_NEGATIVE,
    "archive.revival_decay_per_day": _Bound(0, 1, low_open=True),
    "archive.revival_min_margin": _NON_NEGATIVE,
    "archive.retention_days": _NON_NEGATIVE,
    "archive.delete_max_intensity": _PERCENT,
    "protection.max_protected_memories": _NON_NEGATIVE,
    "embedding.dimensions": _Bound(1, 65536),
    "llm.temperature": _Bound(0, 2),
    "llm.max_tokens": _Bound(1),
    "llm.timeout_seconds": _Bound(0, 3600, low_open=True),
    "llm.max_retries": _Bound(0, 10),
    "llm.input_price_per_mtok": _NON_NEGATIVE,
    "llm.output_price_per_mtok": _NON_NEGATIVE,
    "embedding.price_per_mtok": _NON_NEGATIVE,
    "store.busy_timeout_ms": _Bound(0, 600_000),
    "store.hnsw_m": _Bound(2, 100),
    "store.hnsw_ef_construction": _Bound(4, 1000),
    "store.hnsw_ef_search": _Bound(0, 1000),
    "context.max_tokens": _Bound(0, 10_000_000),
    "context.min_gap_for_summary": _Bound(1, 1000),
    "context.keep_last": _Bound(0, 100),
    "context.thread_similarity": _UNIT,
    "context.thread_idle_minutes": _Bound(0, 10_080),
    "context.max_turns": _Bound(1, 1000),
    "context.long_term_share": _Bound(0, 1, low_open=True),
    "context.midterm_hot_hours": _Bound(1, 168),
    "context.midterm_days": _Bound(7, 30),
    "consolidation.weekly_day": _Bound(1, 7),
    "consolidation.monthly_day": _Bound(1, 28),
    "consolidation.procedure_similarity": _UNIT,
    "consolidation.duplicate_similarity": _UNIT,
    "consolidation.max_knowledge_per_episode": _Bound(0, 100),
    "lifecycle.capacity": _Bound(0, 100_000_000),
    "ingest.workers": _Bound(0, 64),
}
#: Lists of phrases: each a non-empty string of at most this many characters.
_MAX_PHRASE = 200
_MAX_PHRASES = 1000

#: String keys that must not be empty (nor only whitespace).
_NON_EMPTY = frozenset(
    {
        "embedding.provider",
        "consolidation.nli",
        "embedding.model",
        "llm.provider",
        "llm.model",
        "scope.user_id",
        "scope.agent_id",
    }
)


@dataclass(frozen=True, slots=True)
class _Schema:
    """What the validator knows of one key."""

    sections: Mapping[str, type[Any]]  # section name -> dataclass
    kinds: Mapping[str, Any]  # dotted leaf key -> float | int | bool | str | tuple of choices
    all_keys: tuple[str, ...]  # every dotted key, for suggestions


@cache
def _schema() -> _Schema:
    hints = get_type_hints(Config)
    sections: dict[str, type[Any]] = {}
    kinds: dict[str, Any] = {"version": str}
    for f in fields(Config):
        if f.name == "version":
            continue
        cls = hints[f.name]
        sections[f.name] = cls
        for name, hint in get_type_hints(cls).items():
            if get_origin(hint) is Literal:
                kinds[f"{f.name}.{name}"] = get_args(hint)
            elif get_origin(hint) in (Union, UnionType):  # int | Literal["auto"]
                kinds[f"{f.name}.{name}"] = _AUTO_OR_COUNT
            elif hint is MappingProxyType or get_origin(hint) is MappingProxyType:
                kinds[f"{f.name}.{name}"] = CategoryRange
            else:
                kinds[f"{f.name}.{name}"] = hint
    return _Schema(MappingProxyType(sections), MappingProxyType(kinds), tuple(kinds))


def is_string_key(dotted: str) -> bool:
    """Whether ``dotted`` names a text key (so an environment value is taken verbatim)."""
    kind = _schema().kinds.get(dotted)
    return kind is str or isinstance(kind, tuple)


def _bound(key: str) -> _Bound | None:
    if key.startswith(_CATEGORIES + "."):
        return _DECAY
    return _BOUNDS.get(key)


def _describe(kind: Any, key: str) -> str:
    if kind is bool:
        return "true or false"
    if kind == tuple[str, ...]:
        return (
            f"a list of up to {_MAX_PHRASES} non-empty strings (at most {_MAX_PHRASE} characters)"
        )
    if isinstance(kind, tuple):
        return "one of " + ", ".join(repr(c) for c in kind) + " (any case)"
    if kind is str:
        return "a non-empty string" if key in _NON_EMPTY else "a string"
    if kind is _AUTO_OR_COUNT:
        return f'"auto" or {_describe(int, key)}'
    noun = "an integer" if kind is int else "a number"
    bound = _bound(key)
    return f"{noun} with {bound.describe()}" if bound else noun


def _is_utf8(text: str) -> bool:
    """Whether ``text`` has no lone surrogate (JSON escapes and environment variables can
    hold one; nothing can store it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _type_hint(value: object) -> str:
    if isinstance(value, bool):
        return "got a boolean, which is never a number here"
    if isinstance(value, str):
        return "got a string; write numbers without quotes"
    return f"got a {type(value).__name__}"


class _Validator:
    def __init__(self, raw: Mapping[str, Any], source_of: Callable[[str], str] | None) -> None:
        self.raw = raw
        self.source_of = source_of
        self.set_keys: set[str] = set()  # dotted keys the user set (for blame in cross checks)

    # -- errors ---------------------------------------------------------------------------

    def source(self, key: str) -> str | None:
        return self.source_of(key) if self.source_of else None

    def fail(self, key: str, value: object, allowed: str, hint: str | None = None) -> NoReturn:
        from kioku.config.store_url import URL_KEYS, mask_url

        if key in URL_KEYS and isinstance(value, str):
            value = mask_url(value)  # never show the password
        raise ConfigError(key, value, allowed, source=self.source(key), hint=hint)

    def unknown(self, key: str, value: object, known: list[str], where: str) -> NoReturn:
        leaf = key.rsplit(".", 1)[-1].lower()
        prefix = key.rsplit(".", 1)[0] + "." if "." in key else ""
        close = difflib.get_close_matches(leaf, known, n=1, cutoff=0.6)
        if close:
            hint = f"did you mean {prefix}{close[0]}?"
        else:
            elsewhere = [k for k in _schema().all_keys if k.rsplit(".", 1)[-1] == leaf]
            anywhere = elsewhere or difflib.get_close_matches(key.lower(), _schema().all_keys, n=1)
            hint = (
                f"did you mean {anywhere[0]}?"
                if anywhere
                else "remove it; `kioku config show` lists every key"
            )
        self.fail(key, value, f"a known key of {where}: {', '.join(known)}", hint)

    # -- leaves ---------------------------------------------------------------------------

    def leaf(self, key: str, value: object, kind: Any) -> Any:
        allowed = _describe(kind, key)
        if kind is bool:
            if not isinstance(value, bool):
                self.fail(key, value, allowed)
            return value
        if kind == tuple[str, ...]:
            if not isinstance(value, list | tuple) or len(value) > _MAX_PHRASES:
                self.fail(key, value, allowed)
            for item in value:
                if not isinstance(item, str) or not item.strip() or len(item) > _MAX_PHRASE:
                    self.fail(key, value, allowed, f"{item!r} is not a usable phrase")
            return tuple(value)
        if kind is _AUTO_OR_COUNT:
            if isinstance(value, str) and value.strip().casefold() == "auto":
                return "auto"
            if isinstance(value, str):
                self.fail(
                    key, value, allowed, 'got a string; write "auto", or a count without quotes'
                )
            kind = int
        if isinstance(kind, tuple):
            if isinstance(value, str):
                for choice in kind:
                    if value.casefold() == str(choice).casefold():
                        return choice
            self.fail(key, value, allowed)
        if kind is str:
            if not isinstance(value, str) or (key in _NON_EMPTY and not value.strip()):
                self.fail(key, value, allowed)
            if not _is_utf8(value):
                self.fail(key, value, allowed, "it holds a lone surrogate, which is not UTF-8")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(key, value, allowed, _type_hint(value))
        number: float | int
        if kind is int:
            if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
                self.fail(key, value, allowed, "got a number with a fraction")
            number = int(value)
        else:
            try:
                number = float(value)
            except OverflowError:
                self.fail(key, value, allowed, "the number is too large")
            if not math.isfinite(number):
                self.fail(key, value, allowed, "got a non-finite number")
        bound = _bound(key)
        if bound is not None and not bound.contains(number):
            self.fail(key, value, allowed)
        return number

    # -- walking raw ----------------------------------------------------------------------

    def run(self) -> Config:
        schema = _schema()
        defaults = config_to_dict(Config())
        flat: dict[str, Any] = {}
        for section, table in defaults.items():
            if isinstance(table, dict):
                flat.update({f"{section}.{k}": v for k, v in table.items()})
            else:
                flat[section] = table
        cats: dict[str, dict[str, float]] = {
            name: dict(r) for name, r in defaults["retention"]["decay_by_category"].items()
        }
        if not isinstance(self.raw, Mapping):
            self.fail("(top level)", self.raw, "a table of sections")
        for name, table in self.raw.items():
            if name == "version":
                flat[name] = self.leaf(name, table, str)
                self.set_keys.add(name)
            elif name not in schema.sections:
                self.unknown(str(name), table, ["version", *schema.sections], "the top level")
            elif not isinstance(table, Mapping):
                self.fail(name, table, f"a table of keys, like [{name}]")
            else:
                self.section(name, table, flat, cats)
        self.cross_checks(flat, cats)
        return self.build(flat, cats)

    def section(
        self,
        name: str,
        table: Mapping[str, Any],
        flat: dict[str, Any],
        cats: dict[str, dict[str, float]],
    ) -> None:
        kinds = _schema().kinds
        for key, value in table.items():
            dotted = f"{name}.{key}"
            if dotted in _DEPRECATED:
                source = self.source(dotted)
                if (dotted, source) not in _WARNED:  # once per process, however often loaded
                    _WARNED.add((dotted, source))
                    _log.warning("%s%s", _DEPRECATED[dotted], f" ({source})" if source else "")
                continue
            kind = kinds.get(dotted)
            if kind is None:
                known = [k[len(name) + 1 :] for k in kinds if k.startswith(f"{name}.")]
                self.unknown(dotted, value, known, f"[{name}]")
            if kind is CategoryRange:
                self.categories(value, cats)
            else:
                flat[dotted] = self.leaf(dotted, value, kind)
                self.set_keys.add(dotted)

    def categories(self, table: object, cats: dict[str, dict[str, float]]) -> None:
        if not isinstance(table, Mapping):
            self.fail(_CATEGORIES, table, "a table of categories, each { min = ..., max = ... }")
        for name, entry in table.items():
            key = f"{_CATEGORIES}.{name}"
            if not isinstance(name, str) or not _CATEGORY_NAME.match(name):
                self.fail(key, name, f"a category name matching {CATEGORY_NAME_PATTERN}")
            if not isinstance(entry, Mapping):
                self.fail(key, entry, "a table { min = ..., max = ... }")
            bounds = dict(cats.get(name, {}))
            for bound, value in entry.items():
                if bound not in ("min", "max"):
                    self.unknown(f"{key}.{bound}", value, ["min", "max"], f"[{key}]")
                bounds[bound] = self.leaf(f"{key}.{bound}", value, float)
                self.set_keys.add(f"{key}.{bound}")
            if set(bounds) != {"min", "max"}:
                self.fail(key, dict(entry), "a table with both min and max (a new category)")
            cats[name] = bounds

    # -- rules across keys ----------------------------------------------------------------

    def blame(self, *keys: str) -> str:
        """The first of ``keys`` that the user set, else the first key."""
        return next((k for k in keys if k in self.set_keys), keys[0])

    def cross_checks(self, flat: dict[str, Any], cats: dict[str, dict[str, float]]) -> None:
        top_key = "retention.max_decay_coefficient"
        top = flat[top_key]
        for name, b in cats.items():
            lo, hi = f"{_CATEGORIES}.{name}.min", f"{_CATEGORIES}.{name}.max"
            if b["min"] > b["max"]:
                if self.blame(lo, hi) == lo:
                    self.fail(lo, b["min"], f"a value at most {hi} ({b['max']!r})")
                self.fail(hi, b["max"], f"a value at least {lo} ({b['min']!r})")
            if b["max"] > top and self.blame(hi, top_key) == hi:
                self.fail(hi, b["max"], f"a value at most {top_key} ({top!r})")
        highest = max(cats, key=lambda n: cats[n]["max"])
        if cats[highest]["max"] > top:
            hi = f"{_CATEGORIES}.{highest}.max"
            self.fail(top_key, top, f"a value at least {hi} ({cats[highest]['max']!r})")
        self.check_levels(flat)
        self.check_ratios(flat)
        self.check_store(flat)

    def check_store(self, flat: dict[str, Any]) -> None:
        """A non-empty ``store.url`` must be a PostgreSQL URL, and it selects PostgreSQL; the
        error shows the URL with its password masked."""
        from kioku.config.store_url import mask_url, schema_problem, url_problem

        url = flat["store.url"]
        if url:
            problem = url_problem(url)
            if problem is not None:
                self.fail(
                    "store.url",
                    mask_url(url),
                    "a PostgreSQL URL, postgresql://user:password@host:port/dbname",
                    f"{problem}; or leave store.url empty (unset KIOKU_STORE_URL) for SQLite",
                )
            flat["store.backend"] = "postgres"
        elif flat["store.backend"] == "postgres":
            self.fail(
                "store.backend",
                "postgres",
                "a store.url naming the PostgreSQL server",
                'set store.url (or KIOKU_STORE_URL), or use backend = "sqlite"',
            )
        self.check_read_url(flat)
        # The default ef_construction (200) is twice the largest m (100): only a set
        # ef_construction can be too small.
        m, efc = flat["store.hnsw_m"], flat["store.hnsw_ef_construction"]
        if efc < 2 * m:
            self.fail(
                "store.hnsw_ef_construction",
                efc,
                f"a value at least twice store.hnsw_m ({m}), as pgvector requires",
            )
        problem = schema_problem(flat["store.schema"])
        if problem is not None:
            self.fail("store.schema", flat["store.schema"], "a PostgreSQL schema name", problem)

    def check_read_url(self, flat: dict[str, Any]) -> None:
        """A non-empty ``store.read_url`` (a read replica) must be a PostgreSQL URL, and it
        needs ``store.url`` (the primary, which takes every write)."""
        from kioku.config.store_url import url_problem

        read_url = flat["store.read_url"]
        if not read_url:
            return
        problem = url_problem(read_url)
        if problem is not None:
            self.fail(
                "store.read_url",
                read_url,
                "a PostgreSQL URL of a read replica, postgresql://user:password@host:port/dbname",
                f"{problem}; or leave store.read_url empty (unset KIOKU_STORE_READ_URL)",
            )
        if not flat["store.url"]:
            self.fail(
                "store.read_url",
                read_url,
                "a read replica of the server store.url names, with store.url set",
                "set store.url (or KIOKU_STORE_URL) to the primary server, "
                "or leave store.read_url empty (unset KIOKU_STORE_READ_URL)",
            )

    def check_levels(self, flat: dict[str, Any]) -> None:
        rule = (
            "; level thresholds must descend: "
            "0 <= level3_threshold < level2_threshold < level1_threshold <= 100"
        )
        keys = [f"levels.{k}" for k in _LEVELS]
        for upper, lower in ((keys[0], keys[1]), (keys[1], keys[2])):
            if flat[lower] >= flat[upper]:
                key = self.blame(lower, upper)
                if key == lower:
                    allowed = f"a value below {upper} ({flat[upper]!r})"
                else:
                    allowed = f"a value above {lower} ({flat[lower]!r})"
                self.fail(key, flat[key], allowed + rule)

    def check_ratios(self, flat: dict[str, Any]) -> None:
        """The three level shares may add up to at most 1: what they leave is the archive's
        (the spec's 消去 20 %, the remainder of 15 + 30 + 35)."""
        keys = [f"compression.{k}" for k in _RATIOS]
        values = [float(flat[k]) for k in keys]
        total = math.fsum(values)
        if total <= 1.0 + _RATIO_TOLERANCE:
            return
        terms = " + ".join(f"{k.split('.')[1]} {v!r}" for k, v in zip(keys, values, strict=True))
        blamed = self.blame(*reversed(keys))
        fix = float(flat[blamed]) - (total - 1.0)
        hint = "make the three shares add up to at most 1"
        if 0.0 <= fix <= 1.0:
            hint += f", e.g. {blamed} = {round(fix, 9)!r}"
        sources = [self.source(k) for k in keys if k in self.set_keys] or [self.source(keys[0])]
        raise ConfigError(
            "compression.level1_ratio + level2_ratio + level3_ratio",
            round(total, 9),
            f"a sum of at most 1 (the rest is the archive's share); got {terms} = "
            f"{round(total, 9)!r}",
            source=", ".join(dict.fromkeys(s for s in sources if s)) or None,
            hint=hint,
        )

    # -- building -------------------------------------------------------------------------

    def build(self, flat: dict[str, Any], cats: dict[str, dict[str, float]]) -> Config:
        kwargs: dict[str, Any] = {"version": flat["version"]}
        for section, cls in _schema().sections.items():
            values: dict[str, Any] = {}
            for f in fields(cls):
                if cls is RetentionConfig and f.name == "decay_by_category":
                    ranges = {n: CategoryRange(b["min"], b["max"]) for n, b in cats.items()}
                    values[f.name] = MappingProxyType(ranges)
                else:
                    value = flat[f"{section}.{f.name}"]
                    values[f.name] = tuple(value) if isinstance(value, list) else value
            kwargs[section] = cls(**values)
        return Config(**kwargs)


def validate_config(
    raw: Mapping[str, Any], source_of: Callable[[str], str] | None = None
) -> Config:
    """Validate ``raw`` (the user's partial settings) over the defaults into a :class:`Config`.

    ``source_of(dotted_key)`` says where a key's value came from (``"file:..."``,
    ``"env:..."``); it only feeds error messages.
    """
    return _Validator(raw, source_of).run()
