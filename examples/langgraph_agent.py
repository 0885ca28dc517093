#!/usr/bin/env python3
"""A LangGraph agent that remembers across threads, with kioku as its store.

A small StateGraph with one deterministic node (no LLM): a statement is written into the
store under ``("users", <user>, "memories")``; a question is answered from what the store
finds for it, whatever thread said it. Each thread has its own conversation state (the
checkpointer), the store is shared by all of them, and each user sees only their own items.
At the end the kioku home is opened again to show the memories are on disk.

Runs offline on a temporary kioku home: ``python examples/langgraph_agent.py``
(needs ``pip install 'kioku[langgraph]'``). ``--home DIR`` keeps the home in DIR instead.
"""

from __future__ import annotations

import argparse
import operator
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from kioku import Kioku
from kioku.integrations.langgraph_store import KiokuStore


@dataclass
class Context:
    user_id: str


class State(TypedDict):
    said: Annotated[list[str], operator.add]
    replies: Annotated[list[str], operator.add]


def chat(state: State, runtime: Runtime[Context]) -> dict[str, list[str]]:
    """Remember a statement; answer a question from the store."""
    store = runtime.store
    assert store is not None
    message = state["said"][-1]
    namespace = ("users", runtime.context.user_id, "memories")
    if not message.rstrip().endswith("?"):
        key = f"note-{len(store.search(namespace, limit=1000)) + 1}"
        store.put(namespace, key, {"text": message})
        return {"replies": ["Noted."]}
    found = store.search(namespace, query=message, limit=1)
    if not found:
        return {"replies": ["I don't remember anything about that."]}
    return {"replies": [f"You told me: {found[0].value['text']}"]}


def build(store: KiokuStore) -> Any:
    graph = StateGraph(State, context_schema=Context)
    graph.add_node("chat", chat)
    graph.add_edge(START, "chat")
    graph.add_edge("chat", END)
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def say(agent: Any, user: str, thread: str, message: str) -> None:
    result = agent.invoke(
        {"said": [message]},
        {"configurable": {"thread_id": thread}},
        context=Context(user_id=user),
    )
    print(f"[{thread}] {user}: {message}")
    print(f"[{thread}] agent: {result['replies'][-1]}")


def run(home: Path) -> None:
    with Kioku.open(home, env={}) as memory:
        store = KiokuStore(memory, user_label=1, index={"fields": ["text"]})
        agent = build(store)
        say(agent, "alice", "monday", "I drink green tea every morning.")
        say(agent, "alice", "monday", "My cat is called Momo.")
        say(agent, "alice", "tuesday", "What do I drink in the morning?")
        say(agent, "alice", "tuesday", "What is my cat called?")
        say(agent, "bob", "wednesday", "What do I drink in the morning?")
        own = agent.get_state({"configurable": {"thread_id": "tuesday"}}).values["said"]
        print(f"the tuesday thread's own messages: {len(own)}")
    with Kioku.open(home, env={}) as again:
        names = KiokuStore(again, user_label=1).list_namespaces()
        alice = Kioku.open(home, env={}, user_id="alice")
        with alice:
            kept = [m.content for m in alice.list(kind="knowledge")]
    print(f"namespaces on disk: {names}")
    print(f"alice's knowledge in kioku: {sorted(kept)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="the kioku home (default: a temporary one)")
    args = parser.parse_args()
    if args.home is not None:
        run(args.home)
        return
    with tempfile.TemporaryDirectory(prefix="kioku-langgraph-") as tmp:
        run(Path(tmp) / "kioku")


if __name__ == "__main__":
    main()
