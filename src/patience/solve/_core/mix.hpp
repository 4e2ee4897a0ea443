// What the search cores share: the 64-bit finaliser of SplitMix64 (Steele, Lea & Flood 2014),
// which spreads the bits of a position key over a hash-table index.

#pragma once

#include <cstdint>

namespace patience_core {

inline std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

}  // namespace patience_core
