"""The vectors of memories: a new memory's vector, the model the stored vectors come from, the
cache a search reads, and re-embedding with another model.

Vectors of different models are never compared. The state row :data:`VECTOR_MODEL_KEY` names
the model of the newest vectors, so a change of embedding model is noticed cheaply at recall
(a warning) until ``kioku reembed`` gives every memory a vector of the current model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from kioku.core.model import Embedding
from kioku.errors import KiokuError
from kioku.ports.conformance import conforms
from kioku.ports.embedder import TextEmbedder, text_values
from kioku.ports.store import MemoryPatch
from kioku.service.engine import warn
from kioku.service.scope import scoped

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.engine import Engine

__all__ = [
    "VECTOR_MODEL_KEY",
    "check_vector_model",
    "embed_memory",
    "note_vector_model",
    "reembed",
    "warm_vector_cache",
]

#: The state row naming the model of the newest vectors.
VECTOR_MODEL_KEY = "embedding_model"


def _embeds_one(embedder: object) -> bool:
    """Whether the embedder embeds one text without numpy (decided once per type)."""
    return conforms(embedder, TextEmbedder)


def embed_memory(engine: Engine, memory: Memory) -> Memory:
    """The memory with a vector of its trigger and content, unless it has one already."""
    if memory.embedding is not None:
        return memory
    embedder = engine.embedder
    text = f"{memory.trigger}\n{memory.content}"
    if _embeds_one(embedder):
        # The same numbers as embed([text])[0], without building a numpy matrix of one row.
        vector = text_values(cast("TextEmbedder", embedder), text)
    else:
        vector = tuple(embedder.embed([text])[0].tolist())
    return replace(memory, embedding=Embedding(embedder.model_id, vector))


def note_vector_model(engine: Engine, memory: Memory) -> None:
    """Remember which model the newest vectors come from (one state row), so a change of
    embedding model is noticed cheaply at recall time."""
    notes = engine.vector_notes
    if memory.embedding is not None and not notes.recorded:
        if engine.store.get_state(VECTOR_MODEL_KEY) != memory.embedding.model:
            engine.store.set_state(VECTOR_MODEL_KEY, memory.embedding.model)
        notes.recorded = True


def check_vector_model(engine: Engine) -> None:
    """Warn once when stored vectors come from another model than the configured one."""
    notes = engine.vector_notes
    if notes.warned:
        return
    stored = engine.store.get_state(VECTOR_MODEL_KEY)
    if stored is not None and stored != engine.embedder.model_id:
        notes.warned = True
        warn(
            engine,
            f"memories were embedded with {stored}, but [embedding] now gives "
            f"{engine.embedder.model_id}; vector search only compares vectors of one model, "
            "so until you run `kioku reembed` older memories are found by lexical search only",
        )


def reembed(engine: Engine, progress: Callable[[int, int], None] | None = None) -> int:
    """Give every memory of ``engine``'s scope a vector of the current embedder (those with
    another model's vector or none); returns how many changed."""
    embedder, store = engine.embedder, engine.store
    model = embedder.model_id
    todo = [
        m
        for m in store.iter(scoped(engine, archived=None))
        if m.embedding is None or m.embedding.model != model
    ]
    batch = 256
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        vectors = embedder.embed([f"{m.trigger}\n{m.content}" for m in chunk])
        with store.atomic():
            for memory, vector in zip(chunk, vectors, strict=True):
                store.update(
                    memory.id,
                    MemoryPatch(embedding=Embedding(model, tuple(vector.tolist()))),
                )
        if progress is not None:
            progress(min(start + batch, len(todo)), len(todo))
    store.set_state(VECTOR_MODEL_KEY, model)
    engine.vector_notes.warned = False
    return len(todo)


def warm_vector_cache(engine: Engine, *, wait: bool = False) -> None:
    """Build the vector cache of the configured model now, after writes, so that the next
    process (a hook answering a prompt) finds its file ready rather than rebuilding it.
    ``wait``: also wait for what the store goes on doing in the background (a process about
    to exit, such as ``kioku batch``, would otherwise stop it). Best-effort: trouble is a
    warning, the cache is rebuilt at the next search anyway."""
    embedder = engine.embedder
    try:
        engine.store.save_vector_cache(embedder.model_id, wait=wait)
    except KiokuError as exc:
        warn(engine, f"the vector cache was not prepared: {exc}")
