"""How negation and other sense-changing endings attach to a Japanese emotion word.

A stem's form (see :data:`lexicon.JA_FORMS`) decides which endings negate it: 嬉し + くない,
好き + じゃない, 疲れ + ない, 喜ば + ない, 喜べ + ない, 喜ん + でない. Looking only at the text
right after the match keeps this identical with or without a morphological analyser.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ADJ_INFLECTION",
    "PERMISSION_WORDS",
    "conditional_after",
    "conditional_before",
    "is_negated",
    "permission_before",
]

_ADJ_NEG: Final = (
    "くない",
    "くなかっ",
    "くなく",
    "くありません",
    "くはない",
    "くはなかっ",
    "くもない",
    "くもなかっ",
    "くねー",
    "くねえ",
    "くなさそう",
    "くもなんともない",
)
_NA_NEG: Final = (
    "じゃない",
    "じゃなかっ",
    "じゃなく",
    "じゃあない",
    "じゃありません",
    "じゃねー",
    "じゃねえ",
    "ではない",
    "ではなかっ",
    "ではなく",
    "ではありません",
    "でない",
    "でもない",
    "でもなかっ",
    "できない",
    "できなかっ",
    "できず",
    "できません",
    "出来ない",
    "出来なかっ",
    "しない",
    "しなかっ",
    "せず",
    "しません",
    "しなくて",
    "されない",
    "したくない",
    "したくなかっ",
    "にならない",
    "にはならない",
    "になれない",
    "になれなかっ",
    "がない",
    "がなかっ",
    # Something hoped for that did not come: 「おめでとうが来なかった」, 「返事がもらえない」.
    "が来な",
    "がこな",
    "が届かな",
    "がもらえな",
    "をもらえな",
    "はもらえな",
    "がなく",
    "がありません",
    "はない",
    "はなかっ",
    "もない",
    "もなかっ",
    "ない",
    "なかっ",
    "なんかない",
    "なんてない",
)
_V1_NEG: Final = (
    "たくない",
    "たくなかっ",
    "ない",
    "なかっ",
    "なく",
    "ず",
    "ません",
    "られない",
    "られなかっ",
    "れない",
    "れなかっ",
    "ていない",
    "てない",
    "ていなかっ",
    "てなかっ",
    "てません",
    "ていません",
)
_V5A_NEG: Final = ("ない", "なかっ", "なく", "ず", "ねー", "ねえ")
_V5E_NEG: Final = ("ない", "なかっ", "なく", "ず", "ません")
_V5I_NEG: Final = ("ません", "たくない", "たくなかっ")
_V5TE_NEG: Final = (
    "てない",
    "でない",
    "ていない",
    "でいない",
    "てなかっ",
    "でなかっ",
    "ていなかっ",
    "でいなかっ",
    "てません",
    "でません",
    "ていません",
    "でいません",
)
_BY_FORM: Final = {
    "adj": _ADJ_NEG,
    "na": _NA_NEG,
    "v1": _V1_NEG,
    "v5a": _V5A_NEG,
    "v5e": _V5E_NEG,
    "v5i": _V5I_NEG,
    "v5te": _V5TE_NEG,
}
# "It's not that …", "I don't think it's …": negate whatever form came before.
_DISTANT_NEG: Final = ("わけじゃない", "わけではない", "訳じゃない", "とは思わない", "とは限らない")

#: What may follow an adjective stem: 嬉し|い, く, かっ, けれ, さ, そう, すぎ; or punctuation.
ADJ_INFLECTION: Final = frozenset("いくかけさそすぎ")


def is_negated(text: str, end: int, form: str) -> bool:
    """True when the word ending at ``end`` (in normalised text) is negated."""
    endings = _BY_FORM.get(form)
    if endings is not None and text.startswith(endings, end):
        return True
    window = text[end : end + 12]
    for stop in "。!?、,.\n":
        cut = window.find(stop)
        if cut >= 0:
            window = window[:cut]
    return any(neg in window for neg in _DISTANT_NEG)


_COND_BEFORE: Final = ("えると", "れると", "もらえたら", "くれたら", "いただけたら", "頂けたら")
# いい/良い after ば, ても, で … is permission or advice (「どうすればいい？」), not praise.
_PERMISSION_BEFORE: Final = (
    "ば",
    "ても",
    "でも",
    "なくて",
    "くて",
    "で",
    "たら",
    "方が",
    "ほうが",
    "のが",
)
PERMISSION_WORDS: Final = frozenset({"いい", "良い", "よい", "大丈夫", "いいの", "いいか"})
_COND_AFTER: Final = (
    "したら",
    "すれば",
    "しても",
    "なら",
    "だったら",
    "ったら",
    "たら",
    "れば",
    "だと",
    "時は",
    "ときは",
    "の時",
    "のとき",
    "の場合",
    "した場合",
    "する場合",
    "時の",
    "ときの",
)


def conditional_before(text: str, start: int) -> bool:
    """``…してもらえると嬉しい``: a polite or hypothetical frame before the word."""
    return text[max(0, start - 4) : start].endswith(_COND_BEFORE)


def permission_before(text: str, start: int) -> bool:
    """``どうすればいい``, ``なくていい``: いい as permission or advice."""
    return text[max(0, start - 3) : start].endswith(_PERMISSION_BEFORE)


def conditional_after(text: str, end: int, form: str) -> bool:
    """``失敗したら``, ``エラーの場合``: the word names a hypothetical, not a feeling."""
    if form in ("v5a", "v5i", "v5e", "v5te", "v1", "adj"):
        rest = text[end : end + 4]
        return rest.startswith(("たら", "ったら", "だら", "れば", "ければ", "かったら", "くても"))
    return text.startswith(_COND_AFTER, end)
