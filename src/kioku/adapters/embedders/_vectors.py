"""Shared helpers: turn whatever a model returned into the port's normalised float32 rows."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from kioku.ports.embedder import Vectors

__all__ = ["normalize_rows"]

_TINY: Final = 1e-12


def normalize_rows(matrix: Any, dim: int) -> Vectors:
    """``matrix`` as ``(n, dim)`` float32 with unit rows; zero (or non-finite) rows become zero."""
    rows = np.asarray(matrix, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[1] != dim:
        raise ValueError(f"expected an (n, {dim}) matrix, got shape {rows.shape}")
    rows = np.where(np.isfinite(rows), rows, 0.0)
    norms = np.sqrt(np.einsum("nd,nd->n", rows, rows))[:, np.newaxis]
    out = np.zeros_like(rows)
    np.divide(rows, norms, out=out, where=norms > _TINY)
    result: Vectors = out.astype(np.float32)
    return result
