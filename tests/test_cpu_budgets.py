"""A solver's time budget counts the CPU time of the thread that searches, not the wall clock.

Each search runs in a process of its own, which the test stops (SIGSTOP) for longer than the
whole budget as soon as the search has begun, and then lets go on. On a wall clock the search
would find its budget spent the moment it runs again, having searched almost nothing; counted in
its own CPU time it searches for the whole budget, as on a quiet machine. So a deal's answer (won,
unwinnable, unknown) no longer depends on what else runs on the machine.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

BUDGET_S = 0.4

SEARCH = """
import json, sys, time
from patience.games import get_game
from patience.solve.search import Budget

game, seed, options, how = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
state = get_game(game).deal(seed, options)
budget = Budget(seconds=float(sys.argv[5]))
if how == "python":  # the Python reference search (patience.solve.search.depth_first)
    from patience.solve.faecher import search_faecher
    search = lambda: search_faecher(state, budget)
else:  # the compiled core, through solve()
    from patience.solve.solution import solve
    search = lambda: solve(state, budget)
print("searching", flush=True)
begun = time.thread_time()
found = search()
print(json.dumps({"status": found.status.value, "reason": found.reason, "nodes": found.nodes,
                  "seconds": found.seconds, "cpu": time.thread_time() - begun}), flush=True)
"""


def search_held_up(game: str, seed: int, options: dict[str, object], how: str) -> dict[str, object]:
    """Search a deal in a process that is stopped, right after the search begins, for several times
    its budget; what it reports (status, reason, nodes, seconds) and the CPU time it took."""
    proc = subprocess.Popen([sys.executable, "-c", SEARCH, game, str(seed), json.dumps(options), how, str(BUDGET_S)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "searching"
        proc.send_signal(signal.SIGSTOP)
        time.sleep(4 * BUDGET_S)  # wall-clock time passes; the search's own CPU time does not
        proc.send_signal(signal.SIGCONT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.mark.slow
@pytest.mark.parametrize(("game", "seed", "options", "how"), [
    ("reloaded", 775, {}, "core"),  # unknown after 50 million positions
    ("faecher", 800968, {"passes": 1}, "core"),  # proved unwinnable only after 25.8 million positions (5 to 12 s)
    ("teppich", 5154, {"waste": True}, "core"),  # unwinnable, 25 to 50 million positions
    ("faecher", 800968, {"passes": 1}, "python"),
], ids=["klondike core", "faecher core", "carpet core", "python search"])
def test_a_budget_is_cpu_time_of_the_search(game: str, seed: int, options: dict[str, object], how: str) -> None:
    found = search_held_up(game, seed, options, how)
    assert (found["status"], found["reason"]) == ("unknown", "time")
    # the whole budget was searched, although the wall clock ran past it while the process stood still
    assert isinstance(found["cpu"], float) and found["cpu"] >= BUDGET_S
    assert isinstance(found["seconds"], float) and BUDGET_S <= found["seconds"] <= found["cpu"]
