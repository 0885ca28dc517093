"""A LangGraph store (``langgraph.store.base.BaseStore``) kept in kioku.

    >>> from kioku import Kioku
    >>> from kioku.integrations.langgraph_store import KiokuStore
    >>> memory = Kioku.open("/tmp/agent-home")                          # doctest: +SKIP
    >>> store = KiokuStore(memory, user_label=1)                        # doctest: +SKIP
    >>> graph = builder.compile(checkpointer=saver, store=store)        # doctest: +SKIP

Install it with ``pip install 'kioku[langgraph]'``; ``import kioku`` never loads LangGraph.

**Owner scope.** Every item belongs to one kioku owner (``user_id``/``agent_id``). By default
that is the owner of the ``Kioku`` the store is given. With ``user_label=N`` the namespace's
label at position ``N`` names the user (``("users", "u1", "memories")`` with ``user_label=1``
is user ``u1``; a shorter namespace stays with the given owner), so each user's items are in
their own scope: ``kioku stats``, erasure of a user (``erase_user``) and recall see them there.

**Kind and fields.** An item is a knowledge memory (意味記憶), never an episode: the nightly
batch compresses episodes' text, and an item must read back as it was written. Its id comes
from the owner, the namespace and the key; its source id names the namespace and the key;
its trigger is the value as JSON (kioku's consolidation may rewrite a knowledge item's
content, never its trigger), so ``get`` returns exactly the dict that was put (tuples come back
as lists, as JSON has no tuples). Its content is the searchable text: the strings at the
index fields (LangGraph's path syntax, ``index={"fields": [...]}`` on the store or ``index=``
on ``put``), every string of the value by default, the key alone for ``index=False``. See
:mod:`kioku.integrations.langgraph_items`.

**Writes.** ``put`` of a new key stores the memory; ``put`` of a key that exists edits that
memory in place (``Kioku.edit_memory``: same id and ``created_at``, a new ``updated_at``, the
previous state kept as a version, the text re-indexed and re-embedded); a ``put`` of the
value and text the item already has writes nothing. ``put(..., None)`` and ``delete`` erase
the memory (``Kioku.forget``); the key can be put again afterwards. A batch reads first
(its gets, searches and listings see the store as it was before the batch) and then makes
its writes, the last put of a key winning, all in one transaction.

**Search.** Without a query, the items under the namespace prefix that pass the filter, newest
``updated_at`` first. With a query, kioku's deliberate search (``Kioku.search_memory``) over
knowledge, archive included: ranked by match alone (vector similarity and BM25 on the
trigger and content, not retention or recency), only items that match at all, each with its
match as ``score``. A prefix that does not fix the owner (shorter than ``user_label``)
searches every owner that has items and merges by score. Filters: equality, nested dicts,
lists and ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte`` (numbers compared as
numbers, strings as strings).

**What kioku does to items.** They live as any knowledge does: active forgetting may archive
one unused for long and weekly consolidation may merge near-duplicates (the others archived).
An archived item is still returned by ``get``, ``search`` and ``list_namespaces``.

**Not supported.** TTLs (``supports_ttl`` is False: kioku forgets by its own lifecycle); an
``embed`` in ``index`` (kioku embeds with the embedder of its configuration).

**Async.** kioku's stores are synchronous: ``abatch`` runs ``batch`` in a worker thread
(``asyncio.to_thread``); batches run one at a time.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from kioku.core.kinds import KnowledgeDetails
from kioku.core.model import Kind, Memory
from kioku.errors import MemoryNotFoundError, ValidationError
from kioku.integrations.langgraph_items import (
    decode_value,
    encode_value,
    item_source,
    item_text,
    matches_filter,
    matches_namespace,
    memory_id,
    parse_source,
)
from kioku.ports.store import MemoryFilter

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = ["KiokuStore"]

_KNOWLEDGE = Kind.KNOWLEDGE.value


@dataclass(frozen=True, slots=True)
class _Entry:
    """An item as read from its memory."""

    memory: Memory
    item: Item


class KiokuStore(BaseStore):
    """LangGraph's long-term memory store, kept as knowledge memories of a kioku home."""

    supports_ttl = False

    def __init__(
        self,
        memory: Kioku,
        *,
        index: Mapping[str, Any] | None = None,
        user_label: int | None = None,
    ) -> None:
        """``memory``: the kioku the items are kept in (the caller closes it). ``index``:
        ``{"fields": [...]}``, the value paths whose text is searched (default every string).
        ``user_label``: the namespace position that names the owner's user (default none:
        every item is ``memory``'s)."""
        self.memory = memory
        self.fields = _index_fields(index)
        if user_label is not None and (
            isinstance(user_label, bool) or not isinstance(user_label, int) or user_label < 0
        ):
            raise ValidationError("user_label", user_label, "a namespace position from 0, or None")
        self.user_label = user_label
        self._owners: dict[str, Kioku] = {}
        self._lock = threading.RLock()

    # -- owners ---------------------------------------------------------------------------

    def _user_of(self, namespace: tuple[str, ...]) -> str:
        if self.user_label is None or len(namespace) <= self.user_label:
            return self.memory.user_id
        return namespace[self.user_label]

    def _owner(self, user_id: str) -> Kioku:
        """The ``Kioku`` of ``user_id`` (with the given agent) on the same store."""
        base = self.memory
        if user_id == base.user_id:
            return base
        owner = self._owners.get(user_id)
        if owner is None:
            owner = type(base)(
                base.store,
                base.config,
                clock=base.clock,
                user_id=user_id,
                agent_id=base.agent_id,
                home=base.home,
                config_sources=base.loaded_config,
                embedder=base.embedder,
                on_warning=base.on_warning,
            )
            self._owners[user_id] = owner
        return owner

    def _prefix_user(self, prefix: tuple[str, ...]) -> str | None:
        """The one user every namespace under ``prefix`` belongs to; None: any user."""
        if self.user_label is None or len(prefix) > self.user_label:
            return self._user_of(prefix)
        return None

    # -- reading items --------------------------------------------------------------------

    def _entry(self, memory: Memory) -> _Entry | None:
        """The item ``memory`` holds, if it is one of this store's."""
        for source in memory.source_ids:
            named = parse_source(source)
            if named is None:
                continue
            namespace, key = named
            if memory.agent_id != self.memory.agent_id or self._user_of(namespace) != (
                memory.user_id
            ):
                return None
            if memory.id != memory_id(memory.user_id, memory.agent_id, namespace, key):
                return None
            value = decode_value(memory.trigger)
            item = Item(
                value=value if value is not None else {"text": memory.content},
                key=key,
                namespace=namespace,
                created_at=memory.created,
                updated_at=memory.updated_at or memory.created,
            )
            return _Entry(memory, item)
        return None

    def _find(self, namespace: tuple[str, ...], key: str) -> _Entry | None:
        owner = self._owner(self._user_of(namespace))
        try:
            memory = owner.get(memory_id(owner.user_id, owner.agent_id, namespace, key))
        except MemoryNotFoundError:
            return None
        entry = self._entry(memory)
        if entry is None or (entry.item.namespace, entry.item.key) != (namespace, key):
            return None
        return entry

    def _entries(self, prefix: tuple[str, ...]) -> Iterator[_Entry]:
        """Every item under ``prefix`` (archived ones too), read from the store."""
        flt = MemoryFilter(
            user_id=self._prefix_user(prefix),
            agent_id=self.memory.agent_id,
            kind=_KNOWLEDGE,
            archived=None,
        )
        for memory in self.memory.store.iter(flt):
            entry = self._entry(memory)
            if entry is not None and entry.item.namespace[: len(prefix)] == prefix:
                yield entry

    def _names(self, prefix: tuple[str, ...]) -> dict[str, set[tuple[tuple[str, ...], str]]]:
        """``(namespace, key)`` of every item under ``prefix``, by user: read from the source
        ids alone (no memory is decoded), one query per user."""

        def named(user_id: str | None) -> Iterator[tuple[tuple[str, ...], str]]:
            flt = MemoryFilter(user_id=user_id, agent_id=self.memory.agent_id, kind=_KNOWLEDGE)
            for source in self.memory.store.source_ids(flt):
                pair = parse_source(source)
                if pair is not None and pair[0][: len(prefix)] == prefix:
                    yield pair

        user = self._prefix_user(prefix)
        users = {user} if user is not None else {self._user_of(ns) for ns, _ in named(None)}
        return {
            name: {pair for pair in named(name) if self._user_of(pair[0]) == name}
            for name in sorted(users)
        }

    # -- the operations -------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        entry = self._find(tuple(op.namespace), op.key)
        return None if entry is None else entry.item

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        if isinstance(op.query, str) and op.query.strip():
            return self._query(op, prefix)
        found = [e.item for e in self._entries(prefix) if matches_filter(e.item.value, op.filter)]
        found.sort(key=lambda i: (i.updated_at, i.namespace, i.key), reverse=True)
        return [_result(i, None) for i in found[op.offset : op.offset + op.limit]]

    def _query(self, op: SearchOp, prefix: tuple[str, ...]) -> list[SearchItem]:
        from kioku.service.deliberate.search import MAX_TOP_K

        assert op.query is not None
        user = self._prefix_user(prefix)
        users = [user] if user is not None else [u for u, got in self._names(()).items() if got]
        wanted = max(0, op.offset) + max(0, op.limit)
        hits: list[tuple[float, Item]] = []
        for name in users:
            owner = self._owner(name)
            top_k = min(MAX_TOP_K, max(10, wanted * 4))
            while True:
                result = owner.search_memory(
                    op.query, kinds=[_KNOWLEDGE], include_archive=True, top_k=top_k
                )
                mine = []
                for found in result.items:
                    entry = self._entry(found.memory)
                    if (
                        entry is not None
                        and entry.item.namespace[: len(prefix)] == prefix
                        and matches_filter(entry.item.value, op.filter)
                    ):
                        mine.append((found.score, entry.item))
                if len(mine) >= wanted or len(result.items) < top_k or top_k >= MAX_TOP_K:
                    break
                top_k = min(MAX_TOP_K, top_k * 4)
            hits.extend(mine)
        hits.sort(key=lambda hit: (-hit[0], hit[1].namespace, hit[1].key))
        return [_result(i, score) for score, i in hits[op.offset : op.offset + op.limit]]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        names = {
            namespace
            for pairs in self._names(()).values()
            for namespace, _ in pairs
            if all(matches_namespace(namespace, c.match_type, c.path) for c in conditions)
        }
        if op.max_depth is not None:
            names = {n[: op.max_depth] for n in names}
        return sorted(names)[op.offset : op.offset + op.limit]

    def _write(self, puts: Sequence[PutOp]) -> None:
        """Every put of a batch, in one transaction; values are checked before any write."""
        for op in puts:
            if op.ttl is not None:
                raise ValidationError(
                    "ttl",
                    op.ttl,
                    "None",
                    hint="kioku does not expire items by time; it forgets by its own lifecycle",
                )
        prepared = [(op, None if op.value is None else encode_value(op.value)) for op in puts]
        with self.memory.store.atomic():
            for op, value in prepared:
                namespace = tuple(op.namespace)
                owner = self._owner(self._user_of(namespace))
                entry = self._find(namespace, op.key)
                if value is None or op.value is None:
                    if entry is not None:
                        owner.forget(entry.memory.id, force=True)
                    continue
                fields = self.fields if op.index is None else (op.index or [])
                text = item_text(op.value, op.key or "/".join(namespace), fields)
                if entry is None:
                    owner.remember(self._new_memory(owner, namespace, op.key, value, text))
                elif (entry.memory.trigger, entry.memory.content) != (value, text):
                    owner.edit_memory(entry.memory.id, trigger=value, content=text)

    def _new_memory(
        self, owner: Kioku, namespace: tuple[str, ...], key: str, value: str, text: str
    ) -> Memory:
        from kioku.service.kinds.records import base_record

        record = base_record(owner, Kind.KNOWLEDGE, value, text, None)
        return replace(
            record,
            id=memory_id(owner.user_id, owner.agent_id, namespace, key),
            source_ids=(item_source(namespace, key, secrets.token_hex(8)),),
            details=KnowledgeDetails(valid_from=record.created),
        )

    # -- BaseStore ------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` and return their results in order: reads first, then the writes."""
        todo = list(ops)
        for op in todo:
            validate_op_namespace(op)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        with self._lock:
            for op in todo:
                if isinstance(op, GetOp):
                    results.append(self._get(op))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                elif isinstance(op, PutOp):
                    puts.pop((tuple(op.namespace), op.key), None)
                    puts[(tuple(op.namespace), op.key)] = op
                    results.append(None)
                else:
                    raise ValidationError(
                        "op", type(op).__name__, "GetOp, PutOp, SearchOp or ListNamespacesOp"
                    )
            if puts:
                self._write(list(puts.values()))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (kioku's stores are synchronous)."""
        return await asyncio.to_thread(self.batch, list(ops))


def _index_fields(index: Mapping[str, Any] | None) -> list[str]:
    if index is None:
        return ["$"]
    if not isinstance(index, Mapping):
        raise ValidationError("index", index, 'a dict such as {"fields": ["text"]}, or None')
    if index.get("embed") is not None:
        raise ValidationError(
            "index.embed",
            type(index["embed"]).__name__,
            "no embed",
            hint="kioku embeds with the embedder of its configuration ([embedding]); "
            'give only {"fields": [...]}',
        )
    fields = index.get("fields")
    if fields is None:
        return ["$"]
    if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
        raise ValidationError("index.fields", fields, 'a list of value paths, such as ["text"]')
    return list(fields)


def _result(item: Item, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )
