"""``kioku context prune`` run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import Run, clean_env


def _conversation(turns: int) -> list[dict[str, str]]:
    out = [{"role": "system", "content": "You are a coding agent working in a repository."}]
    for i in range(turns):
        out.append({"role": "user", "content": f"Step {i}: please look at module m{i} and fix it"})
        out.append({"role": "assistant", "content": f"Looking at m{i}, it reads the config twice"})
        if i % 4 == 0:
            out.append({"role": "tool", "content": f"[Tool: pytest] error: test_m{i} failed"})
    return out


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_prune_keeps_the_budget_and_prints_messages_and_stats(tmp_path: Path, kioku: Run) -> None:
    source = _write(tmp_path / "chat.json", _conversation(60))
    done = kioku("context", "prune", str(source), "--max-tokens", "800", "--json")
    assert done.code == 0, done.err
    data = done.json()
    stats = data["stats"]
    assert stats["pruned"] is True
    assert stats["final_tokens"] <= 800
    assert stats["original_count"] == len(_conversation(60))
    assert data["messages"][0]["role"] == "system"  # the system prompt is kept
    assert data["messages"][-1]["content"] == _conversation(60)[-1]["content"]  # so is the newest
    assert data["stored"] == 0
    assert not (tmp_path / "home" / "memories.db").exists()  # nothing stored without --remember
    # the same in text, and the pruned list written to a file
    out = tmp_path / "pruned.json"
    text = kioku("context", "prune", str(source), "--max-tokens", "800", "-o", str(out))
    assert text.code == 0, text.err
    assert "pruned" in text.out
    assert "tokens" in text.out
    assert json.loads(out.read_text()) == data["messages"]


def test_below_the_threshold_nothing_happens(tmp_path: Path, kioku: Run) -> None:
    source = _write(tmp_path / "chat.json", _conversation(3))
    done = kioku("context", "prune", str(source), "--json")
    assert done.code == 0, done.err
    assert done.json()["stats"]["pruned"] is False
    assert done.json()["messages"] == _conversation(3)
    assert "nothing pruned" in kioku("context", "prune", str(source)).out


def test_stdin_and_content_blocks(home: Path) -> None:
    chat = [
        {"role": "user", "content": [{"type": "text", "text": "hello there"}]},
        {"role": "assistant", "content": "hi"},
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "context", "prune", "-", "--json"],
        input=json.dumps(chat),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["messages"][0] == {"role": "user", "content": "hello there"}


def test_remember_stores_the_removed_turns(tmp_path: Path, kioku: Run) -> None:
    source = _write(tmp_path / "chat.json", _conversation(60))
    done = kioku("context", "prune", str(source), "--max-tokens", "800", "--remember", "--json")
    assert done.code == 0, done.err
    data = done.json()
    assert data["stored"] > 0
    kept = " ".join(m["content"] for m in data["messages"])
    gone = next(i for i in range(60) if f"module m{i} " not in kept)
    found = kioku("recall", f"m{gone}", "--json")
    assert found.code == 0, found.err
    assert f"m{gone}" in found.out


def test_bad_input_is_a_clear_error(tmp_path: Path, kioku: Run) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[{"role": "user", "content": "hi"')
    done = kioku("context", "prune", str(broken))
    assert done.code == 2
    assert "not valid JSON" in done.err
    not_list = _write(tmp_path / "obj.json", {"role": "user"})
    done = kioku("context", "prune", str(not_list))
    assert done.code == 2
    assert "a JSON list" in done.err
    no_role = _write(tmp_path / "norole.json", [{"content": "hi"}])
    done = kioku("context", "prune", str(no_role))
    assert done.code == 2
    assert "messages[0].role" in done.err
    missing = kioku("context", "prune", str(tmp_path / "nope.json"))
    assert missing.code != 0
    assert "nope.json" in missing.err
    assert kioku("context", "prune", str(no_role), "--max-tokens", "0").code == 2
