"""The compression path's shortcuts give exactly what the plain definitions give.

* ``feeling_bound`` really bounds every hit ``match_english`` can return, so skipping the full
  reading below the threshold never changes whether a piece carries a feeling;
* a piece's feeling read from the tokens of its whole text equals the piece read on its own;
* the per-word memos (lexicon look-ups, keyword scores) and the first-character limits of the
  Japanese scan return what the functions they stand in for return.
"""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kioku.adapters.analyzers.offline import events_en, irony_en, keywords, match_en, match_ja
from kioku.adapters.analyzers.offline import summarize as sm
from kioku.adapters.analyzers.offline.lexicon import en_lexicon, ja_lexicon
from kioku.adapters.analyzers.offline.match_en import feeling_bound, match_english
from kioku.adapters.analyzers.offline.text import fold, nfkc, split_sentences
from kioku.adapters.analyzers.offline.tokenize_en import Word, tokenize_en
from kioku.adapters.analyzers.offline.tokenize_ja import ScriptSegmenter

_LEX = en_lexicon()
_STOP: frozenset[str] = frozenset()


def _fragments() -> list[str]:
    """Words and phrases that exercise every path of ``match_english``."""
    rng = random.Random(7)
    words = sorted(_LEX.words)
    frags = rng.sample(words, 300)
    # Inflected, elongated and "un-" forms reach entries through the stemmer.
    frags += [w + suffix for w in rng.sample(words, 80) for suffix in ("ed", "ing", "s", "er")]
    frags += ["un" + w for w in rng.sample(words, 40)] + ["sooo", "happyyy", "f*ck", "lmao"]
    frags += [" ".join(p) for p in rng.sample(sorted(_LEX.phrases), 120)]
    frags += [" ".join(m) for m in sorted(_LEX.modifiers)]
    frags += [*sorted(_LEX.negators), "can't", "don't", "isn't", "never", "not"]
    frags += [*sorted(match_en._COMPARATIVE_LINK), "better", "worse", "happier", "nicer"]
    frags += ["af", "asf", "as fuck", "as hell", "would have been", "could've been", "i wish"]
    frags += ["i hope", "if", "i", "we", "they", "people", "like this", "miss", "care"]
    for verb, (objects, _, _) in events_en._EVENTS.items():
        frags += [f"{verb} the {obj}" for obj in sorted(objects)[:3]]
    frags += ["didn't pass the exam", "didn't get the job", "win the game"]
    frags += [" ".join(p) for p in irony_en._ALWAYS] + sorted(irony_en._PRAISE)[:20]
    frags += ["ok", "cool", "lol", "yeah", "the", "meeting", "docker", "and", "but"]
    frags += [".", ",", "!", "?", "...", ";", "<3", "Great", "SO", "3", "2024"]
    return frags


_FRAGMENTS = _fragments()
_texts = st.one_of(
    st.lists(st.sampled_from(_FRAGMENTS), max_size=4).map(" ".join),
    st.lists(st.sampled_from(_FRAGMENTS), max_size=14).map(" ".join),
)


def _felt_by_definition(piece: str) -> bool:
    """The plain definition: a non-topical hit at least 1.5 strong (degree words aside)."""
    hits = match_english(tokenize_en(nfkc(piece)), _LEX, _STOP)
    return any(abs(h.hit.score) >= 1.5 * min(h.hit.degree, 1.0) and not h.topical for h in hits)


@settings(max_examples=1000, deadline=None)
@given(_texts)
@example("haven't been better")
@example("wonderful af")
@example("I can't wait, the rally was awesome as hell")
def test_the_bound_holds_for_every_hit(text: str) -> None:
    words = tokenize_en(text)
    bound = feeling_bound([w.low for w in words], _LEX, _STOP)
    for raw in match_english(words, _LEX, _STOP):
        if not raw.topical:
            assert abs(raw.hit.score) <= bound * min(raw.hit.degree, 1.0) + 1e-9, raw


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_has_feeling_equals_its_definition(text: str) -> None:
    assert sm._has_feeling(text, "en") is _felt_by_definition(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts, min_size=1, max_size=4), st.data())
def test_pieces_read_from_the_whole_text_equal_pieces_read_alone(
    sentences: list[str], data: st.DataObject
) -> None:
    text = ". ".join(s for s in sentences if s) or "ok"
    field = sm._read(text, ScriptSegmenter())
    if field.lang != "en":
        return
    pieces = split_sentences(text)
    # Any slice, also ones that cut a word in half (these are read on their own).
    for _ in range(4):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, len(text)))
        pieces.append(text[a:b])
    for piece in pieces:
        assert field.feeling(piece) is _felt_by_definition(piece), piece


