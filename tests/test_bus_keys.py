"""Every name the server uses on the bus belongs to one family of :mod:`patience.server.bus.keys`,
with one owner and one kind, and no two families can meet on one name (the sign-in rate counter
and the sign-in lock of an address once shared a Redis key, and nobody could sign in)."""

from __future__ import annotations

import ast
import itertools
import re
from collections import defaultdict
from pathlib import Path

import pytest

from patience.server.bus.keys import FAMILIES, Family, clash

SRC = Path(__file__).resolve().parents[1] / "src" / "patience"

KIND_OF = {"hset": "hash", "hget": "hash", "hdel": "hash", "hgetall": "hash", "hlen": "hash", "hmget": "hash",
           "claim": "hash",
           "acquire": "lease", "renew": "lease", "release": "lease", "holder": "lease", "renew_many": "lease",
           "lock": "lease", "hit": "rate", "publish": "channel", "subscribe": "channel", "unsubscribe": "channel"}
WRITES = {"hset", "hdel", "claim", "acquire", "renew", "release", "renew_many", "lock", "hit", "publish"}


def _text(node: ast.expr) -> str | None:
    """A name as the pattern it makes: a literal as it is, an f-string with ``{}`` for its holes."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.DictComp):
        return _text(node.key)
    if isinstance(node, ast.Dict) and len(node.keys) == 1 and node.keys[0] is not None:
        return _text(node.keys[0])
    return None


def _module(path: Path) -> str:
    return ".".join(path.relative_to(SRC.parent).with_suffix("").parts)


def uses() -> list[tuple[str, str, str, int]]:
    """(module, verb, name pattern, line) of every bus call in the server whose name is written out."""
    found = []
    for path in sorted((SRC / "server").rglob("*.py")):
        if path.parent.name == "bus":
            continue  # the bus itself, and its examples
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in KIND_OF and node.args):
                continue
            owner = node.func.value
            named = (owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name)
                     else "")
            if named != "bus":
                continue
            text = _text(node.args[0])
            if text is not None:
                found.append((_module(path), node.func.attr, text, node.lineno))
    return found


def family_of(kind: str, text: str) -> list[Family]:
    def fits(f: Family) -> bool:
        if f.kind != kind:
            return False
        return re.sub(r"\{[^}]*\}", "{}", f.pattern) == text  # a hole of the family is a hole of the call
    return [f for f in FAMILIES if fits(f)]


def test_the_families_are_apart() -> None:
    met = [(a.pattern, a.kind, b.pattern, b.kind) for a, b in itertools.combinations(FAMILIES, 2) if clash(a, b)]
    assert met == []


def test_clash_sees_names_that_meet() -> None:
    lock = Family("signin:{address}", "lease", "m", "")
    rate = Family("signin:{address}", "rate", "m", "")
    assert clash(lock, rate)  # the bug: a lease and a counter on one Redis key
    assert clash(Family("live", "hash", "m", ""), Family("live{x}", "hash", "n", ""))
    assert not clash(Family("live", "hash", "m", ""), Family("live_info", "hash", "n", ""))
    assert not clash(Family("node:{n}", "lease", "m", ""), Family("node:{n}", "channel", "n", ""))


def test_the_server_finds_its_names_in_the_table() -> None:
    found = uses()
    assert len(found) > 50  # the scan sees the server's calls
    names_by_module: dict[str, set[str]] = defaultdict(set)
    wrong = []
    for module, verb, text, line in found:
        families = family_of(KIND_OF[verb], text)
        where = f"{module}:{line} {verb}({text!r})"
        if len(families) != 1:
            wrong.append(f"{where}: no family of kind {KIND_OF[verb]} (or several)")
            continue
        family = families[0]
        names_by_module[module].add(family.pattern)
        if verb in WRITES and family.owner != module:
            wrong.append(f"{where}: only {family.owner} writes {family.pattern}")
    assert wrong == []
    # the sign-in names are the accounts' own
    assert {"rate:signin:{address}", "lock:signin:{address}"} <= names_by_module["patience.server.accounts.service"]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f"{f.kind}:{f.pattern}")
def test_every_family_is_used_by_its_owner(family: Family) -> None:
    owners = {module for module, verb, text, _ in uses() if family in family_of(KIND_OF[verb], text)}
    owners |= {"patience.server.arena.nodes"} if family.kind == "channel" and family.pattern == "node:{node}" else set()
    assert family.owner in owners, f"{family.pattern} is declared but {family.owner} never uses it"
