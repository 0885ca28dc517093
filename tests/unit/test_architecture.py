"""The shape of the code: no import cycles, the layers depend one way, no module too long.

Every module under ``src/kioku`` is parsed with :mod:`ast`; its imports are every ``import``
and ``from ... import`` anywhere in it (at module level, inside functions, under
``if TYPE_CHECKING:``), ``from package import name`` counting as an import of the submodule
when ``name`` is one, relative imports resolved. See docs/architecture.md.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_LINES = 800

#: What each part of kioku may import of kioku (by module-name prefix). A module is governed by
#: the longest prefix that names it; a part missing here may import anything.
ALLOWED: dict[str, tuple[str, ...]] = {
    # Pure domain code: its own modules, the frozen configuration, the shared records and errors.
    "kioku.core": ("kioku.core", "kioku.config.schema", "kioku.errors", "kioku.records"),
    "kioku.ports": ("kioku.ports", "kioku.core", "kioku.errors", "kioku.records", "kioku.digests"),
    "kioku.config": ("kioku.config", "kioku.errors", "kioku.records"),
    "kioku.errors": ("kioku.records",),
    "kioku.records": (),
    "kioku.digests": (),
    "kioku.logs": (),
    "kioku.threads": (),
}
#: What each part of kioku must not import (by module-name prefix).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "kioku.adapters": ("kioku.service", "kioku.interfaces"),
    "kioku.service": ("kioku.interfaces",),
    # The faces are independent of each other, except that the command line wraps the hooks.
    "kioku.interfaces.claude_code": ("kioku.interfaces.cli",),
}
#: The use cases depend on the Engine protocol, never on the facade that delegates to them.
FACADE = "kioku.service.kioku"


def module_files(src: Path) -> dict[str, Path]:
    """Every module under ``src`` by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _known(name: str, modules: Mapping[str, Path]) -> str | None:
    """``name`` if it is a module, else the closest package or module that contains it."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The modules of ``modules`` that module ``name`` (at ``path``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(_known(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in modules else _known(base, modules))
    found.discard(None)
    found.discard(name)
    return {m for m in found if m is not None}


def import_graph(src: Path) -> dict[str, set[str]]:
    modules = module_files(src)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle through each group of modules that import each other (empty: none)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iteratively
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(group, graph) for group in groups]


def _cycle_in(group: list[str], graph: Mapping[str, Iterable[str]]) -> list[str]:
    """A path ``a -> b -> ... -> a`` within one group of modules that import each other."""
    members = set(group)
    path = [group[0]]
    seen = {group[0]: 0}
    while True:
        nxt = min(m for m in graph[path[-1]] if m in members)
        if nxt in seen:
            return [*path[seen[nxt] :], nxt]
        seen[nxt] = len(path)
        path.append(nxt)


def _governing(name: str, rules: Mapping[str, object]) -> str | None:
    matches = [p for p in rules if name == p or name.startswith(p + ".")]
    return max(matches, key=len, default=None)


def _under(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def layer_violations(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import that breaks a rule of :data:`ALLOWED`, :data:`FORBIDDEN` or the facade's."""
    found = []
    for name, imported in sorted(graph.items()):
        allowed = _governing(name, ALLOWED)
        forbidden = _governing(name, FORBIDDEN)
        for target in sorted(imported):
            if not target.startswith("kioku.") or target == name:
                continue
            if allowed is not None and not _under(target, ALLOWED[allowed]):
                only = ", ".join(ALLOWED[allowed]) or "nothing of kioku"
                found.append(f"{name} imports {target} ({allowed} may import only {only})")
            if forbidden is not None and _under(target, FORBIDDEN[forbidden]):
                found.append(f"{name} imports {target} ({forbidden} must not)")
            if target == FACADE and _under(name, ("kioku.service",)) and name != FACADE:
                found.append(f"{name} imports the facade {FACADE} (use kioku.service.engine)")
    return found


def long_modules(src: Path, limit: int = MAX_LINES) -> list[str]:
    modules = module_files(src)
    lengths = {
        name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules.items()
    }
    return [f"{name}: {n} lines" for name, n in sorted(lengths.items()) if n > limit]


# -- kioku itself ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(SRC)


def test_the_graph_sees_the_package(graph: dict[str, set[str]]) -> None:
    assert {"kioku", "kioku.service.kioku", "kioku.service.engine", "kioku.core.model"} <= set(
        graph
    )
    assert "kioku.service.runtime" in graph["kioku.service.kioku"]
    # Imports inside functions count: the facade imports the batch only when it runs one.
    assert "kioku.service.lifecycle.batch" in graph["kioku.service.kioku"]


def test_no_import_cycles(graph: dict[str, set[str]]) -> None:
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_layers_depend_one_way(graph: dict[str, set[str]]) -> None:
    found = layer_violations(graph)
    assert not found, "imports against the layering:\n" + "\n".join(found)


def test_no_module_is_longer_than_800_lines() -> None:
    found = long_modules(SRC)
    assert not found, f"modules longer than {MAX_LINES} lines:\n" + "\n".join(found)


# -- the checks catch what they look for -------------------------------------------------------


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_cycle_through_function_and_type_checking_imports_is_found(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "kioku/__init__.py": "",
            "kioku/a.py": "def f():\n    from kioku import b\n",
            "kioku/b.py": "import typing\nif typing.TYPE_CHECKING:\n    from .c import x\n",
            "kioku/c.py": "import kioku.a\nx = 1\n",
            "kioku/d.py": "from kioku.a import f\n",
        },
    )
    assert cycles(import_graph(src)) == [["kioku.a", "kioku.b", "kioku.c", "kioku.a"]]


def test_relative_imports_are_resolved(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "kioku/__init__.py": "",
            "kioku/service/__init__.py": "from . import kioku\n",
            "kioku/service/kioku.py": "from .engine import Engine\nfrom ..core import model\n",
            "kioku/service/engine.py": "",
            "kioku/core/__init__.py": "",
            "kioku/core/model.py": "",
        },
    )
    graph = import_graph(src)
    assert graph["kioku.service"] == {"kioku.service.kioku"}
    assert graph["kioku.service.kioku"] == {"kioku.service.engine", "kioku.core.model"}


def test_a_layer_violation_is_found(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "kioku/core/model.py": "from kioku.config.loader import load\n",
            "kioku/config/loader.py": "",
            "kioku/config/schema.py": "",
            "kioku/ports/store.py": "from kioku.core import model\n",
            "kioku/adapters/x.py": "def f():\n    from kioku.service import kioku\n",
            "kioku/service/kioku.py": "",
            "kioku/service/recall/pipeline.py": "from kioku.service.kioku import Kioku\n",
            "kioku/service/engine.py": "from kioku.interfaces.cli import main\n",
            "kioku/interfaces/cli/main.py": "",
            "kioku/interfaces/claude_code/hooks.py": "import kioku.interfaces.cli.main\n",
        },
    )
    found = layer_violations(import_graph(src))
    assert [line.split(" (")[0] for line in found] == [
        "kioku.adapters.x imports kioku.service.kioku",
        "kioku.core.model imports kioku.config.loader",
        "kioku.interfaces.claude_code.hooks imports kioku.interfaces.cli.main",
        "kioku.service.engine imports kioku.interfaces.cli.main",
        "kioku.service.recall.pipeline imports the facade kioku.service.kioku",
    ]


def test_a_long_module_is_found(tmp_path: Path) -> None:
    src = _tree(tmp_path, {"kioku/short.py": "x = 1\n" * 800, "kioku/long.py": "x = 1\n" * 801})
    assert long_modules(src) == ["kioku.long: 801 lines"]
