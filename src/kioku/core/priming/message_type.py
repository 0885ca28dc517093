"""What kind of message arrived, so priming knows how much to recall (spec 001).

Priming recalls memories before every prompt. How much depends on the message
(メッセージタイプ別の動的バジェット配分): a greeting needs little context, a request for
work the most. :func:`classify_message` decides offline, for Japanese and English, on the
NFKC-normalised text, by these rules in this order:

1. **heartbeat**: the text is empty or only whitespace, or it is only a heartbeat marker:
   one of :data:`HEARTBEAT_MARKERS` (case-insensitive, ``-`` or a space read as ``_``),
   optionally wrapped in one pair of ``[]``, ``()``, ``<>``, ``{}`` or ``【】``.
2. **greeting**: the text holds nothing but greetings and small talk (hi, good morning,
   thanks, bye, how are you, ok, that worked / おはよう, こんにちは, よろしくお願いします,
   ありがとう, お疲れ様です, 了解…), words of address (everyone, みなさん), punctuation and
   emoji, plus at most one other English word (a name: "Hi Claude") or a name with an
   honorific (田中さん).
3. **request**: the message asks for work anywhere in it, even when it also has a question
   mark (a long task with a question in it is still a task):

   * English, in any clause (clauses end at ``. ! ? ; : ,`` and line breaks; a one-word
     label opening a line, "Update:", is dropped first): "please" (unless the clause asks to
     explain or tell), a clause that starts with an action verb ("fix the test"; not "test
     coverage is low" or "check is failing": is/are/was… within the next two words, before
     any object such as the/this/it, make the word a noun), or an ask followed by an action
     verb: can/could/would/will you, can/could/shall we, I need / want you to, go ahead and,
     let's, why don't you, we/you should, we need to ("would you mind fixing…" too).
   * Japanese: ください・下さい (also ご確認ください), てくれ・てほしい・てもらえ・ていただけ…,
     お願い・頼む, volitional しよう・ましょう・やろう, なさい, a sentence ending in a
     te-form (作って, 直して, 読んで, 消さないで; not どうして, について, 初めて…), or a
     sentence with を ending in a verbal noun of work (…を修正, …を追加).

   Asking to *explain* or *tell* is a question, not a request: "can you tell me…",
   "explain…", 教えてください, 説明して are removed before the request rules run.
4. **question**: a question mark (``?``, NFKC folds ``？`` into it), an English clause that
   starts with a wh-word or an auxiliary (what, how, is, do, can…), an ask to explain or tell,
   a Japanese sentence ending in か, ですか, ますか, でしょうか, かな, っけ, or a Japanese
   question word (何, いつ, どこ, 誰, なぜ, どう, どれ, いくら…; not 何か, いつも, どうぞ…).
5. Anything else is a statement: one of :data:`LONG_STATEMENT_CHARS` characters or more
   (a pasted error, a description of a task) is a **request**, since it usually sets up work
   and deserves the widest recall; a shorter one is a **question** (a middle budget).

The rules are heuristics for a budget, not a parser: a wrong guess costs some tokens of
context, never a wrong answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from kioku.errors import ValidationError

__all__ = [
    "HEARTBEAT_MARKERS",
    "LONG_STATEMENT_CHARS",
    "TYPE_BUDGETS",
    "MessageType",
    "classify_message",
    "parse_message_type",
]


class MessageType(StrEnum):
    """The four message types of spec 001, each with its own recall budget."""

    GREETING = "greeting"
    QUESTION = "question"
    REQUEST = "request"
    HEARTBEAT = "heartbeat"


#: Tokens of recalled context per message type (spec 001, メッセージタイプ別の動的バジェット配分).
TYPE_BUDGETS: Final[Mapping[MessageType, int]] = MappingProxyType(
    {
        MessageType.GREETING: 500,
        MessageType.QUESTION: 1500,
        MessageType.REQUEST: 3000,
        MessageType.HEARTBEAT: 200,
    }
)

#: A message that is only one of these (see rule 1) is a heartbeat.
HEARTBEAT_MARKERS: Final = frozenset(
    {"heartbeat", "heartbeat_ok", "heartbeat_check", "ハートビート", "定期巡回"}
)

#: A statement (no request or question signal) this long or longer is treated as a request.
LONG_STATEMENT_CHARS: Final = 200


def parse_message_type(value: str) -> MessageType:
    """The message type named by ``value`` (surrounding whitespace and case ignored)."""
    try:
        return MessageType(value.strip().lower())
    except (ValueError, AttributeError):
        allowed = ", ".join(t.value for t in MessageType)
        raise ValidationError("message_type", value, f"one of {allowed}") from None


def classify_message(text: str) -> MessageType:
    """The type of ``text`` by the rules of the module docstring."""
    norm = unicodedata.normalize("NFKC", text).replace("’", "'").strip()
    if not norm or _is_heartbeat(norm):
        return MessageType.HEARTBEAT
    lowered = norm.lower()
    if _is_greeting(lowered):
        return MessageType.GREETING
    info_free = _JA_INFO.sub("。", lowered)
    english = _english_signals(lowered)
    if english[0] or _ja_asks_work(info_free):
        return MessageType.REQUEST
    if english[1] or "?" in lowered or _ja_asks_info(lowered, info_free):
        return MessageType.QUESTION
    if len(norm) >= LONG_STATEMENT_CHARS:
        return MessageType.REQUEST
    return MessageType.QUESTION


# -- heartbeat ---------------------------------------------------------------------------------

_WRAPPERS: Final = {"[": "]", "(": ")", "<": ">", "{": "}", "【": "】"}


def _is_heartbeat(norm: str) -> bool:
    marker = norm.lower()
    if len(marker) >= 2 and _WRAPPERS.get(marker[0]) == marker[-1]:
        marker = marker[1:-1].strip()
    return re.sub(r"[-\s]+", "_", marker) in HEARTBEAT_MARKERS


# -- greeting ----------------------------------------------------------------------------------


def _alternation(phrases: str) -> str:
    """A regex alternation of ``|``-separated phrases, longest first (so the longest wins)."""
    items = sorted({p.strip() for p in phrases.split("|") if p.strip()}, key=len, reverse=True)
    return "|".join(re.escape(p) for p in items)


_EN_GREETINGS: Final = re.compile(
    r"(?<![a-z'])(?:"
    + _alternation(
        "hi|hello|hey|hiya|howdy|yo|greetings|good morning|good afternoon|good evening|"
        "good night|morning|evening|gm|thanks|thank you|thx|ty|cheers|much appreciated|"
        "bye|bye bye|goodbye|see you|see ya|see you later|see you tomorrow|later|take care|"
        "have a nice day|have a good one|have a good day|nice to meet you|how are you|"
        "how are you doing|how's it going|how is it going|what's up|welcome back|i'm back|"
        "long time no see|good job|well done|great work|nice work|ok|okay|got it|"
        "sounds good|awesome|great|cool|nice|perfect|that worked|it worked|that works|it works"
    )
    + r")(?![a-z'])"
)
_EN_FILLERS: Final = frozenset(
    "everyone everybody all there team guys folks friend buddy mate so much very a lot again "
    "too you for the your my help everything oh and today tonight perfectly now".split()
)
_JA_GREETINGS: Final = re.compile(
    _alternation(
        "おはよう|おはようございます|おはよー|こんにちは|こんにちわ|今日は|こんばんは|こんばんわ|"
        "よろしく|よろしくお願いします|よろしくお願いいたします|よろしくお願い致します|"
        "どうぞよろしく|ありがとう|ありがとうございます|ありがとうございました|ありがと|"
        "サンキュー|どうも|お疲れ様|お疲れさま|おつかれさま|お疲れ|おつかれ|おやすみ|"
        "おやすみなさい|はじめまして|初めまして|さようなら|さよなら|またね|また明日|ではまた|"
        "じゃあね|ただいま|おかえり|おかえりなさい|いってきます|行ってきます|いってらっしゃい|"
        "ごちそうさま|失礼します|お先に失礼します|こちらこそ|助かりました|助かります|"
        "助かった|了解|承知しました|わかりました|分かりました|なるほど|そっか|いいね|"
        "お元気ですか|元気|久しぶり|お久しぶりです"
    )
)
_JA_FILLERS: Final = re.compile(
    r"[^\s、。,!?]{1,8}?(?:さん|さま|様|くん|君|ちゃん|先生)|皆さん|皆様|みなさん|みんな|"
    r"今日も|本日も|今日は|明日も|これからも|また|本当に|ほんとに|いつも|とても|大変|"
    r"でした|です|ございます|しました|ね|よ|ー|〜"
)


def _is_greeting(lowered: str) -> bool:
    rest, ja_hits = _JA_GREETINGS.subn(" ", lowered)
    rest = _JA_FILLERS.sub(" ", rest)
    rest, en_hits = _EN_GREETINGS.subn(" ", rest)
    if not ja_hits and not en_hits:
        return False
    if any(not ch.isascii() and unicodedata.category(ch)[0] in "LN" for ch in rest):
        return False
    words = [w for w in re.findall(r"[a-z0-9']+", rest) if w not in _EN_FILLERS]
    if len(words) > 1:
        return False
    return not words or (words[0].isalpha() and words[0] not in _EN_CONTENT_WORDS)


# -- English -----------------------------------------------------------------------------------

_ACTION_VERBS: Final = frozenset(
    "add analyse analyze apply book build bump change check clean commit compile configure "
    "convert copy create debug delete deploy design disable document download draft edit "
    "enable ensure export extract fetch fill find finish fix format generate give handle help "
    "implement improve install integrate investigate keep list load look make merge migrate "
    "modify move open optimise optimize organize pick plan polish port prepare print publish "
    "pull push put read rebase record refactor reformat register reload remove rename "
    "reorganize repair replace reply rerun reset resolve restart restore restructure revert "
    "review rewrite run save schedule search send set setup ship show simplify sort split "
    "start stop submit summarise summarize switch tag test translate trim try turn tweak undo "
    "uninstall update upgrade upload use validate verify wrap write".split()
)
_INFO_VERBS: Final = frozenset("explain tell describe clarify define compare remind".split())
_WH_WORDS: Final = frozenset(
    "what what's whats why how how's when where where's who who's whom whose which".split()
)
_AUXILIARIES: Final = frozenset(
    "is are was were am do does did can could would will should shall may might must have "
    "has had isn't aren't wasn't don't doesn't didn't can't couldn't won't wouldn't "
    "shouldn't haven't hasn't".split()
)
_EN_CONTENT_WORDS: Final = _ACTION_VERBS | _INFO_VERBS | _WH_WORDS | _AUXILIARIES
_CLAUSE_FILLERS: Final = frozenset(
    "ok okay so now then also and but just hey hi hello first next finally alright right well "
    "oh yes yeah no sure great thanks kindly quickly maybe actually again lastly please pls "
    "plz".split()
)
_POLITE: Final = frozenset({"please", "pls", "plz"})
_ASKS: Final = tuple(
    tuple(ask.split())
    for ask in sorted(
        "can you|could you|would you|will you|can u|could u|would you mind|can we|could we|"
        "shall we|i need you to|i want you to|i'd like you to|i would like you to|"
        "go ahead and|let's|lets|let us|why don't you|why not|we should|you should|"
        "we need to".split("|"),
        key=len,
        reverse=True,
    )
)
#: A verb one or two words after a leading action word says it was a noun: "test coverage is
#: low", "check is failing"; unless an object comes first: "check this is right".
_NOT_IMPERATIVE: Final = frozenset(
    "is are was were 's has have had looks seems works worked fails failed passes passed "
    "still".split()
)
_OBJECT_START: Final = frozenset(
    "the a an this that these those it its all my our your their me us him her them sure "
    "whether if".split()
)


def _used_as_noun(words: list[str]) -> bool:
    """Whether a clause that starts with an action word is a statement about that thing."""
    if len(words) > 1 and words[1] in _NOT_IMPERATIVE:
        return True
    return len(words) > 2 and words[1] not in _OBJECT_START and words[2] in _NOT_IMPERATIVE


#: A one-word label that opens a line ("Update: the server is back") is no imperative.
_LABEL: Final = re.compile(r"^\s*[a-z]+\s*:(?!//)", re.MULTILINE)


def _is_gerund(word: str) -> bool:
    """``fixing`` after "would you mind": work, unless it is ``telling`` or ``explaining``."""
    return len(word) > 4 and word.endswith("ing") and word[:-3] not in _INFO_VERBS


def _english_signals(lowered: str) -> tuple[bool, bool]:
    """(asks for work, asks for information) over the English clauses of the text."""
    work = info = False
    for clause in re.split(r"[.!?;:,\n]+", _LABEL.sub(" ", lowered)):
        words = re.findall(r"[a-z][a-z']*", clause)
        if not words:
            continue
        polite = any(w in _POLITE for w in words)
        while words and words[0] in _CLAUSE_FILLERS:
            words = words[1:]
        if words and (words[0] in _WH_WORDS or words[0] in _AUXILIARIES):
            info = True
        asked = False
        for ask in _ASKS:
            if tuple(words[: len(ask)]) == ask:
                words, asked = words[len(ask) :], True
                break
        while words and words[0] in _CLAUSE_FILLERS:
            words = words[1:]
        first = words[0] if words else ""
        if first in _INFO_VERBS:
            info = True
        elif first in _ACTION_VERBS or (asked and _is_gerund(first)):
            work = work or asked or not _used_as_noun(words)
        elif polite and not asked:
            work = True
    return work, info


# -- Japanese ----------------------------------------------------------------------------------

#: Asking to explain or tell: information, not work; removed before the request rules.
_JA_INFO: Final = re.compile(
    r"(?:教え|おしえ|説明し|解説し)て(?:ください|下さい|くれ(?:ない|ます|ません)?|ほしい|欲しい"
    r"|もらえ(?:る|ます|ません)?|いただけ(?:る|ます|ません)?|頂け(?:る|ます|ません)?)?"
    r"|知りたい"
)
_JA_REQUEST: Final = re.compile(
    r"くださ|下さい|[てで](?:くれ|ほしい|欲しい|もらえ|もらいた|いただけ|いただきた|頂け|頂きた"
    r"|ちょうだい|おいて|みて)"
    r"|お願い|おねがい|頼む|頼みます|たのむ|なさい"
    r"|(?<!どう)(?:しよう|ましょう|やろう)"
)
_JA_TE_END: Final = re.compile(r"(?:[ぁ-ゖァ-ヺー一-龯々]て|[んい]で)(?:ね|よ|な)?$")
_JA_NOT_TE: Final = re.compile(
    r"(?:どうして|そして|として|にて|について|によって|にとって|に対して|において|に関して|すべて"
    r"|全て|かつて|初めて|はじめて|改めて|あえて|せめて|極めて|決して|やがて|従って|したがって"
    r"|なんで)(?:ね|よ|な)?$"
)
_JA_WORK_NOUN: Final = re.compile(
    r"を.*(?:実装|修正|追加|削除|作成|変更|更新|実行|調査|対応|翻訳|要約|レビュー|確認|整理|準備"
    r"|設定|導入|改善|リファクタリング)(?:よろしく)?$"
)
_JA_QUESTION_END: Final = re.compile(
    r"(?:ですか|ますか|ませんか|でしょうか|だろうか|かな|かしら|っけ|(?<!そう)(?<!そっ)か)$"
)
_JA_QUESTION_WORD: Final = re.compile(
    r"何(?![かもと度])|なに(?![かも])|なんで|なんの|いつ(?![もか])|どこ(?![かも])|誰(?![かも])"
    r"|だれ(?![かも])|なぜ|何故|どう(?![ぞもか])|どれ|どの|どちら|どっち|いくつ|いくら"
)
_JA_SENTENCE_END: Final = re.compile(r"[。.!?\n]+")
#: Trailing decoration a sentence may carry after its last word (w is laughter: 草w).
_JA_TRAILER: Final = re.compile(r"[\s〜~ー♪w…・)」』]+$")


def _ja_sentences(text: str) -> list[str]:
    parts = (_JA_TRAILER.sub("", part.strip()) for part in _JA_SENTENCE_END.split(text))
    return [part for part in parts if part]


def _ja_asks_work(text: str) -> bool:
    if _JA_REQUEST.search(text):
        return True
    for sentence in _ja_sentences(text):
        if _JA_TE_END.search(sentence) and not _JA_NOT_TE.search(sentence):
            return True
        if _JA_WORK_NOUN.search(sentence):
            return True
    return False


def _ja_asks_info(lowered: str, info_free: str) -> bool:
    if info_free != lowered or _JA_QUESTION_WORD.search(lowered):
        return True
    return any(_JA_QUESTION_END.search(s) for s in _ja_sentences(lowered))
