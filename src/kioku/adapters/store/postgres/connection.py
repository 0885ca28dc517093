"""The connection pool of the PostgreSQL store, and psycopg errors as kioku errors.

Nothing outside this package sees a psycopg exception: :func:`translating` maps each one onto
the :class:`~kioku.errors.StoreError` family, with a hint that says what to do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final, LiteralString

import psycopg
import psycopg_pool
from psycopg import errors as pg_errors

from kioku.errors import StoreError, StoreLockedError, ValidationError

__all__ = [
    "DEFAULT_POOL_MAX",
    "DEFAULT_TIMEOUT_S",
    "Conn",
    "create_schema",
    "enable_row_security",
    "first_line",
    "open_pool",
    "owner_settings",
    "redacted",
    "snapshot",
    "translating",
]

#: A connection of the store's pool (rows as tuples).
Conn = psycopg.Connection[tuple[object, ...]]

DEFAULT_POOL_MAX: Final = 8
DEFAULT_TIMEOUT_S: Final = 30.0
_RULES_HINT: Final = "validate memories before storing them; nothing was written"
_OWNER: Final = (
    "SELECT set_config('kioku.all_users', %s, false), set_config('kioku.user_id', %s, false)"
)
_OWNER_AND_PATH: Final = f"{_OWNER}, set_config('search_path', %s, false)"


@contextmanager
def snapshot(conn: Conn) -> Iterator[Conn]:
    """A read-only, repeatable-read transaction on ``conn`` (idle, from a pool), opened by one
    ``BEGIN`` that names both: set as the connection's defaults for that ``BEGIN`` (which
    needs no round trip) and put back however the block ends, so the pool never hands out a
    connection that refuses writes."""
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    conn.read_only = True
    try:
        with conn.transaction():
            yield conn
    finally:
        if not conn.closed:
            try:
                conn.isolation_level = None
                conn.read_only = None
            except psycopg.Error:  # still in a transaction: the pool must not keep it
                conn.close()


def redacted(url: str) -> str:
    """``url`` without its password, for messages."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the configured PostgreSQL server"
    host = params.get("host") or "localhost"
    name = params.get("dbname") or params.get("user") or ""
    return f"postgresql://{host}/{name}"


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (psycopg's go on with context), or its type."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def create_schema(url: str, schema: str, timeout_s: float) -> None:
    """Create ``schema`` on the server at ``url`` when it is missing."""
    from psycopg import sql

    where = redacted(url)
    with translating(where):
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=int(timeout_s)) as conn:
                # Created only when missing: a role without CREATE on the database can use
                # a schema made for it.
                found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
                if found.fetchone() is None:
                    create = sql.SQL("CREATE SCHEMA IF NOT EXISTS {}")
                    # Another process may create it between the check and here.
                    taken = (pg_errors.UniqueViolation, pg_errors.DuplicateSchema)
                    with contextlib.suppress(*taken):
                        conn.execute(create.format(sql.Identifier(schema)))
        except psycopg.OperationalError as exc:
            raise StoreError(
                f"cannot connect to {where}: {first_line(exc)}",
                hint="check store.url (KIOKU_STORE_URL), that the server runs, "
                "and that it accepts this role",
            ) from None


def owner_settings(owner: str | None, schema: str | None = None) -> Callable[[Conn], None]:
    """What every new connection of a pool runs first: the session settings the row security
    policies read (migration 8). ``owner`` None: store-wide (``kioku.all_users`` on); else
    bound to that user (``kioku.user_id``), so with row-level security enabled the session
    sees and writes that user's rows only, whatever a statement's filter. ``schema``: the
    session's ``search_path`` becomes that schema, then ``public`` (where pgvector usually
    is). It is set here, on the connection, rather than as a startup parameter in the URL
    (``options``), which connection poolers such as PgBouncer refuse."""

    settings = ("off" if owner is not None else "on", owner or "")

    def configure(conn: Conn) -> None:
        if schema is None:
            conn.execute(_OWNER, settings)
        else:
            conn.execute(_OWNER_AND_PATH, (*settings, f"{_quoted(conn, schema)}, public"))

    return configure


