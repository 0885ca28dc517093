"""The offline analyzer: Japanese and English emotion, category, keywords and compression.

No network, no model, no API key: lexicons written for kioku (``data/``), rules from spec 000,
and fugashi + UniDic for Japanese morphology when installed (a script-based segmenter otherwise).

The analyzer is imported on first use of ``OfflineAnalyzer``: the Japanese segmenter in this
package serves the recall path too, which must not pay for the analyzer's lexicons and rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .analyzer import OfflineAnalyzer

__all__ = ["OfflineAnalyzer"]


def __getattr__(name: str) -> object:
    if name == "OfflineAnalyzer":
        from .analyzer import OfflineAnalyzer

        return OfflineAnalyzer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
