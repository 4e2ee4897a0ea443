"""The project's own deterministic shuffle: the same seed gives the same deal everywhere.

A deal is named by a **seed**, of one of two kinds:

* a **game number** (a whole number ``0..2**63-1``): public, easy to share and type. These
  deals come from SplitMix64 (Steele, Lea & Flood 2014), a fast non-cryptographic generator.
  Anyone may compute the deal of a number, and from a few cards of a deal the number can be
  found by trying them all, so game numbers are for solo play only.
* a **deal key** (64 hex digits: 256 secret random bits from :func:`new_deal_key`): the deal
  of a duel. Its shuffle is driven by keyed BLAKE2b used as a stream cipher (block *i* is
  ``BLAKE2b-512(key=KEY, SALT|i)``), so without the key the cards seen give nothing away about
  the cards not seen: predicting one would break BLAKE2b as a pseudo-random function.

Both feed the same unbiased Fisher–Yates shuffle (bounded integers by modulo, rejecting the
few values that would bias it). ``random.shuffle`` is not used: it is not promised to give the
same order across Python versions. Each game salts the seed with its id, so game 7 of Teppich
and game 7 of Der Fächer are unrelated deals.

>>> shuffled(list(range(5)), 1)
[2, 1, 4, 3, 0]
>>> shuffled(list(range(5)), "00" * 32)
[4, 2, 0, 3, 1]
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import TypeAlias, TypeGuard, TypeVar

from patience.errors import BadInputError

__all__ = [
    "DEAL_KEY_BITS", "MAX_SEED", "KeyedStream", "Seed", "SplitMix64", "check_seed", "is_deal_key", "new_deal_key",
    "salt_value", "shuffled",
]

T = TypeVar("T")
_MASK = (1 << 64) - 1
MAX_SEED = (1 << 63) - 1
DEAL_KEY_BITS = 256
_DEAL_KEY = re.compile(f"[0-9a-f]{{{DEAL_KEY_BITS // 4}}}")

Seed: TypeAlias = int | str
"""A game number (int) or a deal key (64 lower-case hex digits)."""


class _Generator:
    """64-bit words and unbiased bounded integers from them."""

    __slots__ = ()

    def next64(self) -> int:
        raise NotImplementedError

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` without modulo bias."""
        threshold = (1 << 64) % bound
        while True:
            value = self.next64()
            if value >= threshold:
                return value % bound


class SplitMix64(_Generator):
    """A tiny, well-studied 64-bit generator; good enough for shuffling the cards of a game number."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)


class KeyedStream(_Generator):
    """Keyed BLAKE2b in counter mode: a cryptographic stream of 64-bit words for a secret key.

    Block *i* (from 0) is ``BLAKE2b-512(key=KEY, message=SALT || "|" || i as 8 big-endian bytes)``,
    cut into eight big-endian words.

    >>> KeyedStream(bytes(32)).next64() == KeyedStream(bytes(32)).next64()
    True
    """

    __slots__ = ("_block", "_counter", "_key", "_salt", "_words")

    def __init__(self, key: bytes, salt: str = "") -> None:
        if not 16 <= len(key) <= 64:
            raise BadInputError("a deal key has 16 to 64 bytes")
        self._key = key
        self._salt = salt.encode("utf-8") + b"|"
        self._counter = 0
        self._words: list[int] = []

    def next64(self) -> int:
        if not self._words:
            block = hashlib.blake2b(self._salt + self._counter.to_bytes(8, "big"), key=self._key).digest()
            self._counter += 1
            self._words = [int.from_bytes(block[i:i + 8], "big") for i in range(56, -1, -8)]
        return self._words.pop()


def new_deal_key() -> str:
    """A fresh deal key: 256 random bits from the operating system (:mod:`secrets`), as hex."""
    return secrets.token_hex(DEAL_KEY_BITS // 8)


def is_deal_key(seed: object) -> TypeGuard[str]:
    """Is ``seed`` a deal key (64 lower-case hex digits) rather than a game number?"""
    return isinstance(seed, str) and _DEAL_KEY.fullmatch(seed) is not None


def check_seed(seed: object) -> Seed:
    """Return the seed as a game number (int) or a deal key (lower-case hex), or raise BadInputError:
    seeds are whole numbers 0..2**63-1 or 64 hex digits."""
    if isinstance(seed, str) and len(seed.strip()) == DEAL_KEY_BITS // 4:
        key = seed.strip().lower()
        if is_deal_key(key):
            return key
    if isinstance(seed, bool) or not isinstance(seed, int):
        try:
            seed = int(str(seed).strip())
        except ValueError:
            shown = f"{seed[:24]!r}…" if isinstance(seed, str) and len(seed) > 24 else repr(seed)
            raise BadInputError(f"a seed is a whole number or a deal key of 64 hex digits, not {shown}") from None
    if not 0 <= seed <= MAX_SEED:
        raise BadInputError(f"seed {seed} is out of range (0..{MAX_SEED})")
    return seed


def salt_value(salt: str) -> int:
    """A stable 64-bit number for a text (BLAKE2b), to mix into a seed."""
    return int.from_bytes(hashlib.blake2b(salt.encode("utf-8"), digest_size=8).digest(), "big")


def shuffled(items: list[T], seed: Seed, salt: str = "") -> list[T]:
    """A new list with ``items`` in the order given by ``seed`` and ``salt`` (Fisher–Yates
    from the end). For a game number the generator starts from ``seed`` XOR the salt's 64-bit
    value; for a deal key it is the keyed stream of that key and salt."""
    seed = check_seed(seed)
    rng: _Generator
    if isinstance(seed, str):
        rng = KeyedStream(bytes.fromhex(seed), salt)
    else:
        rng = SplitMix64(seed ^ (salt_value(salt) if salt else 0))
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rng.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out
