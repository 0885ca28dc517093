"""Sentence-level context that changes how much an emotion word counts.

* **contrast**: in 「大変だったけど、最高だった」 / "hard, but worth it" the clause after the
  contrast carries the feeling; words before it are weakened, words after it strengthened;
* **requests and technical text**: 「失敗時は400を返して」 or "how do I handle the error?" name
  失敗/error as a topic, not a feeling, so topical words are damped;
* **hypotheticals**: 「失敗したら」, "if it fails" describe what might happen;
* **mention in quotes inside a request**: 「「嬉しい」の類語を挙げて」;
* **sarcasm markers**: (棒), /s turn kind words around;
* **Japanese irony**: praise right after a mishap (「財布なくした。最高だわ」) is turned around.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from .expressive import has_sarcasm_marker
from .hits import Hit
from .irony_ja import ironic_spans, mocks_oneself
from .match_ja import RawHit
from .protect import protection_clauses

__all__ = ["Context", "build_context", "weigh"]

_REQUEST_JA: Final = re.compile(
    r"にすると|何て言う|なんて言う|訳すと|(?:て|で)(?:ください|下さい|くれ(?![たて]|な(?:い|かった)(?![?？]|か))|ほしい|欲しい|もらえ"
    r"|もらい|いただけ|いただき|頂け|おいて|みて)|お願い|ようにして|してほしい|やり方|手順|方法"
    r"|どうすれば|どうやって|書き方|使い方|にして$|にしといて|してね$|しといて"
    # 「〜てくれない」 without a question tells a complaint (「口きいてくれない」);
    # 「〜てくれない？」 asks.
    # A bare て-form asks (「見て」); followed by た, る, くれた … it tells (「見てた」).
    r"|(?:教えて|書いて|作って|直して|調べて|考えて|まとめて|挙げて|訳して|出して|比べて|説明して"
    r"|確認して|手伝って|見て|返して|表示して|追加して)(?![たるいくまもしな])"
)
#: An English request: one that opens the sentence, or "please" anywhere in it.
_REQUEST_EN_OPENING: Final = re.compile(
    r"(?:(?:can|could|would|will) you|please|pls|how (?:do|can|to|should|would)"
    r"|what(?:'s| is| are) the|write|make|create|fix|show|explain|tell me|give me|help me"
    r"|list|translate|summari[sz]e|let me know|add|remove|rename|convert|generate|check)\b"
)
_PLEASE: Final = re.compile(r"\bplease\b")
#: Both in one pattern (:func:`_request_en` tries them apart, which is quicker).
_REQUEST_EN: Final = re.compile(f"^{_REQUEST_EN_OPENING.pattern}|{_PLEASE.pattern}")
#: "write a sad poem", "translate 'I am happy'": the feeling words are the content asked for.
_CONTENT_REQUEST_EN: Final = re.compile(
    r"^(?:please |pls |(?:can|could|would|will) you (?:please )?)?(?:help me (?:to )?)?"
    r"(?:write|compose|draft|translate"
    r"|rewrite|reword|summari[sz]e|generate|suggest|paraphrase|proofread|make up|come up with)\b"
)
#: Every match of :data:`_CONTENT_REQUEST_EN` holds one of these.
_CONTENT_VERBS: Final = (
    *("write", "compose", "draft", "translate", "rewrite", "reword", "summari", "generate"),
    *("suggest", "paraphrase", "proofread", "make up", "come up with"),
)
_SENT_EN: Final = re.compile(r"[^.!?\n]+[.!?\n]*")
_TECH_LATIN: Final = re.compile(
    r"[A-Za-z]+[0-9]+[A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z]+|[A-Z]{2,}[a-z]*s?\b|\w+\.(?:js|py|ts|json|md|"
    r"yml|yaml|toml|sql|go|rs|java|css|html)\b|\b\d{3}\b|`[^`]+`|\w+\(\)|[A-Z][a-z]+[A-Z]\w*"
)
#: What every match of :data:`_TECH_LATIN` contains: a capital after a letter, a digit, a file
#: extension, a backtick or "()". A sentence without any cannot be technical.
_TECH_CUE: Final = re.compile(
    r"[A-Za-z][A-Z]|\d|\.(?:js|py|ts|json|md|yml|yaml|toml|sql|go|rs|java|css|html)|`|\(\)"
)
_CONTRAST_JA: Final = re.compile(
    r"けど|けれど|けども|しかし|(?:^|[。、!?])\s*(?:でも|ただ|とはいえ|それでも|ところが)|(?<=[だたすいる])が、"
)
_CONTRAST_EN: Final = re.compile(
    r"\b(?:but|however|though|yet|except|nevertheless|nonetheless|still,|although)\b", re.IGNORECASE
)
#: Every match of :data:`_CONTRAST_EN` holds one of these, case folded (the pattern ignores case;
#: only the dotless ı matches an i without folding to one, so text with it is searched as it is).
_CONTRAST_EN_WORDS: Final = (
    "but",
    "however",
    "though",
    "yet",
    "except",
    "neverthe",
    "nonethe",
    "still,",
)
_QUOTE: Final = re.compile(
    r"「[^」]{0,40}」|『[^』]{0,40}』|\"[^\"]{0,40}\"|“[^”]{0,40}”|‘[^’]{0,40}’|(?<!\w)'[^'\n]{1,40}'(?!\w)"
)
_SENT: Final = re.compile(r"[^。!?\n]+[。!?\n]*")
#: Characters every match of :data:`_QUOTE` opens with.
_QUOTE_OPENERS: Final = "「『\"“‘'"

_TOPICAL_IN_TASK: Final = 0.25
_TOPICAL_IN_QUESTION: Final = 0.5
_HYPOTHETICAL: Final = 0.35
_QUOTED_IN_REQUEST: Final = 0.2
_QUOTED: Final = 0.5
#: English questions mostly ask ("are you happy with it?") rather than express.
_QUESTION_EN: Final = 0.5
_BEFORE_CONTRAST: Final = 0.55
_AFTER_CONTRAST: Final = 1.25


@dataclass(frozen=True, slots=True)
class Context:
    """Where sentences, contrasts and quotes are in one normalised text."""

    sentences: tuple[tuple[int, int, bool, bool, bool], ...]  # start, end, request, tech, question
    contrasts: tuple[int, ...]
    quotes: tuple[tuple[int, int], ...]
    sarcasm: bool
    #: Japanese ironic praise clauses (start, end).
    irony: tuple[tuple[int, int], ...]
    any_request: bool
    any_tech: bool
    #: The turn is about a task (a request, or technical text anywhere in it).
    task: bool
    lang: str
    #: English sentences that ask for text to be written ("write a sad poem").
    content_requests: tuple[tuple[int, int], ...] = ()
    #: The Japanese irony mocks the speaker (「さすが私」): fed up, but with no one to be angry at.
    irony_at_self: bool = False
    #: Spans of explicit requests to remember (:func:`.protect.protection_clauses`): their
    #: sentence is no request for that, but cues inside them are weighed as in one.
    keeping: tuple[tuple[int, int], ...] = ()


def build_context(text: str, cased: str, lang: str, *, work: bool = False) -> Context:
    """Context of normalised ``text``; ``cased`` is the same text before folding (same length)."""
    sentences = []
    # Only text with a cue of technical wording anywhere is searched sentence by sentence.
    tech_cue = _TECH_CUE.search(cased) is not None
    keep: list[tuple[int, int]] = []
    for m in _SENT.finditer(text):
        s = m.group()
        stripped = s.strip()
        request = _asks(stripped, lang)
        clauses = protection_clauses(s) if request else ()
        if clauses:
            # A request to remember asks for no task: what it keeps is read as told, and
            # only the request's own words are read as a request's.
            keep.extend((m.start() + a, m.start() + b) for a, b in clauses)
            chars = list(s)
            for a, b in clauses:
                chars[a:b] = " " * (b - a)
            request = _asks("".join(chars).strip(), lang)
        tech = tech_cue and bool(_TECH_LATIN.search(cased, m.start(), m.end()))
        sentences.append((m.start(), m.end(), request, tech, stripped.endswith("?")))
    contrasts = _contrasts_en(text) if lang == "en" else _finditer_starts(_CONTRAST_JA, text)
    if lang == "mixed":
        contrasts += _contrasts_en(text)
    quotes: tuple[tuple[int, int], ...] = ()
    if any(c in text for c in _QUOTE_OPENERS):
        quotes = tuple((m.start(), m.end()) for m in _QUOTE.finditer(text))
    content: tuple[tuple[int, int], ...] = ()
    if lang != "ja" and any(verb in text for verb in _CONTENT_VERBS):
        content = tuple(
            (m.start(), m.end())
            for m in _SENT_EN.finditer(text)
            if _CONTENT_REQUEST_EN.match(m.group().strip())
        )
    irony = ironic_spans(text) if lang in ("ja", "mixed") else ()
    return Context(
        sentences=tuple(sentences),
        contrasts=contrasts,
        quotes=quotes,
        sarcasm=has_sarcasm_marker(cased),
        irony=irony,
        any_request=any(s[2] for s in sentences),
        any_tech=any(s[3] for s in sentences),
        task=work or any(s[2] or s[3] for s in sentences),
        lang=lang,
        content_requests=content,
        irony_at_self=mocks_oneself(text, irony),
        keeping=tuple(keep),
    )


#: After a Japanese request form: someone else's request, told (「退去してほしいと言われた」).
_REPORTED_JA: Final = re.compile(
    r"(?:と|って)(?:言われ|いわれ|頼まれ|お願いされ|言って(?:た|き)|言った|言う|言ってる)"
)


def _asks(stripped: str, lang: str) -> bool:
    """Whether the stripped sentence asks for something (a Japanese or English request); a
    request the speaker only reports (「…してほしいと言われた」) does not count."""
    if lang != "en" and not stripped.isascii():
        for m in _REQUEST_JA.finditer(stripped):
            if not _REPORTED_JA.match(stripped, m.end()):
                return True
    return lang != "ja" and _request_en(stripped.lower())


def _request_en(low: str) -> bool:
    """:data:`_REQUEST_EN` on lower-case text."""
    return _REQUEST_EN_OPENING.match(low) is not None or (
        "please" in low and _PLEASE.search(low) is not None
    )


def _finditer_starts(pattern: re.Pattern[str], text: str) -> tuple[int, ...]:
    return tuple(m.start() for m in pattern.finditer(text))


def _contrasts_en(text: str) -> tuple[int, ...]:
    """Where :data:`_CONTRAST_EN` matches in ``text``."""
    if "ı" not in text:
        folded = text.casefold()
        if not any(word in folded for word in _CONTRAST_EN_WORDS):
            return ()
    return _finditer_starts(_CONTRAST_EN, text)


def _irony_tags(ctx: Context) -> tuple[str, ...]:
    return ("frustration",) if ctx.irony_at_self else ("frustration", "anger")


def _sentence(ctx: Context, pos: int) -> tuple[int, int, bool, bool, bool] | None:
    for sent in ctx.sentences:
        if sent[0] <= pos < sent[1]:
            return sent
    return None


def weigh(raw_hits: list[RawHit], ctx: Context) -> list[Hit]:
    """Apply clause and sentence context to raw hits."""
    out: list[Hit] = []
    for raw in raw_hits:
        hit = raw.hit
        factor = 1.0
        if not raw.expressive:
            sent = _sentence(ctx, hit.start)
            request = sent is not None and sent[2]
            if ctx.keeping and not request:
                request = any(a <= hit.start < b for a, b in ctx.keeping)
            tech = sent is not None and sent[3]
            question = sent is not None and sent[4]
            if raw.topical and (request or tech or ctx.task):
                factor *= _TOPICAL_IN_TASK
            elif raw.topical and question:
                factor *= _TOPICAL_IN_QUESTION
            if question and ctx.lang == "en" and not raw.topical:
                factor *= _QUESTION_EN
            if raw.hypothetical:
                factor *= _HYPOTHETICAL
            if ctx.content_requests and any(a <= hit.start < b for a, b in ctx.content_requests):
                factor *= _QUOTED_IN_REQUEST
            elif ctx.quotes and any(a <= hit.start < b for a, b in ctx.quotes):
                factor *= _QUOTED_IN_REQUEST if request else _QUOTED
            if factor < 1.0 and not hit.score and hit.tags:
                # A cue that only names a tag ("out of the blue") has no score to damp: where
                # the sentence weakens feelings (a question, a quote, a hypothetical) it names
                # nothing.
                hit = replace(hit, tags=())
            if ctx.contrasts:
                if any(c > hit.start for c in ctx.contrasts):
                    factor *= _BEFORE_CONTRAST
                elif any(c < hit.start for c in ctx.contrasts):
                    factor *= _AFTER_CONTRAST
        score = hit.score * factor
        tags = hit.tags
        if ctx.sarcasm and score > 0:
            score, tags = -0.8 * score, ("frustration", "anger")
        elif score > 0 and ctx.irony:
            # Ironic praise turns the kind words of the whole turn around. It is aimed at
            # someone (anger, by the labelling guide's "anger has a target") unless it mocks
            # the speaker.
            score, tags = -0.8 * score, _irony_tags(ctx)
        if factor != 1.0 or score != hit.score:
            hit = replace(hit, score=score, tags=tags)
        out.append(hit)
    if ctx.irony and not any(h.score < 0 for h in out):
        # Irony with no kind word the lexicon knows (「天才かな？」) still voices annoyance.
        out.append(Hit("irony", ctx.irony[0][0], -1.2, 1, _irony_tags(ctx)))
    return out
