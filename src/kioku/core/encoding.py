"""Immediate encoding at session boundaries (spec 001, 即時符号化): the pure rules. No I/O.

:func:`resolved_items` finds, offline, the sentences of a text that report something as
resolved, fixed or finished ("fixed the login bug", 「直りました」). It favours precision:
a sentence counts only when it says so plainly. A question, a negation ("not fixed yet",
「まだ直っていない」), a plan or wish ("will fix", 「直したい」), a condition ("once it is
done", 「直ったら」) or a hedge ("maybe", 「かもしれない」) anywhere in the sentence rules it
out, even when a part of it would count, because a resolution logged by mistake misleads
every later prompt while a missed one only goes unmentioned.

:func:`idle_sessions` says which sessions have been quiet long enough to be finalized, and
:class:`FinalizedPoint` is how far a session's turns have been finalized: the count of
turns summarised so far and the last of them, so turns are told apart by time and id
rather than by position (a turn erased later does not shift the others).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from kioku.core.validate import MAX_ID_CHARS
from kioku.errors import StoreCorruptError, ValidationError
from kioku.records import Record

__all__ = [
    "IDLE",
    "SUMMARY_KEYWORD",
    "FinalizedPoint",
    "idle_sessions",
    "is_summary_source",
    "resolved_items",
    "summary_source",
    "summary_trigger",
]

#: A session whose last turn is this old has ended (spec 001: 10分アイドル).
IDLE: Final = timedelta(minutes=10)
#: The keyword every session summary carries.
SUMMARY_KEYWORD: Final = "session-summary"
#: Room left in a summary's source id for ``session:`` and the turn numbers.
_SOURCE_SPARE: Final = 64

# -- resolved items --------------------------------------------------------------------------

#: A sentence ends after these (a "." only before a space or the end: "v1.2" stays whole).
_SENTENCE_END: Final = re.compile(r"(?<=[。！？!?\n．])(?![。！？!?．])|(?<=\.)(?=\s)")
_QUESTION_END: Final = re.compile(r"[?？][\s\"'」』)）]*$|(?:か|かな|かね|かしら|の)[。\s]*$")
_EN_QUESTION_START: Final = re.compile(
    r"^(?:is|are|was|were|did|does|do|has|have|had|can|could|will|would|should|shall|may|"
    r"might|how|what|why|when|where|who|which)\b",
    re.IGNORECASE,
)
_VERBS: Final = (
    r"(?:fixed|resolved|solved|repaired|patched|finished|completed|merged|deployed|shipped)"
)
_DETERMINERS: Final = (
    r"(?:the|it|this|that|these|those|my|our|your|his|her|their|a|an|all|both|every|everything)"
)
_STATES: Final = (
    r"(?:fixed|resolved|solved|repaired|patched|done|finished|completed|sorted|sorted\s+out|"
    r"merged|deployed|shipped)"
)
_NOUNS: Final = (
    r"(?:bug|issue|problem|error|crash|ticket|leak|outage|incident|regression|tests?|build|"
    r"deploy|deployment|migration|task|pr|pull\s+request|fix|upgrade|release)s?"
)
_EN_RESOLVED: Final = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # "fixed the login bug", "that solved it", "sorted out the billing issue"
        rf"\b(?:{_VERBS}|sorted\s+out|cleared\s+up)\s+{_DETERMINERS}\b",
        # "it's done", "the issue has been resolved", "is now fixed", "all done"
        rf"(?:\b(?:is|are|was|were|been|be|got|get|gets|all|just|already|finally|now)|'s|'re|'ve)"
        rf"\s+(?:(?:now|finally|fully|all|completely|already)\s+)?{_STATES}(?![-\w])",
        # "Fixed.", "Done!", "OK, resolved.", "Problem solved."
        r"^(?:(?:ok(?:ay)?|great|good\s+news|yes|yay|finally|alright|nice)[,!:]?\s+)?"
        r"(?:fixed|resolved|solved|done|finished|completed|sorted|all\s+done|problem\s+solved|"
        r"issue\s+resolved)(?:\s+(?:it|now|again|already))?\s*(?:[.!…,]|$)",
        # "Bug fixed", "Issue closed", "PR merged"
        rf"\b{_NOUNS}\s+(?:fixed|resolved|solved|closed|done|finished|completed|merged)(?![-\w])",
        # "the deploy works now", "tests are passing again", "CI is green now"
        r"\b(?:works?|working|pass|passes|passing|succeeds|succeeding|builds|loads|runs|"
        r"compiles|green)\s+(?:(?:fine|properly|correctly|perfectly|again)\s+)?(?:now|again)\b",
        # "the server is back up"
        r"(?:\b(?:is|are|was|were)|'s|'re)\s+back\s+(?:up|online)\b",
        # "it worked", "that worked"
        r"\b(?:it|that|this|everything)\s+worked\b",
        # "the crash no longer happens"
        r"\bno\s+longer\s+(?:fails?|failing|crash(?:es)?|crashing|broken|happens|reproduces|"
        r"errors?|an\s+issue|a\s+problem|times\s+out)\b",
        # "got it working"
        rf"\bgot\s+{_DETERMINERS}(?:\s+\w+)?\s+(?:working|running|fixed|done|sorted)\b",
    )
)
_EN_VETO: Final = re.compile(
    r"\b(?:not|never|nothing|nobody|none|no(?!\s+longer\b)|cannot|yet|still|unfixed|"
    r"unresolved|unsolved|failed|unable|without|almost|nearly|partially|partly|half|mostly|"
    r"hardly|barely|will|shall|going\s+to|gonna|plan|plans|planning|planned|need|needs|"
    r"needed|must|should|have\s+to|has\s+to|had\s+to|try|trying|tried|attempt\w*|want|wants|"
    r"wanted|would|could|can|might|may|maybe|perhaps|probably|hope\w*|let|let's|please|if|"
    r"once|when|whenever|until|unless|whether|assuming|soon|tomorrow|later|next|eventually|"
    r"expect\w*|suppos\w*|think|thought|seem|seems|seemed|apparently|todo|used\s+to|before|"
    r"wish)\b|n't\b|'ll\b|\bno\s+longer\s+(?:works?|working|runs?|running|loads?|builds?|"
    r"pass\w*|compiles?|starts?|responds?)\b",
    re.IGNORECASE,
)
#: Not a conditional (直ったら), a listing (直ったり) or a guess (直ったろう) after a past form.
_JA_TAIL: Final = r"(?!ら|り|ろう)"
_JA_RESOLVED: Final = tuple(
    re.compile(p + _JA_TAIL)
    for p in (
        r"(?:直|治)(?:りました|った|っています|っている|ってる|しました|した)",
        r"(?:修正|解決|解消|対応|実装|復旧|修復|デプロイ|マージ|リリース|終了|完了)"
        r"(?:しました|した|できました|できた|されました|された|させました|させた)",
        r"(?:修正|解決|対応|実装|確認|処理)済",
        r"(?:修正|対応|作業|移行|実装|復旧)完了|完了(?=です|でした|だ|！|!|。|$|\s)",
        r"(?:終わ(?:りました|った)|終えました|終えた|片付(?:きました|いた))",
        r"(?:動(?:きました|いた|くようになりました|くようになった)|正常に動(?:いています|いてる|作しています))",
        r"(?:テスト|ビルド|CI|チェック|レビュー|審査)(?:が|も|は)?(?:全部|すべて|全て)?(?:無事に?)?"
        r"通(?:りました|った|るようになりました|るようになった)",
        r"成功(?:しました|した)",
    )
)
#: Apologies end in ません without denying anything (すみません、直りました).
_JA_APOLOGY: Final = re.compile(
    r"すみません|すいません|済みません|申し訳(?:ございません|ありません)"
)
_JA_VETO: Final = re.compile(
    r"ない|ません|なかった|できず|せず|らず|れず|かず|まだ|未|予定(?!通り|どおり)|つもり|"
    r"(?:し|り|き|げ|べ|せ|け|み|え|て)たい|ください|下さい|ほしい|欲しい|べき|なければ|かも|"
    r"だろう|でしょう|はず|と思|みたい|らしい|ようです|ようだ|気がする|明日|来週|今度|あとで|"
    r"後で|いずれ|次回|(?:修正|対応|作業|調査|確認|進行|実装|検証|デプロイ|途)中|かどうか"
)


def _sentences(text: str) -> list[str]:
    parts = (" ".join(p.split()) for p in _SENTENCE_END.split(text))
    return [p for p in parts if any(c.isalnum() for c in p)]


def _is_question(sentence: str) -> bool:
    return bool(_QUESTION_END.search(sentence) or _EN_QUESTION_START.match(sentence))


def _reports_resolution(sentence: str) -> bool:
    text = sentence.replace("\u2019", "'")
    if _is_question(text):
        return False
    if not any(p.search(text) for p in (*_EN_RESOLVED, *_JA_RESOLVED)):
        return False
    return not (_EN_VETO.search(text) or _JA_VETO.search(_JA_APOLOGY.sub("", text)))


def resolved_items(text: str) -> list[str]:
    """The sentences of ``text`` that report something resolved, fixed or finished, in
    order, each once (whitespace collapsed). Japanese and English; see the module's
    docstring for what rules a sentence out."""
    if not isinstance(text, str):
        raise ValidationError("text", text, "a string")
    found: dict[str, None] = {}
    for sentence in _sentences(text):
        if _reports_resolution(sentence):
            found.setdefault(sentence, None)
    return list(found)


# -- session boundaries ----------------------------------------------------------------------


def _aware(field: str, value: object) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(field, value, "a timezone-aware datetime")
    return value


def idle_sessions(
    last_turns: Mapping[str, datetime], now: datetime, idle: timedelta = IDLE
) -> list[str]:
    """The sessions whose last turn is at least ``idle`` before ``now`` (a last turn after
    ``now`` is not idle), the longest quiet first (ties by session id)."""
    now = _aware("now", now)
    if not isinstance(idle, timedelta) or idle < timedelta(0):
        raise ValidationError("idle", idle, "a duration of zero or more")
    cutoff = now - idle
    quiet = []
    for session, last in last_turns.items():
        if _aware(f"last turn of {session!r}", last) <= cutoff:
            quiet.append((last, session))
    return [session for _, session in sorted(quiet)]


# -- how far a session is finalized ----------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class FinalizedPoint(Record):
    """How far one session's turns are finalized: ``index`` is the number of the last turn
    summarised (counting from 0; -1 when none is), ``through`` its creation time and ``ids``
    the turns finalized that were created exactly at ``through`` (so a turn stored later with
    the same time is still new)."""

    index: int = -1
    through: datetime | None = None
    ids: tuple[str, ...] = ()

    def is_new(self, created: datetime, memory_id: str) -> bool:
        """Whether a turn created at ``created`` is after this point."""
        if self.through is None:
            return True
        return created > self.through or (created == self.through and memory_id not in self.ids)

    def after(self, turns: Sequence[tuple[datetime, str]]) -> FinalizedPoint:
        """The point once ``turns`` (``(created, id)``, oldest first, all new) are finalized."""
        if not turns:
            return self
        last = turns[-1][0]
        same = [i for created, i in turns if created == last]
        if self.through == last:
            same = [*self.ids, *same]
        return FinalizedPoint(self.index + len(turns), last, tuple(dict.fromkeys(same)))

    def to_json(self) -> str:
        return json.dumps(
            {
                "last_finalized_turn_index": self.index,
                "through": None if self.through is None else self.through.isoformat(),
                "ids": list(self.ids),
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str | None) -> FinalizedPoint:
        """The point a state row holds (none for no row). An unreadable row raises
        StoreCorruptError: starting over would summarise finalized turns again."""
        if text is None:
            return cls()
        try:
            data = json.loads(text)
            index = int(data["last_finalized_turn_index"])
            through = data["through"]
            moment = None if through is None else datetime.fromisoformat(through)
            ids = tuple(str(i) for i in data["ids"])
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreCorruptError(
                f"the finalized point of a session is unreadable: {text[:200]!r}"
            ) from exc
        if index < -1 or (moment is None) != (index == -1) or (moment and not moment.tzinfo):
            raise StoreCorruptError(f"the finalized point of a session is invalid: {text[:200]!r}")
        return cls(index, moment, ids)


def _source_prefix(session_id: str) -> str:
    """``session:<id>:``, or for an id too long to fit in a source id, ``session:#<digest>:``."""
    if len(session_id) <= MAX_ID_CHARS - _SOURCE_SPARE:
        return f"session:{session_id}:"
    digest = hashlib.blake2b(session_id.encode("utf-8", "surrogatepass"), digest_size=16)
    return f"session:#{digest.hexdigest()}:"


def summary_source(session_id: str, first: int, last: int) -> str:
    """The source id of the summary of turns ``first``–``last`` of a session: the same for
    a retry, so a summary is never stored twice."""
    return f"{_source_prefix(session_id)}{first}-{last}"


def is_summary_source(source_id: str, session_id: str) -> bool:
    """Whether ``source_id`` names a summary of ``session_id`` (see :func:`summary_source`)."""
    prefix = _source_prefix(session_id)
    if not source_id.startswith(prefix):
        return False
    first, sep, last = source_id[len(prefix) :].partition("-")
    return bool(sep) and first.isdigit() and last.isdigit()


def summary_trigger(session_id: str, first: int, last: int) -> str:
    return f"Session {session_id}: turns {first}\u2013{last}"
