#!/usr/bin/env python3
"""What ``kioku serve`` adds to remembering, recalling and priming: HTTP and MCP against the
same service calls made in process, measured in the same run.

    python benchmarks/server.py [--size 36500] [--requests 200] [--clients 4] [--rounds 5]
        [--store DIR] [--json]

A store of ``--size`` synthetic memories (the generator of ``recall_scale.py``) is copied to a
scratch home; ``kioku serve --port 0 --no-ui`` serves that copy from a process of its own
while this process opens the same home with ``Kioku.open``. Three operations are timed:

- remember: one turn (``POST /v1/turns``, the MCP tool ``remember_turn``,
  ``Kioku.remember_turn``);
- recall: one three-word query (``POST /v1/recall``, ``Kioku.recall``);
- prime: one prompt-like message of 30-60 words (``POST /v1/prime``, the MCP tool ``prime``,
  ``Kioku.prime``); MCP has no recall tool, so prime is the operation all three share.

Series: ``in-process`` (the service call itself), ``http`` (one httpx client, keep-alive, one
request at a time), ``mcp`` (one MCP session over streamable HTTP, one tool call at a time)
and ``http xC`` (``--clients`` httpx clients in threads, each on its own connection, for
throughput). The ``--requests`` calls of each series and operation are split into
``--rounds`` rounds; every round runs each series once per operation, in an order that
rotates from round to round, so load on the machine falls on all of them alike. Reads
(recall, prime) run before writes (remember) in each round; after the writes one untimed
recall is made in each process, because every write to the store invalidates the vector
cache and the first search after it reloads the matrix (the steady state is what is timed).

Figures per series: requests per second (one per round: calls / wall time of its block; the
median and the range over rounds), p50 and p95 latency over every call, and the overhead
against in process: the ratio of the round's p50 to in process p50 in the same round (median
and range over rounds) and the p50 difference in ms.

The store's state is fixed: each run starts from a pristine copy of the filled home (kept in
``DIR/server-SIZE-sSEED`` with ``--store``), with no automatic batch
(``KIOKU_NO_AUTO_BATCH=1``), no daemon (``KIOKU_NO_DAEMON=1``) and no other ``KIOKU_*``
setting in either process. The server takes the wall clock, so the in-process side does too.
Every remembered turn has a distinct text (no exact duplicate, which the store would answer
as already known) built from a vocabulary of its own that queries never use, so the few
hundred memories added over a run (about 1-2 % of the store) leave what recall finds and how
much it reads nearly unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_scale import _VOCAB, _vocabulary, fill, long_queries, short_queries

from kioku import Kioku

OPS = ("recall", "prime", "remember")
IN_PROCESS, HTTP, MCP = "in-process", "http", "mcp"
_URL = re.compile(r"at (http://\S+/) ")
#: Words of remembered turns: pseudo-words the store's generator never draws.
_TURN_VOCAB = sorted(set(_vocabulary(3000, 99)) - set(_VOCAB))
_ROUTES = {"recall": "v1/recall", "prime": "v1/prime", "remember": "v1/turns"}
_TOOLS = {"prime": "prime", "remember": "remember_turn"}


class UnavailableError(Exception):
    """A series cannot run an operation (a missing route or tool, a failing call)."""


# -- the texts -------------------------------------------------------------------------------


@dataclass
class Texts:
    """Distinct inputs for each operation, handed out in order."""

    seed: int
    _queries: Iterator[str] = field(init=False)
    _messages: Iterator[str] = field(init=False)
    _turns: Iterator[tuple[str, str]] = field(init=False)

    def __post_init__(self) -> None:
        self._queries = self._endless(lambda rng: short_queries(rng, 400), 1)
        self._messages = self._endless(lambda rng: long_queries(rng, 400), 2)
        self._turns = self._distinct_turns(random.Random(self.seed * 1000 + 3))

    def _endless(self, make: Callable[[random.Random], list[str]], salt: int) -> Iterator[str]:
        rng = random.Random(self.seed * 1000 + salt)
        while True:
            batch = make(rng)
            rng.shuffle(batch)  # the Japanese short queries come last: spread them out
            yield from batch

    @staticmethod
    def _distinct_turns(rng: random.Random) -> Iterator[tuple[str, str]]:
        seen: set[tuple[str, str]] = set()
        while True:
            turn = (
                " ".join(rng.choices(_TURN_VOCAB, k=rng.randint(6, 12))),
                " ".join(rng.choices(_TURN_VOCAB, k=rng.randint(10, 24))),
            )
            if turn not in seen:
                seen.add(turn)
                yield turn

    def take(self, op: str, n: int) -> list[Any]:
        source: Iterator[Any] = {
            "recall": self._queries,
            "prime": self._messages,
            "remember": self._turns,
        }[op]
        return [next(source) for _ in range(n)]


# -- the store and the server ----------------------------------------------------------------


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    env["KIOKU_NO_AUTO_BATCH"] = "1"
    env["KIOKU_NO_DAEMON"] = "1"
    return env


def pristine(base: Path, size: int, seed: int) -> float:
    """Fill ``base`` with ``size`` memories unless it already holds them; fill seconds (0.0
    when reused)."""
    marker = base / "filled.json"
    if marker.exists():
        info = json.loads(marker.read_text())
        if info != {"memories": size, "seed": seed}:
            raise SystemExit(f"{base} holds another store ({info}); pick another --store")
        return 0.0
    if base.exists() and any(base.iterdir()):
        raise SystemExit(f"{base} holds a partly filled store; remove it")
    base.mkdir(parents=True, exist_ok=True)
    with Kioku.open(base, env={}) as kioku:
        seconds = fill(kioku, size, seed)
        kioku.recall("warm up", mark=False)  # writes the vector cache file once
    marker.write_text(json.dumps({"memories": size, "seed": seed}))
    return seconds


@contextlib.contextmanager
def serving(home: Path, log: Path) -> Iterator[str]:
    """``kioku serve --port 0 --no-ui`` on ``home`` until the block ends; its base URL."""
    with log.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "kioku", "--home", str(home), "serve", "--port", "0", "--no-ui"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=_env(),
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            found = _URL.search(first)
            if found is None:
                process.kill()
                process.wait(timeout=30)
                raise SystemExit(f"kioku serve did not start: {first!r} {log.read_text()!r}")
            out = process.stdout
            threading.Thread(target=lambda: out.read(), daemon=True).start()  # drain
            url = found.group(1)
            deadline = time.monotonic() + 120
            while True:
                try:
                    httpx.get(url + "v1/openapi.json", timeout=5)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise
                    time.sleep(0.05)
            yield url
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=30)


# -- the series ------------------------------------------------------------------------------


def _http_call(client: httpx.Client, op: str, text: Any, session: str) -> None:
    if op == "remember":
        body: dict[str, Any] = {"user": text[0], "assistant": text[1], "session_id": session}
    elif op == "recall":
        body = {"query": text}
    else:
        body = {"message": text}
    response = client.post(_ROUTES[op], json=body)
    if response.status_code >= 300 or (op == "remember" and response.status_code != 201):
        raise UnavailableError(f"POST /{_ROUTES[op]}: {response.status_code} {response.text[:200]}")


def _local_call(kioku: Kioku, op: str, text: Any, session: str) -> None:
    if op == "remember":
        if kioku.remember_turn(text[0], text[1], session_id=session).known:
            raise UnavailableError("a remembered turn was already known")
    elif op == "recall":
        kioku.recall(text)
    else:
        kioku.prime(text)


class Bench:
    """The open clients of every series and the latencies they take."""

    def __init__(self, url: str, kioku: Kioku, clients: int, mcp: Any | None) -> None:
        self.url = url
        self.kioku = kioku
        self.clients = clients
        self.http = self._client()
        self.pool = [self._client() for _ in range(clients)]
        self.executor = ThreadPoolExecutor(max_workers=clients)
        self.mcp = mcp
        self.concurrent = f"http x{clients}"
        self.series = [IN_PROCESS, HTTP, MCP, self.concurrent]

    def _client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=120.0)

    def close(self) -> None:
        self.executor.shutdown()
        for client in [self.http, *self.pool]:
            client.close()

    async def block(self, series: str, op: str, texts: list[Any]) -> tuple[float, list[float]]:
        """Run ``texts`` through ``series``; (wall seconds, latency of each call)."""
        session = f"bench-{series.replace(' ', '')}"
        if series == self.concurrent:
            return self._concurrent(op, texts, session)
        latencies: list[float] = []
        started = time.perf_counter()
        for text in texts:
            t0 = time.perf_counter()
            if series == IN_PROCESS:
                _local_call(self.kioku, op, text, session)
            elif series == HTTP:
                _http_call(self.http, op, text, session)
            else:
                await self._mcp_call(op, text, session)
            latencies.append(time.perf_counter() - t0)
        return time.perf_counter() - started, latencies

    async def _mcp_call(self, op: str, text: Any, session: str) -> None:
        if self.mcp is None or op not in _TOOLS:
            raise UnavailableError(
                "no MCP session" if self.mcp is None else f"no MCP tool for {op}"
            )
        if op == "remember":
            arguments = {"user": text[0], "assistant": text[1], "session_id": session}
        else:
            arguments = {"message": text}
        result = await self.mcp.call_tool(_TOOLS[op], arguments)
        if result.isError:
            shown = " ".join(getattr(c, "text", "") for c in result.content)[:200]
            raise UnavailableError(f"MCP {_TOOLS[op]}: {shown}")

    def _concurrent(self, op: str, texts: list[Any], session: str) -> tuple[float, list[float]]:
        shares = [texts[i :: self.clients] for i in range(self.clients)]
        start = threading.Barrier(self.clients + 1)

        def run(client: httpx.Client, share: list[Any], n: int) -> list[float]:
            start.wait()
            out = []
            for text in share:
                t0 = time.perf_counter()
                _http_call(client, op, text, f"{session}-{n}")
                out.append(time.perf_counter() - t0)
            return out

        futures = [
            self.executor.submit(run, client, share, n)
            for n, (client, share) in enumerate(zip(self.pool, shares, strict=True))
        ]
        start.wait()
        started = time.perf_counter()
        latencies = [x for future in futures for x in future.result()]
        return time.perf_counter() - started, latencies

    def warm(self) -> tuple[float, float | None]:
        """One recall in each process (in process first), so each holds the store's current
        vectors; the seconds each took (None when the server does not recall)."""
        t0 = time.perf_counter()
        self.kioku.recall("warm up", mark=False)
        local = time.perf_counter() - t0
        try:
            t0 = time.perf_counter()
            _http_call(self.http, "recall", "warm up", "bench-warm")
            return local, time.perf_counter() - t0
        except (UnavailableError, httpx.HTTPError):
            return local, None


@contextlib.asynccontextmanager
async def mcp_session(url: str) -> AsyncIterator[tuple[Any | None, str]]:
    """An initialised MCP client session at ``url``mcp, or None and why not."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    try:
        probe = httpx.post(
            url + "mcp",
            json={"jsonrpc": "2.0", "id": 0, "method": "ping"},
            headers={"Accept": "application/json, text/event-stream"},
            timeout=30,
            follow_redirects=True,
        )
    except httpx.HTTPError as exc:
        yield None, f"/mcp: {exc!r}"
        return
    if probe.status_code == 404:
        yield None, "/mcp answers 404 (no MCP mount)"
        return
    async with (
        streamable_http_client(url + "mcp") as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        missing = sorted(set(_TOOLS.values()) - tools)
        yield session, f"missing tools {missing}" if missing else ""


# -- measuring -------------------------------------------------------------------------------


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


@dataclass
class Taken:
    """What one series took for one operation."""

    rates: list[float] = field(default_factory=list)
    p50s: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)


