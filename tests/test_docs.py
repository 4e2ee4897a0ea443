"""The documents say what the code does: every option is documented, the README's commands exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


UNDO_EXAMPLES = "4 draws then 4 undos: the 4th undo is refused; 5 draws, 2 undos, a draw: 2 undos are allowed"


def test_undo_is_explained_as_the_engine_does_it() -> None:
    """Each move adds one undo up to the limit and each undo uses one (tests/test_rules_reloaded.py plays
    the examples); no text says that a new move starts a new row of undos, which the engine never did."""
    rules = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert UNDO_EXAMPLES in " ".join(rules.split())
    texts = {path: (ROOT / path).read_text(encoding="utf-8") for path in (
        "docs/rules.md", "docs/protocol.md", "README.md", "src/patience/web/js/i18n.js",
        "src/patience/web/js/rules-text.js", "src/patience/cli/play.py")}
    texts["options"] = " ".join(doc for cls in GAMES.values() for _, _, doc in describe_options(cls.INFO.options))
    for name, text in texts.items():
        flat = " ".join(text.split())
        for stale in ("new move starts a new row", "new row", "undos in a row", "Rücknahmen hintereinander",
                      "annullamenti di fila", "3 in a row)", "3 hintereinander", "3 di fila"):
            assert stale not in flat, f"{name} says {stale!r}"
    rules = " ".join(texts["src/patience/web/js/rules-text.js"].split())
    for sentence in ("Undo: each move adds one, up to 3 in store; each undo uses one.",
                     "Zurücknehmen: Jeder Zug gibt eine Rücknahme dazu, höchstens 3 auf Vorrat; jede verbraucht eine.",
                     "Annullamenti: ogni mossa ne aggiunge uno, fino a 3 di scorta; ogni annullamento ne consuma uno."):
        assert sentence in rules


def test_readme_opens_with_the_two_set_up_commands_and_ci_runs_the_same_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme[: readme.index("## ", readme.index("## Set up") + 3)]
    commands = re.findall(r"```sh\n(.+?)\n```", head)
    assert len(commands) == 2, commands
    run, test = commands
    assert run == "./scripts/serve"
    serve = (ROOT / "scripts" / "serve").read_text(encoding="utf-8")
    assert ". scripts/env.sh" in serve and '-m pip install -e .' in serve and "-m patience serve" in serve
    assert ". scripts/env.sh" in (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test.strip().lstrip("./") in ci
    assert 'PATH="/usr/bin:$PATH"' in ci  # Debian's own Python, externally managed, in CI


def _chosen_python(tmp_path: Path, path: str) -> str:
    """The $PY that scripts/env.sh chooses in a copy of the repository's scripts, with PATH given."""
    (tmp_path / "scripts").mkdir(exist_ok=True)
    shutil.copy(ROOT / "scripts" / "env.sh", tmp_path / "scripts" / "env.sh")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"PATH": path}
    done = subprocess.run(["bash", "-c", '. scripts/env.sh && echo "$PY" && command -v python'], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
@pytest.mark.skipif(not Path("/usr/lib/python3.11/EXTERNALLY-MANAGED").exists(),
                    reason="no externally managed Debian Python here")
def test_the_set_up_scripts_use_a_venv_where_the_system_python_is_externally_managed(tmp_path: Path) -> None:
    chosen = _chosen_python(tmp_path, "/usr/bin:" + os.environ["PATH"])
    venv = str(tmp_path / ".venv" / "bin")
    assert chosen.splitlines() == [f"{venv}/python", f"{venv}/python"]  # made, and first on the PATH
    assert _chosen_python(tmp_path, "/usr/bin:" + os.environ["PATH"]) == chosen  # and reused


def test_the_set_up_scripts_use_an_active_virtual_environment_as_it_is(tmp_path: Path) -> None:
    if sys.prefix == sys.base_prefix:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "active")], check=True)
        bindir = tmp_path / "active" / "bin"
    else:
        bindir = Path(sys.executable).parent
    chosen = _chosen_python(tmp_path, f"{bindir}:/usr/bin:" + os.environ["PATH"])
    assert chosen.splitlines()[0] == "python3"
    assert not (tmp_path / ".venv").exists()


def test_the_readme_win_rate_table_is_the_published_rates_the_start_page_shows() -> None:
    from patience.solve.rates import RATES, rates_by_variant, readme_table

    assert readme_table() in (ROOT / "README.md").read_text(encoding="utf-8")
    shown = rates_by_variant()
    for gid, cls in GAMES.items():  # every variant a player can choose has its odds
        assert set(shown[gid]) == set(cls.INFO.variants), gid
    for rate in RATES:  # a row stands for the variant its command studies, and for those that only time or undo
        named = GAMES[rate.game].INFO.variants
        studied = next((v for v in named if f"--variant {v} " in rate.command), next(iter(named)))
        for variant in rate.variants:
            differ = set(named[variant].items()) ^ set(named[studied].items())
            assert {key for key, _ in differ} <= {"time_limit", "undo_limit"}, (rate.label, variant)
    assert shown["teppich"]["4x5"]["one_in"] == 87 and not shown["teppich"]["4x5"]["play_matters"]


def test_the_greedy_rates_of_teppich_with_a_waste_are_tight_and_name_their_study() -> None:
    """The greedy player's rates of Teppich with a waste (and its gap filled from the stock) are published
    over a million deals, with the command whose ``--json`` gives them (its ``won`` of its ``deals``), and
    their 95 % intervals are under a quarter of a point wide."""
    from patience.solve.rates import RATES

    for label in ("Teppich with waste, 4 × 5", "Teppich with waste, gap filled from the stock first"):
        rate = next(r for r in RATES if r.label == label)
        assert rate.greedy_deals >= 1_000_000, label
        assert "--players greedy" in rate.greedy_command and f"--deals {rate.greedy_deals}" in rate.greedy_command
        low, high = rate.greedy_interval
        assert low < rate.greedy_rate < high and high - low < 0.0025, label
        assert f"{rate.greedy_deals:,} deals: `{rate.greedy_command}`" in (ROOT / "README.md").read_text("utf-8")


def test_the_slowest_hint_is_published_with_the_benchmark_that_measures_it() -> None:
    """docs/solving.md gives Solitaire Reloaded's hint times as ``benchmarks/hints.py`` prints them (CPU time),
    on deals held apart from those the hints were tuned on, naming the command."""
    text = " ".join((ROOT / "docs" / "solving.md").read_text(encoding="utf-8").split())
    found = re.search(r"`python3 benchmarks/hints\.py --only reloaded --deals (\d+) --first-seed (\d+)`: "
                      r"Solitaire Reloaded p50 ([\d.]+) ms, p95 ([\d.]+) ms, max ([\d.]+) ms of CPU", text)
    assert found, "the hint times of held-apart deals and their command"
    deals, first, p50, p95, most = found.groups()
    assert int(first) >= 900_001 and int(deals) >= 30  # held apart from seeds 1..1,000 (docs/solving.md)
    assert float(p50) <= float(p95) <= float(most) < 250  # under the server's cap of 0.25 s a hint
    assert "--first-seed" in (ROOT / "benchmarks" / "hints.py").read_text(encoding="utf-8")
