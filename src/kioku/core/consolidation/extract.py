"""Extractive candidates: the knowledge and procedures consolidation proposes without an LLM.

Spec 001 (日次固定化) turns the day's episodes into knowledge and procedures. Offline nothing
is written: :func:`extract_knowledge` lifts the sentences that state a lasting fact, decision,
lesson, rule or policy, and :func:`extract_procedures` lifts the ordered steps of procedural
episodes. Every text, step and description is a verbatim slice of a source with its whitespace
runs collapsed to one space (at most a leading discourse marker or step number is cut).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from kioku.core.consolidation.classify import (
    classify_sentences,
    is_procedural,
    ordered_steps,
    split_sentences,
)
from kioku.core.consolidation.model import (
    KnowledgeCandidate,
    ProcedureCandidate,
    Source,
    Terms,
)

__all__ = ["collapse", "extract_knowledge", "extract_procedures"]

_FLAGS: Final = re.IGNORECASE
MAX_SENTENCE: Final = 300
MIN_TERMS: Final = 2
#: Two statements of one source whose content terms overlap this much (Jaccard) are one
#: statement said twice, as when a reply repeats the fact it was told.
ECHO_SHARE: Final = 0.8
TITLE_CHARS: Final = 60
_TITLE_WORDS: Final = 6
_TITLE_JA: Final = 20
#: Words a title does not end on.
_JOINING: Final = frozenset(
    ("and", "or", "but", "the", "a", "an", "of", "for", "to", "with", "in", "on", "at", "by")
)

#: What states something lasting, in English and Japanese.
_LASTING_EN = re.compile(
    r"\b(?:lives?|living|lived) in\b|\b(?:moved|relocated|moving) to\b"
    r"|\bworks? (?:at|for|in|as|on)\b|\bworking (?:at|for)\b|\bjoined\b|\bis based in\b"
    r"|\b(?:uses|use|using|prefers?|switched|migrated)\b"
    r"|\b(?:decided|agreed|chose|settled on)\b|\bdecision\b|\bwe(?:'ll| will) (?:use|go with)\b"
    r"|\brules?\b|\bpolic(?:y|ies)\b|\bguideline\b|\bconvention\b"
    r"|\b(?:always|never|must|should)\b"
    r"|\b\w+['’]s [\w -]{1,30}? (?:is|are)\b|\bthe [\w -]{1,30}? of [\w -]{1,40}? (?:is|are)\b"
    r"|\bin charge of\b|\bresponsible for\b|\bowner of\b|\bowns\b"
    r"|\bremember (?:that|to)\b|\bnote that\b|\blessons?\b|\blearned that\b|\bturns out\b"
    r"|\bdeadline\b|\bbirthday\b|\bis allergic to\b",
    _FLAGS,
)
_LASTING_JA = re.compile(
    r"に住(?:んで|む)|に引っ越|担当|に決め|に決ま|ことにした|ことになった|ルール|方針|必ず|べき"
    r"|で働い|に勤め|に入社|を使っ|を使う|に乗り換え|に切り替え|締め切り|締切|誕生日|教訓|覚えておく"
    r"|は[^。、？！?!]{1,40}?(?<!かった)(?:です|だ|である)[。！!]?$"
)
#: A present-tense statement about a named thing: "Our office is in Shibuya", "The login
#: bug is still unresolved", "Acme's API key rotates monthly" (not "It is", "That was").
_STATE_EN = re.compile(
    r"^(?:(?:the|our|my|his|her|their|its)\s+[\w'’-]+|[A-Z][\w'’-]*)(?:\s+[\w'’-]+){0,5}?"
    r"\s+(?:is|are|has|have)\s+(?!been\b|going\b|gonna\b)"
    r"|\b(?:fixed|resolved|solved|closed|shipped|released|launched|deprecated|migrated)\b"
)
#: Ends on a pronoun: what it states is in another sentence ("Ken uses it.").
_VAGUE_END = re.compile(r"\b(?:it|this|that|them|these|those|there)\s*[.!。]?$", _FLAGS)
#: Not lasting: about today, yesterday or tomorrow.
_EPHEMERAL_JA = re.compile(r"^(?:今日|昨日|明日|今朝|今夜|今晩|さっき|今)(?:は|の)")
_QUESTION = re.compile(
    r"[?？][\s」』)）]*$|(?:か|かな|かしら|っけ|の)[。\s]*$"
    r"|^(?:do|does|did|is|are|was|were|can|could|would|will|shall|should|what|when|where|"
    r"who|why|how|which)\b[^.!]*$",
    _FLAGS,
)
_GREETING = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|good (?:morning|afternoon|evening|night)|"
    r"see you|bye|goodbye|cheers|welcome|congrat)\b"
    r"|^(?:おはよう|こんにちは|こんばんは|ありがとう|よろしく|お疲れ|おつかれ|さようなら|"
    r"またね|すみません|ごめん|おめでとう|はじめまして|いただきます|ごちそうさま)",
    _FLAGS,
)
_FEELING = re.compile(
    r"^(?:i(?:'m| am)|i feel|i felt|i was|feeling)\s+(?:so |really |very |a bit |kind of )?"
    r"(?:happy|sad|tired|glad|excited|angry|upset|worried|sorry|bored|exhausted|nervous|great"
    r"|good|bad|fine|sleepy|hungry|lonely|stressed|scared|relieved|grateful|thrilled)\b"
    r"|^(?:嬉しい|うれしい|楽しい|悲しい|疲れた|眠い|寂しい|つらい|辛い|最高|やった|よかった|困った)",
    _FLAGS,
)
_HEDGE = re.compile(
    r"\b(?:maybe|probably|perhaps|possibly|might|may be|i think|i guess|i suppose|i believe|"
    r"not sure|i wonder|seems? (?:to|like)|likely)\b"
    r"|たぶん|多分|かも|と思う|と思います|と思って|おそらく|恐らく|気がする|らしい|みたい|でしょう",
    _FLAGS,
)
#: A leading discourse marker that may be cut: "By the way," "Oh," 「ちなみに、」, and a request to
#: remember that only introduces what it keeps ("Remember this:", 「これは覚えておいて：」).
_MARKER = re.compile(
    r"^(?:(?:by the way|btw|anyway|anyways|also|actually|fyi|incidentally|just so you know)"
    r"(?:\s*[,:]\s*|\s+)"
    r"|(?:please\s+)?(?:remember(?:\s+this)?|note(?:\s+this)?|for the record|for future reference"
    r"|(?:don't|do not) forget)\s*[:,\-—]\s*"
    r"|(?:これは|これ|今の|この件は?)?(?:覚えて(?:おいて|といて|て)(?:ください|ね)?|忘れないで(?:ね|ください)?"
    r"|メモして(?:おいて)?(?:ください|ね)?)\s*[：:、,]\s*"
    r"|(?:oh|well|so|ok|okay|and|but|plus)\s*,\s*"
    r"|(?:ちなみに|そういえば|ところで|あと|えーと|えっと|実は|なお|それと|そうそう)[、,]?\s*)+",
    _FLAGS,
)
_JA_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_END_PUNCT: Final = " \t.,;:!?。、，！？：；・-—"


def collapse(text: str) -> str:
    """``text`` with every whitespace run replaced by one space, and no space at either end."""
    return " ".join(text.split())


def _key(text: str) -> str:
    """What two candidates compare by: case-folded, trailing punctuation dropped."""
    return collapse(text).casefold().rstrip(_END_PUNCT)


def title_of(text: str) -> str:
    """A short subject for ``text``: its first words (English) or characters (Japanese)."""
    head = collapse(text)
    if _JA_CHAR.search(head):
        head = re.split(r"[、。，！？!?]", head, maxsplit=1)[0] or head
        head = head[:_TITLE_JA]
    else:
        words = head.split(" ")[:_TITLE_WORDS]
        # A title cut after a joining word ("… the vectors, and") ends before it instead.
        while len(words) > 1 and words[-1].casefold().strip(_END_PUNCT) in _JOINING:
            words.pop()
        head = " ".join(words)
    if len(head) > TITLE_CHARS:
        cut = head[:TITLE_CHARS].rsplit(" ", 1)[0]
        head = cut or head[:TITLE_CHARS]
    return head.strip(_END_PUNCT) or head[:TITLE_CHARS]


def _lasting(sentence: str, terms: Terms) -> bool:
    """Whether ``sentence`` states a lasting fact, decision, lesson, rule or policy."""
    if len(sentence) > MAX_SENTENCE or len(set(terms(sentence))) < MIN_TERMS:
        return False
    if _QUESTION.search(sentence) or _GREETING.search(sentence) or _FEELING.search(sentence):
        return False
    # (Procedural sentences never get here: classify_sentences set them apart.)
    if _HEDGE.search(sentence) or _VAGUE_END.search(sentence):
        return False
    if _LASTING_EN.search(sentence) or _STATE_EN.search(sentence):
        return True
    return bool(_LASTING_JA.search(sentence)) and not _EPHEMERAL_JA.search(sentence)


def _statement(sentence: str) -> str:
    """The sentence with whitespace collapsed and a leading discourse marker cut."""
    text = collapse(sentence)
    marker = _MARKER.match(text)
    if marker is not None and marker.end() < len(text):
        text = text[marker.end() :]
    return text


def extract_knowledge(
    sources: Sequence[Source], terms: Terms, *, max_per_source: int = 3
) -> list[KnowledgeCandidate]:
    """The sentences of ``sources`` that state something lasting, as knowledge candidates.

    Questions, greetings, feelings, hedged statements, procedural sentences, sentences of
    fewer than three content terms or over 300 characters are skipped. The same statement
    from several sources is one candidate naming all of them, in the order they said it; a
    statement of one source that repeats an earlier one of it (:data:`ECHO_SHARE` of their
    content terms shared) is left out.
    At most ``max_per_source`` statements are taken from each source.
    """
    order: list[str] = []
    texts: dict[str, str] = {}
    ids: dict[str, list[str]] = {}
    for source in sources:
        taken: set[str] = set()
        said: list[frozenset[str]] = []
        _, semantic = classify_sentences(source.text)
        for sentence in semantic:
            if len(taken) >= max_per_source:
                break
            text = _statement(sentence)
            key = _key(text)
            if not key or key in taken or not _lasting(text, terms):
                continue
            words = frozenset(terms(text))
            if any(_echoes(words, earlier) for earlier in said):
                continue  # the reply repeating what was told: one statement, said first
            said.append(words)
            taken.add(key)
            if key not in texts:
                order.append(key)
                texts[key] = text
                ids[key] = []
            if source.id not in ids[key]:
                ids[key].append(source.id)
    return [
        KnowledgeCandidate(title=title_of(texts[k]), text=texts[k], sources=tuple(ids[k]))
        for k in order
    ]


def _echoes(words: frozenset[str], earlier: frozenset[str]) -> bool:
    """Whether a statement with content terms ``words`` repeats one with ``earlier``: they
    share at least ``ECHO_SHARE`` of the terms either holds (Jaccard)."""
    union = len(words | earlier)
    return union > 0 and len(words & earlier) >= ECHO_SHARE * union


def _procedure(text: str, terms: Terms) -> tuple[str, tuple[str, ...]] | None:
    """The description and steps of one procedural text, or None without two steps. A step
    with no content term (a bare "---") is not a step."""
    found = ordered_steps(text)
    if found is None:
        return None
    steps = tuple(
        step for step in (collapse(text[a:b]) for a, b in found.spans) if step and terms(step)
    )
    if len(steps) < 2:
        return None
    lead = split_sentences(text[: found.lead])
    description = collapse(lead[-1]).rstrip(" :：") if lead else ""
    if not description:
        first = split_sentences(text)
        description = collapse(first[0]) if first else ""
    return description or steps[0], steps


def extract_procedures(sources: Sequence[Source], terms: Terms) -> list[ProcedureCandidate]:
    """Procedures laid out by the procedural ``sources``: their ordered steps, verbatim, and
    the sentence or heading that introduces them (else the first sentence) as description.

    Sources that give the same steps are one candidate naming all of them, in source order.
    """
    order: list[tuple[str, ...]] = []
    found: dict[tuple[str, ...], tuple[str, tuple[str, ...], list[str]]] = {}
    for source in sources:
        if not is_procedural(source.text):
            continue
        procedure = _procedure(source.text, terms)
        if procedure is None:
            continue
        description, steps = procedure
        key = tuple(_key(step) for step in steps)
        if key not in found:
            order.append(key)
            found[key] = (description, steps, [])
        ids = found[key][2]
        if source.id not in ids:
            ids.append(source.id)
    return [
        ProcedureCandidate(
            title=title_of(description),
            description=description,
            steps=steps,
            sources=tuple(ids),
        )
        for description, steps, ids in (found[key] for key in order)
    ]
