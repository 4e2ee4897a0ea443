// What the search cores share: an open-addressing set of exact 128-bit position keys. It starts
// small and doubles while it may; at its bound, `full()` tells the search to clear it (a search keeps
// its memory bounded that way). The whole key is stored, so no collision can make a position count
// as searched. A key's `hi` is never 0 (0 marks an empty slot): each core's packing sees to that.

#pragma once

#include "mix.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace patience_core {

struct Key128 {
    std::uint64_t lo;
    std::uint64_t hi;  // never 0
    bool operator==(const Key128& o) const { return lo == o.lo && hi == o.hi; }
};

class KeySet {
  public:
    explicit KeySet(std::size_t max_entries) : max_slots_(1024) {
        while (max_slots_ < max_entries * 2) max_slots_ <<= 1;
        resize(std::min<std::size_t>(max_slots_, 1 << 12));
    }
    bool contains(const Key128& k) const {
        std::size_t i = index(k);
        while (slots_[i].hi) {
            if (slots_[i] == k) return true;
            i = (i + 1) & mask_;
        }
        return false;
    }
    void add(const Key128& k) {
        if (size_ >= slots_.size() / 2 && slots_.size() < max_slots_) grow();
        insert(k);
    }
    void erase(const Key128& k) {  // backward-shift deletion keeps every probe chain whole
        std::size_t i = index(k);
        while (slots_[i].hi) {
            if (slots_[i] == k) break;
            i = (i + 1) & mask_;
        }
        if (!slots_[i].hi) return;
        std::size_t j = i;
        while (true) {
            j = (j + 1) & mask_;
            if (!slots_[j].hi) break;
            std::size_t h = index(slots_[j]);
            bool stays = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);
            if (!stays) {
                slots_[i] = slots_[j];
                i = j;
            }
        }
        slots_[i] = Key128{0, 0};
        --size_;
    }
    void clear() {
        std::fill(slots_.begin(), slots_.end(), Key128{0, 0});
        size_ = 0;
    }
    bool full() const { return slots_.size() >= max_slots_ && size_ >= slots_.size() / 2; }
    std::size_t size() const { return size_; }
    std::size_t bytes() const { return slots_.size() * sizeof(Key128); }

  private:
    std::size_t index(const Key128& k) const { return mix(k.lo ^ mix(k.hi)) & mask_; }
    void insert(const Key128& k) {
        std::size_t i = index(k);
        while (slots_[i].hi) {
            if (slots_[i] == k) return;
            i = (i + 1) & mask_;
        }
        slots_[i] = k;
        ++size_;
    }
    void resize(std::size_t slots) {
        slots_.assign(slots, Key128{0, 0});
        mask_ = slots - 1;
        size_ = 0;
    }
    void grow() {
        std::vector<Key128> old_slots = std::move(slots_);
        resize(old_slots.size() * 2);
        for (const Key128& k : old_slots)
            if (k.hi) insert(k);
    }
    std::vector<Key128> slots_;
    std::size_t max_slots_;
    std::size_t mask_ = 0;
    std::size_t size_ = 0;
};

}  // namespace patience_core
