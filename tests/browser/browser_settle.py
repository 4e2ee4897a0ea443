"""Waiting for a page to stand still, for the browser tests: until no card or dialog is moving any more.

A screenshot or an accessibility check wants the page at rest. A fixed pause waits as long when nothing
moves as when something does; :func:`settle` waits for the page's running animations and transitions of a
finite length (a card's move, a turn-over, a sheet sliding in), at most ``most_ms`` (a celebration may go
on longer: the picture is then taken in it, as after a pause of that length).
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Error

__all__ = ["settle"]

_SETTLE = """async (most) => {
  const end = performance.now() + most;
  const left = () => new Promise((r) => setTimeout(r, Math.max(0, end - performance.now())));
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  await Promise.race([frames(), left()]);  // what the last input started has begun moving
  while (performance.now() < end) {
    const moving = document.getAnimations().filter((a) => a.playState === "running" && a.effect
      && a.effect.getComputedTiming().endTime !== Infinity);
    if (!moving.length) return;
    await Promise.race([Promise.all(moving.map((a) => a.finished.catch(() => null))), left()]);
    await Promise.race([frames(), left()]);
  }
}"""


def settle(page: Any, most_ms: int = 400) -> None:
    """Return once nothing of finite length moves on ``page`` (two frames at least), or after ``most_ms``."""
    try:
        page.evaluate(_SETTLE, most_ms)
    except Error:  # the page went on to another document meanwhile: a plain pause, as before
        page.wait_for_timeout(most_ms)
