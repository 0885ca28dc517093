"""About the API itself: ``/v1/health`` (no key needed) and ``/v1/problems``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from kioku import __version__
from kioku.interfaces.http.problems import KINDS, PROBLEM_TYPE

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["meta"])


@router.get("/health", summary="Whether the server answers (no key needed; tells nothing more)")
async def health() -> dict[str, Any]:
    return {"status": "ok", "version": __version__}


@router.get("/problems", summary="What each problem type of the API means")
async def problems() -> dict[str, Any]:
    return {
        "problems": [
            {"type": PROBLEM_TYPE + kind, "kind": kind, "description": text}
            for kind, text in KINDS.items()
        ]
    }
