"""API keys of the server: create, list, revoke and verify.

A key reads ``kk_<8 hex id>_<secret>``. It is shown once, when it is made; the store keeps
its id and the SHA-256 of the whole key, never the key. Each key grants ``read`` or
``read-write`` on exactly one owner scope (user and agent).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kioku.core.validate import check_scope_id
from kioku.errors import KiokuError, ValidationError
from kioku.ports.store_records import ApiKey
from kioku.records import Record

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = [
    "RIGHTS",
    "AuthError",
    "KeyGrant",
    "UnknownKeyError",
    "create_key",
    "list_keys",
    "revoke_key",
    "verify_key",
]

#: The rights a key may grant.
RIGHTS: Final = ("read", "read-write")
_MAX_NAME_CHARS: Final = 80
_KEY_ID: Final = re.compile(r"kk_[0-9a-f]{8}")
_KEY: Final = re.compile(r"(kk_[0-9a-f]{8})_([A-Za-z0-9_-]{43})")
#: Compared against when the key id is unknown, so every refusal costs one comparison.
_NO_HASH: Final = "0" * 64


class AuthError(KiokuError):
    """An API key that is malformed, unknown or revoked."""

    exit_code = 1

    def __init__(self) -> None:
        super().__init__(
            "the API key is not valid",
            hint="check the key, or create a new one with `kioku keys create`",
        )


class UnknownKeyError(KiokuError):
    """No live API key has this id."""

    exit_code = 2

    def __init__(self, key_id: str) -> None:
        self.key_id = key_id
        super().__init__(
            f"no active API key with id {key_id!r}",
            hint="`kioku keys list` shows the ids of the keys in use",
        )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class KeyGrant(Record):
    """What a verified key allows: ``rights`` on the scope ``user_id``/``agent_id``."""

    key_id: str
    user_id: str
    agent_id: str
    rights: str


def _hash(plain: str) -> str:
    return hashlib.sha256(plain.encode("utf-8")).hexdigest()


def _check_name(name: object) -> str:
    if (
        not isinstance(name, str)
        or not 1 <= len(name) <= _MAX_NAME_CHARS
        or not name.isprintable()
        or not name.strip()
    ):
        raise ValidationError("name", name, f"1 to {_MAX_NAME_CHARS} printable characters")
    return name


def _check_rights(rights: object) -> str:
    if rights not in RIGHTS:
        raise ValidationError("rights", rights, "read or read-write")
    return str(rights)


def create_key(
    engine: Engine, name: str, user_id: str, agent_id: str, rights: str = "read-write"
) -> tuple[ApiKey, str]:
    """Make a key for one scope; the record kept and the key itself (shown only now)."""
    name = _check_name(name)
    user_id = check_scope_id("user_id", user_id)
    agent_id = check_scope_id("agent_id", agent_id)
    rights = _check_rights(rights)
    key_id = f"kk_{secrets.token_hex(4)}"
    plain = f"{key_id}_{secrets.token_urlsafe(32)}"
    kept = ApiKey(
        id=key_id,
        name=name,
        secret_hash=_hash(plain),
        user_id=user_id,
        agent_id=agent_id,
        rights=rights,
        created_at=engine.clock.now(),
    )
    engine.store.add_key(kept)
    return kept, plain


def list_keys(engine: Engine, include_revoked: bool = False) -> list[ApiKey]:
    """The keys in use (and the revoked ones when asked), oldest first."""
    return engine.store.keys(include_revoked)


def revoke_key(engine: Engine, key_id: str) -> ApiKey:
    """Revoke a key in use; the key as it is now. UnknownKeyError when there is none."""
    if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
        raise UnknownKeyError(str(key_id))
    if not engine.store.revoke_key(key_id, engine.clock.now()):
        raise UnknownKeyError(key_id)
    revoked = engine.store.key_by_id(key_id)
    if revoked is None:
        raise UnknownKeyError(key_id)
    return revoked


def verify_key(engine: Engine, plain: str, *, touch: bool = True) -> KeyGrant:
    """What a presented key grants; AuthError when it is malformed, unknown or revoked.
    A key that passes is marked used now, unless ``touch`` is false."""
    match = _KEY.fullmatch(plain) if isinstance(plain, str) else None
    if match is None:
        raise AuthError()
    key = engine.store.key_by_id(match.group(1))
    expected = _NO_HASH if key is None else key.secret_hash
    same = hmac.compare_digest(_hash(plain).encode("ascii"), expected.encode("ascii"))
    if key is None or not same or key.revoked_at is not None:
        raise AuthError()
    if touch:
        engine.store.touch_key(key.id, engine.clock.now())
    return KeyGrant(key_id=key.id, user_id=key.user_id, agent_id=key.agent_id, rights=key.rights)
