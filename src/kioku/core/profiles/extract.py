"""The shared pieces of profile extraction: the claim record, keys, text preparation, word lists.

Spec 003 §6 (ユーザープロファイル管理) keeps a profile per user: preferences with counts and
facts about the person. :func:`kioku.core.profiles.extract_profile_claims` reads ONE utterance
and returns the explicit first-person statements in it as :class:`ProfileClaim` records; the
English and Japanese patterns live in :mod:`~kioku.core.profiles.extract_en` (its rule table in
:mod:`~kioku.core.profiles.extract_en_rules`) and :mod:`~kioku.core.profiles.extract_ja`, and what
they share is here.

Only the first :data:`SCAN_LIMIT` characters are read, quoted speech is blanked out before any
pattern sees it, and the scanners report :data:`Found` tuples whose offsets point into the
original text, so the evidence of a claim is always a verbatim slice of what was said.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal

from kioku.errors import ValidationError
from kioku.records import Record

__all__ = [
    "FACT_KEYS",
    "SCAN_LIMIT",
    "ClaimKind",
    "Found",
    "ProfileClaim",
    "normalise_topic",
    "prepare",
    "sentences",
]

ClaimKind = Literal["preference", "fact"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: (kind, key, value, polarity, start, end, confidence): what a scanner found. ``key`` is empty
#: for a preference (derived from the value later); ``start:end`` is the evidence span.
Found = tuple[str, str, str, int, int, int, float]

#: The closed set of fact keys. ``residence`` is where the speaker lives now, ``origin`` where
#: they come from or grew up, ``occupation`` what they do for a living, ``employer`` where or
#: for whom they work, ``age`` a number of years, ``birthday`` a date (or a year of birth),
#: ``family`` a spouse, partner, child or sibling (with a count when given: "two kids",
#: 「子供二人」) or "married", ``pet`` an animal they keep ("dog named Biscuit", 「猫2匹」),
#: ``language`` one language they speak, ``allergy`` what they are allergic to, ``diet`` a way
#: of eating (vegetarian, vegan, lactose intolerant).
FACT_KEYS: Final = _words(
    "name residence origin occupation employer age birthday family pet language allergy diet"
)

#: Only this many leading characters of an utterance are read.
SCAN_LIMIT: Final = 4000

_ARTICLE = re.compile(r"^(?:a|an|the)\s+")
_EDGE = re.compile(r"^[\s\"'“”「」『』()（）\[\]]+|[\s\"'“”「」『』()（）\[\].,!?。、！？]+$")
# Straight and curly double quotes, and Japanese brackets; single quotes are apostrophes.
_QUOTE = re.compile(r'"[^"\n]{0,400}"|“[^”\n]{0,400}”|「[^「」\n]{0,400}」|『[^『』\n]{0,400}』')
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|my|me)\b|私|僕|俺|わたし", re.IGNORECASE)
# A bracketed Japanese span followed by these is a quotation, not a title used as a noun; so is
# one that ends like a sentence (in kana or punctuation) and is followed by って or と.
_QUOTED_BY = re.compile(r"\s*(?:って|と(?:言|い|思|聞)|て言)")
_SAID = re.compile(r"[\u3041-\u3096。！？!?]$")
_BREAK = re.compile(r"[.!?;]+(?=\s|$)|[!?;\n。！？]+")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProfileClaim(Record):
    """One statement a speaker made about themselves.

    ``kind`` is ``preference`` (``key`` is the normalised topic, ``polarity`` +1 for a like
    and -1 for a dislike) or ``fact`` (``key`` is one of :data:`FACT_KEYS`, ``polarity`` 0).
    ``value`` is the topic or fact as the speaker wrote it, ``evidence`` the matched span of
    the utterance, verbatim, and ``confidence`` how reliable the pattern that matched is:
    close to 1 for "my name is X", lower for looser phrasings. ``speaker`` is whoever said it,
    when the caller knows, so a profile can count mentions per speaker.
    """

    kind: ClaimKind
    key: str
    value: str
    polarity: int
    evidence: str
    confidence: float
    speaker: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("preference", "fact"):
            raise ValidationError("kind", self.kind, "preference or fact")
        if self.kind == "fact" and self.key not in FACT_KEYS:
            raise ValidationError("key", self.key, "one of " + ", ".join(sorted(FACT_KEYS)))
        allowed = (0,) if self.kind == "fact" else (-1, 1)
        if self.polarity not in allowed:
            raise ValidationError("polarity", self.polarity, " or ".join(map(str, allowed)))
        if not (self.key.strip() and self.value.strip() and self.evidence.strip()):
            raise ValidationError("value", self.value, "a non-empty key, value and evidence")
        if not 0.0 < self.confidence <= 1.0:
            raise ValidationError("confidence", self.confidence, "a number in (0, 1]")


def normalise_topic(value: str) -> str:
    """The key of a preference: NFKC, lower case, quotes and brackets and a leading article
    dropped, whitespace collapsed, so "The Beatles" and "the beatles" count as one topic."""
    text = clean_value(unicodedata.normalize("NFKC", value).lower())
    text = " ".join(text.split())
    return _ARTICLE.sub("", text)


def clean_value(value: str) -> str:
    """A value without surrounding whitespace, quotes or trailing punctuation, and without
    Japanese brackets (「ワンピース」と「ナルト」: ワンピースとナルト)."""
    return _EDGE.sub("", re.sub(r"[「」『』]", "", value))


def prepare(text: str) -> str:
    """The scanned text: the first :data:`SCAN_LIMIT` characters, curly apostrophes
    straightened and quoted speech blanked out by line breaks (which end a sentence), so
    offsets still point into the original.

    A quoted span is kept when it reads like a title used as a noun: a short English quote
    without a first-person word, or Japanese brackets not followed by って/と
    (「ワンピース」が好き).
    """
    head = text[:SCAN_LIMIT].replace("’", "'").replace("‘", "'")
    chars: list[str] | None = None  # made when the first quote is blanked out
    for m in _QUOTE.finditer(head):
        inner = m.group()[1:-1]
        if m.group()[0] in "「『":
            after = head[m.end() : m.end() + 1]
            keep = not _QUOTED_BY.match(head, m.end()) and not (
                after in ("っ", "と") and _SAID.search(inner)
            )
        else:
            keep = len(inner.split()) <= 4 and not _FIRST_PERSON.search(inner)
        if not keep:
            if chars is None:
                chars = list(head)
            chars[m.start() : m.end()] = "\n" * (m.end() - m.start())
    return head if chars is None else "".join(chars)


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each sentence of ``text``, its closing punctuation included.

    A full stop ends a sentence only before a space or the end ("3.5", "e.g" stay whole);
    ``! ? ;``, line breaks and the Japanese 。！？ always do.
    """
    start = 0
    for m in _BREAK.finditer(text):
        yield start, m.end()
        start = m.end()
    if start < len(text):
        yield start, len(text)


