"""Profiles (spec 003 §6): one per person the store knows, learned from conversation.

After a turn is stored, what its speaker said about themselves (explicit preferences and
personal facts, Japanese and English: :mod:`kioku.core.profiles` offline, or the analyzer when
it is a :class:`~kioku.ports.analyzer.ProfileExtractor` and the text has a first-person cue,
so turns that say nothing about anyone cost no call) is folded into the speaker's profile with
the episode as its source, and every known person the turn names
gets one more mention by the speaker. A profile is a memory of kind ``profile``: searched,
protected and erased like any other, and never faded by the nightly batch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Final, cast

from kioku.core.kinds import Preference, ProfileDetails, ProfileFact, profile_text
from kioku.core.model import Kind, Memory
from kioku.core.profiles import FACT_KEYS, ProfileClaim, extract_profile_claims, normalise_topic
from kioku.core.profiles.cues import has_profile_cue
from kioku.core.profiles.merge import count_mention, merge_claims
from kioku.errors import MemoryNotFoundError, ValidationError
from kioku.ports.analyzer import ProfileExtractor
from kioku.ports.conformance import conforms
from kioku.ports.store import MemoryFilter, MemoryPatch
from kioku.service.kinds.records import new_record

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = [
    "KnownProfiles",
    "claims_of",
    "edit_profile",
    "find_profile",
    "get_profile",
    "learn_from_turn",
    "profiles",
]

_MAX_NAME: Final = 200


def _extracts_profiles(analyzer: object) -> bool:
    """Whether the analyzer reads profiles itself (decided once per type)."""
    return conforms(analyzer, ProfileExtractor)


class KnownProfiles:
    """The profiles of a scope as :func:`profiles` lists them, read once for a run of turns
    that learn in turn (:func:`learn_from_turn`), kept up to date as they write profiles, and
    read again after a turn makes a new one.

    Valid only while nothing but those calls writes profiles of the scope.
    """

    __slots__ = ("_listed",)

    def __init__(self) -> None:
        self._listed: list[Memory] | None = None

    def get(self, engine: Engine) -> list[Memory]:
        if self._listed is None:
            self._listed = profiles(engine)
        return self._listed

    def forget(self) -> None:
        self._listed = None

    def wrote(self, written: Memory, *, new: bool) -> None:
        """``written`` was stored: an update takes the place of the profile it changed, as
        listing again would give it (the list is ordered by creation); a new profile is
        listed again."""
        listed = self._listed
        if new or listed is None:
            self._listed = None
            return
        for place, memory in enumerate(listed):
            if memory.id == written.id:
                listed[place] = written
                return
        self._listed = None


def _check_name(person: str) -> str:
    name = " ".join(str(person).split()) if isinstance(person, str) else ""
    if not name or len(name) > _MAX_NAME:
        raise ValidationError("person", person, f"a name of 1 to {_MAX_NAME} characters")
    return name


def profiles(engine: Engine) -> list[Memory]:
    flt = MemoryFilter(user_id=engine.user_id, agent_id=engine.agent_id, kind=Kind.PROFILE.value)
    return [m for m in engine.store.list(flt) if isinstance(m.details, ProfileDetails)]


def find_profile(engine: Engine, person: str) -> Memory | None:
    """The profile whose person (or an alias) is ``person``, any case."""
    return _find(profiles(engine), _check_name(person))


def _find(listed: Iterable[Memory], name: str) -> Memory | None:
    wanted = name.casefold()
    for memory in listed:
        details = memory.details
        assert isinstance(details, ProfileDetails)
        if wanted in {details.person.casefold(), *(a.casefold() for a in details.aliases)}:
            return memory
    return None


def _save(engine: Engine, memory: Memory | None, person: str, details: ProfileDetails) -> Memory:
    from kioku.core.validate import validate_memory
    from kioku.service.vectors import embed_memory

    text = profile_text(details)
    if memory is None:
        record = replace(
            new_record(engine, Kind.PROFILE, person, text), details=details, protected=False
        )
        validate_memory(record, engine.config.categories)
        record = embed_memory(engine, record)
        engine.store.add(record)
        return record
    engine.store.update(memory.id, MemoryPatch(content=text, details=details))
    return replace(memory, content=text, details=details)


def _claims(engine: Engine, text: str, person: str) -> list[ProfileClaim]:
    """What ``person`` says about themselves in ``text``: the analyzer's reading when it
    extracts profiles and the text has a first-person cue, else the offline extractor's."""
    analyzer = engine.analyzer
    if _extracts_profiles(analyzer) and has_profile_cue(text):
        return cast("ProfileExtractor", analyzer).extract_profile(text, person)
    return extract_profile_claims(text, speaker=person)


