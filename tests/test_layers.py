"""The package reads as one-way layers: no module imports the one that calls it.

Every ``import`` of every module is read from the source (those inside functions and under
``TYPE_CHECKING`` too). The core (the rules engine, sessions, records, duels, solvers) and the
server's rooms have ranks, and a module imports only modules ranked below its own (and its own
room's); the core never imports the server; the transport imports neither the accounts nor the web
pages; and no two modules import each other, however long the way round.

The server's rooms stay small enough to read whole (no class over 400 lines, no module over 600 but
the declarative protocol.py), and the app ties its objects together as it makes them: no attribute
of another object is set after it is made.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import patience

ROOT = Path(patience.__file__).resolve().parent

CORE_RANKS = {
    "errors": 0, "ratings": 0, "fairplay": 0,
    "cards": 1, "notation": 1, "options": 1, "rng": 1, "tournament": 1,
    "games": 2,
    "scoring": 3, "ladder": 3, "__init__": 3,
    "session": 4,
    "record": 5,
    "duel": 6,
    "daily": 7,
    "solve": 8,
}
"""The core's modules, lowest first: the figures and errors every part uses, cards and options, the rules
engine, scoring, sessions and their records, duels and the deals of the day, the solvers."""

SERVER_RANKS = {
    "protocol": 0, "logs": 0, "figures": 0, "mail": 0, "identity": 0, "signals": 0,
    "explain": 1,
    "bus": 2, "storage": 2,
    "accounts": 3,
    "live": 4,
    "solo": 5, "analysis": 5,
    "marks": 5,
    "arena": 6,
    "web": 7, "transport": 7,
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


def core_room(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ("server", "cli", "__main__"):
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_core_module_has_a_rank() -> None:
    rooms = {core_room(m) for m in graph()} - {None}
    assert rooms == set(CORE_RANKS), rooms ^ set(CORE_RANKS)


def test_the_core_only_looks_down() -> None:
    wrong = [f"{module} imports {target}" for module, targets in graph().items() if (here := core_room(module))
             for target in targets if (there := core_room(target)) and there != here
             and CORE_RANKS[there] >= CORE_RANKS[here]]
    assert not wrong, "\n".join(sorted(wrong))


def test_the_transport_imports_neither_the_accounts_nor_the_web() -> None:
    wrong = [f"{module} imports {target}" for module, targets in graph().items() if room(module) == "transport"
             for target in targets if room(target) in ("accounts", "web")]
    assert not wrong, "\n".join(sorted(wrong))


def test_the_door_loads_without_the_accounts_or_the_database() -> None:
    """The guards at the door (connection caps, time limits, budgets) need only pure helpers of their own."""
    code = ("import sys, patience.server.transport.door, patience.server.transport.listener, "
            "patience.server.transport.budget; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('argon2', 'sqlalchemy') "
            "or m.startswith(('patience.server.accounts', 'patience.server.web', 'patience.server.storage'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", loaded


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


MAX_CLASS_LINES = 400
MAX_MODULE_LINES = 600
DECLARATIVE = {"protocol.py": 800}
"""Modules that declare more than they do, and their own bound."""


def test_the_server_rooms_are_small_enough_to_read_whole() -> None:
    server = ROOT / "server"
    wrong = []
    for path in sorted(server.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(server).as_posix()
        most = DECLARATIVE.get(name, MAX_MODULE_LINES)
        if (lines := len(text.splitlines())) > most:
            wrong.append(f"{name}: {lines} lines (at most {most})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and (lines := (node.end_lineno or 0) - node.lineno + 1) > MAX_CLASS_LINES:
                wrong.append(f"{name}: class {node.name}, {lines} lines (at most {MAX_CLASS_LINES})")
    assert not wrong, "\n".join(wrong)


def test_the_app_ties_its_objects_as_it_makes_them() -> None:
    """In app.py, what an object needs is given when it is made: no attribute of another object is set
    afterwards (the app's own ``app.state`` aside, which is where Starlette keeps what handlers read)."""
    tree = ast.parse((ROOT / "server" / "app.py").read_text(encoding="utf-8"))
    wrong = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        while targets:
            target = targets.pop()
            if isinstance(target, ast.Tuple | ast.List):
                targets.extend(target.elts)
            elif isinstance(target, ast.Attribute):
                base = target.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if not (isinstance(base, ast.Name) and base.id == "app"):
                    wrong.append(f"app.py:{node.lineno}: {ast.unparse(target)} set after it was made")
    assert not wrong, "\n".join(wrong)
