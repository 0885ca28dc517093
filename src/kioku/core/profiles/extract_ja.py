"""Japanese patterns for profile claims (see :mod:`kioku.core.profiles`).

Japanese drops the subject, so an unmarked statement is the speaker's: 「寿司が好き」 is theirs,
and so is 「妻が」 (one's own wife; someone else's is 奥さん). A claim is refused when someone
else is the topic (「母はコーヒーが好き」「田中さんは京都出身」: a person marked by は/って/も
anywhere before it in the sentence, or by が in its clause), when the sentence asks (？,
〜ですか) or supposes (もし, 仮に), and when the predicate goes on into a negation (じゃない;
for 好き that flips the polarity instead), the past (だった), a condition (なら, たら),
hearsay (らしい, みたい, って言ってた) or a noun it describes (「好きな人」「住んでいる友達」).

Values are the noun before the particle: for places, employers, occupations and languages a
run of kanji, katakana and Latin letters; for preferences the whole phrase of the clause,
minus first-person topics and adverbs (やっぱり, 一番, ちょっと). Values over 20 characters
are refused.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import Final

from kioku.core.profiles import extract as lex
from kioku.core.profiles.extract import Found, sentences

__all__ = ["scan"]

#: A sentence without kana or kanji is not read.
_KANA_KANJI: Final = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_STRONG: Final = r"[\u4e00-\u9fff\u3005\u30f6\u30a1-\u30fa\u30fc\u30fbA-Za-z0-9０-９Ａ-Ｚａ-ｚ]"
_IS_STRONG = re.compile(_STRONG)
#: How many characters before a match are read to judge whose statement it is.
_CONTEXT: Final = 160
_ME: Final = r"(?:私|わたし|わたくし|僕|ぼく|俺|おれ|自分|あたし)"
_PERSON: Final = lex.JA_PEOPLE
_TOPIC_MARK = re.compile(r"(" + _ME + r"|" + _PERSON + r")(?:は|って|も)")
_CLAUSE_SUBJECT = re.compile(_PERSON + r"が")
_ADVERB: Final = lex.JA_ADVERBS
_ADVERB_END = re.compile(_ADVERB + r"[、]?$")
_LEAD = re.compile(r"^(?:" + _ME + r"(?:は|って|も|的には|、)?|" + _ADVERB + r"[、]?)")
_ASKS = re.compile(r"(?:ですか|ますか|でしょうか|かしら|っけ|のか)[。\s]*$")
_SUPPOSE = re.compile(r"もし|仮に|例えば|たとえば")
_TAG = re.compile(r"、[^、]{1,8}(?:は|も)[？?]+$")
_DESCRIBES = re.compile(
    r"(?!過)[\u4e00-\u9fff\u30a1-\u30fa]|ところ|とこ|ひと|もの|な(?![んのー〜!！。、…]|$)|なのは|"
    r"の[\u4e00-\u9fff\u30a1-\u30fa]"
)
_HEARSAY = re.compile(
    r"らしい|みたい|そう|っぽい|かも|だろう|でしょう|だって|って(?:言|い|聞)|と(?:言|い|思|聞)"
)
_UNREAL = re.compile(
    r"なら|だったら|でしたら|たら|であれば|だった|でした|やった|じゃなかった|ではなかった"
)
_NOT = re.compile(r"(?:じゃ|では|でわ)(?:な|あり)|になれ(?:ない|ません)|くない")
_LIKE = re.compile(r"(?<![お御])(大好き|大嫌い|好き|嫌い|すき|きらい|苦手|にがて)")
# An earlier predicate and its connective: 「猫が好きで犬が苦手」 has two topics.
_SAID_BEFORE = re.compile(
    r"(?:大?好き|大?嫌い|苦手|すき|きらい|にがて|ハマって|はまって)(?:だけど|ですが|だし|だが|けど|で|て|し)"
)
_HOOKED = re.compile(
    r"(?:ハマ|はま|嵌ま)(?:って(?:る|いる|ます|います|て)|り中|っちゃって(?:る|ます))"
)
_FAVOURITE = re.compile(
    r"(?:(?:一番|いちばん|特に|最も)?(?:大好き|好き|すき)な(?P<cat>[^\s、。！？!?]{1,10}?)|趣味)"
    r"(?:は|って)(?P<v>[^\s、。！？!?]{1,24}?)(?=です|だ(?!っ)|かな|ですね|だね|だよ|！|!|。|、|$|〜)"
)
_SIDE = re.compile(r"(?P<v>" + _STRONG + r"{1,8})派(?=です|だ|なんです|なので|。|！|!|、|$)")
_GREETING = re.compile(
    r"(?:(?:はじめまして|初めまして|こんにちは|どうも)、?|" + _ME + "(?:は|のことは))*"
)
_NOT_TOPIC: Final = frozenset(
    "それ これ あれ どれ 何 なに なん 誰 だれ どこ そこ ここ 全部 みんな 皆 私 僕 俺 自分 "
    "わたし あなた 君 きみ".split()
)
_DEICTIC = re.compile(
    r"^(?:この|その|あの|どの|こんな|そんな|あんな|こういう|そういう)|あなた|君の|お前"
)
_LANG: Final = r"[\u4e00-\u9fff\u30a1-\u30fa\u30fc]{1,8}語"
_COUNTED = re.compile(r"(?:[0-9０-９]+|[一二三四五六七八九十]+)(?:人|匹|羽|頭)|ひとり|ふたり")
_KIN_LEFT = re.compile(
    r"(?:^|[、,\s]|(?:うち|" + _ME + r")の|歳の|[0-9０-９]の|と|実は|最近|今日|昨日|先日)$"
)

_PIECES: Final = {
    "{S}": _STRONG,
    "{ME}": _ME,
    "{LANG}": _LANG,
    "{N}": r"(?:[0-9０-９]+|[一二三四五六七八九十]+)",
    "{KIN}": lex.JA_KIN,
    "{PETS}": lex.JA_PETS,
    "{NOW}": r"(?:いる|る|います|ます|おります)",
    "{END}": r"(?:です|だ(?!っ|な)|で(?!は)|。|！|!|、|$|なん|っす|でございます)",
    "{WORD}": r"[^\s、。！？!?]",
}
#: Fact rules, one a line: key, confidence, pattern; an indented line continues the pattern
#: above. A pattern with a group ``v`` takes its value from it; otherwise the value is the
#: run of kanji, katakana and Latin letters just before the match.
_TABLE: Final = r"""
residence .85 (?:に|で)(?:住んで(?:{NOW}|て|いて)|暮らして(?:{NOW}|て))
residence .85 在住(?={END})
residence .75 (?:に|へ)引っ?越(?:して(?:きた|きました|きて)|しました|した(?![いらりろ]))
origin .85 の?出身(?={END})
origin .80 出身(?:地)?は(?P<v>{S}{1,12})(?={END})
origin .75 で生まれ(?:育ち|育った|育ちました|ました|た)
origin .75 生まれ(?:も育ちも)?(?={END})|育ち(?={END})
employer .70 (?:で|にて)(?:働いて|勤務して){NOW}
employer .85 に(?:勤めて|勤務して){NOW}
occupation .85 (?:を|として)?(?:やって|して|働いて){NOW}
occupation .80 (?:です|だよ|でございます)(?=。|！|!|、|$|よ|ね)
age .80 (?<![0-9０-９])(?P<v>[0-9０-９]{1,3}|[一二三四五六七八九十]{1,4})(?:歳|才)
    (?={END}|になりました|になった|になります)
