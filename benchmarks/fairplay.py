"""Fair play's detection against populations of players (docs/fairplay.md), on the model level.

NOTE: this first version feeds simulated games straight into the detection (``patience.fairplay``): the
think times and the hint agreement each kind of player produces, game after game, as the server's
analysis would record them. Playing the same populations through a real server (websocket clients on
loopback addresses 127.x.y.z, as benchmarks/duels.py does) is still to be built.

Kinds (each game: 60 actions, 20 open decisions):

- ``hint-fast``: the hint at full speed (think 80-150 ms);
- ``hint-delayed``: the hint, with human-like heavy-tailed delays (log-normal, median 2 s, sigma 0.8);
- ``greedy-delayed``: a greedy move (the hint's in 65 % of open decisions), same delays;
- ``daily-scout``: a scouted daily line replayed at 100 ms a move;
- ``human``: log-normal think times (median 2 s, sigma 0.8, at least 350 ms), the hint's move with
  probability 0.55 (another useful move otherwise).

Per kind: rated games until flagged (score >= 50) or marked; for humans, the share flagged over 100 games.
``python benchmarks/fairplay.py [--players N] [--seed S]``
"""

from __future__ import annotations

import argparse
import random
import statistics

from patience.fairplay import Step, account_score, game_figures

KINDS = ("hint-fast", "hint-delayed", "greedy-delayed", "daily-scout", "human")


def one_game(kind: str, rng: random.Random) -> object:
    if kind in ("hint-fast", "daily-scout"):
        thinks = [rng.randrange(80, 150) if kind == "hint-fast" else 100 for _ in range(60)]
    else:
        thinks = [max(350, int(rng.lognormvariate(7.6, 0.8))) for _ in range(60)]
    p = {"hint-fast": 0.98, "hint-delayed": 0.98, "greedy-delayed": 0.65, "daily-scout": 1.0, "human": 0.55}[kind]
    agreed = sum(rng.random() < p for _ in range(20))
    return game_figures([Step(i, t, "d") for i, t in enumerate(thinks)], 20, agreed)


def run(kind: str, rng: random.Random, games: int = 100) -> tuple[int | None, int | None]:
    """Games until flagged, until marked (None: not within ``games``)."""
    played: list[object] = []
    flagged = marked = None
    for n in range(1, games + 1):
        played.insert(0, one_game(kind, rng))
        score = account_score(played)  # type: ignore[arg-type]
        if score.state == "mark" and marked is None:
            marked = n
        if score.state in ("mark", "review") and flagged is None:
            flagged = n
        if marked is not None:
            break
    return flagged, marked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"{'kind':<16} {'players':>7} {'flagged':>8} {'marked':>7} {'games to flag (median)':>23}")
    for kind in KINDS:
        results = [run(kind, rng) for _ in range(args.players)]
        flagged = [f for f, _ in results if f is not None]
        marked = [m for _, m in results if m is not None]
        median = statistics.median(flagged) if flagged else "-"
        print(f"{kind:<16} {args.players:>7} {len(flagged) / args.players:>8.1%} {len(marked) / args.players:>7.1%} "
              f"{median!s:>23}")


if __name__ == "__main__":
    main()
