"""Imported before an import's workers are forked (see :mod:`kioku.service.remember.workers`):
by the fork server, or by the importing process when it forks them itself. What the offline
analyzer and the profile claims load on their first turns (lexicons, patterns, tables kept by
their modules) is loaded here, once, and every worker forked afterwards starts with it rather
than loading it again for each import. Best effort: trouble here only leaves a worker to load
them itself.
"""

from __future__ import annotations

__all__: list[str] = []

#: Turns analysed once in the fork server: one English and one Japanese.
_TURNS = ("I started a new job today and I love it.", "今日は新しい仕事を始めた。")


def _warm_up() -> None:
    try:
        from kioku.adapters.analyzers.offline.analyzer import OfflineAnalyzer
        from kioku.core.profiles import extract_profile_claims
        from kioku.ports.analyzer import Turn

        analyzer = OfflineAnalyzer()
        for text in _TURNS:
            analyzer.analyze(Turn(user=text, assistant="", at=None))
            extract_profile_claims(text, speaker="someone")
    except Exception:  # noqa: S110 - a worker loads what is missing itself
        pass


_warm_up()
