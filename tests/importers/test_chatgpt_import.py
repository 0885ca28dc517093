"""``kioku import --from chatgpt`` on a conversations.json in the shape of a ChatGPT export."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from kioku import Kioku
from kioku.core.model import Kind
from kioku.ports.store import Order
from tests.cli.conftest import run_kioku
from tests.importers.conftest import FIXTURES, Cli, copy_fixture

KYOTO = "chatgpt:6659a000-0000-4000-8000-00000000c0de"
BREAD = "chatgpt:6682b000-0000-4000-8000-0000000bread"


def test_each_turn_of_the_current_branch_becomes_an_episode_at_its_time(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    source = copy_fixture("chatgpt", tmp_path)
    done = cli("import", "--from", "chatgpt", str(source / "conversations.json"), "--json")
    assert done.code == 0, done.err
    report = done.json()
    assert (report["created"], report["episodes"], report["knowledge"]) == (3, 3, 0)
    assert report["ignored"] == 3  # the hidden system message, the tool call, the tool output
    with Kioku.open(home, env={}) as k:
        episodes = k.list(kind="episode", archived=None, order=Order.CREATED_ASC)
    assert [e.kind for e in episodes] == [Kind.EPISODE] * 3
    assert [e.session_id for e in episodes] == [KYOTO, KYOTO, BREAD]
    assert [e.created for e in episodes] == [
        datetime.fromtimestamp(1717200010, UTC),
        datetime.fromtimestamp(1717200300, UTC),
        datetime.fromtimestamp(1719800005, UTC),
    ]
    assert [e.source_ids for e in episodes] == [
        (f"{KYOTO}:aaaaaaaa-0000-4000-8000-000000000003",),
        (f"{KYOTO}:aaaaaaaa-0000-4000-8000-000000000006",),
        (f"{BREAD}:bbbbbbbb-0000-4000-8000-000000000002",),
    ]
    first = f"{episodes[0].trigger}\n{episodes[0].content}"
    assert "Tofuku-ji" in first  # the answer on the branch the conversation ended on
    assert "Golden Pavilion" not in first  # the regenerated answer left behind is not
    second = f"{episodes[1].trigger}\n{episodes[1].content}"
    assert "Arashiyama" in second
    assert "search(" not in second
    assert "Open all day" not in second


def test_a_second_import_and_a_folder_import_create_nothing(cli: Cli, tmp_path: Path) -> None:
    source = copy_fixture("chatgpt", tmp_path)
    assert cli("import", "--from", "chatgpt", str(source)).code == 0
    again = cli("import", "--from", "chatgpt", str(source / "conversations.json"))
    assert again.code == 0, again.err
    assert again.out.startswith("imported 0 (0 episodes, 0 knowledge, 0 procedures), skipped 3")


def test_the_real_command_imports_and_reports(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    source = str(FIXTURES / "chatgpt" / "conversations.json")
    dry = run_kioku("--home", home, "import", "--from", "chatgpt", "--dry-run", source)
    assert dry.code == 0, dry.err
    assert dry.out.startswith("dry run: would import 3 (3 episodes, 0 knowledge, 0 procedures)")
    assert "Which temples should I see?" in dry.out
    done = run_kioku("--home", home, "import", "--from", "chatgpt", source)
    assert done.code == 0, done.err
    assert done.out.startswith("imported 3 (3 episodes")
