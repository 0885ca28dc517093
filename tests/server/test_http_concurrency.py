"""Fifty clients at once, for three owners, each writing turns and recalling a fixed number
of times: no request fails, every turn is stored exactly once under its owner, and the store
passes ``kioku doctor`` (its integrity check) afterwards."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.server.running import kioku, make_key, serving

CLIENTS = 50
OPERATIONS = 8  # per client: a turn, then a recall, four times
OWNERS = ("alice", "bob", "carol")


@pytest.mark.slow
def test_fifty_clients_across_three_owners(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    home = tmp_path / "home"
    keys = {owner: make_key(home, owner, owner) for owner in OWNERS}
    errors: list[str] = []
    written: dict[str, list[str]] = {owner: [] for owner in OWNERS}
    guard = threading.Lock()
    start = threading.Barrier(CLIENTS)
    counts = Counter[str]()

    with serving(home, "--no-ui") as served:

        def client_run(n: int) -> None:
            owner = OWNERS[n % len(OWNERS)]
            with served.client(keys[owner]) as client:
                start.wait(timeout=120)
                for step in range(OPERATIONS // 2):
                    text = (
                        f"client {n} step {step} of {owner} notes the heron number {n * 10 + step}"
                    )
                    try:
                        turn = client.post("v1/turns", json={"user": text, "session_id": f"c{n}"})
                        recall = client.post("v1/recall", json={"query": f"heron number {n}"})
                    except httpx.HTTPError as exc:
                        with guard:
                            errors.append(f"{owner} {n}: {type(exc).__name__} {exc}")
                        continue
                    with guard:
                        counts["requests"] += 2
                        if turn.status_code != 201:
                            errors.append(f"turn {n}/{step}: {turn.status_code} {turn.text[:200]}")
                        else:
                            written[owner].append(text)
                        if recall.status_code != 200:
                            errors.append(f"recall {n}: {recall.status_code} {recall.text[:200]}")

        threads = [threading.Thread(target=client_run, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        assert not any(thread.is_alive() for thread in threads)

        listed: dict[str, list[str]] = {}
        for owner in OWNERS:
            with served.client(keys[owner]) as client:
                page = client.get("v1/memories", params={"kind": "episode", "limit": 500})
                assert page.status_code == 200
                listed[owner] = [m["trigger"] for m in page.json()["items"]]
                assert all(m["user_id"] == owner for m in page.json()["items"])

    record_property(
        "reliability",
        {
            "clients": CLIENTS,
            "owners": len(OWNERS),
            "requests": counts["requests"],
            "errors": len(errors),
            "turns_stored": sum(len(v) for v in written.values()),
        },
    )
    assert errors == []
    assert sum(len(v) for v in written.values()) == CLIENTS * OPERATIONS // 2
    for owner in OWNERS:
        assert sorted(listed[owner]) == sorted(written[owner])
    with sqlite3.connect(home / "memories.db") as conn:
        rows = conn.execute(
            "SELECT user_id, trigger, COUNT(*) FROM memories WHERE kind = 'episode' "
            "GROUP BY user_id, trigger"
        ).fetchall()
    conn.close()
    assert all(count == 1 for _, _, count in rows)
    on_file = {owner: sorted(t for u, t, _ in rows if u == owner) for owner in OWNERS}
    assert on_file == {owner: sorted(written[owner]) for owner in OWNERS}
    checked = kioku(home, "doctor")  # the store's integrity check (there is no `kioku check`)
    assert checked.returncode == 0, checked.stdout + checked.stderr