birthday .85 誕生日は(?P<v>{WORD}{1,12}?)(?={END})
diet .85 (?P<v>ベジタリアン|ヴィーガン|ビーガン|菜食主義者?|ペスカタリアン)(?={END}|なので)
allergy .85 (?:に(?:対して)?)?アレルギー
    (?=が(?:ある|あります|あって|ひどい|出る)|持ち|{END}|なので)
allergy .75 (?P<v>花粉)症(?={END}|持ち|がひどい)
language .85 (?P<v>(?:{LANG}(?:と|や|、)){0,5}{LANG})(?:が|を|も|は)?
    (?:少し|ちょっと|すこし|ある程度|日常会話程度|流暢に|ペラペラ)?
    (?:話せ(?:ます|る)|しゃべれ(?:ます|る)|喋れ(?:ます|る)|話します|できます|ペラペラ)
language .85 (?:母国語|母語|第一言語)は(?P<v>{LANG})
name .95 名前は(?P<v>{WORD}{1,12}?)(?={END}|と申します|(?:と|って)(?:いい|言い)ます)
name .90 と申します
name .80 {ME}は(?P<v>{WORD}{1,10}?)(?:と|って)(?:いい|言い)ます
name .80 って呼んで(?:ください|下さい|ね|くれ|ほしい|欲しい)?(?=。|！|!|$|、|ね|よ)
family .80 (?P<v>{KIN})(?:が|は)?(?P<n>{N}人|ひとり|ふたり)(?:い(?:ます|る|て)|おります)
family .70 (?P<v>{KIN})(?=が|は|と|も|に|から|、|の(?=[^。！？]*家族))
pet .85 を(?P<n>{N}(?:匹|羽|頭))?飼って(?:{NOW}|て)
pet .70 (?:うちの|我が家の)(?P<v>{PETS})
"""


def _expand(pattern: str) -> str:
    for name, piece in _PIECES.items():
        pattern = pattern.replace(name, piece)
    return pattern


_FACTS: Final = tuple(
    (parts[0], float(parts[1]), re.compile(_expand(parts[2])))
    for rule in re.split(r"\n(?! )", _TABLE.strip())
    for parts in [re.sub(r"\n\s+", "", rule).split(maxsplit=2)]
)


def _statement(sentence: str) -> str | None:
    """The sentence to read (a closing 「、あなたは？」 dropped); None for a question or a
    supposition."""
    bare = re.sub(r"[^\w？?]+$", "", sentence)
    if bare.endswith(("？", "?")):
        tag = _TAG.search(bare)
        if tag is None:
            return None
        sentence = bare[: tag.start()]
    return None if _ASKS.search(bare) or _SUPPOSE.search(bare) else sentence


def _clause(s: str, pos: int) -> int:
    """Where the clause holding ``pos`` starts (after the last comma, at most
    :data:`_CONTEXT` characters back)."""
    floor = max(0, pos - _CONTEXT)
    return max(floor, *(s.rfind(mark, floor, pos) + 1 for mark in "、,，"))


def _run_back(s: str, end: int, floor: int) -> int:
    """Where the run of kanji, katakana and Latin letters ending at ``end`` starts."""
    start = end
    while start > floor and _IS_STRONG.match(s[start - 1]):
        start -= 1
    return start


class _Subjects:
    """Who the parts of one sentence are about, found once so each match is judged in O(log n).

    A person marked by は/って/も stays the topic until another topic is marked; a person
    marked by が is the subject of their clause only.
    """

    def __init__(self, s: str) -> None:
        marks = [(m.end(), not re.fullmatch(_ME, m.group(1))) for m in _TOPIC_MARK.finditer(s)]
        self._mark_ends = [end for end, _ in marks]
        self._mark_other = [other for _, other in marks]
        subjects = list(_CLAUSE_SUBJECT.finditer(s))
        self._subject_ends = [m.end() for m in subjects]
        self._subject_starts = [m.start() for m in subjects]

    def other(self, pos: int, clause: int) -> bool:
        """Whether someone other than the speaker is the subject of the text at ``pos``."""
        i = bisect_right(self._mark_ends, pos)
        if i and self._mark_other[i - 1] and self._mark_ends[i - 1] > pos - _CONTEXT:
            return True
        j = bisect_right(self._subject_ends, pos)
        return bool(j) and self._subject_starts[j - 1] >= clause


def _tail(rest: str) -> str:
    """How the predicate goes on: ``ok``, ``not`` (negated) or ``bad`` (past, supposed, heard
    from others, or describing a noun)."""
    if _DESCRIBES.match(rest) or _HEARSAY.match(rest) or _UNREAL.match(rest):
        return "bad"
    return "not" if _NOT.match(rest) else "ok"


def _topic(s: str, begin: int, end: int, particles: str) -> tuple[int, int] | None:
    """The topic phrase between ``begin`` and the particle before ``end``."""
    earlier = list(_SAID_BEFORE.finditer(s, begin, end))
    begin = earlier[-1].end() if earlier else begin
    left = s[begin:end]
    while trailing := _ADVERB_END.search(left):
        left = left[: trailing.start()]
    particle = re.search(r"(?:" + particles + r")$", left)
    if particle:
        left = left[: particle.start()]
    while (lead := _LEAD.match(left)) and lead.end():
        left, begin = left[lead.end() :], begin + lead.end()
    if not particle and not re.fullmatch(_STRONG + "+", left):
        return None
    if re.search(r"[うくすつぬむぶぐる](?:の|こと)$", left):
        left = left[: -2 if left.endswith("こと") else -1]
    if not 0 < len(left) <= 20 or left in _NOT_TOPIC or _DEICTIC.search(left):
        return None
    if re.search(_STRONG + "は", left) or re.match(_PERSON + "$", left):
        return None
    return begin, begin + len(left)


def _preferences(s: str, who: _Subjects) -> Iterator[tuple[int, int, int, int, float]]:
    """(start, end, evidence end, polarity, confidence) of each liked or disliked topic in
    sentence ``s``."""
    for m in _LIKE.finditer(s):
        polarity = 1 if m.group(1) in ("大好き", "好き", "すき") else -1
        how = _tail(s[m.end() :])
        if how == "bad" or (how == "not" and polarity < 0):
            continue
        clause = _clause(s, m.start())
        span = _topic(s, clause, m.start(), "のことが|が|は|も|って")
        if span and not who.other(m.start(), clause):
            yield span[0], span[1], m.end(), -polarity if how == "not" else polarity, 0.8
    for m in _HOOKED.finditer(s):
        clause = _clause(s, m.start())
        span = _topic(s, clause, m.start(), "には|に")
        if span and _tail(s[m.end() :]) == "ok" and not who.other(m.start(), clause):
            yield span[0], span[1], m.end(), 1, 0.75
    for m in _FAVOURITE.finditer(s):
        clause = _clause(s, m.start())
        lead = s[clause : m.start()]
        if m.group("cat") == "の" or not re.fullmatch(
            r"(?:" + _ME + r"の|" + _ADVERB + r")*", lead
        ):
            continue
        value = m.group("v")
        if value not in _NOT_TOPIC and not _DEICTIC.search(value) and len(value) <= 20:
            yield m.start("v"), m.end("v"), m.end(), 1, 0.85
    for m in _SIDE.finditer(s):
        clause = _clause(s, m.start())
        if _tail(s[m.end() :]) == "ok" and not who.other(m.start(), clause):
            yield m.start("v"), m.end("v"), m.end(), 1, 0.7


def _is_occupation(value: str) -> bool:
    """Whether ``value`` names a job: a listed word, or one ending in 師・士・員・医・官・家."""
    if value in lex.JA_OCCUPATIONS:
        return True
    return (
        value.endswith(("師", "士", "員", "医", "官", "家")) and value not in lex.JA_NOT_OCCUPATION
    )


def _fact(s: str, key: str, m: re.Match[str], a: int, b: int, clause: int) -> str | None:
    """The fact key the match stands for, or None when it is refused."""
    value, lead = s[a:b], s[clause:a]
    if key in ("name", "birthday") and m.group().startswith(("名前", "誕生日")):
        if not re.fullmatch(r"(?:" + _ME + r"の)?", s[clause : m.start()]):
            return None
        if key == "birthday" and (not re.search(r"[0-9０-９月日年]", value) or "来" in value):
            return None
    if key == "name" and (
        value in ("何", "なに", "秘密", "未定", "内緒")
        or re.search(r"まだ|ない$", value)
        or re.fullmatch(r"[\u3041-\u3096]", value)
    ):
        return None
    if key == "residence" and value in lex.JA_NOT_HOME:
        return None
    if key == "origin" and re.fullmatch(r"[0-9０-９]+年", value):
        return "birthday"
    if key == "employer" and (
        value in lex.JA_NOT_EMPLOYER or value.endswith(tuple("都府県市区町村州"))
    ):
        return None
    if key == "occupation":
        if not _is_occupation(value):
            return None
        if m.group().startswith(("です", "だ")) and not re.fullmatch(
            r"(?:" + _ME + r"(?:は|、)?|(?:仕事|職業)は)?", lead
        ):
            return None
    if key == "language" and value in lex.JA_NOT_LANGUAGE:
        return None
    if key == "family" and a > 0 and not _KIN_LEFT.search(s, max(0, a - 8), a):
        return None
    return key


def _facts(s: str, who: _Subjects) -> Iterator[tuple[str, int, int, int, float]]:
    """(key, value start, value end, evidence end, confidence) of each fact in sentence ``s``."""
    counted: set[int] = set()
    for key, confidence, pattern in _FACTS:
        for m in pattern.finditer(s):
            clause = _clause(s, m.start())
            groups = m.groupdict()
            if groups.get("v"):
                a, b = m.span("v")
            else:
                b = m.start()
                a = _run_back(s, b, clause)
                if key == "allergy" and a == b:
                    a = b - next((len(w) for w in lex.JA_ALLERGENS if s.endswith(w, clause, b)), 0)
                if key == "name":
                    lead = _GREETING.match(s, clause, b)
                    a = lead.end() if lead else clause
            if not 0 < b - a <= 20 or who.other(a, clause):
                continue
            mention = key == "family" or (key == "pet" and groups.get("v"))
            if not mention and _tail(s[m.end() :]) != "ok":
                continue
            if key == "family" and a in counted:
                continue
            fact = _fact(s, key, m, a, b, clause)
            if fact is None:
                continue
            if groups.get("n"):
                counted.add(a)
            if key == "language":
                for lang in re.finditer(_LANG, s[a:b]):
                    if lang.group() not in lex.JA_NOT_LANGUAGE:
                        yield fact, a + lang.start(), a + lang.end(), m.end(), confidence
                continue
            yield fact, a, b, m.end(), confidence


def scan(text: str) -> list[Found]:
    """The Japanese claims in ``text`` (already prepared: capped, quotes blanked out)."""
    found: list[Found] = []
    if not _KANA_KANJI.search(text):
        return found  # no sentence of it would be read
    for start, end in sentences(text):
        s = _statement(text[start:end])
        if s is None or not _KANA_KANJI.search(s):
            continue
        who = _Subjects(s)
        for a, b, stop, polarity, confidence in _preferences(s, who):
            last = start + max(b, stop)
            found.append(("preference", "", s[a:b], polarity, start + a, last, confidence))
        for key, a, b, stop, confidence in _facts(s, who):
            value = s[a:b]
            count = _COUNTED.search(s, b, stop)
            if key in ("family", "pet") and count:
                value += count.group()
            found.append(
                ("fact", key, value, 0, start + min(a, stop), start + max(b, stop), confidence)
            )
    return found