#: English word lists. Words that cannot start a value: they point at the conversation or at
#: nothing in particular ("I love it", "I like how ...", "I like that idea").
EN_BAD_START: Final = _words(
    "it its it's this that these those them they him her his hers you your yours u ur me "
    "myself us our what how when where why who which whatever whoever everything anything "
    "something nothing everyone everybody anyone someone all some any such so there here "
    "to not no more less most much many very too being idea way one ones think say believe "
    "imagine hear see know mention ask add point keep"
)
#: The addressee: a value that mentions them is about the conversation, not the speaker.
EN_SECOND: Final = _words("you your yours u ur you're youre ya y'all yall")
#: Loving one's family is not a topic preference (the relation itself is a family fact).
EN_PEOPLE: Final = _words(
    "guys people everyone family wife husband mom dad mum mother father parents friend "
    "friends boyfriend girlfriend partner kids son daughter brother sister team"
)
#: "my favourite part/scene is ..." reacts to something just seen; it is not a preference.
EN_REACTION: Final = _words("part scene bit moment episode line thing one person")
EN_NOT_NAME: Final = _words(
    "not a an the so just here back later tomorrow tonight anytime anything sometime whenever "
    "when if at on in crazy old and but please now maybe sure new fine good ok okay sorry "
    "glad happy tired home from"
)
EN_NATIONAL: Final = _words(
    "american canadian british australian mexican brazilian indian african asian european "
    "irish scottish egyptian nigerian kenyan latino latina"
)
EN_LANGUAGES: Final = _words(
    "english japanese spanish french german italian portuguese chinese mandarin cantonese "
    "korean russian arabic hindi bengali urdu punjabi tamil telugu vietnamese thai indonesian "
    "malay tagalog filipino dutch swedish norwegian danish finnish polish czech greek turkish "
    "hebrew persian farsi swahili ukrainian romanian hungarian catalan welsh irish latin"
)
#: Head nouns of occupations: "I'm a X" is a job only when X ends in one of these.
EN_OCCUPATIONS: Final = _words(
    "nurse teacher doctor physician surgeon dentist engineer developer programmer coder "
    "designer lawyer attorney paralegal accountant bookkeeper architect chef cook baker "
    "barista bartender waiter waitress cashier student undergrad professor lecturer tutor "
    "researcher scientist writer author novelist journalist reporter editor artist "
    "illustrator animator musician composer photographer pharmacist therapist psychologist "
    "psychiatrist counselor counsellor paramedic firefighter pilot mechanic electrician "
    "plumber carpenter farmer manager consultant analyst librarian translator interpreter "
    "realtor recruiter veterinarian vet freelancer contractor intern nanny caregiver driver "
    "secretary clerk dev entrepreneur founder ceo cto cop soldier sailor janitor hairdresser "
    "barber stylist economist statistician mathematician physicist chemist biologist banker "
    "trader broker actor actress dancer singer streamer pastor priest midwife optometrist "
    "technician welder teller salesman saleswoman salesperson retiree homemaker housewife "
    "auditor lifeguard coach trainer instructor principal postdoc officer"
)
#: "worker" is a job only after one of these ("social worker", not "hard worker").
EN_WORKER_KINDS: Final = _words("social office factory care construction farm healthcare aid")
#: Judging words: "I'm a terrible cook" is a self-assessment, not a job.
EN_JUDGED: Final = _words(
    "good great bad terrible horrible decent awful amazing excellent better best worse worst "
    "lousy natural born big huge real total wannabe aspiring future former ex failed amateur "
    "hobby frustrated lazy messy picky fussy crazy"
)
#: "I live in fear", "I live in the moment": not places.
EN_NOT_PLACE: Final = _words(
    "home here there fear hope peace denial city town country countryside suburbs area "
    "apartment house flat dorm van car moment present past future middle world same work "
    "school class church college uni university office outside abroad overseas nowhere "
    "somewhere everywhere around out back"
)
EN_NOT_EMPLOYER: Final = _words(
    "home night nights weekends myself me it them you living free minimum peanuts money hours "
    "fun lunch moment least all some my your his her their our this that heart"
)
EN_NOT_ALLERGEN: Final = _words("seasonal food severe mild bad some many lots no any")
#: Adverbs that may sit between "I" and the verb ("I really like", "I just moved").
EN_ADVERBS: Final = (
    r"(?:really|realy|rly|rlly|also|just|actually|totally|absolutely|truly|genuinely|"
    r"honestly|seriously|literally|still|do|definitely|def|kinda|kind\s+of|sort\s+of|pretty\s+"
    r"much|especially|generally|always|lowkey|personally|so+|deeply|secretly|mostly|currently|"
    r"now|already|finally|recently|certainly|too)"
)
EN_KIN_ADJECTIVES: Final = r"(?:little|older|younger|big|baby|eldest|oldest|youngest|twin|teenage)"
#: Family members (the speaker's, after "I have" or "my").
EN_FAMILY: Final = (
    r"kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|twins|wife|husband|"
    r"partner|fianc[ée]e?|boyfriend|girlfriend|grandkids?|grandchildren|baby|boys|girls"
)
#: Words before a match that make it unreal: a condition, a wish, a past habit, a question.
EN_UNREAL: Final = (
    r"if|unless|suppose|supposing|imagine|wish|pretend|hypothetically|would|could|might|"
    r"whether|maybe|perhaps|someday|used\s+to|back\s+when|as\s+a\s+(?:kid|child|teen)|"
    r"when\s+i\s+was|(?:do|does|did|are|is|can|will|have|has)\s+(?:you|u|we|they|he|she)"
)
EN_PETS: Final = (
    r"dogs?|cats?|pupp(?:y|ies)|kittens?|rabbits?|bunn(?:y|ies)|hamsters?|parrots?|birds?|"
    r"goldfish|fish|turtles?|tortoises?|snakes?|lizards?|geckos?|guinea\s+pigs?|ferrets?|"
    r"horses?|chickens?|doggos?"
)

