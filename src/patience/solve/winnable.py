"""Winnable deals only: seeds the solver proved winnable, shipped with the package.

``src/patience/data/winnable.json`` keeps, for each game and variant, the seeds ``1..checked``
that were looked at, those proved winnable, and those the solver left undecided::

    {"format": "patience-winnable", "version": 1,
     "lists": {"teppich rows=5 cols=6": {"game": "teppich", "options": {"rows": 5, "cols": 6},
                                         "deal_check": "…", "checked": 400,
                                         "seeds": [1, 2, 6, …], "unknown": []}}}

A variant is the game with the options that change the play (not the scores or the clock).
``deal_check`` fingerprints deal 1: if the shuffle ever changed, the list would no longer
fit the deals and is refused rather than used. :func:`pick` chooses a seed for a new game
(or a duel); ``patience winnable GAME --extend N`` proves more (:func:`extend`).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import secrets
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from patience.errors import BadInputError
from patience.games import get_game
from patience.options import options_to_dict
from patience.solve.search import Budget, Status

__all__ = ["Entry", "default_path", "entry", "extend", "pick", "seeds", "variant_key"]

FORMAT = "patience-winnable"
VERSION = 1
# the options that change what can be played, per game (None: all of them)
RULE_OPTIONS: dict[str, tuple[str, ...] | None] = {
    "teppich": ("rows", "cols", "waste", "waste_passes", "fill_from"), "faecher": ("passes",), "reloaded": ()}


def default_path() -> Path:
    """The list shipped with the package."""
    return Path(str(resources.files("patience") / "data" / "winnable.json"))


def _rule_options(game: str, options: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    cls = get_game(game)
    opts = options_to_dict(cls.make_options(dict(options or {})), only_changed=True)
    keep = RULE_OPTIONS.get(cls.INFO.id)
    if keep is not None:
        opts = {k: v for k, v in opts.items() if k in keep}
    return cls.INFO.id, opts


def variant_key(game: str, options: Mapping[str, Any] | None = None) -> str:
    """``teppich rows=5 cols=6``: the game and the options that change the play."""
    gid, opts = _rule_options(game, options)
    words = [gid, *(f"{k}={_word(v)}" for k, v in sorted(opts.items()))]
    return " ".join(words)


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def deal_check(game: str, options: Mapping[str, Any] | None) -> str:
    """A fingerprint of deal 1 under these options (it changes if the shuffle ever does)."""
    gid, opts = _rule_options(game, options)
    text = str(get_game(gid).deal(1, opts))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


@dataclass
class Entry:
    """The list of one variant."""

    key: str
    game: str
    options: dict[str, Any]
    checked: int = 0
    seeds: list[int] = field(default_factory=list)
    unknown: list[int] = field(default_factory=list)
    deal_check: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "options": self.options, "deal_check": self.deal_check,
                "checked": self.checked, "seeds": self.seeds, "unknown": self.unknown}


def _load(path: Path) -> dict[str, Any]:
    """The lists of a file, read within the bounds of every JSON file a command reads
    (:func:`patience.record.read_json_file`) and checked field by field; BadInputError if anything is off."""
    from patience.record import read_json_file

    if not path.exists():
        return {"format": FORMAT, "version": VERSION, "lists": {}}
    data = read_json_file(path, BadInputError)
    if not isinstance(data, dict) or data.get("format") != FORMAT or type(data.get("version")) is not int \
            or data.get("version") != VERSION or not isinstance(data.get("lists"), dict):
        raise BadInputError(f"{path} is not a list of winnable seeds (format {FORMAT} {VERSION})")
    for key, raw in data["lists"].items():
        _check_list(path, key, raw)
    return data


def _check_list(path: Path, key: str, raw: Any) -> None:
    def numbers(value: Any) -> bool:
        return isinstance(value, list) and all(type(n) is int and n > 0 for n in value)

    if not (isinstance(raw, dict) and isinstance(raw.get("game"), str) and isinstance(raw.get("options"), dict)
            and isinstance(raw.get("deal_check"), str) and type(raw.get("checked")) is int and raw["checked"] >= 0
            and numbers(raw.get("seeds")) and numbers(raw.get("unknown", []))):
        raise BadInputError(f"{path}: the list {key[:60]!r} is not a list of winnable seeds (game, options, "
                            "deal_check, checked, seeds and unknown, each of its type)")


def entry(game: str, options: Mapping[str, Any] | None = None, path: Path | None = None) -> Entry:
    """The list of a variant (empty when none was made); BadInputError if it no longer fits the deals."""
    gid, opts = _rule_options(game, options)
    key = variant_key(gid, opts)
    raw = _load(path or default_path())["lists"].get(key)
    check = deal_check(gid, opts)
    if raw is None:
        return Entry(key, gid, opts, deal_check=check)
    if raw.get("deal_check") != check:
        raise BadInputError(f"the winnable seeds of {key} were made for other deals (the shuffle changed): "
                            "make them again with 'patience winnable --extend'")
    return Entry(key, gid, opts, raw["checked"], list(raw["seeds"]), list(raw.get("unknown", [])), check)


def seeds(game: str, options: Mapping[str, Any] | None = None, path: Path | None = None) -> list[int]:
    """The seeds proved winnable for this game and variant."""
    return entry(game, options, path).seeds


def pick(game: str, options: Mapping[str, Any] | None = None, *, rng: random.Random | None = None,
         path: Path | None = None) -> int:
    """A seed proved winnable, chosen at random (for a new game or a duel)."""
    found = seeds(game, options, path)
    if not found:
        raise BadInputError(f"no winnable seeds are known for {variant_key(game, options)}: "
                            "make some with 'patience winnable GAME --extend N'")
    return rng.choice(found) if rng is not None else found[secrets.randbelow(len(found))]


def extend(game: str, options: Mapping[str, Any] | None, count: int, *, budget: Budget | None = None,
           scan: int | None = None, path: Path | None = None, workers: int | None = None,
           progress: TextIO | None = sys.stderr) -> list[int]:
    """Solve the seeds after the last one looked at until ``count`` more are proved winnable
    (or ``scan`` seeds were looked at); save the list and return the seeds added."""
    from patience.solve.study import study

    path = path or default_path()
    current = entry(game, options, path)
    budget = budget or Budget(seconds=10.0)
    added: list[int] = []
    start = current.checked + 1
    limit = scan if scan is not None else 1_000_000
    looked = 0
    step = max(count * 2, 16)
    while len(added) < count and looked < limit:
        batch = min(step, limit - looked)
        rows: list[Any] = []
        study(current.game, current.options, batch, first_seed=start, players=("solver",),
              workers=workers, budget=budget, progress=progress, rows_out=rows)
        for seed, status, *_ in sorted(rows):
            if len(added) >= count:
                break
            current.checked = seed
            looked += 1
            if status == Status.WON:
                current.seeds.append(seed)
                added.append(seed)
            elif status == Status.UNKNOWN:
                current.unknown.append(seed)
        start = current.checked + 1
        step *= 2
    _save(path, current)
    return added


def _save(path: Path, current: Entry) -> None:
    data = _load(path)
    data["lists"][current.key] = current.to_dict()
    # one line per list, so that a change to one list is one line of a diff
    lists = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}"
                        for k, v in sorted(data["lists"].items()))
    text = f'{{"format": "{FORMAT}", "version": {VERSION}, "lists": {{\n{lists}\n}}}}'
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    os.replace(tmp, path)
