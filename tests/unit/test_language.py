"""detect_language: script counting for Japanese, English, mixed and everything else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.core.language import detect_language


@pytest.mark.parametrize(
    "text",
    [
        "今日はとても嬉しい",
        "了解",
        "やった、できた！",
        "記憶システムのストレージ、MongoDBにしたらどう思う？",
        "SQLのJOINが遅いのでインデックスを貼りたい",
        "ｗｗｗ草",
        "カタカナだけ",
    ],
)
def test_japanese(text: str) -> None:
    assert detect_language(text) == "ja"


@pytest.mark.parametrize(
    "text",
    [
        "I am so happy today",
        "ok",
        "We decided to use PostgreSQL.",
        "Café au lait, s'il vous plaît",
        "I went to 東京 yesterday and the food was great, truly great",
    ],
)
def test_english(text: str) -> None:
    assert detect_language(text) == "en"


@pytest.mark.parametrize(
    "text", ["I love 寿司", "明日 meeting があるけど the slides are not ready"]
)
def test_mixed(text: str) -> None:
    assert detect_language(text) == "mixed"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t",
        "😭😭😭",
        "!!!???",
        "1234567890",
        "مرحبا كيف حالك",
        "Привет, как дела?",
        "#$%&'()*+,-./:;<=>?@[]^_{|}~ 1 2 3",
    ],
)
def test_other(text: str) -> None:
    assert detect_language(text) == "other"


def test_long_chinese_like_kanji_only_text_is_other() -> None:
    assert (
        detect_language("我们今天讨论了数据库的设计问题并且决定使用关系型数据库来存储所有记录")
        == "other"
    )


@given(st.text(max_size=300))
def test_any_text_gets_one_of_four_languages(text: str) -> None:
    assert detect_language(text) in ("ja", "en", "mixed", "other")
    assert detect_language(text) == detect_language(text)
