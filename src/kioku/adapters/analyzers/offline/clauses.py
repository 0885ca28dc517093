"""Clause-level compression: shorter wording with the same names, numbers and feeling.

Used by the Level 1 → 2 summary when a sentence is kept but should be tighter: fillers go,
verbose reporting phrases become headline phrases (「という結論になり」→「と結論」,
「について質問された」→「の質問」, 「安心した」→「安心」), and clauses that carry no name, term,
number or feeling are dropped when the sentence has others that do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from .tokenize_ja import AUX, PARTICLE, SYMBOL, Segmenter

__all__ = ["Important", "compress_sentence_en", "compress_sentence_ja", "rewrite_en", "rewrite_ja"]

_JA_RULES: Final = (
    (
        re.compile(
            r"^(?:えーと|えっと|ええと|あの|あのー|まあ|まぁ|なんか|ちなみに|ついでに|実は|とりあえず)[、,\s]*"
        ),
        "",
    ),
    (re.compile(r"という結論(?:になり|になった|に至った|に達した|が出た|になりました)"), "と結論"),
    (re.compile(r"と結論(?:づけた|付けた|した|しました)"), "と結論"),
    (re.compile(r"について(?:の)?(?:質問|聞か)(?:された|れた|を受けた|されました)"), "の質問"),
    (
        re.compile(r"について(?:の)?(?:相談|意見を求め)(?:された|られた|を受けた|されました)"),
        "の相談",
    ),
    (re.compile(r"について(?:説明|解説)(?:した|しました)"), "の説明"),
    (re.compile(r"(?:することが|ことが)(?=でき)"), ""),
    (re.compile(r"(?<=[てで])しまっ(?=た)"), ""),
    (re.compile(r"しました(?=[。!?]?$)"), "した"),
    (re.compile(r"でした(?=[。!?]?$)"), "だった"),
    (re.compile(r"(?<=[たい])(?:のです|んです|のだ|んだ)(?=[。!?]?$)"), ""),
    (
        re.compile(
            r"(?<=[\u4e00-\u9fff\u30a1-\u30fa])(?:しました|した|しています|している|してる|します|する)(?=[。]?$)"
        ),
        "",
    ),
    (re.compile(r"[。.]+$"), ""),
)

_EN_RULES: Final = (
    (
        re.compile(
            r"\b(?:basically|actually|literally|honestly|just|really|very|quite|you know|i mean|"
            r"kind of|sort of|i think that|i think|i guess|so yeah)\b,?\s*",
            re.I,
        ),
        "",
    ),
    (re.compile(r"\bin order to\b", re.I), "to"),
    (re.compile(r"\bdue to the fact that\b", re.I), "because"),
    (re.compile(r"\ba lot of\b", re.I), "many"),
    (re.compile(r"\bat this point in time\b", re.I), "now"),
    (re.compile(r"\bwas able to\b", re.I), "could"),
    (re.compile(r"\bit turned out that\b", re.I), ""),
    (re.compile(r"^(?:so|well|ok|okay|anyway|also|and|but then)\b,?\s*", re.I), ""),
    (re.compile(r"\s{2,}"), " "),
)


def rewrite_ja(text: str) -> str:
    for pattern, repl in _JA_RULES:
        text = pattern.sub(repl, text)
    return text.strip(" 、,")


def rewrite_en(text: str) -> str:
    for pattern, repl in _EN_RULES:
        text = pattern.sub(repl, text)
    return text.strip(" ,;")


Important = Callable[[str], bool]

_TE_SPLIT: Final = re.compile(
    r"(?<!につい)(?<!とし)(?<!によっ)(?<!対し)(?<!関し)(?<=[きしちにびみりいっんえけせねべめれ])[てで]"
    r"(?=[\u4e00-\u9fff\u30a1-\u30fa])"
)
_COMPOUND_PARTICLE_HEADS: Final = frozenset(
    {
        "つい",
        "とし",
        "よっ",
        "対し",
        "関し",
        "おい",
        "つれ",
        "わたっ",
        "かけ",
        "通し",
        "向け",
        "際し",
        "沿っ",
        "基づい",
        "応じ",
        "伴っ",
        "比べ",
        "加え",
        "代わっ",
        "めぐっ",
        "当たっ",
    }
)


def _split_ja(sentence: str, segmenter: Segmenter) -> list[str]:
    """Clauses at 、 and at conjunctive particles (て, で, けど, し) when morphology is known."""
    pieces: list[str] = []
    for part in re.split(r"(?<=、)", sentence):
        if not part:
            continue
        if segmenter.name != "fugashi":
            # Without morphology: a te-form followed by a new content word starts a clause.
            last = 0
            for m in _TE_SPLIT.finditer(part):
                pieces.append(part[last : m.end()])
                last = m.end()
            pieces.append(part[last:])
            continue
        toks = segmenter(part)
        cuts = [
            t.end
            for prev, t, nxt in zip([None, *toks], toks, toks[1:], strict=False)
            if prev is not None
            and prev.surface not in _COMPOUND_PARTICLE_HEADS  # について, として: not a clause
            and t.pos == PARTICLE
            and t.detail == "conj"
            and t.surface in ("て", "で", "けど", "し")
            and nxt.detail != "nonindependent"  # 喜んでいた, 書いておく: one predicate
            and nxt.pos not in (SYMBOL, AUX)
        ]
        last = 0
        for cut in cuts:
            pieces.append(part[last:cut])
            last = cut
        pieces.append(part[last:])
    return [p for p in pieces if p.strip(" 、")]


def compress_sentence_ja(sentence: str, important: Important, segmenter: Segmenter) -> str:
    """Drop clauses without names, terms, numbers or feeling; reword what remains."""
    clauses = _split_ja(sentence.strip(), segmenter)
    if len(clauses) > 1:
        # The last clause holds the predicate in Japanese: it always stays.
        clauses = [*(c for c in clauses[:-1] if important(c)), clauses[-1]]
    out = [rewrite_ja(c) for c in clauses]
    text = "、".join(c.rstrip("、") for c in out if c)
    return text or rewrite_ja(sentence)


def compress_sentence_en(sentence: str, important: Important) -> str:
    clauses = re.split(
        r",\s+|;\s+|\s+(?=(?:and|but|because|which|so|while|although)\s)", sentence.strip()
    )
    clauses = [c for c in clauses if c.strip()]
    if len(clauses) > 1:
        # The first clause holds the subject and verb in English: it always stays.
        clauses = [clauses[0], *(c for c in clauses[1:] if important(c))]
    text = ", ".join(rewrite_en(c).rstrip(".!?") for c in clauses if rewrite_en(c))
    text = text or rewrite_en(sentence)
    text = text[:1].upper() + text[1:]
    if text and text[-1] not in ".!?":
        text += "."
    return text