#: Japanese word lists. Occupations said as 「Xをしています」「Xです」; other words ending in
#: 師・士・員・医・官・家 count too, except :data:`JA_NOT_OCCUPATION`.
JA_OCCUPATIONS: Final = _words(
    "エンジニア デザイナー プログラマー 学生 大学生 高校生 中学生 大学院生 主婦 主夫 専業主婦 "
    "フリーランス フリーター 営業 事務 経営者 社長 研究者 記者 作家 漫画家 画家 料理人 シェフ "
    "パティシエ 店長 医者 歯医者 獣医 農家 大工 自営業 通訳 コンサルタント マネージャー ライター "
    "カメラマン ミュージシャン 俳優 声優 歌手 無職 会社員 公務員 看護師 教師"
)
JA_NOT_OCCUPATION: Final = _words("会員 委員 部員 全員 定員 満員 紳士 戦士 同士 実家 一軒家")
#: Places and ways of working: 「東京で働いています」 says where, not for whom.
JA_NOT_EMPLOYER: Final = _words(
    "東京 大阪 京都 名古屋 横浜 福岡 札幌 神戸 仙台 広島 北海道 沖縄 渋谷 新宿 池袋 品川 梅田 "
    "博多 日本 海外 地元 都内 都心 アメリカ イギリス フランス ドイツ 中国 韓国 台湾 カナダ "
    "オーストラリア 在宅 自宅 家 現場 近所 リモート テレワーク"
)
#: Homes that are not places: 「実家に住んでいる」 says nothing about the city.
JA_NOT_HOME: Final = _words(
    "実家 家 自宅 寮 社宅 近く 近所 隣 田舎 都会 海外 一人 ここ そこ アパート マンション "
    "一軒家 シェアハウス"
)
JA_NOT_LANGUAGE: Final = _words("敬語 標準語 外国語 言語 単語 物語 共通語 母国語")
#: Allergens written in hiragana (the rest are caught as runs of kanji and katakana).
JA_ALLERGENS: Final = ("そば", "えび", "かに", "ごま", "くるみ", "たまご", "さば")
JA_PETS: Final = (
    r"(?:猫|ねこ|ネコ|犬|いぬ|イヌ|わんこ|ワンコ|にゃんこ|ニャンコ|うさぎ|ウサギ|ハムスター|"
    r"インコ|金魚|カメ|亀|柴犬)"
)
#: One's own family: 妻 and 息子 are the speaker's (someone else's are 奥さん, 息子さん).
JA_KIN: Final = (
    r"(?:妻|夫|嫁|旦那|主人|息子|娘|子供|子ども|兄弟|姉妹|兄|姉|弟|妹|彼氏|婚約者|孫|双子)"
)
#: Verbs that report someone's view: "she says I ...", "everyone thinks I'm ...".
EN_REPORTING: Final = (
    r"say|says|said|think|thinks|thought|assumes?|assumed|believes?|believed|claims?|claimed|"
    r"told|tells?|pretends?|pretended|jokes?|joked|guess(?:es|ed)?|heard|hears|swears?|swore|"
    r"insists?|insisted|wrote|writes|asked|asks|knows?|figured?|means?"
)
#: Words that end a value: a new clause, filler, a time ("now", "last year"), company ("with").
EN_BREAKS: Final = (
    r"but|because|cause|cuz|coz|since|so|though|tho|although|when|whenever|while|whereas|which|"
    r"who|whom|where|if|unless|until|till|than|lol|lmao|haha\w*|hehe\w*|btw|tbh|imo|idk|rn|"
    r"honestly|eh|now|nowadays|lately|recently|currently|anymore|these\s+days|right\s+now|"
    r"at\s+the\s+moment|for\s+now|last|ago|every\s+(?:day|week|morning|night|time)|this\s+"
    r"(?:week|month|year|summer|winter|weekend|morning)|next|as\s+well|with|and\s+(?:i|i'm|im|"
    r"i've|it|it's|we|they|he|she|you|that|this|so|then|also|my)|or\s+(?:i|something|whatever|"
    r"so)|for\s+(?:my|our|the|a|an|his|her|their|work|fun|me|us|them|him|you|years|months|\d+|"
    r"two|three|four|five|ten)|on\s+(?:weekends|weekdays|sundays|saturdays|the\s+weekends?)|"
    r"at\s+all|too|a\s+lot|so\s+much|very\s+much"
)
#: Adverbs and time words that are not part of a Japanese topic (やっぱり夏が一番好き: 夏).
JA_ADVERBS: Final = (
    r"(?:ちょっと|本当に|ほんとに|ほんと|とても|すごく|すっごく|めっちゃ|めちゃくちゃ|めちゃ|"
    r"結構|けっこう|かなり|一番|いちばん|特に|割と|わりと|普通に|あまり|あんまり|そんなに|全然|"
    r"超|マジで|まじで|意外と|昔から|ずっと|やっぱり|やっぱ|実は|最近|今は|今|正直|本当は|"
    r"基本的に|基本|もともと|元々|心から|完全に|すっかり|でも|まあ)"
)
#: Other people, who as a topic make a statement theirs rather than the speaker's.
JA_PEOPLE: Final = (
    r"(?:彼女|彼氏|彼|友達|友人|妻|夫|嫁|旦那|主人|息子|娘|兄|姉|弟|妹|母親|父親|母|父|両親|"
    r"親|家族|子供|子ども|(?<![\u4e00-\u9fff])子|祖母|祖父|上司|同僚|先輩|後輩|先生|みんな|皆|"
    r"あなた|君|きみ|お前|あいつ|人|[^\s、。！？]{1,8}?(?:さん|ちゃん|くん|様|氏))(?:たち|達|ら)?"
)
