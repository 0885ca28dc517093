"""Explicit Japanese irony: praise said right after a mishap.

「テスト落ちた。さすがだね（笑）」, 「財布なくした。最高だわ」, 「電車止まった、さすが」:
a word of praise that opens its clause, in a spoken form (さすが, 最高だわ, 完璧なタイミング,
お見事), read right after a clause that reports something going wrong, means the opposite.
Laughter closing that clause (（笑）, ｗ) belongs to the irony, not to joy. Plain praise
(「さすが！助かった」) follows no mishap; praise after a contrast (「大変だったけど、最高だった」)
or after help (「バグ直してくれた、さすが」) is sincere and stays as it is. Praise before a
failure told as cheerful routine (「さすが…、今日も元気にエラー吐いてる」) is ironic too.
(棒) is handled as a sarcasm marker of the whole turn elsewhere.

Patterns work on the folded text (NFKC, lower case, katakana as hiragana).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["ironic_spans", "mocks_oneself"]

_CLAUSE: Final = re.compile(r"[^。、,.!?…\s]+[。、,.!?…\s]*")
#: Praise opening a clause, after an optional filler (いやー, はいはい, ほんと).
_PRAISE: Final = re.compile(
    r"^(?:(?:いや[ー~ぁあ]*|はいはい|ほんと(?:に)?|本当に|まじで)[、,\s]*)?"
    r"(?:さすが(?!に)|流石(?!に)|最高(?:だわ|だな|だね|だよ|かよ|じゃん|すぎ|です(?:ね|わ))"
    r"|完璧(?:なたいみんぐ|だね|だわ|じゃん|すぎ)|素晴らしい(?:ね|わ|です)|すばらしい(?:ね|わ)"
    r"|すごいね|すごいわ|お見事|天才(?:か|だね)|ついてる(?:ね|な|わ)|ありがたい(?:ね|わ)"
    r"|いいね|よかったね|おめでとう(?:ございます)?|ありがたい(?:ことで|こった)"
    r"|(?:楽しい|たのしい)(?:なあ|なー|ね|わ|です(?:ね|わ))|いい一日(?:だった)?(?:わ|よ|ね|な|です))"
)
#: Something going wrong, told as a past event (落ちた, なくした), or a recurring nuisance
#: (また仕様変更, 遅延).
_MISHAP: Final = re.compile(
    r"(?:落ち|落とし|なくし|無くし|失くし|忘れ|壊れ|壊し|止まっ|遅れ|遅刻し|寝坊し|失敗し|間違え"
    r"|消え|こぼし|割れ|割っ|乗り遅れ|振られ|ふられ|落選し|故障し|詰ん|やらかし|しくじっ|みすっ"
    r"|転ん|迷っ|切れ|外れ|ばれ|怒られ|落とされ|断られ|取られ|盗まれ|踏まれ|待たされ|追い返され"
    r"|暴落し|傷をつけ|決まらなかっ|分からなくなっ|わからなくなっ)"
    r"(?:た|てた|ちゃった|じゃった|てる|ました|てしまった|て(?:きて)?(?=[、,]))"
    r"|また(?:ばぐ|えらー|仕様変更|残業|休日出勤|障害|延期|中止|遅延|どたきゃん|雨|落ち|ふりーず)"
    r"|(?:今日も|きょうも)(?:残業|休日出勤|終電|徹夜)"
    r"|遅延|渋滞|停電|炎上|どたきゃん|休日出勤|仕様変更|最悪|ついてない|うんざり|暴落|土砂降り|故障"
    # A nuisance from others in public (「電車でずっとスピーカーで動画流してる。いいね」).
    r"|すぴーかーで|音漏れ|大音量|割り込|横入り|順番抜かし|騒音|値上げ|値上がり"
    # 〜のに: an expectation let down (「雨予報ゼロだったのに土砂降り」).
    r"|のに"
)
#: Help or a good turn since the mishap makes the praise sincere
#: (「財布落とした。交番に届いてた。最高！」).
_KINDNESS: Final = re.compile(
    r"くれ|もらっ|いただ|直っ|直し|解決|助け|助か|治っ|見つか|届い|戻っ|返ってき|間に合|無事|よかっ"
)
#: A contrast before the praise turns the sentence round sincerely (「けど、最高だった」).
_CONTRAST: Final = re.compile(r"けど|けれど|が$|でも|しかし")
#: Praise that is ironic anywhere in a sentence told after a mishap
#: (「…追い返された。さすがお役所」).
_OVERT: Final = re.compile(
    r"さすが(?!に)|流石(?!に)|素晴らしい|すばらしい|最高(?!に)|完璧|天才|大ひっと|お見事"
    r"|期待を裏切らない|感謝して(?:ます|る|います)|ありがとうございました"
)
_FILLER: Final = re.compile(r"(?:いや[ー~ぁあ]*|はいはい|ほんと(?:に)?|本当に|まじで)[、,\s]*")
_LAUGH_TAIL: Final = re.compile(r"\(笑\)|笑+|w+|草")


def _overt_after_mishap(clauses: list[tuple[int, int, str]], i: int) -> int | None:
    """Where overt praise starts in clause ``i`` when an earlier sentence told a mishap."""
    start, _, text = clauses[i]
    praise = _OVERT.search(text)
    if praise is None:
        return None
    before = text[: praise.start()]
    if _KINDNESS.search(before) or _CONTRAST.search(before):
        return None
    # The mishap must lie in an earlier sentence, with no kindness or contrast since.
    seen_end = False
    for j in range(i - 1, -1, -1):
        body = clauses[j][2]
        if re.search(r"[。.!?]", body):
            seen_end = True
        if _KINDNESS.search(body) or _CONTRAST.search(body.rstrip("。、,.!?… ")):
            return None
        if seen_end and _MISHAP.search(body):
            return start + praise.start()
    return None


#: 「おかげで」 leading to something going wrong: 「その回答のおかげでさらに分からなくなった」.
_THANKS_TO_MISHAP: Final = re.compile(r"おかげで[^。.!?]{0,30}?(?:" + _MISHAP.pattern + ")")
#: Praise, then a failure told as cheerful routine:
#: 「さすが天下の外部API、今日も元気に500を返してくれてる」.
_CHEERFUL_FAILURE: Final = re.compile(
    r"(?:さすが|流石|いいね|素晴らしい)[^。.!?]{0,30}?(?:今日も|きょうも|相変わらず)(?:元気に)?"
    r"[^。.!?]{0,12}?(?:えらー|ばぐ|落ち|止ま|遅れ|遅延|[45]\d\d|だうん|障害)"
)


#: Every span :func:`ironic_spans` finds holds one of these (the words of :data:`_PRAISE`,
#: :data:`_OVERT`, :data:`_CHEERFUL_FAILURE` and :data:`_THANKS_TO_MISHAP`).
_PRAISE_WORDS: Final = (
    *("おかげで", "さすが", "流石", "いいね", "素晴らしい", "すばらしい", "最高", "完璧"),
    *("すごいね", "すごいわ", "お見事", "天才", "ついてる", "ありがたい", "よかったね"),
    *("楽しいな", "楽しいね", "楽しいわ", "楽しいで", "たのしいな", "たのしいね", "たのしいわ"),
    *("たのしいで", "いい一日"),
    *("おめでとう", "大ひっと", "期待を裏切らない", "感謝して", "ありがとうございました"),
)

_ANY_PRAISE_WORD: Final = re.compile("|".join(map(re.escape, _PRAISE_WORDS)))


def ironic_spans(folded: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each ironic praise clause, with the laughter that closes it."""
    if _ANY_PRAISE_WORD.search(folded) is None:
        return ()
    clauses = [(m.start(), m.end(), m.group()) for m in _CLAUSE.finditer(folded)]
    spans = [(m.start(), m.end()) for m in _THANKS_TO_MISHAP.finditer(folded)]
    spans += [(m.start(), m.end()) for m in _CHEERFUL_FAILURE.finditer(folded)]
    for i in range(1, len(clauses)):
        start, end, text = clauses[i]
        if _FILLER.fullmatch(text) and i + 1 < len(clauses):
            text += clauses[i + 1][2]
        prev = clauses[i - 1][2].rstrip("。、,.!?… ")
        if _PRAISE.match(text) is None or (
            not _MISHAP.search(prev) or _KINDNESS.search(prev) or _CONTRAST.search(prev)
        ):
            found = _overt_after_mishap(clauses, i)
            if found is None:
                continue
            start = found
        # The irony runs to the end of the sentence, laughter included.
        stop = end
        j = i + 1
        while j < len(clauses) and not re.search(r"[。.!?]", clauses[j - 1][2]):
            stop = clauses[j][1]
            j += 1
        tail = _LAUGH_TAIL.match(folded, stop)
        spans.append((start, tail.end() if tail else stop))
    return tuple(spans)


#: The speaker named in the ironic praise or just before it
#: (「さすが私」, 「また寝坊した私。天才かな？」).
_SELF: Final = re.compile(r"私|わたし|あたし|自分|俺|おれ|僕|ぼく|うち(?=[、,\sもはがっ])")


def mocks_oneself(folded: str, spans: tuple[tuple[int, int], ...]) -> bool:
    """Whether ironic praise mocks the speaker (named in it or in the 12 characters before it)."""
    return any(_SELF.search(folded, max(0, start - 12), end) for start, end in spans)
