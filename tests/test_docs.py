"""The documents say what the code does: every option is documented, the README's commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from patience.games import GAMES
from patience.options import describe_options

ROOT = Path(__file__).resolve().parents[1]


def test_every_option_of_every_game_is_in_the_rules_document() -> None:
    rules = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for gid, cls in GAMES.items():
        section = rules.split(f"(`{gid}`")[1]
        for name, default, _ in describe_options(cls.INFO.options):
            shown = ("yes" if default else "no") if isinstance(default, bool) else str(default)
            assert f"| `{name}` | `{shown}` |" in section, f"{gid} option {name} missing or stale in docs/rules.md"


def test_readme_opens_with_the_two_set_up_commands_and_ci_runs_the_same_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme[: readme.index("## ", readme.index("## Set up") + 3)]
    commands = re.findall(r"```sh\n(.+?)\n```", head)
    assert len(commands) == 2, commands
    run, test = commands
    assert run.startswith("python3 -m pip install -e .")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test.strip().lstrip("./") in ci
