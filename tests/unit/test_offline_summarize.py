"""Level 1 → 2 summaries and Level 2 → 3 keywords (spec 000, 三段階圧縮モデル › 圧縮方法)."""

from __future__ import annotations

from kioku.adapters.analyzers.offline import OfflineAnalyzer

SPEC_TRIGGER = "「記憶システムのストレージ、MongoDBにしたらどう思う？」と聞かれた"
SPEC_CONTENT = (
    "技術選定について意見を求められた。"
    "JSONで十分という結論になり、設計の妥当性が確認できて少し安心した"
)


def test_spec_level1_example_is_70_percent_shorter_and_keeps_the_terms(
    analyzer: OfflineAnalyzer,
) -> None:
    summary = analyzer.summarize(SPEC_TRIGGER, SPEC_CONTENT)
    before = len(SPEC_TRIGGER) + len(SPEC_CONTENT)
    after = len(summary.trigger) + len(summary.content)
    assert after <= 0.3 * before, summary
    assert "MongoDB" in summary.trigger + summary.content
    assert "JSON" in summary.trigger + summary.content
    assert "安心" in summary.content  # the feeling survives


def test_spec_python_example(analyzer: OfflineAnalyzer) -> None:
    trigger = "Pythonのリスト内包表記について質問された"
    content = "基本的な書き方と条件付きの例を説明した。ユーザーは理解できたようで喜んでいた。"
    summary = analyzer.summarize(trigger, content)
    assert len(summary.trigger) < len(trigger)
    assert len(summary.content) < len(content)
    assert "Python" in summary.trigger
    assert "リスト内包表記" in summary.trigger
    assert "喜" in summary.content


LONG_TRIGGER = (
    "Asked how to fix the nightly backup job that started failing after the upgrade to "
    "PostgreSQL 16 last Tuesday."
)
LONG_CONTENT = (
    "We looked at the logs together. The pg_dump call was still pointing at the old 15.4 "
    "binaries, so every run since March 3 had silently written empty files. I explained how to "
    "pin the client version in the cron wrapper and how to add a size check that alerts Slack "
    "when a dump is under 1 MB. We also talked about restoring last week's snapshot to a staging "
    "server to prove the backups are usable. Honestly, it was basically a pretty long session and "
    "there were a lot of small detours about naming conventions. In the end the user was relieved "
    "that no data had actually been lost, and said they would schedule a monthly restore drill."
)


def test_long_english_example(analyzer: OfflineAnalyzer) -> None:
    summary = analyzer.summarize(LONG_TRIGGER, LONG_CONTENT)
    assert len(summary.content) <= 0.5 * len(LONG_CONTENT)
    assert "PostgreSQL" in summary.trigger
    assert "16" in summary.trigger
    assert "pg_dump" in summary.content
    assert "relieved" in summary.content  # the feeling survives
    assert "detours" not in summary.content  # the least informative sentence goes
    sentences = [s for s in summary.content.split(". ") if s]
    assert 1 <= len(sentences) <= 3


def test_short_text_is_kept_when_it_cannot_shrink(analyzer: OfflineAnalyzer) -> None:
    assert analyzer.summarize("ok", "了解") == type(analyzer.summarize("a", "b"))("ok", "了解")


def test_empty_fields_get_a_placeholder(analyzer: OfflineAnalyzer) -> None:
    summary = analyzer.summarize("", "   ")
    assert summary.trigger.strip()
    assert summary.content.strip()


def test_summary_is_never_longer(analyzer: OfflineAnalyzer) -> None:
    for trigger, content in [(SPEC_TRIGGER, SPEC_CONTENT), (LONG_TRIGGER, LONG_CONTENT)]:
        summary = analyzer.summarize(trigger, content)
        assert len(summary.trigger) <= len(trigger)
        assert len(summary.content) <= len(content)


def test_spec_level3_keywords(analyzer: OfflineAnalyzer) -> None:
    keywords = analyzer.extract_keywords(
        "Python文法について質問を受けた", "リスト内包表記について説明した"
    )
    assert keywords.trigger == "Python, 文法, 質問"
    assert keywords.content == "リスト内包表記, 説明"


def test_level3_keywords_put_names_and_terms_first(analyzer: OfflineAnalyzer) -> None:
    keywords = analyzer.extract_keywords(SPEC_TRIGGER, SPEC_CONTENT)
    trigger_words = keywords.trigger.split(", ")
    content_words = keywords.content.split(", ")
    assert trigger_words[0] == "MongoDB"
    assert content_words[0] == "JSON"
    assert 2 <= len(trigger_words) <= 3
    assert 2 <= len(content_words) <= 3


def test_level3_keywords_in_english(analyzer: OfflineAnalyzer) -> None:
    keywords = analyzer.extract_keywords(LONG_TRIGGER, LONG_CONTENT)
    assert keywords.trigger.split(", ")[0] == "PostgreSQL"
    assert "pg_dump" in keywords.content.split(", ")
    assert all(1 <= len(k.split(", ")) <= 3 for k in (keywords.trigger, keywords.content))
