"""A server starts, answers on loopback, and refuses what it must."""

from __future__ import annotations

from pathlib import Path

from tests.server.running import kioku, make_key, serving


def test_serves_without_keys_on_loopback(tmp_path: Path) -> None:
    with serving(tmp_path / "home") as served, served.client() as client:
        answer = client.get("v1/memories")
        assert answer.status_code == 200
        assert answer.json()["items"] == []
        missing = client.get("v1/memories/mem_nothing")
        assert missing.status_code == 404
        assert missing.headers["content-type"] == "application/problem+json"
        assert missing.json()["status"] == 404


def test_refuses_a_public_address_without_keys(tmp_path: Path) -> None:
    done = kioku(tmp_path / "home", "serve", "--host", "0.0.0.0", "--port", "0")  # noqa: S104
    assert done.returncode == 2
    assert "without API keys" in done.stderr


def test_a_store_with_keys_needs_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = make_key(home, "app", "alice")
    with serving(home) as served:
        with served.client() as anonymous:
            refused = anonymous.get("v1/memories")
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"].startswith("Bearer")
        with served.client("kk_00000000_" + "x" * 43) as wrong:
            assert wrong.get("v1/memories").status_code == 401
        with served.client(key) as alice:
            assert alice.get("v1/memories").status_code == 200
        # The web UI's cookie is not a key for the API: a cross-site request cannot ride it.
        with served.client(cookies={"kioku_key": key}) as cookie_only:
            assert cookie_only.get("v1/memories").status_code == 401


def test_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with serving(home) as served:
        with served.client() as client:
            client.get("v1/memories")
        served.process.terminate()
        # uvicorn stops gracefully, then ends by the signal it was sent.
        assert served.process.wait(timeout=60) in (0, -15)
        assert served.process.stderr is not None
        assert "server stopped; the store is closed" in served.process.stderr.read()
    checked = kioku(home, "doctor")
    assert checked.returncode == 0, checked.stdout + checked.stderr
