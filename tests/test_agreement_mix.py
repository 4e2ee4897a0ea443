"""Hint agreement over all open decisions is judged against the game's mix of obvious decisions (the hint
is the greedy move) and the others: live deals have more obvious ones than the offline model's, and a strong
person who plays the obvious move there agreed at 80 % in the live benchmark (docs/fairplay.md)."""

from __future__ import annotations

import random

from patience.fairplay import GameFigures, Step, account_score, expected_agreement, game_figures


def games(count: int, obvious: int, obvious_agreed: int, other: int, other_agreed: int) -> list[GameFigures]:
    rng = random.Random(3)
    steps = [Step(i, int(rng.lognormvariate(7.2, 0.9))) for i in range(60)]  # a person's think times
    return [game_figures(steps, obvious + other, obvious_agreed + other_agreed, nonobvious=other,
                         nonobvious_agreed=other_agreed) for _ in range(count)]


def test_a_strong_person_who_plays_the_obvious_moves_is_not_flagged() -> None:
    person = games(4, 48, 44, 12, 7)  # 92 % where the hint is greedy, 58 % where not: 85 % overall
    assert account_score(person, 1500.0).score < 50
    assert expected_agreement(1500.0, 0.8) > expected_agreement(1500.0)


def test_always_the_hint_is_flagged_from_its_third_game_whatever_the_mix() -> None:
    for obvious, other in ((33, 27), (48, 12)):  # the offline deals' mix, the live duels'
        assert account_score(games(3, obvious, obvious, other, other), 1500.0).score >= 50
        assert account_score(games(2, obvious, obvious, other, other), 1500.0).score < 50  # 120 decisions
