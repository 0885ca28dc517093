"""``kioku hooks install|uninstall``: kioku's entries merged into Claude Code's settings.json."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kioku.interfaces.claude_code.settings import ENTRY
from tests.cli.conftest import Result, clean_env

EVENTS = ("UserPromptSubmit", "SessionStart", "SessionEnd", "PreCompact")

EXISTING: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"], "deny": []},
    "hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "echo other-prompt-hook"}]},
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh", "timeout": 5}]}
        ],
    },
    "env": {"FOO": "bar"},
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    return path


def _run(cwd: Path, user_home: Path, *args: str, **env: str) -> Result:
    environment = clean_env(HOME=str(user_home), **env)
    environment.pop("CLAUDE_CONFIG_DIR", None)
    environment.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=60,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _settings(project: Path) -> Path:
    return project / ".claude" / "settings.json"


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _ours(data: dict[str, Any], event: str) -> list[str]:
    return [
        h["command"]
        for g in data["hooks"].get(event, [])
        for h in g["hooks"]
        if ENTRY in h["command"] or "-m kioku" in h["command"]
    ]


def _words(command: str) -> list[str]:
    """The words of the command that runs kioku (before the `|| echo` fallback)."""
    core, _, fallback = command.partition(" || ")
    assert fallback.startswith("echo ")
    assert fallback.endswith(" >&2")
    return shlex.split(core)


def test_install_twice_keeps_the_rest_and_adds_ours_once(project: Path, user_home: Path) -> None:
    path = _settings(project)
    _write(path, EXISTING)
    for _ in range(2):
        done = _run(project, user_home, "hooks", "install", "--scope", "project")
        assert done.code == 0, done.err
    text = path.read_text()
    assert text.endswith("}\n")
    assert '\n  "model"' in text
    data = json.loads(text)
    assert list(data) == list(EXISTING)  # key order kept
    assert data["model"] == "opus"
    assert data["env"] == {"FOO": "bar"}
    assert data["permissions"] == EXISTING["permissions"]
    assert data["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert data["hooks"]["UserPromptSubmit"][0] == EXISTING["hooks"]["UserPromptSubmit"][0]
    for event in EVENTS:
        (command,) = _ours(data, event)
        words = _words(command)
        assert Path(words[0]).is_absolute()
        assert words[1:4] == ["-P", "-c", ENTRY]
        assert words[-2] == "hook"
    assert _words(_ours(data, "SessionEnd")[0])[-1] == "session-end"
    assert json.loads((path.with_name("settings.json.bak")).read_text()) == EXISTING


def test_the_installed_command_runs(project: Path, user_home: Path) -> None:
    _run(project, user_home, "hooks", "install", "--scope", "project")
    data = json.loads(_settings(project).read_text())
    (command,) = _ours(data, "UserPromptSubmit")
    env = clean_env(HOME=str(user_home))
    proc = subprocess.run(  # noqa: S602 - the command as Claude Code runs it
        command,
        shell=True,
        input='{"prompt": "/help"}',
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_uninstall_restores_the_rest(project: Path, user_home: Path) -> None:
    path = _settings(project)
    _write(path, EXISTING)
    assert _run(project, user_home, "hooks", "install", "--scope", "project").code == 0
    done = _run(project, user_home, "hooks", "uninstall", "--scope", "project")
    assert done.code == 0, done.err
    assert json.loads(path.read_text()) == EXISTING
    again = _run(project, user_home, "hooks", "uninstall", "--scope", "project", "--json")
    assert again.code == 0
    assert json.loads(again.out)["changed"] is False


def test_install_on_no_file_and_uninstall(project: Path, user_home: Path) -> None:
    path = _settings(project)
    assert _run(project, user_home, "hooks", "install", "--scope", "project").code == 0
    data = json.loads(path.read_text())
    assert list(data["hooks"]) == list(EVENTS)
    assert not path.with_name("settings.json.bak").exists()
    assert _run(project, user_home, "hooks", "uninstall", "--scope", "project").code == 0
    assert json.loads(path.read_text()) == {}


def test_invalid_json_is_refused_untouched(project: Path, user_home: Path) -> None:
    path = _settings(project)
    path.parent.mkdir()
    path.write_text('{"hooks": {,}\n')
    for command in ("install", "uninstall"):
        done = _run(project, user_home, "hooks", command, "--scope", "project")
        assert done.code == 2
        assert "not valid JSON" in done.err
        assert done.err.count("\n") == 1
        assert path.read_text() == '{"hooks": {,}\n'
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_dry_run_writes_nothing(project: Path, user_home: Path) -> None:
    path = _settings(project)
    _write(path, EXISTING)
    before = path.read_text()
    done = _run(project, user_home, "hooks", "install", "--scope", "project", "--dry-run")
    assert done.code == 0, done.err
    assert "dry run" in done.out
    assert "+" in done.out
    assert "kioku.interfaces.cli.entry" in done.out
    assert path.read_text() == before
    assert not path.with_name("settings.json.bak").exists()
    as_json = _run(
        project, user_home, "hooks", "install", "--scope", "project", "--dry-run", "--json"
    )
    report = json.loads(as_json.out)
    assert report["dry_run"] is True
    assert report["changed"] is True
    assert report["events"] == dict.fromkeys(EVENTS, "add")
    assert path.read_text() == before
    missing = project / "other"
    missing.mkdir()
    assert _run(missing, user_home, "hooks", "install", "--scope", "project", "--dry-run").code == 0
    assert not (missing / ".claude").exists()


def test_user_scope_and_claude_config_dir(project: Path, user_home: Path, tmp_path: Path) -> None:
    assert _run(project, user_home, "hooks", "install").code == 0
    assert (user_home / ".claude" / "settings.json").is_file()
    config_dir = tmp_path / "claude-config"
    done = _run(project, user_home, "hooks", "install", CLAUDE_CONFIG_DIR=str(config_dir))
    assert done.code == 0, done.err
    assert set(json.loads((config_dir / "settings.json").read_text())["hooks"]) == set(EVENTS)
    assert not _settings(project).exists()


def test_a_non_default_home_is_named(project: Path, user_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "kioku home"
    done = _run(project, user_home, "--home", str(home), "hooks", "install", "--scope", "project")
    assert done.code == 0, done.err
    (command,) = _ours(json.loads(_settings(project).read_text()), "SessionStart")
    words = _words(command)
    assert words[4:6] == ["--home", str(home)]
    assert words[-2:] == ["hook", "session-start"]
    # installing for the default home replaces the entry instead of adding a second one
    assert _run(project, user_home, "hooks", "install", "--scope", "project").code == 0
    (command,) = _ours(json.loads(_settings(project).read_text()), "SessionStart")
    assert "--home" not in command


def test_replaces_an_older_entry_of_ours(project: Path, user_home: Path) -> None:
    old = "/old/venv/bin/python -m kioku hook user-prompt-submit"
    settings = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": "echo keep-me"},
                        {"type": "command", "command": old},
                    ]
                }
            ]
        }
    }
    _write(_settings(project), settings)
    done = _run(project, user_home, "hooks", "install", "--scope", "project", "--json")
    assert json.loads(done.out)["events"]["UserPromptSubmit"] == "replace"
    data = json.loads(_settings(project).read_text())
    groups = data["hooks"]["UserPromptSubmit"]
    assert groups[0] == {"hooks": [{"type": "command", "command": "echo keep-me"}]}
    assert len(_ours(data, "UserPromptSubmit")) == 1
    assert old not in _ours(data, "UserPromptSubmit")


def _shell(command: str, user_home: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S602 - the command as Claude Code runs it
        command,
        shell=True,
        input=stdin,
        capture_output=True,
        text=True,
        env=clean_env(HOME=str(user_home)),
        timeout=60,
        check=False,
    )


def test_a_hook_whose_python_is_gone_fails_open_and_is_found(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    """A recreated or deleted virtual environment: the installed command still exits 0 with
    one line saying what to do; `kioku doctor` and `kioku hooks install` name the problem."""
    home = tmp_path / "kioku-home"
    assert _run(project, user_home, "--home", str(home), "init").code == 0
    assert _run(project, user_home, "hooks", "install", "--scope", "project").code == 0
    path = _settings(project)
    data = json.loads(path.read_text())
    gone = str(tmp_path / "old-venv" / "bin" / "python")
    for event in EVENTS:
        for group in data["hooks"][event]:
            for hook in group["hooks"]:
                hook["command"] = hook["command"].replace(shlex.quote(sys.executable), gone, 1)
    path.write_text(json.dumps(data))
    (command,) = _ours(data, "UserPromptSubmit")
    assert command.startswith(gone)
    ran = _shell(command, user_home, '{"prompt": "hello"}')
    assert ran.returncode == 0  # the conversation goes on
    assert "run kioku hooks install again" in ran.stderr
    assert ran.stdout == ""

    doctor = _run(project, user_home, "--home", str(home), "doctor", "--json")
    assert doctor.code == 1
    (hooks,) = [c for c in json.loads(doctor.out)["checks"] if c["name"] == "hooks"]
    assert not hooks["ok"]
    assert f"its Python {gone} does not exist any more" in hooks["detail"]
    assert "kioku hooks install --scope project" in hooks["detail"]

    fixed = _run(project, user_home, "hooks", "install", "--scope", "project")
    assert fixed.code == 0, fixed.err
    assert "the installed command could not run" in fixed.out
    assert "replace" in fixed.out
    (command,) = _ours(json.loads(path.read_text()), "UserPromptSubmit")
    assert _shell(command, user_home, '{"prompt": "/help"}').stderr == ""
    doctor = _run(project, user_home, "--home", str(home), "doctor", "--json")
    (hooks,) = [c for c in json.loads(doctor.out)["checks"] if c["name"] == "hooks"]
    assert hooks["ok"], hooks["detail"]


def test_a_python_without_kioku_is_found_too(project: Path, user_home: Path) -> None:
    from kioku.interfaces.claude_code.settings import command_problem, hook_command

    # an interpreter that exists but cannot import kioku (no site module: no site-packages)
    python = user_home / "python-without-kioku"
    python.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -S "$@"\n')
    python.chmod(0o755)
    command = hook_command("user-prompt-submit", python=str(python))
    assert command_problem(command) == f"its Python {python} cannot import kioku"
    assert command_problem(hook_command("user-prompt-submit")) is None
