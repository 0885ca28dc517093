"""A Hugging Face NLI model as an :class:`Nli` adapter (spec 001 NLI+LLMカスケード).

By default spec 001's multilingual mDeBERTa (:data:`DEFAULT_NLI_MODEL`, Japanese included).
transformers and torch are imported at the first judgement, not before; without them that
judgement raises :class:`~kioku.errors.ConfigError` saying ``pip install 'kioku[nli]'``. The
model runs on the GPU when torch sees one, else on the CPU. Nothing is downloaded: the model
is a local directory or already in the Hugging Face cache. The labels are read from the
model's configuration (entailment, neutral, contradiction, in any case and order) and the
logits softmaxed over the three.
"""

from __future__ import annotations

import importlib
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kioku.core.consolidation.model import NliScores
from kioku.errors import ConfigError

__all__ = ["DEFAULT_NLI_MODEL", "NLI_SETTING", "TransformersNli", "label_indices", "scores_of"]

DEFAULT_NLI_MODEL: Final = "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7"
#: The configuration key errors point at.
NLI_SETTING: Final = "consolidation.nli"
_INSTALL_HINT: Final = "pip install 'kioku[nli]' (transformers and torch)"
_LABELS: Final = ("entailment", "neutral", "contradiction")
#: Tokens of premise and hypothesis together; longer pairs are cut (the model's own limit).
MAX_TOKENS: Final = 512


def label_indices(id2label: Mapping[Any, Any]) -> tuple[int, int, int]:
    """The output indices of entailment, neutral and contradiction in a model's ``id2label``;
    ValueError when one of them is missing."""
    found: dict[str, int] = {}
    for index, label in id2label.items():
        found.setdefault(str(label).strip().lower(), int(index))
    missing = [label for label in _LABELS if label not in found]
    if missing:
        raise ValueError(f"the model's labels do not name {', '.join(missing)}")
    return found["entailment"], found["neutral"], found["contradiction"]


def scores_of(logits: Sequence[float], indices: tuple[int, int, int]) -> NliScores:
    """The softmax of the three labels' logits (other outputs of the model are left out)."""
    chosen = [float(logits[i]) for i in indices]
    top = max(chosen)
    weights = [math.exp(value - top) for value in chosen]
    total = sum(weights)
    entailment, neutral, contradiction = (w / total for w in weights)
    return NliScores(entailment=entailment, contradiction=contradiction, neutral=neutral)


@dataclass(frozen=True, slots=True)
class _Loaded:
    torch: Any
    tokenizer: Any
    model: Any
    device: str
    indices: tuple[int, int, int]


class TransformersNli:
    """The :class:`~kioku.ports.consolidation.Nli` port with a local sequence-classification
    model; loaded once, at the first :meth:`classify`."""

    def __init__(self, model: str = DEFAULT_NLI_MODEL, device: str | None = None) -> None:
        if not model.strip():
            raise ConfigError(NLI_SETTING, f"transformers:{model}", "a model name or directory")
        self._model = model.strip()
        self._device = device
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None

    @property
    def name(self) -> str:
        return f"transformers:{self._model}"

    @property
    def model(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"TransformersNli(model={self._model!r}, device={self._device!r})"

    def classify(self, premise: str, hypothesis: str) -> NliScores:
        loaded = self._load()
        inputs = loaded.tokenizer(
            premise, hypothesis, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
        )
        inputs = {key: value.to(loaded.device) for key, value in inputs.items()}
        with loaded.torch.no_grad():
            logits = loaded.model(**inputs).logits[0].float().cpu().tolist()
        return scores_of(logits, loaded.indices)

    def _load(self) -> _Loaded:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> _Loaded:
        try:
            torch = importlib.import_module("torch")
            transformers = importlib.import_module("transformers")
        except ImportError:
            raise ConfigError(
                NLI_SETTING, self.name, "an installed NLI backend", hint=_INSTALL_HINT
            ) from None
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(
                self._model, local_files_only=True
            )
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                self._model, local_files_only=True
            )
            indices = label_indices(model.config.id2label)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                NLI_SETTING,
                self.name,
                "a local NLI model with entailment, neutral and contradiction labels "
                "(nothing is downloaded)",
                hint=f"{type(exc).__name__}: {str(exc)[:200]}; fetch it once with "
                f"`huggingface-cli download {self._model}` or name a model directory",
            ) from None
        device = self._device or ("cuda" if torch.cuda.is_available() else "cpu")
        model.to(device)
        model.eval()
        return _Loaded(torch, tokenizer, model, device, indices)
