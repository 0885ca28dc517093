"""The ``[store] url`` setting: which URLs select PostgreSQL, and how to show one safely.

Nothing here imports psycopg: the configuration is checked whether or not the ``postgres``
extra is installed.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = [
    "SCHEMA_PATTERN",
    "URL_KEYS",
    "URL_SCHEMES",
    "mask_url",
    "schema_problem",
    "url_problem",
]

#: The settings that hold a server's URL, so a password: shown only through :func:`mask_url`.
URL_KEYS = ("store.url", "store.read_url")
#: The schemes libpq accepts in a connection URI.
URL_SCHEMES = ("postgresql", "postgres")
#: A schema name kioku accepts: a plain lower-case identifier (no quoting needed).
SCHEMA_PATTERN = r"^[a-z_][a-z0-9_]{0,62}$"
_SCHEMA = re.compile(SCHEMA_PATTERN)
_SECRET_PARAMS = frozenset({"password", "sslpassword"})
MASK = "***"


def mask_url(url: str) -> str:
    """``url`` with its password (in the user part or the query) replaced by ``***``.

    Text that is not a URL is masked whole when it might hold a password."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            user, _, hosts = netloc.rpartition("@")
            if ":" in user:
                user = user.split(":", 1)[0] + ":" + MASK
            netloc = f"{user}@{hosts}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(k in _SECRET_PARAMS for k, _ in pairs):
                masked = [(k, MASK if k in _SECRET_PARAMS else v) for k, v in pairs]
                query = urlencode(masked, safe="*/,:")
        out = f"{parts.scheme}://{netloc}{parts.path}" if "://" in url else url.split("?")[0]
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        return out + (f"?{query}" if query else "") + fragment
    except ValueError:
        return MASK if "password" in url or "@" in url else url


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a store URL, or ``None`` when it can."""
    if url != url.strip():
        return "the URL has spaces around it"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        return f"it is not a URL ({exc})"
    if parts.scheme.lower() not in URL_SCHEMES:
        got = f"the scheme {parts.scheme!r}" if parts.scheme else "no scheme"
        return f"{got}; a PostgreSQL URL starts with postgresql://"
    return None


def schema_problem(name: str) -> str | None:
    """Why ``name`` cannot be the store's schema, or ``None`` when it can."""
    if _SCHEMA.match(name):
        return None
    return "use lower-case letters, digits and underscores, starting with a letter or _"
