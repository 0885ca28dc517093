"""The offline analyzer's quick paths give what the plain patterns and loops give.

Each quick path skips work when a cheap check shows it cannot find anything: a pattern is not
tried on text that lacks a string every one of its matches holds, a lexicon is read only at the
positions and lengths where its keys can start, a word's facts are remembered. These tests put
each check next to the plain formulation on text built from the pieces that matter.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kioku.adapters.analyzers.offline import arousal, context, expressive, irony_ja, protect, topics
from kioku.adapters.analyzers.offline.hits import Hit
from kioku.adapters.analyzers.offline.irony_en import _ALWAYS, _follows, read_irony
from kioku.adapters.analyzers.offline.keywords import Candidate, english_stopwords, rank_keywords
from kioku.adapters.analyzers.offline.lexicon import Entry, emoji_table, en_lexicon, ja_lexicon
from kioku.adapters.analyzers.offline.match_en import _ACK, _ACK_CORE, _acknowledgement
from kioku.adapters.analyzers.offline.match_ja import (
    RawHit,
    _lengths_by_head,
    _lex_match,
    _lex_match_of,
    _longest,
    _longest_of,
    _make_hit,
    _moved_tears,
    match_japanese,
)
from kioku.adapters.analyzers.offline.text import clean, first_sentence, split_sentences
from kioku.adapters.analyzers.offline.tokenize_en import stem_candidates, tokenize_en

# Pieces the patterns look for, with near misses and the characters that separate them.
_EN_PIECES = [
    *"remember memorize memory please note of down keep in mind commit to future".split(),
    *"reference save store record important let me forget never don't do not this".split(),
    *"that it write make a you can could did recall yeah right sure jan sarcasm but".split(),
    *"however though yet except nevertheless nonetheless still although how what's".split(),
    *"the list fix i we have own got adopted rescued two dog dogs cat puppy kitten".split(),
    *"fish birds turtle MongoDB SQL API foo.js".split(),
    *"fetch() `code` 404 x2 Remember PLEASE ToDo iPhone soooo nooo ok ha".split(),
    *["Yeah", "REMEMBER", "STILL", "ſtill", "ıt", "K", "orz", "OTL", "xD", "XD", "D:", ":)", ":-("],
    *[";)", "=P", ":/", "^^", "^_^", "¯\\_(ツ)_/¯", "_|￣|○", "(棒)", "/s", "/S", "w", "ww", "(:"],
    *["(皮肉)", "（皮肉）", "#sarcasm", "/sarc", "/sarcasm", "nothing", "like", "stuck", "being"],
    *"thanks for breaking my lucky me great what a such love how it when won't start".split(),
    *"classic typical figures naturally forgot missed appreciate gotta got to yay".split(),
    *[" ", " ", "  ", ", ", ". ", "! ", "? ", "!?", "?!", "??", "...", "…", "~~", "\n", "'", '"'],
    *["“", "”", "‘", "’", "(", ")", "[", "]", "-", "=", ":", ";", "~", "!", "?", "."],
]
_JA_PIECES = [
    *"覚えて おいて 覚えといて 忘れないで 忘れるな 記憶して メモっといて 保存して".split(),
    *"登録しといて".split(),
    *"重要だから 大事だから 頭に入れて ね よ 。 、 ！ ？ 笑 草 ｗ w (笑) 私 うちの".split(),
    *"さすが 流石 最高だわ 完璧 素晴らしいね すごいね お見事 天才か ついてるね".split(),
    *"ありがたいね ありがたいことで 楽しいなあ たのしいね いい一日だったわ 今日も残業".split(),
    *"楽しい たのしい な ね わ です なー いい一日 だった".split(),
    *"いいね よかったね おめでとう 大ひっと 期待を裏切らない 感謝してます おかげで 今日も".split(),
    *"落ちた なくした 遅延 また残業 のに けど でも 電車 財布 テスト 教えて ください".split(),
    *"・・・ 。。 ーー っ 😭 😂 🎉 ♡ ☆ ★ ✨ 👍 ⤴ → 字 ア".split(),
]
_PIECES = _EN_PIECES + _JA_PIECES

texts = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join)
en_texts = st.lists(st.sampled_from(_EN_PIECES), max_size=14).map("".join)
spaced = st.lists(st.sampled_from(_PIECES), max_size=14).map(" ".join)
any_texts = st.one_of(texts, spaced, st.text(max_size=40))


_REQUESTS_EN = [
    "keep in mind",
    "keep this in mind",
    "make a note of it",
    "note this down",
    "write it down",
    "commit that to memory",
    "for future reference",
    "save this for later",
    "store that in your memory",
    "important, so keep it",
    "never let me forget",
    "remember for next time",
    "please note",
    "don't forget",
    "remember this",
    "memorize that",
]


@pytest.mark.parametrize("request_text", _REQUESTS_EN)
def test_every_english_request_form_passes_the_cue_check(request_text: str) -> None:
    assert protect._EN.search(request_text)
    assert protect._may_ask_en(request_text)


@settings(max_examples=600)
@given(st.one_of(any_texts, en_texts, en_texts.map(str.lower)))
def test_protection_cues_never_skip_a_request(text: str) -> None:
    if protect._JA.search(text):
        assert not text.isascii()
        assert protect._JA_FIRST.search(text)
    low = text.lower().replace("’", "'")
    if protect._EN.search(low):
        assert protect._may_ask_en(low)


@settings(max_examples=600)
@given(st.one_of(any_texts, en_texts))
def test_context_cues_match_the_plain_patterns(text: str) -> None:
    low = text.lower()
    assert context._request_en(low) == (context._REQUEST_EN.search(low) is not None)
    assert context._contrasts_en(text) == tuple(
        m.start() for m in context._CONTRAST_EN.finditer(text)
    )
    if context._TECH_LATIN.search(text):
        assert context._TECH_CUE.search(text)
    if context._REQUEST_JA.search(text):
        assert not text.isascii()
    if context._QUOTE.search(text):
        assert any(c in text for c in context._QUOTE_OPENERS)
    for m in context._SENT_EN.finditer(text):
        if context._CONTENT_REQUEST_EN.match(m.group().strip()):
            assert any(verb in text for verb in context._CONTENT_VERBS)


@pytest.mark.parametrize(
    "request_text",
    [
        "write a sad poem",
        "please compose a note",
        "could you please draft it",
        "can you translate 'I am happy'",
        "rewrite this",
        "reword it",
        "summarise that",
        "summarize that",
        "generate names",
        "help me suggest one",
        "paraphrase it",
        "proofread this",
        "make up a story",
        "come up with a title",
    ],
)
def test_every_content_request_passes_the_cue_check(request_text: str) -> None:
    assert context.build_context(request_text, request_text, "en").content_requests


@pytest.mark.parametrize(
    "word", "but However THOUGH yet except Nevertheless nonetheless although ſtill, still,".split()
)
def test_every_contrast_word_passes_the_cue_check(word: str) -> None:
    # "still," is a contrast only when a word follows the comma at once (its pattern ends in \b).
    text = f"ok {word}fine" if word.endswith(",") else f"ok {word} fine"
    assert context._contrasts_en(text) == (3,)


def test_request_pattern_is_the_opening_or_please() -> None:
    pattern = context._REQUEST_EN.pattern
    assert pattern == f"^{context._REQUEST_EN_OPENING.pattern}|\\bplease\\b"


_FACES = [
    "orz",
    "OTL",
    "_|￣|○",
    "^^",
    "^_^",
    ":)",
    ";]",
    "(:",
    ":D",
    "xD",
    "XD",
    ":'(",
    ":(",
    "=[",
    ":P",
    "=p",
    ":/",
    "D:",
    "¯\\_(ツ)_/¯",
    "yeah right",
    "sure, jan",
    "(sarcasm)",
    "ok /s",
    "(棒)",
    "(皮肉)",
    "ok #sarcasm",
    "ok /sarc",
    "w",
    "ok!w",
    "草",
    "(笑)",
    "ｗｗ",
]


@pytest.mark.parametrize("face", _FACES)
def test_every_face_passes_the_cue_checks(face: str) -> None:
    for text in (face, f"so {face} ok", f"字{face}。"):
        _check_expressive_cues(text)
    assert any(p.search(face) for (p, *_), _, _ in expressive._STANDALONE_CUES) or (
        expressive._SARCASM.search(face) or expressive._LAUGH_JA.search(face)
    )


def _check_expressive_cues(text: str) -> None:
    folded = text.casefold()
    for (pattern, *_), needs, ignore_case in expressive._STANDALONE_CUES:
        if pattern.search(text):
            assert any(cue in (folded if ignore_case else text) for cue in needs)
            assert expressive._STANDALONE_ANY.search(text) or "orz" in folded or "otl" in folded
    assert expressive.has_sarcasm_marker(text) == bool(expressive._SARCASM.search(text))
    if expressive._LAUGH_JA.search(text):
        assert expressive._may_laugh_ja(text)


@settings(max_examples=600)
@given(st.one_of(any_texts, en_texts))
def test_expressive_cues_never_skip_a_face(text: str) -> None:
    _check_expressive_cues(text)


def _emoji_hits_plain(text: str) -> list[tuple[str, int, float]]:
    """The emoji pass as a loop over every character."""
    table = emoji_table()
    out = []
    last, repeat = "", 0
    for i, ch in enumerate(text):
        if ord(ch) < 0x2190:
            continue
        entry = table.get(ch)
        if entry is None:
            last = ""
            continue
        repeat = repeat + 1 if ch == last else 0
        last = ch
        out.append((ch, i, entry.score * (1.0 if repeat == 0 else 0.3)))
    return out


@settings(max_examples=400)
@given(
    st.one_of(texts, st.lists(st.sampled_from(["😭", "😂", "♡", "字", "a", " ", "→"])).map("".join))
)
def test_emoji_pass_matches_a_loop_over_every_character(text: str) -> None:
    table = emoji_table()
    hits = [
        (r.hit.term, r.hit.start, r.hit.score)
        for r in expressive.match_expressive(text)
        if len(r.hit.term) == 1 and r.hit.term in table
    ]
    assert hits == _emoji_hits_plain(text)


@settings(max_examples=400)
@given(st.one_of(any_texts, en_texts.map(str.lower)))
def test_arousal_cues_match_the_plain_patterns(text: str) -> None:
    assert arousal._stretched(text) == (arousal._STRETCH.search(text) is not None)
    assert any(q in text for q in arousal._QUESTIONS) == bool(re.search(r"\?{2,}|\?!|!\?", text))
    if arousal._ELLIPSIS.search(text):
        assert any(c in text for c in arousal._ELLIPSIS_CUES)
    if text.isascii():
        assert not any(
            any(0x3040 <= ord(c) <= 0x9FFF for c in m.group(1))
            for m in arousal._REPEAT_JA.finditer(text)
        )


@settings(max_examples=400)
@given(st.one_of(texts, spaced))
@example("楽しいね")
@example("たのしいですわ")
@example("楽しいなー")
@example("いい一日です")
@example("ありがたいこった")
def test_irony_words_hold_every_span(text: str) -> None:
    if irony_ja._ANY_PRAISE_WORD.search(text) is None:
        assert irony_ja._OVERT.search(text) is None
        assert irony_ja._THANKS_TO_MISHAP.search(text) is None
        assert irony_ja._CHEERFUL_FAILURE.search(text) is None
        assert all(irony_ja._PRAISE.match(text[i:]) is None for i in range(len(text)))


def _find_ja_plain(text: str, starts: set[int] | None) -> tuple[dict[str, float], list[str]]:
    tables = topics._tables()
    out: dict[str, float] = {}
    cues: list[str] = []
    i = 0
    while i < len(text):
        if starts is not None and i not in starts:
            i += 1
            continue
        for length in range(min(tables.ja_max, len(text) - i), 0, -1):
            found = tables.ja.get(text[i : i + length])
            if found is not None:
                out[found[0]] = out.get(found[0], 0.0) + found[1]
                cues.append(text[i : i + length])
                i += length
                break
        else:
            i += 1
    return out, cues


ja_cue_texts = st.lists(
    st.sampled_from([*sorted(topics._tables().ja)[::7], "は", "、", "。", "の", "a"]), max_size=10
).map("".join)


@settings(max_examples=400)
@given(ja_cue_texts, st.data())
def test_japanese_topic_scan_matches_a_scan_of_every_length(text: str, data: st.DataObject) -> None:
    starts = data.draw(st.one_of(st.none(), st.sets(st.integers(0, len(text) + 2))))
    out: defaultdict[str, float] = defaultdict(float)
    cues: list[str] = []
    topics._find_ja(text, starts, out, cues)
    assert (dict(out), cues) == _find_ja_plain(text, starts)


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*sorted(topics._tables().en_words)[::5], "ok", "x"]),
            st.sampled_from(["", "s", "es", "ed", "ing", "er"]),
        ).map("".join),
        max_size=8,
    )
)
def test_english_topic_memo_gives_the_cue_of_a_fresh_lookup(lows: list[str]) -> None:
    stop = english_stopwords()
    tables = topics._tables()
    for low in lows + lows:  # the second time from the memo
        memo = topics._cue_memo(stop)
        cue = memo.get(low, topics._UNSEEN)
        if cue is topics._UNSEEN:
            cue = topics._word_cue(memo, low, stop, tables)
        plain = None
        for cand in (low,) if low in stop else stem_candidates(low):
            if cand in tables.en_words:
                plain = (*tables.en_words[cand], cand)
                break
        assert cue == plain


_ANIMALS = "dog cat puppy kitten rabbit bunny hamster parrot bird turtle fish".split()


@settings(max_examples=400)
@given(
    st.one_of(
        any_texts,
        en_texts,
        st.sampled_from(_ANIMALS).map(lambda pet: f"we adopted two {pet}s"),
        st.sampled_from(_ANIMALS).map(lambda pet: f"I have a {pet}"),
    )
)
def test_pet_owner_needs_a_pet(text: str) -> None:
    lows = " ".join(w.low for w in tokenize_en(text))
    if topics._PET_OWNER_EN.search(lows):
        assert any(pet in lows for pet in topics._PETS)


ja_lex_texts = st.lists(
    st.sampled_from([*sorted(ja_lexicon().words)[::11], *ja_lexicon().modifiers, "は", "。", "い"]),
    max_size=8,
).map("".join)


@settings(max_examples=400)
@given(ja_lex_texts)
def test_japanese_heads_list_every_length_a_key_can_have(text: str) -> None:
    lex = ja_lexicon()
    words = _lengths_by_head(lex.words)
    modifiers = _lengths_by_head(lex.modifiers)
    for i, ch in enumerate(text):
        for table, heads in ((lex.words, words), (lex.modifiers, modifiers)):
            present = {n for n in range(1, len(text) - i + 1) if text[i : i + n] in table}
            assert present <= set(heads.get(ch, ()))
            assert list(heads.get(ch, ())) == sorted(heads.get(ch, ()), reverse=True)


def test_japanese_scan_finds_every_key_up_to_the_end_of_the_text() -> None:
    lex = ja_lexicon()
    words = _lengths_by_head(lex.words)
    modifiers = _lengths_by_head(lex.modifiers)
    for key, (_, form) in lex.words.items():
        if len(key) > 1 or form not in ("v1", "v5a", "v5i", "v5e", "v5te"):
            found = _lex_match_of(key, 0, lex, None, words[key[0]])
            assert found is not None
            assert found[0] == len(key)
    for key in lex.modifiers:
        assert _longest_of(key, 0, lex.modifiers, modifiers[key[0]], None, True) == len(key)


ack_texts = st.lists(st.sampled_from([*_ACK, "great", "day", ",", "!", "."]), max_size=9)


@settings(max_examples=400)
@given(ack_texts.map(" ".join))
def test_acknowledgement_matches_its_definition(text: str) -> None:
    words = tokenize_en(text)
    lows = [w.low for w in words if w.is_word]
    plain = 0 < len(lows) <= 6 and bool(_ACK_CORE.intersection(lows)) and _ACK.issuperset(lows)
    assert _acknowledgement(words) == plain


@settings(max_examples=400)
@given(st.lists(st.sampled_from(["a", "lot", "that", "for", "me", "us", ",", "!", "thanks"])))
def test_follows_matches_its_definition(lows: list[str]) -> None:
    words = tokenize_en(" ".join(lows))
    for i in range(len(words) + 1):
        for phrase in (("a", "lot"), ("that", "for", "me"), ("me",), *_ALWAYS):
            span = words[i : i + len(phrase)]
            plain = tuple(w.low for w in span if w.is_word) == phrase and all(
                w.is_word or w.low == "," for w in span
            )
            assert _follows(words, i, phrase) == plain


@settings(max_examples=500)
@given(st.one_of(en_texts, en_texts.map(str.lower)))
@example("Forgot it. Classic.")
@example("missed the bus. typical")
@example("Nothing like being stuck when the car won't start")
@example("yeah right")
def test_irony_gate_skips_only_what_read_irony_leaves_alone(text: str) -> None:
    from kioku.adapters.analyzers.offline.irony_en import IRONY_FIRST, TURNABLE
    from kioku.adapters.analyzers.offline.match_en import match_english

    words = tokenize_en(text)
    hits = match_english(words, en_lexicon(), english_stopwords())
    gated = IRONY_FIRST.isdisjoint(w.low for w in words) and not any(
        r.hit.term in TURNABLE and r.hit.score > 0 for r in hits
    )
    if gated:
        assert read_irony(words, hits) == hits


def test_irony_still_reads_set_phrases() -> None:
    words = tokenize_en("Yeah right, thanks for nothing.")
    out = read_irony(words, [])
    assert [r.hit.term for r in out] == ["irony", "irony"]
    hit = Hit("great", 0, 1.0, 0, ())
    assert read_irony(tokenize_en("great"), [RawHit(hit, 5, False, False)])[0].hit.score == 1.0


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.sampled_from(["Mongo", "mongo", "MongoDB", "DB", "db", "x"]), st.floats(0, 3))
    )
)
def test_rank_keywords_skips_overlapping_keywords(items: list[tuple[str, float]]) -> None:
    cands = [Candidate(text, score, i) for i, (text, score) in enumerate(items)]
    ranked = sorted(cands, key=lambda c: (-(c.score + 0.4 * min(c.count - 1, 3)), c.first))
    plain: list[str] = []
    seen: list[str] = []
    for cand in ranked:
        low = cand.text.lower()
        if not any(low in s or s in low for s in seen) and len(plain) < 2:
            seen.append(low)
            plain.append(cand.text)
    assert rank_keywords(cands, 2) == plain


sentences = st.lists(
    st.sampled_from(
        ["Hi", "there", ".", " ", "!", "?", "。", "」", "\n", "a", "B", "字", "0", '"']
    ),
    max_size=16,
).map("".join)


@settings(max_examples=600)
@given(st.one_of(sentences, any_texts))
def test_first_sentence_is_the_first_of_split_sentences(text: str) -> None:
    pieces = split_sentences(text)
    assert first_sentence(text) == (pieces[0] if pieces else None)


@settings(max_examples=600)
@given(
    st.one_of(
        st.text(alphabet=" \t\n\r\x00\x1c\x85\u2028\u3000\u00a0\ufffd\ud800ab。", max_size=30),
        any_texts,
    ),
    st.sampled_from([None, 5, 40, 20_000]),
)
def test_clean_text_stays_as_it_is_when_cleaned_again(text: str, limit: int | None) -> None:
    once = clean(text, limit)
    assert clean(once, 20_000) == once


def test_english_lexicon_memo_is_bounded() -> None:
    from kioku.adapters.analyzers.offline import match_en

    lex = en_lexicon()
    memo = match_en._memo(lex, english_stopwords())
    for k in range(match_en._MEMO_SIZE + 10):
        memo.fact(f"zz{k}")
    assert len(memo.facts) <= match_en._MEMO_SIZE


def test_fugashi_tokens_match_the_tagger_output() -> None:
    from kioku.adapters.analyzers.offline.tokenize_ja import (
        FugashiSegmenter,
        Token,
        _map_unidic,
        fugashi_available,
    )

    if not fugashi_available():
        return
    seg = FugashiSegmenter()
    tagger = seg.load()
    for text in [
        *_JA_PIECES,
        "今日はMongoDBの設定で3時間かかった。",
        "ミーティング\tの後\n帰った",
    ] * 2:
        flat = text.replace("\n", " ").replace("\t", " ")
        plain = []
        offset = 0
        for line in tagger.parse(flat).split("\n"):
            fields = line.split("\t")
            if len(fields) < 5 or flat.find(fields[0], offset) < 0:
                continue
            start = flat.find(fields[0], offset)
            offset = start + len(fields[0])
            pos = [*fields[4].split("-"), "", ""]
            plain.append(Token(fields[0], start, *_map_unidic(pos[0], pos[1], pos[2], fields[0])))
        assert seg(text) == plain


@settings(max_examples=300)
@given(st.lists(st.sampled_from([*sorted(en_lexicon().words)[::9], ".", ",", "!", "<3", "42"])))
def test_english_word_facts_match_their_definitions(lows: list[str]) -> None:
    from kioku.adapters.analyzers.offline import match_en

    lex = en_lexicon()
    stop = english_stopwords()
    memo = match_en._memo(lex, stop)
    for low in lows:
        is_word, phrase_start, single_modifier, entry = memo.facts.get(low) or memo.fact(low)
        assert is_word == (low[0].isalpha() or low == "<3")
        assert phrase_start == (low in lex.phrase_starts)
        assert single_modifier == ((low,) in lex.modifiers)
        assert entry == (match_en._lookup(lex, low, stop) if is_word else None)


def _match_japanese_plain(
    text: str, starts: set[int] | None, ends: set[int] | None
) -> list[RawHit]:
    """match_japanese stepping through every character and trying every length."""
    lex = ja_lexicon()
    hits: list[RawHit] = []
    pending: tuple[float, int, int, tuple[int, Entry, str] | None] | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None and pending[3] is not None:
            length, entry, form = pending[3]
            hits.append(_make_hit(text, pending[1], pending[1] + length, entry, form, 1.0))
        pending = None

    i = 0
    while i < len(text):
        if text[i] in "。!?、,.\n」)":
            flush()
            i += 1
            continue
        if starts is not None and i not in starts:
            i += 1
            continue
        lex_found = _lex_match(text, i, lex, ends, lex.max_len)
        mod_len = _longest(text, i, lex.modifiers, lex.max_modifier_len, ends, True)
        lex_len = lex_found[0] if lex_found else 0
        if mod_len and mod_len >= lex_len:
            flush()
            word = text[i : i + mod_len]
            own = lex_found if lex_found and lex_found[0] == mod_len else None
            if own is None and lex_found and lex_found[2] == "adj" and lex_found[0] < mod_len:
                own = lex_found
            if own is None and word in lex.words:
                own = (mod_len, *lex.words[word])
            pending = (lex.modifiers[word], i, i + mod_len, own)
            i += mod_len
            continue
        if lex_found is not None:
            length, entry, form = lex_found
            degree, degree_word = 1.0, ""
            if pending is not None and i - pending[2] <= 6:
                degree, degree_word = pending[0], text[pending[1] : pending[2]]
                pending = None
            else:
                flush()
            hits.append(_make_hit(text, i, i + length, entry, form, degree, degree_word))
            i += length
            continue
        if pending is not None and i - pending[2] > 6:
            flush()
        i += 1
    flush()
    return _moved_tears(hits)


ja_feeling_texts = st.lists(
    st.sampled_from(
        [*sorted(ja_lexicon().words)[::13], *ja_lexicon().modifiers, *"はがのを。、！？」xa 字"]
    ),
    max_size=10,
).map("".join)


@settings(max_examples=500)
@given(ja_feeling_texts, st.data())
def test_japanese_matching_skips_only_characters_where_nothing_happens(
    text: str, data: st.DataObject
) -> None:
    starts = data.draw(st.one_of(st.none(), st.sets(st.integers(0, len(text)))))
    ends = data.draw(st.one_of(st.none(), st.sets(st.integers(0, len(text)))))
    got = match_japanese(text, ja_lexicon(), starts, ends)
    assert got == _match_japanese_plain(text, starts, ends)
