"""The package reads as one-way layers: no module imports the one that calls it.

Every ``import`` of every module is read from the source (those inside functions and under
``TYPE_CHECKING`` too). The server's rooms have ranks, and a room imports only rooms ranked
below it (and itself); the rules engine, sessions and solvers never import the server; and no
two modules import each other, however long the way round.
"""

from __future__ import annotations

import ast
from pathlib import Path

import patience

ROOT = Path(patience.__file__).resolve().parent

SERVER_RANKS = {
    "protocol": 0, "logs": 0, "figures": 0, "mail": 0,
    "explain": 1,
    "bus": 2, "storage": 2,
    "accounts": 3,
    "live": 4,
    "solo": 5, "analysis": 5,
    "marks": 5,
    "arena": 6,
    "web": 7,
    "transport": 8,
    "app": 9, "metrics": 9,
    "__init__": 10,
}
"""The server's rooms, lowest first: a room may import a room of a lower rank, or itself."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "patience" or name.startswith("patience.")}


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in ROOT.rglob("*.py") if "migrations" not in p.parts}
    out = {}
    for name, path in modules.items():
        # "from patience.x import y" names module patience.x.y only when that module exists
        out[name] = {i for i in imports_of(path) if i in modules and i != name}
    return out


def room(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["patience", "server"]:
        return None
    return parts[2] if len(parts) > 2 else "__init__"


def test_every_server_module_is_in_a_room() -> None:
    rooms = {room(m) for m in graph() if room(m) is not None}
    assert rooms <= set(SERVER_RANKS), rooms - set(SERVER_RANKS)


def test_server_rooms_only_look_down() -> None:
    wrong = []
    for module, targets in graph().items():
        here = room(module)
        if here is None:
            continue
        for target in targets:
            there = room(target)
            if there is not None and there != here and SERVER_RANKS[there] >= SERVER_RANKS[here]:
                wrong.append(f"{module} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_engine_sessions_and_solvers_never_import_the_server_or_the_terminal() -> None:
    wrong = [f"{module} imports {target}" for module, targets in graph().items()
             if room(module) is None and not module.startswith(("patience.cli", "patience.__main__"))
             for target in targets if room(target) is not None or target.startswith("patience.cli")]
    assert not wrong, "\n".join(sorted(wrong))


def test_no_two_modules_import_each_other() -> None:
    edges = graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                cycles.append([*trail[trail.index(target):], target] if target in trail else [node, target])
            elif target not in state:
                visit(target, [*trail, target])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


ARENA_RANKS = {
    "dealstock": 0, "matches": 0, "nodes": 0,
    "pools": 1, "daily": 1,
    "owned": 2, "view": 2, "apart": 2,
    "spectators": 3, "challenges": 3, "tournaments": 3, "lobby": 3, "rematches": 3,
    "elsewhere": 4,
    "routing": 5,
    "__init__": 6,
}
"""The rooms of the arena, lowest first (docs/scaling.md): the processes and the matches themselves,
the pools, the matches a process owns and the lobby's view, what stands on them (seeks, rematches,
spectators, challenges, tournaments), pages whose match is played on another process, and the arena
that ties the rooms together and routes pages between them."""


def test_the_arena_rooms_only_look_down() -> None:
    def arena_room(module: str) -> str | None:
        parts = module.split(".")
        if parts[:3] != ["patience", "server", "arena"]:
            return None
        return parts[3] if len(parts) > 3 else "__init__"

    edges = graph()
    rooms = {arena_room(m) for m in edges} - {None}
    assert rooms == set(ARENA_RANKS), rooms ^ set(ARENA_RANKS)
    wrong = [f"{module} imports {target}" for module, targets in edges.items() if (here := arena_room(module))
             for target in targets if (there := arena_room(target)) and there != here
             and ARENA_RANKS[there] >= ARENA_RANKS[here]]
    assert not wrong, "\n".join(sorted(wrong))
