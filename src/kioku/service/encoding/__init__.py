"""Immediate encoding (spec 001, 即時符号化): at a session's boundary, its new turns become one
summary episode, and what they report resolved becomes ``issue_resolved`` events."""

from __future__ import annotations

from kioku.service.encoding.session_end import (
    FinalizeReport,
    finalize_idle_sessions,
    finalize_session,
)

__all__ = ["FinalizeReport", "finalize_idle_sessions", "finalize_session"]
