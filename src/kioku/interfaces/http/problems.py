"""Errors as RFC 9457 problem details (``application/problem+json``).

Every refusal names the problem (``title``, ``detail``) and, for kioku's own errors, how
to fix it (``hint``); invalid request bodies list each field that is wrong (``errors``).
Nothing of a failed request is written: the service's writes are transactional.
"""

from __future__ import annotations

from typing import Any, Final

from kioku.errors import (
    KiokuError,
    MemoryNotFoundError,
    ProtectedMemoryError,
    ProtectionLimitError,
    StoreLockedError,
)

__all__ = ["PROBLEM_TYPE", "Problem", "problem_body", "status_of"]

#: Where the problem types are described (a relative reference, per RFC 9457 §3.1.1).
PROBLEM_TYPE: Final = "/v1/problems#"
MEDIA_TYPE: Final = "application/problem+json"

_TITLES: Final = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Invalid request",
    500: "Internal error",
    503: "Busy",
}


class Problem(Exception):  # noqa: N818 - a response, not a failure of kioku
    """A refusal the HTTP layer makes itself (auth, rights, limits, confirmations)."""

    def __init__(
        self, status: int, kind: str, detail: str, *, hint: str | None = None, **extra: Any
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.kind = kind
        self.detail = detail
        self.hint = hint
        self.extra = extra


def status_of(exc: KiokuError) -> tuple[int, str]:
    """The HTTP status and problem kind of a kioku error."""
    name = type(exc).__name__
    if isinstance(exc, MemoryNotFoundError) or name in {"UnknownKeyError", "HomeNotFoundError"}:
        return 404, "not-found"
    if isinstance(exc, ProtectedMemoryError | ProtectionLimitError):
        return 409, "protected"
    if isinstance(exc, StoreLockedError) or name == "BatchLockedError":
        return 503, "busy"
    if name == "AuthError":
        return 401, "unauthorized"
    if name in {"ConsolidationDoneError", "BatchAheadError", "DuplicateIdError"}:
        return 409, "conflict"
    if exc.exit_code == 2:
        return 422, "invalid"
    return 500, "internal"


def problem_body(
    status: int,
    kind: str,
    detail: str,
    *,
    instance: str | None = None,
    hint: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The JSON of a problem."""
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE + kind,
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
    }
    if instance is not None:
        body["instance"] = instance
    if hint:
        body["hint"] = hint
    body.update(extra)
    return body
