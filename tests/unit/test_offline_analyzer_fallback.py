"""The offline analyzer without fugashi: the script-run segmenter takes over.

The fallback is chosen explicitly (``segmenter="script"``), the same code path the analyzer takes
when fugashi cannot be imported.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.adapters.analyzers.offline.tokenize_ja import NOUN, ScriptSegmenter
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn


@pytest.fixture(scope="module")
def analyzer() -> OfflineAnalyzer:
    return OfflineAnalyzer(segmenter="script")


def test_the_fallback_is_in_use(analyzer: OfflineAnalyzer) -> None:
    assert analyzer.segmenter.name == "script"


def test_script_runs() -> None:
    tokens = ScriptSegmenter()("記憶システムのストレージ、MongoDBにしたら2回")
    surfaces = [t.surface for t in tokens]
    assert surfaces[:4] == ["記憶", "システム", "の", "ストレージ"]
    assert "MongoDB" in surfaces
    assert "2" in surfaces
    nouns = [t.surface for t in tokens if t.pos == NOUN]
    assert {"記憶", "システム", "ストレージ", "MongoDB"} <= set(nouns)
    assert all(
        t.surface == "記憶システムのストレージ、MongoDBにしたら2回"[t.start : t.end] for t in tokens
    )


@pytest.mark.parametrize(
    ("text", "valence"),
    [
        ("やった、できた！", Valence.POSITIVE),
        ("まあまあかな", Valence.POSITIVE),
        ("ふざけんな！", Valence.NEGATIVE),
        ("……そう、仕方ないね", Valence.NEGATIVE),
        ("了解、やっておく", Valence.NEUTRAL),
        ("超嬉しい", Valence.POSITIVE),
        ("全然楽しくなかった", Valence.NEGATIVE),
    ],
)
def test_emotion_without_morphology(analyzer: OfflineAnalyzer, text: str, valence: Valence) -> None:
    assert analyzer.analyze(Turn(text)).valence is valence


def test_keywords_and_protection_without_morphology(analyzer: OfflineAnalyzer) -> None:
    result = analyzer.analyze(Turn("これは覚えておいて：記憶システムのストレージはMongoDB", "了解"))
    assert result.protected is True
    assert "MongoDB" in result.keywords
    assert "記憶システム" in result.keywords


def test_compression_without_morphology(analyzer: OfflineAnalyzer) -> None:
    trigger = "「記憶システムのストレージ、MongoDBにしたらどう思う？」と聞かれた"
    content = (
        "技術選定について意見を求められた。"
        "JSONで十分という結論になり、設計の妥当性が確認できて少し安心した"
    )
    summary = analyzer.summarize(trigger, content)
    assert "MongoDB" in summary.trigger + summary.content
    assert "JSON" in summary.trigger + summary.content
    assert len(summary.trigger + summary.content) <= 0.3 * len(trigger + content)
    assert analyzer.extract_keywords("Python文法について質問を受けた", "x").trigger.startswith(
        "Python"
    )
