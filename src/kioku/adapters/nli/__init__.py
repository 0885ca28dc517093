"""NLI models for consolidation's validation and conflict checks, found by name.

``none`` (no model: the LLM judges alone, spec 001's graceful degradation), ``lexical`` (term
overlap, no model) or ``transformers`` / ``transformers:<model>`` (a local Hugging Face NLI
model, by default spec 001's multilingual mDeBERTa; ``pip install 'kioku[nli]'``). The
transformers adapter imports nothing heavy until its first judgement.
"""

from __future__ import annotations

from typing import Final

from kioku.errors import ConfigError
from kioku.ports.consolidation import Nli

from .lexical import LexicalNli
from .transformers_nli import DEFAULT_NLI_MODEL, NLI_SETTING, TransformersNli

__all__ = ["DEFAULT_NLI_MODEL", "NLI_CHOICES", "LexicalNli", "TransformersNli", "make_nli"]

#: What ``make_nli`` accepts, as said in its error.
NLI_CHOICES: Final = "none, lexical, transformers or transformers:<model>"


def make_nli(spec: str, *, setting: str = NLI_SETTING) -> Nli | None:
    """The NLI model ``spec`` names; None for ``none``. ``setting`` names the configuration
    key in the error raised for anything else."""
    name, colon, model = spec.strip().partition(":")
    kind = name.strip().lower()
    if not colon and kind == "none":
        return None
    if not colon and kind == "lexical":
        return LexicalNli()
    if kind == "transformers" and (not colon or model.strip()):
        return TransformersNli(model.strip() or DEFAULT_NLI_MODEL)
    raise ConfigError(setting, spec, NLI_CHOICES)