def test_the_bound_skips_plain_text_and_keeps_feelings() -> None:
    def bound(text: str) -> float:
        return feeling_bound([w.low for w in tokenize_en(text)], _LEX, _STOP)

    assert bound("I explained how the cache affects the deploy") < 1.5
    assert bound("I am so happy with the result") >= 1.5
    assert bound("never been happier") >= 1.5


def test_a_piece_whose_edges_cut_tokens_is_tokenised_on_its_own() -> None:
    field = sm._read("We shipped version 2.5 today and I'm thrilled.", ScriptSegmenter())
    assert field._span("shipped version 2") is None  # 2.5 is one token
    assert field._span("I'm thrilled.") is not None
    assert field.feeling("I'm thrilled.") is _felt_by_definition("I'm thrilled.")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_FRAGMENTS).map(lambda f: f.split()[0].lower()))
def test_the_lookup_memo_equals_the_lookup(word: str) -> None:
    memo = match_en._memo(_LEX, _STOP)
    assert memo.lookup(word) == match_en._lookup(_LEX, word, _STOP)
    stop = frozenset({word})
    assert match_en._memo(_LEX, stop).lookup(word) == match_en._lookup(_LEX, word, stop)


@settings(max_examples=200, deadline=None)
@given(_texts)
def test_keyword_score_memo_equals_the_score(text: str) -> None:
    stop = keywords.english_stopwords()
    for i, w in enumerate(tokenize_en(text)):
        start = i % 2 == 0
        assert keywords._word_score(w, start, stop) == keywords._en_word_score(w, start, stop)


def _ja_fragments() -> list[str]:
    lex = ja_lexicon()
    rng = random.Random(11)
    frags = rng.sample(sorted(lex.words), 200) + sorted(lex.modifiers)
    return [*frags, "。", "、", "!", "けど", "のに", "ない", "なかった", "MongoDB", "今日は", "て"]


_JA = st.lists(st.sampled_from(_ja_fragments()), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(_JA)
def test_japanese_scan_limits_by_first_character_change_nothing(raw: str) -> None:
    lex = ja_lexicon()
    heads = match_ja._heads(lex)
    text = fold(nfkc(raw))
    for ends in (None, frozenset(range(0, len(text) + 1, 2))):
        for i, ch in enumerate(text):
            limited = match_ja._lex_match(text, i, lex, ends, heads.words.get(ch, 0))
            assert limited == match_ja._lex_match(text, i, lex, ends, lex.max_len)
            assert match_ja._longest(
                text, i, lex.modifiers, heads.modifiers.get(ch, 0), ends, True
            ) == match_ja._longest(text, i, lex.modifiers, lex.max_modifier_len, ends, True)


def _keywords_en_by_definition(text: str) -> dict[str, keywords.Candidate]:
    """keywords_en written plainly: runs of content words between stopwords and punctuation."""
    stop = keywords.english_stopwords()
    cands: dict[str, keywords.Candidate] = {}
    current: list[tuple[Word, float]] = []
    sentence_start = True

    def close() -> None:
        if 1 < len(current) <= 3:
            score = sum(s for _, s in current) / len(current) + 0.4 * (len(current) - 1)
            phrase = " ".join(w.text for w, _ in current)
            keywords._add(cands, phrase, score, current[0][0].start)
        for w, s in current:
            keywords._add(cands, w.text, s, w.start)
        current.clear()

    for w in tokenize_en(text):
        if not w.is_word or w.low in stop or w.low.replace("'", "") in stop or w.text == "<3":
            close()
            ends = w.low in (".", "!", "?", "...", "…")
            sentence_start = ends or (sentence_start and not w.is_word)
        elif len(w.low) < 2 or w.low.isdigit():
            close()
            sentence_start = False
        else:
            current.append((w, keywords._en_word_score(w, sentence_start, stop)))
            sentence_start = False
    close()
    return cands


@settings(max_examples=300, deadline=None)
@given(_texts)
@example("The Great meeting, then 3 Docker files. And a Kubernetes <3 I Postgres")
def test_english_keywords_equal_their_definition(text: str) -> None:
    assert keywords.keywords_en(text) == _keywords_en_by_definition(text)