def _quoted(conn: Conn, name: str) -> str:
    """``name`` as an SQL identifier (quoted, so its case and characters are kept)."""
    from psycopg import sql

    return sql.Identifier(name).as_string(conn)


def enable_row_security(conn: Conn, tables: Sequence[str], lock: LiteralString) -> list[str]:
    """Enable and force row-level security on those of ``tables`` (in the current schema)
    that lack it, in one transaction that first runs ``lock`` (the schema's lock); the
    tables changed. Forced, so the tables' owner is held to the policies too (superusers and
    BYPASSRLS roles never are). ``conn``: autocommit, outside a transaction."""
    from psycopg import sql

    with conn.transaction():
        conn.execute(lock)
        done = conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
            "AND relname = ANY(%s) AND relrowsecurity AND relforcerowsecurity",
            (list(tables),),
        ).fetchall()
        missing = sorted(set(tables) - {str(row[0]) for row in done})
        try:
            for table in missing:
                name = sql.Identifier(table)
                conn.execute(sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(name))
                conn.execute(sql.SQL("ALTER TABLE {} FORCE ROW LEVEL SECURITY").format(name))
        except pg_errors.InsufficientPrivilege as exc:
            raise StoreError(
                "store.row_security is on, but row-level security is not enabled on "
                f"{', '.join(missing)} and this role may not enable it ({exc})".strip(),
                hint="open the store once with row_security on as the role that owns its "
                "tables (it enables it), or leave store.row_security off",
            ) from None
    return missing


def open_pool(
    url: str,
    *,
    max_size: int,
    timeout: float,
    configure: Callable[[Conn], None] | None = None,
    connect_timeout: int | None = None,
) -> psycopg_pool.ConnectionPool:
    """A pool of autocommit connections to ``url``, opened and checked; ``configure`` runs
    on each new connection; ``connect_timeout``: seconds libpq waits for each connection."""
    kwargs: dict[str, object] = {"autocommit": True}
    if connect_timeout is not None:
        kwargs["connect_timeout"] = connect_timeout
    pool: psycopg_pool.ConnectionPool = psycopg_pool.ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        timeout=timeout,
        kwargs=kwargs,
        configure=configure,
        open=False,
        name="kioku",
    )
    try:
        pool.open(wait=True, timeout=timeout)
    except psycopg_pool.PoolTimeout as exc:
        pool.close()
        raise StoreError(
            f"cannot connect to {redacted(url)} within {timeout:g} s",
            hint="check the store URL, that the server runs, and that it accepts this role",
        ) from exc
    return pool


def translate(exc: psycopg.Error | psycopg_pool.PoolTimeout, where: str) -> StoreError:
    """The kioku error for a psycopg error raised while working on ``where``."""
    detail = str(exc).strip() or type(exc).__name__
    if isinstance(exc, psycopg_pool.PoolTimeout):
        return StoreLockedError(
            f"no connection to {where} came free in time ({detail})",
            hint="retry in a moment, or give the store's pool more connections",
        )
    if isinstance(exc, pg_errors.LockNotAvailable | pg_errors.DeadlockDetected):
        return StoreLockedError(
            f"{where} is locked by another kioku process ({detail})",
            hint="retry in a moment",
        )
    if isinstance(exc, psycopg.IntegrityError):
        return StoreError(
            f"a change to {where} was refused because it breaks a rule of the store ({detail})",
            hint=_RULES_HINT,
        )
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(
            f"lost or refused connection to {where} ({detail})",
            hint="check that the server runs and accepts connections, then retry",
        )
    return StoreError(f"database error on {where} ({detail})")


@contextmanager
def translating(where: str) -> Iterator[None]:
    """Re-raise psycopg errors inside the block as kioku errors; text PostgreSQL cannot hold
    (a NUL character) as a ValidationError."""
    try:
        yield
    except pg_errors.UntranslatableCharacter as exc:
        raise ValidationError("text", str(exc), "text PostgreSQL can store") from exc
    except psycopg.DataError as exc:
        if "NUL" in str(exc) or "0x00" in str(exc):
            raise ValidationError(
                "text", "\\x00", "text without NUL characters", hint="remove the NUL bytes"
            ) from exc
        raise translate(exc, where) from exc
    except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
        raise translate(exc, where) from exc
