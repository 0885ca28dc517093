"""The offline analyzer: Japanese and English emotion, category, keywords and compression.

No network, no model, no API key: lexicons written for kioku (``data/``), rules from spec 000,
and fugashi + UniDic for Japanese morphology when installed (a script-based segmenter otherwise).
"""

from __future__ import annotations

from .analyzer import OfflineAnalyzer

__all__ = ["OfflineAnalyzer"]
