"""``kioku import --from chatgpt``: the ``conversations.json`` of a ChatGPT data export.

The file is a JSON list of conversations. Each has an ``id`` (or ``conversation_id``), a
``create_time`` in epoch seconds, a ``mapping`` of message nodes (``id``, ``message``,
``parent``, ``children``) and ``current_node``, the last node of the branch the user last
saw. Only that branch is read, from its root down to ``current_node`` (regenerated answers
and edits left behind on other branches are not). A message has ``author.role`` (``user``,
``assistant``, ``system`` or ``tool``), ``create_time`` and ``content`` whose ``parts`` hold
its text.

Each user message starts a turn, and the assistant's text messages after it (until the
next user message) are the answer. A turn is remembered at its user message's time (the
conversation's when it has none) in the session ``chatgpt:<conversation id>``, under the
source id ``chatgpt:<conversation id>:<message id>``. System and tool messages, hidden
messages, assistant messages addressed to a tool, and parts that are not text (images,
files) are left out.
"""

from __future__ import annotations

import json
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from kioku.core.validate import MAX_ID_CHARS, MAX_TEXT_CHARS
from kioku.service.importers.common import ImportPlan, ImportSourceError, digest, moment
from kioku.service.remember.imports import ImportTurn

__all__ = ["FORMAT", "read_chatgpt"]

FORMAT: Final = "chatgpt"
_MAX_FILE_BYTES: Final = 2 * 1024 * 1024 * 1024


def _source_file(path: Path) -> Path:
    if path.is_dir():
        path = path / "conversations.json"
    if not path.is_file():
        raise ImportSourceError(
            str(path), "", "no such file", hint="name conversations.json or the export's folder"
        )
    return path


def _load(path: Path) -> list[Any]:
    shown = str(path)
    if path.stat().st_size > _MAX_FILE_BYTES:
        raise ImportSourceError(shown, "", f"larger than {_MAX_FILE_BYTES} bytes")
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ImportSourceError(shown, f"byte {exc.start + 1}", "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ImportSourceError(
            shown, f"line {exc.lineno} column {exc.colno}", f"not JSON ({exc.msg})"
        ) from None
    if not isinstance(data, list):
        raise ImportSourceError(
            shown, "top level", f"expected a list of conversations, got {type(data).__name__}"
        )
    return data


def _branch(conv: dict[str, Any], shown: str, where: str) -> list[dict[str, Any]]:
    """The nodes from the root to ``current_node``, in order."""
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        raise ImportSourceError(shown, f"{where}.mapping", "expected an object of message nodes")
    node_id = conv.get("current_node")
    if node_id is None:  # no branch marked: follow the latest child from the root
        roots = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("parent")]
        node_id = roots[0] if roots else None
        while node_id is not None and mapping.get(node_id, {}).get("children"):
            node_id = mapping[node_id]["children"][-1]
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None:
        node = mapping.get(node_id) if isinstance(node_id, str) else None
        if not isinstance(node, dict):
            raise ImportSourceError(
                shown, f"{where}.mapping", f"node {node_id!r} is named but not there"
            )
        if node_id in seen:
            raise ImportSourceError(shown, f"{where}.mapping", f"node {node_id!r} is in a loop")
        seen.add(node_id)
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    text = content.get("text")
    return text.strip() if isinstance(text, str) else ""


def _visible(message: dict[str, Any]) -> bool:
    meta = message.get("metadata")
    hidden = isinstance(meta, dict) and bool(meta.get("is_visually_hidden_from_conversation"))
    return not hidden and message.get("recipient", "all") in ("all", None)


def _id(value: object, fallback: str) -> str:
    text = value if isinstance(value, str) and value.strip() else fallback
    return text if len(text) <= MAX_ID_CHARS // 3 else digest(text)


def _turns(
    conv: dict[str, Any], number: int, shown: str, tz: tzinfo, now: datetime
) -> tuple[list[ImportTurn], int]:
    where = f"conversation {number}"
    conv_id = _id(conv.get("conversation_id") or conv.get("id"), f"{number}")
    session = f"{FORMAT}:{conv_id}"
    started = conv.get("create_time")
    turns: list[ImportTurn] = []
    ignored = 0
    pending: tuple[str, str, datetime | None, list[str]] | None = None

    def close() -> None:
        if pending is not None:
            msg_id, user, at, answers = pending
            assistant = "\n\n".join(answers)
            if len(user) > MAX_TEXT_CHARS or len(assistant) > MAX_TEXT_CHARS:
                raise ImportSourceError(
                    shown, f"{where} message {msg_id}", f"over {MAX_TEXT_CHARS} characters"
                )
            turns.append(
                ImportTurn(
                    line=number,
                    user=user,
                    assistant=assistant,
                    at=at,
                    session_id=session,
                    source_id=f"{session}:{msg_id}",
                )
            )

    for index, node in enumerate(_branch(conv, shown, where)):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        author = message.get("author")
        role = author.get("role") if isinstance(author, dict) else None
        text = _text(message)
        if role not in ("user", "assistant") or not text or not _visible(message):
            ignored += 1
            continue
        if role == "user":
            close()
            raw = message.get("create_time") or started
            label = f"{where} message {message.get('id') or index} create_time"
            at = None if raw is None else moment(raw, tz, now, path=shown, where=label)
            msg_id = _id(message.get("id") or node.get("id"), f"{index}")
            pending = (msg_id, text, at, [])
        elif pending is not None:
            pending[3].append(text)
        else:
            ignored += 1  # an answer before any question
    close()
    return turns, ignored


def read_chatgpt(source: Path, *, tz: tzinfo, now: datetime) -> ImportPlan:
    """Every turn of the current branch of every conversation (nothing is written)."""
    path = _source_file(source)
    shown = str(path)
    turns: list[ImportTurn] = []
    ignored = 0
    for number, conv in enumerate(_load(path), start=1):
        if not isinstance(conv, dict):
            raise ImportSourceError(shown, f"conversation {number}", "expected an object")
        found, skipped = _turns(conv, number, shown, tz, now)
        turns += found
        ignored += skipped
    return ImportPlan(FORMAT, turns=tuple(turns), ignored=ignored)