def claims_of(engine: Engine, text: str, speaker: str | None = None) -> list[ProfileClaim]:
    """What ``speaker`` (default: the owner) says about themselves in ``text``; asked before
    the turn's transaction, since an LLM may answer it."""
    return _claims(engine, text, speaker or engine.user_id)


def learn_from_turn(
    engine: Engine,
    episode: Memory,
    speaker: str | None = None,
    *,
    text: str | None = None,
    claims: list[ProfileClaim] | None = None,
    known: KnownProfiles | None = None,
) -> Memory | None:
    """Fold what ``episode``'s speaker (default: the owner) said about themselves into their
    profile, and count mentions of known people. The profile written, if any.

    ``text`` is what the speaker said (default: the episode's trigger, which an LLM analyzer
    writes as a summary rather than the speaker's own words); ``claims`` what was already
    read from it (:func:`claims_of`), else it is read now. ``known`` holds the profiles
    listed for the turns before, when nothing else wrote profiles since.
    """
    person = speaker or engine.user_id
    text = episode.trigger if text is None else text
    if claims is None:
        claims = _claims(engine, text, person)
    if known is None:
        known = KnownProfiles()
    mentioned = []
    for memory in known.get(engine):
        details = memory.details
        assert isinstance(details, ProfileDetails)
        if details.person.casefold() != person.casefold() and _names(details, text):
            mentioned.append((memory, details))
    if not mentioned and not claims:
        return None  # nothing to write
    written: Memory | None = None
    with engine.store.atomic():
        for memory, details in mentioned:
            saved = _save(engine, memory, details.person, count_mention(details, person))
            known.wrote(saved, new=False)
        if claims:
            own = _find(known.get(engine), _check_name(person))
            details = (
                own.details
                if own is not None and isinstance(own.details, ProfileDetails)
                else ProfileDetails(person=person)
            )
            merged = merge_claims(details, claims, episode.id, episode.created)
            written = _save(engine, own, person, merged)
            known.wrote(written, new=own is None)
    return written


def _names(details: ProfileDetails, text: str) -> bool:
    folded = text.casefold()
    for name in (details.person, *details.aliases):
        n = name.casefold()
        if not n:
            continue
        if n.isascii():
            if re.search(rf"\b{re.escape(n)}\b", folded):
                return True
        elif n in folded:
            return True
    return False


def edit_profile(
    engine: Engine,
    person: str,
    *,
    facts: Iterable[tuple[str, str]] = (),
    remove_facts: Iterable[str] = (),
    likes: Iterable[str] = (),
    dislikes: Iterable[str] = (),
    remove_preferences: Iterable[str] = (),
    aliases: Iterable[str] = (),
) -> Memory:
    """Create or change a profile by hand: set or remove facts and preferences, add aliases."""
    name = _check_name(person)
    now = engine.clock.now()
    with engine.store.atomic():
        memory = find_profile(engine, name)
        details = (
            memory.details
            if memory is not None and isinstance(memory.details, ProfileDetails)
            else ProfileDetails(person=name)
        )
        fact_map = {f.key: f for f in details.facts}
        for key, value in facts:
            if key not in FACT_KEYS:
                raise ValidationError("fact", key, "one of " + ", ".join(sorted(FACT_KEYS)))
            if not value.strip():
                raise ValidationError("fact", key, "a value (use --remove-fact to remove one)")
            fact_map[key] = ProfileFact(key, value.strip(), (), 1.0, now, now)
        for key in remove_facts:
            if fact_map.pop(key, None) is None:
                raise ValidationError("fact", key, "a fact the profile has")
        prefs = {p.topic: p for p in details.preferences}
        for value, polarity in [(v, 1) for v in likes] + [(v, -1) for v in dislikes]:
            topic = normalise_topic(value)
            if not topic:
                raise ValidationError("preference", value, "a topic")
            prefs[topic] = Preference(topic, value.strip(), polarity, 1, (), now)
        for value in remove_preferences:
            if prefs.pop(normalise_topic(value), None) is None:
                raise ValidationError("preference", value, "a preference the profile has")
        known = list(details.aliases)
        for alias in aliases:
            clean = _check_name(alias)
            if clean not in known:
                known.append(clean)
        details = replace(
            details,
            aliases=tuple(known),
            facts=tuple(sorted(fact_map.values(), key=lambda f: f.key)),
            preferences=tuple(sorted(prefs.values(), key=lambda p: p.topic)),
        )
        return _save(engine, memory, name, details)


def get_profile(engine: Engine, person: str) -> Memory:
    found = find_profile(engine, person)
    if found is None:
        raise MemoryNotFoundError(f"profile of {person}")
    return found
