"""The files layout of an export (spec 001's tree), shared by the writer and the reader.

``kioku export --layout files DIR`` writes one scope as files a person can read::

    DIR/kioku.json                      format, version, scope, counts, export time
    DIR/episodes/YYYY-MM-DD/<id>.md     episodes, by the day they were made (their own offset)
    DIR/knowledge/<id>.md               knowledge (意味記憶)
    DIR/procedures/<id>.md              procedures (手続き記憶)
    DIR/users/<id>.md                   profiles (spec 001's shared/users/, 対人記憶)
    DIR/activity_log/YYYY-MM-DD.jsonl   the activity lines as stored, one file per day

A memory file is YAML front matter between two ``---`` lines, then the body: ``# <trigger>``,
an empty line and the content, ending with one line feed. The front matter holds every field
of the memory except the vector (:func:`field_names` lists them in the order written):

* knowledge and procedures first give spec 001's front matter under its own names
  (``created_at``, ``updated_at``, ``source_episodes``, ``confidence``, ...); episodes and
  profiles give spec 000's ``created`` and ``updated_at``; profiles add their person,
  aliases, facts, preferences and mentions;
* then kioku's own fields: emotion, level and retention numbers, keywords, relations,
  ``protected``, ``scope``, ``provenance`` and the embedding model and dimension;
* ``trigger`` only when the heading cannot hold it exactly (a line break in it, or spaces
  at either end), and ``original`` (its ``trigger`` and ``content``) when the text the
  episode had before compression is kept.

Every field is required when the files are read back, none may be added, and a file's name
is its memory's id, so nothing is guessed and nothing is lost.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Final

from kioku.core.ids import is_memory_id
from kioku.core.model import Kind
from kioku.errors import KiokuError, ValidationError

__all__ = [
    "ACTIVITY_DIR",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "JSONL_SUFFIX",
    "KIND_DIRS",
    "MANIFEST",
    "MAX_MEMORY_FILE_BYTES",
    "MD_SUFFIX",
    "OPTIONAL_FIELDS",
    "MirrorError",
    "MirrorFileError",
    "created_field",
    "detail_fields",
    "field_names",
    "heading_holds",
    "is_day",
    "is_file_id",
]

FORMAT_NAME: Final = "kioku-files"
FORMAT_VERSION: Final = 1
MANIFEST: Final = "kioku.json"
ACTIVITY_DIR: Final = "activity_log"
MD_SUFFIX: Final = ".md"
JSONL_SUFFIX: Final = ".jsonl"
#: A memory file holds at most two texts of 1 MiB characters and an original: far less.
MAX_MEMORY_FILE_BYTES: Final = 32 * 1024 * 1024

#: The directory of each kind, directly under DIR.
KIND_DIRS: Final[dict[Kind, str]] = {
    Kind.EPISODE: "episodes",
    Kind.KNOWLEDGE: "knowledge",
    Kind.PROCEDURE: "procedures",
    Kind.PROFILE: "users",
}

_DAY: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")

#: Spec 001's knowledge front matter, then the validity times kioku adds.
_KNOWLEDGE: Final = (
    "created_at",
    "updated_at",
    "source_episodes",
    "confidence",
    "auto_consolidated",
    "version",
    "supersedes",
    "superseded_by",
    "valid_from",
    "valid_until",
)
#: Spec 001's procedure front matter, then the steps and sources kioku adds.
_PROCEDURE: Final = (
    "description",
    "confidence",
    "success_count",
    "failure_count",
    "version",
    "created_at",
    "updated_at",
    "auto_distilled",
    "protected",
    "steps",
    "source_episodes",
)
_PROFILE: Final = ("person", "aliases", "facts", "preferences", "mentions", "created", "updated_at")
_EPISODE: Final = ("created", "updated_at")
_HEADS: Final[dict[Kind, tuple[str, ...]]] = {
    Kind.EPISODE: _EPISODE,
    Kind.KNOWLEDGE: _KNOWLEDGE,
    Kind.PROCEDURE: _PROCEDURE,
    Kind.PROFILE: _PROFILE,
}
#: What every kind has after its own part.
_MEMORY: Final = (
    "category",
    "emotional_intensity",
    "emotional_valence",
    "emotional_arousal",
    "emotional_tags",
    "keywords",
    "current_level",
    "memory_days",
    "retention_score",
    "decay_coefficient",
    "recall_count",
    "recalled_since_last_batch",
    "protected",
    "archived_at",
    "revival_requested",
    "revival_requested_at",
    "relations",
    "scope",
    "provenance",
    "embedding_model",
    "embedding_dim",
)
#: Written only when needed (see the module's docstring).
OPTIONAL_FIELDS: Final = ("trigger", "original")
_NOT_DETAILS: Final = frozenset({"created", "created_at", "updated_at", "protected"})


def field_names(kind: Kind) -> tuple[str, ...]:
    """Every required front matter field of a memory of ``kind``, in the order written."""
    head = ("id", "kind", *_HEADS[kind])
    return head + tuple(name for name in _MEMORY if name not in head)


def detail_fields(kind: Kind) -> tuple[str, ...]:
    """The fields of ``kind`` that are its details (``kioku.core.kinds``), none for episodes."""
    if kind is Kind.EPISODE:
        return ()
    return tuple(name for name in _HEADS[kind] if name not in _NOT_DETAILS)


def created_field(kind: Kind) -> str:
    """``created_at`` (spec 001) for knowledge and procedures, ``created`` (spec 000) else."""
    return "created_at" if kind in (Kind.KNOWLEDGE, Kind.PROCEDURE) else "created"


def heading_holds(trigger: str) -> bool:
    """Whether ``# <trigger>`` gives the trigger back exactly: one line, no spaces at its ends."""
    return len(trigger.splitlines()) == 1 and trigger == trigger.strip() and "\r" not in trigger


def is_day(name: str) -> bool:
    """Whether ``name`` is a real date written ``YYYY-MM-DD`` (a day directory or file)."""
    if not _DAY.match(name):
        return False
    try:
        date.fromisoformat(name)
    except ValueError:
        return False
    return True


def is_file_id(name: str) -> bool:
    """Whether a memory id can be a file name: letters, digits and ``_.:-``, starting with a
    letter or digit, so never ``.``, ``..``, a path separator or a hidden file."""
    return is_memory_id(name)


class MirrorError(KiokuError):
    """The export's target or source as a whole cannot be used (exit 2, nothing written)."""

    exit_code = 2


class MirrorFileError(ValidationError):
    """One file of an export holds something that cannot be read back: names the file (its
    path under DIR) and the field, and what was expected (exit 2, nothing written).
    ``missing``: the field is not there; ``unknown``: there is no such field (``allowed``
    then says what holds it)."""

    def __init__(
        self,
        path: str,
        field: str,
        value: object,
        allowed: str,
        *,
        missing: bool = False,
        unknown: bool = False,
        hint: str | None = None,
    ) -> None:
        self.path = path
        self.field = field
        self.value = value
        self.allowed = allowed
        if missing:
            message = f"{path}: {field} is missing (expected {allowed})"
        elif unknown:
            message = f"{path}: {field} is not a field of {allowed}"
        else:
            shown = repr(value)
            if len(shown) > 80:
                shown = shown[:79] + "…"
            message = f"{path}: {field}: expected {allowed}, got {shown}"
        KiokuError.__init__(self, message, hint=hint)
