"""A game is counted under the variant its options are: Der Fächer with one pass begun by name, by the
address's option alone, or by a variant's name with the option added, is the one-pass variant; options that
equal no listed variant are counted as custom, never under the variant whose options they changed."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from patience.games import get_game
from patience.solve import winnable
from test_server_app import client, new_game  # noqa: F401 - the fixture


@pytest.mark.parametrize(("data", "variant"), [
    ({"variant": "one-pass"}, "one-pass"),
    ({"options": {"passes": 1}}, "one-pass"),
    ({"variant": "standard", "options": {"passes": 1}}, "one-pass"),
    ({"variant": "with-undo"}, "with-undo"),
    ({"options": {"undo_limit": 3}}, "with-undo"),
    ({}, "standard"),
    ({"options": {"passes": 3}}, None),
    ({"variant": "standard", "options": {"passes": 3}}, None),
])
def test_a_game_is_named_by_the_variant_its_options_are(client: TestClient, data: dict[str, Any],  # noqa: F811
                                                        variant: str | None) -> None:
    with client.websocket_connect("/ws") as ws:
        game = new_game(ws, "faecher", seed="4", **data)
    assert game["variant"] == variant


def test_one_pass_is_listed_with_its_winnable_deals() -> None:
    assert dict(get_game("faecher").INFO.variants["one-pass"]) == {"passes": 1}
    assert len(winnable.seeds("faecher", {"passes": 1})) >= 100
