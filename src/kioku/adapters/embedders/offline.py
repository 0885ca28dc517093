"""The offline default embedder: signed feature hashing of words, word pairs and character n-grams.

No model, no download, no torch: a text's features (see :mod:`.features`) are hashed with
BLAKE2b into ``dim`` buckets with a ±1 sign, weighted ``1 + ln(tf)``, each feature group is
L2-normalised and weighted, and the sum is L2-normalised. It is a lexical embedder: it finds the
memories that share words, word forms and spellings with the query (in English and Japanese), not
paraphrases with no word in common. ``docs/embedders.md`` gives the measurements behind it.

The vector of one text is computed in plain Python, without numpy (:meth:`HashEmbedder.embed_one`,
for short-lived processes that cannot afford numpy's import): bucket sums in feature order, norms
with :func:`math.fsum`, rounded to float32 last. :meth:`HashEmbedder.embed_values` gives the same
numbers as the tuple a memory holds; :meth:`HashEmbedder.embed` stacks those rows into a numpy
matrix, so all three agree byte for byte.

The ``model_id`` names the algorithm version, the dimension and the Japanese word source
(``offline:hash-v1-1024`` with fugashi + UniDic, ``offline:hash-v1-1024-script`` without), so
vectors made with other settings are never compared with these.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul
from typing import TYPE_CHECKING, Final, Literal

from kioku.digests import blake2b
from kioku.errors import KiokuError
from kioku.records import Record

from .features import Features, JapaneseLemmatizer, extract_features

if TYPE_CHECKING:
    from kioku.ports.embedder import Vectors

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
#: Features whose bucket and sign are remembered per dimension (the cache is emptied when
#: full): a feature's hash is computed once while it stays in this cache.
_SLOT_CACHE: Final = 1 << 17
#: ``1 + ln count`` for the counts below :data:`_GROWTH_KNOWN` (index 0 is unused), the same
#: floats the expression gives, looked up instead of computed for every feature.
_GROWTH_KNOWN: Final = 64
_GROWTH: Final = tuple(1.0 + math.log(count) if count else 0.0 for count in range(_GROWTH_KNOWN))
#: All-hiragana character n-grams are mostly grammar (した, ました): they count for less.
_HIRAGANA_SCALE: Final = 0.3

JapaneseMode = Literal["auto", "fugashi", "script"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class HashWeights(Record):
    """The weight of each feature group in the sum (each group is unit length before it)."""

    words: float = 1.0
    bigrams: float = 0.5
    chars: float = 0.7


def _hash(feature: str) -> int:
    """The 64-bit hash of a feature (each feature's slot is kept, see _slot)."""
    return int.from_bytes(blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")


#: Each dimension's features' slots (:meth:`HashEmbedder._slot`), shared by the embedders of
#: that dimension: a slot depends on the feature and the dimension only, so a process that
#: opens several stores (one per user, one per conversation) hashes each feature once.
_SLOTS_BY_DIM: dict[int, dict[str, tuple[int, float]]] = {}


def _shared_slots(dim: int) -> dict[str, tuple[int, float]]:
    return _SLOTS_BY_DIM.setdefault(dim, {})


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
        self._slots = _shared_slots(dim)

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
        """One row per text: the rows of :meth:`embed_one`, stacked into a float32 matrix."""
        import numpy as np

        n, dim = len(texts), self._dim
        out = np.empty((n, dim), dtype=np.float32)
        for start in range(0, n, _CHUNK):
            chunk = texts[start : start + _CHUNK]
            data = b"".join([self.embed_one(text).tobytes() for text in chunk])
            out[start : start + len(chunk)] = np.frombuffer(data, dtype=np.float32).reshape(
                len(chunk), dim
            )
        return out

    def embed_one(self, text: str) -> array[float]:
        """The unit (or, with no features, zero) float32 vector of one text, without numpy
        (:meth:`embed_values` as a float32 array)."""
        return array("f", self.embed_values(text))

    def embed_values(self, text: str) -> tuple[float, ...]:
        """The numbers of :meth:`embed_one` as a tuple of floats (each a float32 value), as a
        memory holds its vector.

        Each feature adds ``±(1 + ln count)`` (times ``_HIRAGANA_SCALE`` for all-hiragana
        n-grams) to its hashed bucket, in feature order; each group is divided by its length and
        weighted, the groups are added in order (words, bigrams, chars), the sum is divided by its
        length and rounded to float32. Norms use :func:`math.fsum`, so the result depends on no
        library's order of summation.
        """
        feats = self.features(text)
        weights = self._weights
        slots = self._slots
        combined: dict[int, float] | None = None
        for weight, counter in (
            (weights.words, feats.words),
            (weights.bigrams, feats.bigrams),
            (weights.chars, feats.chars),
        ):
            if weight <= 0 or not counter:
                continue
            try:
                found = list(map(slots.__getitem__, counter))
            except KeyError:  # a feature not seen before (or the cache just emptied)
                known, new_slot = slots.get, self._slot
                found = [known(feature) or new_slot(feature) for feature in counter]
            group: dict[int, float] = {}
            get = group.get
            counts = counter.values()
            if sum(counts) == len(found):  # every count is 1: each adds its scale
                for bucket, scale in found:
                    group[bucket] = get(bucket, 0.0) + scale
            else:
                for (bucket, scale), count in zip(found, counts, strict=True):
                    # The same product as scale * (1.0 + log(count)), looked up for small counts.
                    if count != 1:
                        scale *= _GROWTH[count] if count < _GROWTH_KNOWN else 1.0 + math.log(count)
                    group[bucket] = get(bucket, 0.0) + scale
            values = group.values()
            norm = math.sqrt(math.fsum(map(mul, values, values)))
            if not norm > _TINY:
                continue  # the group adds nothing
            if combined is None:
                combined = {bucket: weight * (v / norm) for bucket, v in group.items()}
            else:
                add = combined.get
                for bucket, v in group.items():
                    combined[bucket] = add(bucket, 0.0) + weight * (v / norm)
        # Most buckets stay zero and share one float; only the buckets a feature reached are
        # rounded to float32 (through an array) and set. A tuple of every bucket read from a
        # float32 array would make a new float for each of them.
        vector = [0.0] * self._dim
        if combined:
            values = combined.values()
            norm = math.sqrt(math.fsum(map(mul, values, values)))
            if norm > _TINY:
                rounded = array("f", [c / norm for c in values])
                for bucket, value in zip(combined, rounded, strict=True):
                    vector[bucket] = value
        return tuple(vector)

    def _slot(self, feature: str) -> tuple[int, float]:
        """A feature's bucket and signed scale: ``±1`` (``±_HIRAGANA_SCALE`` for ``h:``)."""
        h = _hash(feature)
        scale = _HIRAGANA_SCALE if feature.startswith("h:") else 1.0
        # sign * (1 + ln count) * scale with sign = ±1 is exact in any order: the sign goes here.
        slot = (h % self._dim, -scale if h >> 63 else scale)
        slots = self._slots
        if len(slots) >= _SLOT_CACHE:
            slots.clear()
        slots[feature] = slot
        return slot
