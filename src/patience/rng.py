"""The project's own deterministic shuffle: the same seed gives the same deal everywhere.

``random.shuffle`` is not promised to give the same order across Python versions, so deals
come from SplitMix64 (Steele, Lea & Flood 2014) feeding an unbiased Fisher–Yates shuffle
(bounded integers by modulo, rejecting the few values that would bias it). Both are plain
64-bit integer arithmetic. Each game salts the seed with its id, so game 7 of Teppich and
game 7 of Der Fächer are unrelated deals.

>>> shuffled(list(range(5)), 1)
[2, 1, 4, 3, 0]
"""

from __future__ import annotations

import hashlib
from typing import TypeVar

from patience.errors import BadInputError

__all__ = ["MAX_SEED", "SplitMix64", "check_seed", "salt_value", "shuffled"]

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


def salt_value(salt: str) -> int:
    """A stable 64-bit number for a text (BLAKE2b), to mix into a seed."""
    return int.from_bytes(hashlib.blake2b(salt.encode("utf-8"), digest_size=8).digest(), "big")


def shuffled(items: list[T], seed: int, salt: str = "") -> list[T]:
    """A new list with ``items`` in the order given by ``seed`` and ``salt`` (Fisher–Yates
    from the end). The generator starts from ``seed`` XOR the salt's 64-bit value."""
    rng = SplitMix64(check_seed(seed) ^ (salt_value(salt) if salt else 0))
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rng.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out
