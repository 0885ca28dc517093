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

__all__ = [
    "KINDS",
    "PROBLEM_TYPE",
    "Problem",
    "errors_of",
    "hint_of",
    "problem_body",
    "status_of",
]

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


#: Every problem ``kind`` the API answers with (``type`` is ``/v1/problems#<kind>``), and
#: what it means.
KINDS: Final = {
    "malformed-json": "The request body is not valid JSON. Send one JSON object.",
    "invalid": "The request does not fit the route: `errors` names each field that is wrong "
    "and why. /v1/openapi.json describes what each route takes.",
    "confirmation-required": "An erasure needs its confirmation: repeat the memory's id as "
    "`confirm` (DELETE /v1/memories/{id}?confirm={id}). Nothing was erased.",
    "unauthorized": "No API key, or one that is malformed, unknown or revoked. Send "
    "`Authorization: Bearer kk_...` with a live key.",
    "forbidden": "The key may not do this: a read-only key on a writing route, a store-wide "
    "operation asked with a key, or a keyless request to a name that is not loopback.",
    "not-found": "No such route, or no memory, profile or key with that id for the caller's "
    "owner (another owner's ids are not found either).",
    "method-not-allowed": "The route exists but not with this HTTP method.",
    "conflict": "The request conflicts with the store's state (a period already "
    "consolidated, a batch asked for too far ahead, an id already used).",
    "protected": "The memory is protected (erase it with force=true, or unprotect it first), "
    "or the protected-memory limit is reached (unprotect one of the listed memories).",
    "too-large": "The request body is larger than the server's --max-body. Send less at once.",
    "unsupported-media-type": "The API reads JSON: send `Content-Type: application/json`.",
    "busy": "The store is locked by another writer, or a batch is running. Retry shortly.",
    "http": "Another HTTP error, as its status says.",
    "internal": "kioku failed on this request; the server's log has the details and nothing "
    "was half-written.",
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


def errors_of(exc: KiokuError) -> dict[str, Any]:
    """The ``errors`` member of a refused value (the field and what it must be), if any."""
    field = getattr(exc, "field", None)
    allowed = getattr(exc, "allowed", None)
    if isinstance(field, str) and isinstance(allowed, str):
        return {"errors": [{"field": field, "problem": f"expected {allowed}"}]}
    return {}


def hint_of(exc: KiokuError) -> str | None:
    """How to fix a kioku error over HTTP (its own hint names the command line's fix)."""
    if isinstance(exc, MemoryNotFoundError):
        if exc.memory_id.startswith("profile of "):
            return "GET /v1/profiles lists the people the caller's memory knows"
        return "GET /v1/memories (or POST /v1/search) lists the ids of the caller's memories"
    if isinstance(exc, ProtectedMemoryError):
        return (
            f"DELETE /v1/memories/{exc.memory_id}/protect first, or repeat the erasure with "
            "force=true to erase it anyway"
        )
    if isinstance(exc, ProtectionLimitError):
        listed = ", ".join(c.id for c in exc.candidates)
        return (
            f"unprotect one of the oldest protected memories first (DELETE "
            f"/v1/memories/{{id}}/protect): {listed}"
            if listed
            else "raise protection.max_protected_memories in the server's config"
        )
    return exc.hint


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
