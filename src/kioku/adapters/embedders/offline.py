"""The offline default embedder: signed feature hashing of words, word pairs and character n-grams.

No model, no download, no torch: a text's features (see :mod:`.features`) are hashed with
BLAKE2b into ``dim`` buckets with a ±1 sign, weighted ``1 + ln(tf)``, each feature group is
L2-normalised and weighted, and the sum is L2-normalised. It is a lexical embedder: it finds the
memories that share words, word forms and spellings with the query (in English and Japanese), not
paraphrases with no word in common. ``docs/embedders.md`` gives the measurements behind it.

The ``model_id`` names the algorithm version, the dimension and the Japanese word source
(``offline:hash-v1-1024`` with fugashi + UniDic, ``offline:hash-v1-1024-script`` without), so
vectors made with other settings are never compared with these.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from kioku.errors import KiokuError
from kioku.ports.embedder import Vectors

from .features import Features, JapaneseLemmatizer, extract_features

__all__ = [
    "ALGORITHM",
    "DEFAULT_DIM",
    "HashEmbedder",
    "HashWeights",
    "fugashi_lemmatizer",
]

#: Bump when features, hashing or weighting change: it is part of every ``model_id``.
ALGORITHM: Final = "hash-v1"
DEFAULT_DIM: Final = 1024
_MIN_DIM: Final = 16
_MAX_DIM: Final = 65536
#: Texts embedded per internal batch (bounds the working memory).
_CHUNK: Final = 1024
_TINY: Final = 1e-12
#: All-hiragana character n-grams are mostly grammar (した, ました): they count for less.
_HIRAGANA_SCALE: Final = 0.3

JapaneseMode = Literal["auto", "fugashi", "script"]


@dataclass(frozen=True, slots=True)
class HashWeights:
    """The weight of each feature group in the sum (each group is unit length before it)."""

    words: float = 1.0
    bigrams: float = 0.5
    chars: float = 0.7


@lru_cache(maxsize=1 << 18)
def _hash(feature: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )


class _FugashiLemmatizer:
    """UniDic lemmas and coarse POS from the fugashi tagger the offline analyzer shares."""

    def __init__(self) -> None:
        self._parse: object | None = None
        self._lock = threading.Lock()

    def _tagger_parse(self) -> object:
        with self._lock:
            if self._parse is None:
                from kioku.adapters.analyzers.offline.tokenize_ja import (
                    FugashiSegmenter,
                    default_segmenter,
                )

                segmenter = default_segmenter()
                if not isinstance(segmenter, FugashiSegmenter):
                    raise KiokuError(
                        "the Japanese dictionary (fugashi + unidic-lite) is installed but "
                        "could not be loaded",
                        hint="reinstall fugashi and unidic-lite (the offline embedder's model id "
                        "depends on them)",
                    )
                self._parse = segmenter.load().parse
            return self._parse

    def __call__(self, run: str) -> list[tuple[str, str]]:
        parse = self._tagger_parse()
        assert callable(parse)
        output: str = parse(run)
        pairs: list[tuple[str, str]] = []
        for line in output.split("\n"):
            fields = line.split("\t")
            if len(fields) < 5:
                continue
            lemma = fields[3] or fields[0]
            # UniDic marks loanwords with their origin: ミーティング-meeting.
            head, _, origin = lemma.partition("-")
            if head and origin.isascii():
                lemma = head
            pairs.append((lemma, fields[4]))
        return pairs


_FUGASHI = _FugashiLemmatizer()


def fugashi_lemmatizer() -> JapaneseLemmatizer:
    """The shared fugashi lemmatizer (loads the dictionary on first use)."""
    return _FUGASHI


def _fugashi_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("fugashi", "unidic_lite"))


class HashEmbedder:
    """Signed feature hashing; see the module docstring. Thread-safe and deterministic."""

    def __init__(
        self,
        dim: int = DEFAULT_DIM,
        *,
        japanese: JapaneseMode = "auto",
        weights: HashWeights | None = None,
    ) -> None:
        if not _MIN_DIM <= dim <= _MAX_DIM:
            raise ValueError(f"dim must be between {_MIN_DIM} and {_MAX_DIM}, not {dim}")
        if japanese == "auto":
            japanese = "fugashi" if _fugashi_installed() else "script"
        self._dim = dim
        self._weights = weights or HashWeights()
        self._lemmatize: JapaneseLemmatizer | None = (
            fugashi_lemmatizer() if japanese == "fugashi" else None
        )
        suffix = "" if japanese == "fugashi" else "-script"
        tuned = (
            ""
            if self._weights == HashWeights()
            else "-w"
            + "-".join(
                f"{w:g}" for w in (self._weights.words, self._weights.bigrams, self._weights.chars)
            )
        )
        self._model_id = f"offline:{ALGORITHM}-{dim}{suffix}{tuned}"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def features(self, text: str) -> Features:
        """The features of one text (for explanations and tests)."""
        return extract_features(text, self._lemmatize)

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(texts), _CHUNK):
            chunk = texts[start : start + _CHUNK]
            out[start : start + len(chunk)] = self._embed_chunk(chunk)
        return out

    def _embed_chunk(self, texts: Sequence[str]) -> Vectors:
        n, dim = len(texts), self._dim
        weights = np.array(
            [self._weights.words, self._weights.bigrams, self._weights.chars], dtype=np.float64
        )
        groups = len(weights)
        rows: list[int] = []
        hashes: list[int] = []
        counts: list[int] = []
        scales: list[float] = []
        for i, text in enumerate(texts):
            feats = self.features(text)
            for g, counter in enumerate((feats.words, feats.bigrams, feats.chars)):
                if weights[g] <= 0:
                    continue
                row = i * groups + g
                for feature, count in counter.items():
                    rows.append(row)
                    hashes.append(_hash(feature))
                    counts.append(count)
                    scales.append(_HIRAGANA_SCALE if feature.startswith("h:") else 1.0)
        if not rows:
            return np.zeros((n, dim), dtype=np.float32)
        h = np.array(hashes, dtype=np.uint64)
        buckets = (h % np.uint64(dim)).astype(np.int64)
        signs = 1.0 - 2.0 * (h >> np.uint64(63)).astype(np.float64)
        tf = 1.0 + np.log(np.array(counts, dtype=np.float64))
        values = signs * tf * np.array(scales, dtype=np.float64)
        cells = np.array(rows, dtype=np.int64) * dim + buckets
        flat = np.bincount(cells, weights=values, minlength=n * groups * dim)
        grid = np.asarray(flat, dtype=np.float64).reshape(n, groups, dim)
        _normalize_last(grid)
        summed: npt.NDArray[np.float64] = np.einsum("g,ngd->nd", weights, grid)
        _normalize_last(summed)
        result: Vectors = summed.astype(np.float32)
        return result


def _normalize_last(matrix: npt.NDArray[np.float64]) -> None:
    """Scale each vector along the last axis to unit length in place (zero vectors stay zero)."""
    norms = np.sqrt(np.einsum("...d,...d->...", matrix, matrix))[..., np.newaxis]
    np.divide(matrix, norms, out=matrix, where=norms > _TINY)
    matrix[np.broadcast_to(norms <= _TINY, matrix.shape)] = 0.0
