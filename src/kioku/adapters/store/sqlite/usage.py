"""Token usage rows (schema version 3), for ``kioku stats --cost``."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, cast

from kioku.core.timefmt import format_ts

if TYPE_CHECKING:
    from kioku.core.usage import Purpose, Usage, UsageTotal

__all__ = ["CREATE_USAGE", "insert_usage", "usage_totals"]

CREATE_USAGE: Final = (
    """CREATE TABLE IF NOT EXISTS usage (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    at_utc REAL NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL CHECK (purpose IN ('analyze', 'summarize', 'keywords', 'embed')),
    input_tokens INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens INTEGER NOT NULL CHECK (output_tokens >= 0)
)""",
    "CREATE INDEX IF NOT EXISTS idx_usage_at_utc ON usage(at_utc)",
)


def insert_usage(conn: sqlite3.Connection, usage: Usage) -> None:
    conn.execute(
        "INSERT INTO usage (at, at_utc, provider, model, purpose, input_tokens, output_tokens) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            format_ts(usage.at),
            usage.at.timestamp(),
            usage.provider,
            usage.model,
            usage.purpose,
            max(0, int(usage.input_tokens)),
            max(0, int(usage.output_tokens)),
        ),
    )


def usage_totals(conn: sqlite3.Connection, since: datetime | None) -> list[UsageTotal]:
    from kioku.core.usage import UsageTotal

    rows = conn.execute(
        "SELECT provider, model, purpose, COUNT(*), SUM(input_tokens), SUM(output_tokens), "
        "MIN(at_utc), MAX(at_utc) "
        "FROM usage WHERE at_utc >= ? GROUP BY provider, model, purpose "
        "ORDER BY provider, model, purpose",
        (since.timestamp() if since else float("-inf"),),
    ).fetchall()
    return [
        UsageTotal(
            provider=str(r[0]),
            model=str(r[1]),
            purpose=cast("Purpose", r[2]),
            calls=int(r[3]),
            input_tokens=int(r[4] or 0),
            output_tokens=int(r[5] or 0),
            first_at=datetime.fromtimestamp(float(r[6]), UTC),
            last_at=datetime.fromtimestamp(float(r[7]), UTC),
        )
        for r in rows
    ]
