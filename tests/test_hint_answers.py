"""The Solitaire Reloaded hint answers exactly what it answered when its answers were recorded
(tests/data/reloaded_hints.json): the hint is made cheaper now and then, never changed by it.

The positions: every position of the hint player's games of three deals, and for each of them
one deal that looks the same to the player (the unseen cards dealt at random, seeded: the sampled deals
the win chance plays out); each with its move stack, so the hint's circle checks see the same history.
A deliberate change of what the hint answers records them anew:
``python tests/test_hint_answers.py --write`` (and says so in docs/solving.md: the hint player's win
rate must then be measured again)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from patience.games import Reloaded, State
from patience.solve.hints import hint, play_hints
from patience.solve.unseen import hidden_cards, visible_deals, with_hidden

FIXTURE = Path(__file__).parent / "data" / "reloaded_hints.json"
SEEDS = (900_101, 900_102, 900_103)
BUDGET_S = 30.0  # far above what a hint takes: the node bounds decide, never the time cap


def positions() -> list[tuple[str, State]]:
    """(a name, the position with its move stack) for every recorded hint, in order."""
    out: list[tuple[str, State]] = []
    for seed in SEEDS:
        deal = Reloaded.deal(seed)
        _, moves = play_hints(deal, budget_s=BUDGET_S)
        s = deal.copy()
        rng = random.Random(seed)
        for n in range(len(moves) + 1):
            if not s.is_won():
                out.append((f"{seed}/{n}", _with_history(s)))
                out.append((f"{seed}/{n}/sample", visible_deals(s, 1, rng)[0]))
            if n < len(moves):
                s.push(moves[n])
    return out


def _with_history(state: State) -> State:
    out = state.copy()
    out._history = list(state._history)
    return out


def answers() -> dict[str, Any]:
    return {name: None if (move := hint(state, budget_s=BUDGET_S)) is None else str(move)
            for name, state in positions()}


def test_the_hint_answers_what_it_answered() -> None:
    recorded = json.loads(FIXTURE.read_text())
    assert len(recorded) >= 1_000
    now = answers()
    assert list(now) == list(recorded)  # the same positions (the hint player's games are the same)
    differ = {name: (recorded[name], move) for name, move in now.items() if move != recorded[name]}
    assert not differ, f"{len(differ)} of {len(recorded)} hints differ: {list(differ.items())[:10]}"


def test_a_sampled_deal_needs_a_card_for_each_unseen_place() -> None:
    state = Reloaded.deal(3)
    cards = sorted(hidden_cards(state))
    with pytest.raises(ValueError, match="unseen places"):
        with_hidden(state, cards[:-1])
    with pytest.raises(ValueError, match="unseen places"):
        with_hidden(state, [*cards, 51])
    assert hidden_cards(with_hidden(state, cards)) == cards


def test_the_sampler_shuffles_as_the_generator_does() -> None:
    """The sampled deals' own Fisher-Yates draws exactly what ``random.Random.shuffle`` draws (the same
    generator calls), so the deals, and the hints, are those recorded."""
    from patience.solve.unseen import _shuffle

    for seed in range(300):
        cards = list(range(seed % 53))
        theirs = cards[:]
        random.Random(seed).shuffle(theirs)
        _shuffle(cards, random.Random(seed))
        assert cards == theirs


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        FIXTURE.write_text(json.dumps(answers(), indent=0) + "\n")
        print(f"wrote {FIXTURE}")