async def run_rounds(
    bench: Bench, texts: Texts, requests: int, rounds: int
) -> tuple[dict[str, dict[str, Taken]], dict[str, str], dict[str, list[float]]]:
    """Every (operation, series) that works, ``rounds`` times interleaved; why the others
    were left out; and how long the first recall after each round's writes took, in process
    (which rebuilds the vector cache from SQLite and writes its file) and in the server
    (which then maps that file)."""
    skipped: dict[str, str] = {}
    usable: dict[str, list[str]] = {}
    bench.warm()
    for op in OPS:
        usable[op] = []
        for series in bench.series:
            if series == MCP and op == "recall":
                continue
            try:
                await bench.block(series, op, texts.take(op, bench.clients))  # untimed probe
                usable[op].append(series)
            except (UnavailableError, httpx.HTTPError) as exc:
                skipped[f"{op} {series}"] = str(exc)
    per_round = max(1, requests // rounds)
    reloads: dict[str, list[float]] = {IN_PROCESS: [], HTTP: []}
    taken = {op: {s: Taken() for s in usable[op]} for op in OPS}
    for r in range(rounds):
        if r:  # the first recall after the last round's writes
            local, served = bench.warm()
            reloads[IN_PROCESS].append(local)
            if served is not None:
                reloads[HTTP].append(served)
        else:
            bench.warm()
        for op in OPS:
            order = (
                usable[op][r % max(1, len(usable[op])) :]
                + usable[op][: r % max(1, len(usable[op]))]
            )
            for series in order:
                seconds, latencies = await bench.block(series, op, texts.take(op, per_round))
                got = taken[op][series]
                got.rates.append(len(latencies) / seconds)
                got.p50s.append(statistics.median(latencies))
                got.latencies.extend(latencies)
        print(f"  round {r + 1} of {rounds} done", file=sys.stderr, flush=True)
    return taken, skipped, reloads


def summarise(taken: dict[str, dict[str, Taken]]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for op, by_series in taken.items():
        base = by_series.get(IN_PROCESS)
        out[op] = {}
        for series, got in by_series.items():
            if not got.latencies:
                continue
            row: dict[str, Any] = {
                "calls": len(got.latencies),
                "rps_median": round(statistics.median(got.rates), 1),
                "rps_min": round(min(got.rates), 1),
                "rps_max": round(max(got.rates), 1),
                "p50_ms": round(_ms(got.latencies, 0.5), 2),
                "p95_ms": round(_ms(got.latencies, 0.95), 2),
            }
            if base is not None and series != IN_PROCESS and base.p50s:
                ratios = [a / b for a, b in zip(got.p50s, base.p50s, strict=True)]
                row["x_in_process_median"] = round(statistics.median(ratios), 2)
                row["x_in_process_min"] = round(min(ratios), 2)
                row["x_in_process_max"] = round(max(ratios), 2)
                row["plus_ms_p50"] = round(_ms(got.latencies, 0.5) - _ms(base.latencies, 0.5), 2)
            out[op][series] = row
    return out


async def measure(
    home: Path, log: Path, requests: int, clients: int, rounds: int, seed: int
) -> dict[str, Any]:
    texts = Texts(seed)
    with (
        serving(home, log) as url,
        Kioku.open(home, env={}) as kioku,
    ):
        async with mcp_session(url) as (session, why_not):
            bench = Bench(url, kioku, clients, session)
            try:
                taken, skipped, reloads = await run_rounds(bench, texts, requests, rounds)
            finally:
                bench.close()
        if why_not:
            skipped["mcp"] = why_not
        memories = kioku.count()
    return {
        "rounds": rounds,
        "calls_per_round": max(1, requests // rounds),
        "clients": clients,
        "memories_after": memories,
        "results": summarise(taken),
        "first_recall_after_writes_ms": {
            series: round(statistics.median(values) * 1000, 1)
            for series, values in reloads.items()
            if values
        },
        "left_out": skipped,
    }


def _print(r: dict[str, Any]) -> None:
    fill_note = f"filled in {r['fill_seconds']} s" if r["fill_seconds"] else "reused"
    print(
        f"{r['memories']:,} memories ({fill_note}; {r['memories_after']:,} after the run); "
        f"{r['rounds']} rounds x {r['calls_per_round']} calls per series and operation; "
        f"{r['cpus']} CPUs, load {r['load_1min_before_after'][0]} before, "
        f"{r['load_1min_before_after'][1]} after"
    )
    print(
        f"{'operation':<9} {'series':<11} {'req/s median (min-max)':>24} {'p50 ms':>8} "
        f"{'p95 ms':>8}   x in-process p50, median (min-max)   +ms p50"
    )
    for op, by_series in r["results"].items():
        for series, row in by_series.items():
            rate = f"{row['rps_median']} ({row['rps_min']}-{row['rps_max']})"
            ratio = (
                f"{row['x_in_process_median']} ({row['x_in_process_min']}-"
                f"{row['x_in_process_max']})   {row['plus_ms_p50']:+}"
                if "x_in_process_median" in row
                else ""
            )
            print(
                f"{op:<9} {series:<11} {rate:>24} {row['p50_ms']:>8} {row['p95_ms']:>8}   {ratio}"
            )
    after = r["first_recall_after_writes_ms"]
    if after:
        print(
            "first recall after a round's writes (vector cache reloaded; median ms): "
            + ", ".join(f"{series} {ms}" for series, ms in after.items())
        )
    for what, why in r["left_out"].items():
        print(f"left out: {what}: {why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=36_500)
    parser.add_argument("--requests", type=int, default=200, help="per series and operation")
    parser.add_argument("--clients", type=int, default=4, help="concurrent HTTP clients")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", type=Path, help="keep the filled home here and reuse it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = (args.store or Path(tmp)) / f"server-{args.size}-s{args.seed}"
        fill_s = pristine(base, args.size, args.seed)
        home = Path(tmp) / "home"
        shutil.copytree(base, home)
        load_before = os.getloadavg()[0]
        result = asyncio.run(
            measure(
                home,
                Path(tmp) / "serve.log",
                args.requests,
                args.clients,
                args.rounds,
                args.seed,
            )
        )
    result = {
        "memories": args.size,
        "fill_seconds": round(fill_s, 1),
        "cpus": os.cpu_count(),
        "load_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        **result,
    }
    if args.json:
        print(json.dumps(result))
    else:
        _print(result)


if __name__ == "__main__":
    main()
