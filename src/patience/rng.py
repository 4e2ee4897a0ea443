"""The project's own deterministic shuffle: the same seed gives the same deal everywhere.

``random.shuffle`` is not promised to give the same order across Python versions, so deals
come from SplitMix64 (Steele, Lea & Flood 2014) feeding an unbiased Fisher–Yates shuffle
(Lemire's bounded integers by rejection). Both are plain 64-bit integer arithmetic.

>>> shuffled(list(range(5)), 1)
[2, 1, 4, 3, 0]
"""

from __future__ import annotations

from typing import TypeVar

from patience.errors import BadInputError

__all__ = ["MAX_SEED", "SplitMix64", "check_seed", "shuffled"]

T = TypeVar("T")
_MASK = (1 << 64) - 1
MAX_SEED = (1 << 63) - 1


class SplitMix64:
    """A tiny, well-studied 64-bit generator; good enough for shuffling cards."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` without modulo bias."""
        threshold = (1 << 64) % bound
        while True:
            value = self.next64()
            if value >= threshold:
                return value % bound


def check_seed(seed: object) -> int:
    """Return the seed as an int, or raise BadInputError: seeds are whole numbers 0..2**63-1."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        try:
            seed = int(str(seed).strip())
        except ValueError:
            raise BadInputError(f"a seed is a whole number, not {seed!r}") from None
    if not 0 <= seed <= MAX_SEED:
        raise BadInputError(f"seed {seed} is out of range (0..{MAX_SEED})")
    return seed


def shuffled(items: list[T], seed: int) -> list[T]:
    """A new list with ``items`` in the order given by ``seed`` (Fisher–Yates from the end)."""
    rng = SplitMix64(check_seed(seed))
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rng.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out
