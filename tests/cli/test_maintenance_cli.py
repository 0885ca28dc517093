"""``kioku vacuum`` and ``kioku recover`` as a user runs them."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

from tests.cli.conftest import Run, run_kioku


def _stock(home: Path, count: int) -> list[str]:
    """``count`` memories stored through the Python API (what is tested is maintenance)."""
    from kioku import Kioku

    with Kioku.open(home, env={}) as k:
        return [
            k.remember(
                f"maintenance memory {n} " + "filler words " * 40,
                "c " * 100,
                intensity=40,
                category="work",
            ).id
            for n in range(count)
        ]


def test_vacuum_reports_sizes_and_truncates_the_log(kioku: Run, home: Path) -> None:
    from kioku import Kioku

    stocked = _stock(home, 20)
    assert kioku("forget", stocked[0]).code == 0
    with Kioku.open(home, env={}) as k:
        for memory_id in stocked[1:15]:
            k.erase(memory_id)
    done = kioku("vacuum", "--json")
    assert done.code == 0, done.err
    report = done.json()
    assert report["size_after"] < report["size_before"]
    assert report["wal_truncated"] is True
    assert not (home / "memories.db-wal").exists() or (home / "memories.db-wal").stat().st_size == 0
    text = kioku("vacuum")
    assert text.code == 0
    assert text.out.startswith("vacuumed: ")
    assert kioku("doctor").code == 0


def test_recover_a_home_into_a_new_file(kioku: Run, home: Path, tmp_path: Path) -> None:
    _stock(home, 5)
    target = tmp_path / "saved.db"
    done = run_kioku("recover", str(home), "--to", str(target), "--json")
    assert done.code == 0, done.err
    report = done.json()
    assert report["complete"] is True
    assert {t["table"]: t["saved"] for t in report["tables"]}["memories"] == 5
    fresh = tmp_path / "fresh"
    fresh.mkdir(mode=0o700)
    target.rename(fresh / "memories.db")
    assert len(run_kioku("--home", str(fresh), "list", "--json").json()) == 5
    assert run_kioku("--home", str(fresh), "doctor").code == 0
    again = run_kioku("recover", str(home), "--to", str(fresh / "memories.db"))
    assert again.code == 2
    assert "already exists" in again.err
    missing = run_kioku("recover", str(tmp_path / "nowhere"), "--to", str(tmp_path / "x.db"))
    assert missing.code == 2


def test_recover_a_damaged_file_says_what_was_lost(kioku: Run, home: Path, tmp_path: Path) -> None:
    _stock(home, 60)
    db = home / "memories.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        leaves = [
            int(r[0])
            for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = 'memories' AND pagetype = 'leaf' "
                "ORDER BY pageno"
            )
        ]
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(db.read_bytes())
    with open(damaged, "r+b") as file:
        file.seek((leaves[len(leaves) // 2] - 1) * page)
        file.write(b"\x00\xff" * (page // 2))
    before = hashlib.sha256(damaged.read_bytes()).hexdigest()
    done = run_kioku("recover", str(damaged), "--to", str(tmp_path / "saved.db"))
    assert done.code == 1, done.err
    assert "some rows were lost" in done.out
    assert hashlib.sha256(damaged.read_bytes()).hexdigest() == before
    with closing(sqlite3.connect(tmp_path / "saved.db")) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        saved = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    assert 0 < saved < 60


def test_reindex_on_sqlite_lists_each_model_and_builds_nothing(kioku: Run, home: Path) -> None:
    assert kioku("init").code == 0
    empty = kioku("reindex")
    assert empty.code == 0, empty.err
    assert "no vectors stored" in empty.out
    _stock(home, 3)
    done = kioku("reindex", "--json")
    assert done.code == 0, done.err
    (entry,) = done.json()["indexes"]
    assert entry["model"].startswith("offline:")
    assert (entry["vectors"], entry["before"], entry["after"]) == (3, "exact", "exact")
    assert entry["rebuilt"] is False
    text = kioku("reindex", "--force")
    assert text.code == 0
    assert "nothing to build: these vectors are searched exactly" in text.out
    refused = kioku("reindex", "--model", "no-such-model")
    assert refused.code == 2
    assert "no-such-model" in refused.err
    assert entry["model"] in refused.err
