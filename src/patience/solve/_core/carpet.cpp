// The search core of the Teppich waste-pile variant (see src/patience/solve/carpet.py).
//
// The same search as CarpetWasteProblem + depth_first in Python, on a position packed into
// numbers. The cards of the stock and the waste, read in the order they would come onto the
// waste (the waste from its bottom up, then the stock from its top down), form the *talon
// sequence*. Playing takes cards out of it and nothing ever adds one; turning a card only
// moves the border between waste and stock; and turning the waste over into a new stock
// leaves the sequence as it was (the waste read bottom up is the new stock read top down).
// So a position is exactly: the four foundation heights, the passes used, the border, and
// which cards of the root's talon sequence are still there (a bit mask). The carpet holds
// every other card. That makes an exact 128-bit key: the transposition table needs no hash
// check and can never mistake one position for another.
//
// Abstract moves, in the order they are tried: 'w' the waste's top card to its foundation;
// 'c' a carpet card to its foundation (the gap filled as the rules say); 'd' turn a card;
// 'r' turn the waste over. With the gap filled from the waste first, a carpet card is not
// played while the waste is empty and the stock is not: turning a card first and then
// playing leads to the very same position. Once no card is left to turn and no pass is
// left, a waste top card that fits its foundation goes there without branching (safe; the
// proof is in CarpetWasteProblem's docstring).

#include "cpuclock.hpp"
#include "keyset.hpp"
#include "mix.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

using u64 = std::uint64_t;

// a position's key: lo the talon mask; hi the heights (4 x 4 bits), the passes (4 bits, at least 1:
// so hi is never 0) and the border
using Key = patience_core::Key128;
using Table = patience_core::KeySet;

using patience_core::mix;

struct Move {
    char kind;  // 'w', 'c', 'd', 'r'
    int card;   // the card for 'c', else -1
};

struct Moves {  // at most 'w', four 'c' and one of 'd' or 'r'
    Move move[6];
    int count = 0;
    void push(Move m) { move[count++] = m; }
};

struct Undo {
    Move move;
    int fill_index;  // talon index of the card that filled the gap, or -1
    int old_border;
};

class Position {
  public:
    Position(const std::vector<int>& carpet, const std::vector<int>& stock, const std::vector<int>& waste,
             const std::vector<int>& heights, int passes, int max_passes, bool waste_first)
        : passes_(passes), max_passes_(max_passes), waste_first_(waste_first) {
        if (heights.size() != 4) throw std::invalid_argument("four foundation heights are needed");
        for (int s = 0; s < 4; ++s) {
            if (heights[s] < 0 || heights[s] > 13) throw std::invalid_argument("a height is out of 0..13");
            height_[s] = heights[s];
        }
        // the talon sequence: the waste bottom up, then the stock top down (the stock's top is its last)
        for (int c : waste) talon_.push_back(c);
        for (auto it = stock.rbegin(); it != stock.rend(); ++it) talon_.push_back(*it);
        if (talon_.size() > 60) throw std::invalid_argument("too many talon cards");
        for (int c : talon_) check_card(c);
        for (std::size_t i = 0; i < talon_.size(); ++i) mask_ |= 1ULL << i;
        border_ = static_cast<int>(waste.size());
        for (int c : carpet) {
            if (c < 0) continue;
            check_card(c);
            carpet_ |= 1ULL << c;
        }
        if (passes_ < 1 || passes_ > 15 || max_passes_ < 1 || max_passes_ > 15)
            throw std::invalid_argument("passes are out of 1..15");
    }

    bool won() const { return height_[0] == 13 && height_[1] == 13 && height_[2] == 13 && height_[3] == 13; }

    Key key() const {
        u64 hi = 0;
        for (int s = 0; s < 4; ++s) hi |= static_cast<u64>(height_[s]) << (4 * s);
        hi |= static_cast<u64>(passes_) << 16;
        // the border right above the waste's top card: borders that split the talon alike
        // (the cards between them gone) are one position
        hi |= static_cast<u64>(waste_top() + 1) << 20;
        return Key{mask_, hi};
    }

    int waste_top() const {  // talon index, or -1
        u64 below = border_ >= 64 ? mask_ : (mask_ & ((1ULL << border_) - 1));
        return below ? 63 - __builtin_clzll(below) : -1;
    }
    int stock_top() const {
        u64 above = border_ >= 64 ? 0 : (mask_ >> border_);
        return above ? border_ + __builtin_ctzll(above) : -1;
    }

    void moves(Moves& out) const {
        out.count = 0;
        int w = waste_top();
        int s = stock_top();
        if (w >= 0 && playable(talon_[w])) {
            out.push({'w', -1});
            if (s < 0 && passes_ >= max_passes_) return;  // safe: see the comment at the top
        }
        if (w >= 0 || s < 0 || !waste_first_) {
            for (int suit = 0; suit < 4; ++suit) {
                int h = height_[suit];
                if (h < 13 && (carpet_ >> (suit * 13 + h) & 1)) out.push({'c', suit * 13 + h});
            }
        }
        if (s >= 0)
            out.push({'d', -1});
        else if (w >= 0 && passes_ < max_passes_)
            out.push({'r', -1});
    }

    Undo play(const Move& m) {
        Undo u{m, -1, border_};
        switch (m.kind) {
            case 'c': {
                carpet_ &= ~(1ULL << m.card);
                ++height_[m.card / 13];
                int w = waste_top();
                int s = stock_top();
                int fill = -1;
                if (waste_first_)
                    fill = w >= 0 ? w : s;
                else
                    fill = s >= 0 ? s : w;
                if (fill >= 0) {
                    mask_ &= ~(1ULL << fill);
                    carpet_ |= 1ULL << talon_[fill];
                    u.fill_index = fill;
                }
                break;
            }
            case 'w': {
                int w = waste_top();
                mask_ &= ~(1ULL << w);
                ++height_[talon_[w] / 13];
                u.fill_index = w;
                break;
            }
            case 'd':
                border_ = stock_top() + 1;
                break;
            default:  // 'r'
                border_ = 0;
                ++passes_;
        }
        return u;
    }

    void undo(const Undo& u) {
        switch (u.move.kind) {
            case 'c':
                if (u.fill_index >= 0) {
                    mask_ |= 1ULL << u.fill_index;
                    carpet_ &= ~(1ULL << talon_[u.fill_index]);
                }
                --height_[u.move.card / 13];
                carpet_ |= 1ULL << u.move.card;
                break;
            case 'w':
                mask_ |= 1ULL << u.fill_index;
                --height_[talon_[u.fill_index] / 13];
                break;
            case 'd':
                border_ = u.old_border;
                break;
            default:
                border_ = u.old_border;
                --passes_;
        }
    }

  private:
    static void check_card(int c) {
        if (c < 0 || c >= 52) throw std::invalid_argument("a card is out of 0..51");
    }
    bool playable(int card) const { return card % 13 == height_[card / 13]; }

    std::vector<int> talon_;
    u64 mask_ = 0;
    u64 carpet_ = 0;
    int border_ = 0;
    int height_[4] = {0, 0, 0, 0};
    int passes_;
    int max_passes_;
    bool waste_first_;
};

using Line = std::vector<std::tuple<std::string, int>>;
using patience_core::thread_cpu_seconds;

struct Found {
    int status = 1;  // 0 won, 1 unwinnable, 2 unknown
    std::string reason = "every line searched";
    u64 nodes = 0;
};

// The depth-first search of CarpetWasteProblem + depth_first from `pos`, with `table` as the
// positions known to be lost. With `shuffle`, each position's moves are tried in another order
// (a fixed shuffle drawn from its key). On a stop by the node cap, the current line's keys are
// taken out of the table: what is left there was searched to the end.
Found search(Position pos, Table& table, double start, double seconds, long long max_nodes,
             u64 shuffle, std::vector<Undo>& line, u64& peak, u64& resets) {
    Found out;
    line.clear();
    if (pos.won()) {
        out.status = 0;
        out.reason = "a winning line";
        return out;
    }
    if (table.contains(pos.key())) return out;
    struct Frame {
        Moves moves;
        int next = 0;
    };
    std::vector<Frame> frames;
    std::vector<Key> path;
    frames.reserve(1024);  // a line is at most 52 plays and a turn per talon card and pass
    path.reserve(1024);
    auto enter = [&](const Key& k) {
        path.push_back(k);
        frames.emplace_back();
        Moves& ms = frames.back().moves;
        pos.moves(ms);
        if (shuffle) {
            u64 r = mix(k.lo ^ mix(k.hi) ^ shuffle);
            for (int x = ms.count - 1; x > 0; --x) {
                r = mix(r + 0x9e3779b97f4a7c15ULL);
                std::swap(ms.move[x], ms.move[r % static_cast<u64>(x + 1)]);
            }
        }
    };
    table.add(pos.key());
    enter(pos.key());
    while (!frames.empty()) {
        Frame& top = frames.back();
        if (top.next == top.moves.count) {
            frames.pop_back();
            path.pop_back();
            if (!line.empty()) {
                pos.undo(line.back());
                line.pop_back();
            }
            continue;
        }
        Move m = top.moves.move[top.next++];
        Undo u = pos.play(m);
        ++out.nodes;
        if (pos.won()) {
            line.push_back(u);
            out.status = 0;
            out.reason = "a winning line";
            break;
        }
        Key k = pos.key();
        if (table.contains(k)) {
            pos.undo(u);
        } else {
            if (table.full()) {
                peak = std::max<u64>(peak, table.size());
                table.clear();
                for (const Key& p : path) table.add(p);
                ++resets;
            }
            table.add(k);
            line.push_back(u);
            enter(k);
        }
        if ((out.nodes & 4095) == 0 && seconds >= 0 && thread_cpu_seconds() - start > seconds) {
            out.status = 2;
            out.reason = "time";
            break;
        }
        if (max_nodes >= 0 && out.nodes >= static_cast<u64>(max_nodes)) {
            out.status = 2;
            out.reason = "nodes";
            break;
        }
    }
    peak = std::max<u64>(peak, table.size());
    if (out.status == 2)
        for (const Key& p : path) table.erase(p);
    return out;
}

// With probes: the reference order for kProbeFrom positions, then shuffled orders for
// kProbeUnit times 1, 1, 2, 1, 1, 2, 4, ... positions each, then the reference order to the end.
// Every move makes the position strictly later (a redeal adds a pass, a card goes up, a turn
// moves the border on), so no line ever comes back to a position: a position searched to the
// end is lost for good, and all the searches share one table. A won deal whose win the
// reference order meets late is often won at once in another order.
constexpr long long kProbeFrom = 2000000;
constexpr long long kProbeUnit = 500000;
constexpr int kProbes = 7;
constexpr long long kLuby[kProbes] = {1, 1, 2, 1, 1, 2, 4};

// status: 0 won, 1 unwinnable, 2 unknown; then reason, line, nodes, peak entries, table bytes, resets
std::tuple<int, std::string, Line, u64, u64, u64, u64> solve(const std::vector<int>& carpet,
                                                             const std::vector<int>& stock,
                                                             const std::vector<int>& waste,
                                                             const std::vector<int>& heights, int passes,
                                                             int max_passes, bool waste_first, double seconds,
                                                             long long max_nodes, double memory_mb, bool probes) {
    Position pos(carpet, stock, waste, heights, passes, max_passes, waste_first);
    if (pos.won()) return {0, "a winning line", {}, 0, 0, 0, 0};
    std::size_t entries = static_cast<std::size_t>(memory_mb * 1024 * 1024 / (2 * sizeof(Key)));
    if (entries < 1024) entries = 1024;
    Table table(entries);

    nb::gil_scoped_release release;
    const double start = thread_cpu_seconds();  // the budget is this thread's CPU time (cpuclock.hpp)
    std::vector<Undo> line;
    u64 nodes = 0, peak = 1, resets = 0;
    Found found;
    // (shuffle, node cap) of each search in turn; the last one has no cap of its own
    std::vector<std::pair<u64, long long>> plan;
    if (probes) {
        plan.emplace_back(0, kProbeFrom);
        for (int i = 0; i < kProbes; ++i) plan.emplace_back(i + 1, kProbeUnit * kLuby[i]);
    }
    plan.emplace_back(0, -1);
    for (const auto& [shuffle, cap] : plan) {
        long long left = max_nodes < 0 ? -1 : std::max<long long>(0, max_nodes - static_cast<long long>(nodes));
        long long limit = cap < 0 ? left : (left < 0 ? cap : std::min(cap, left));
        found = search(pos, table, start, seconds, limit, shuffle, line, peak, resets);
        nodes += found.nodes;
        if (found.status != 2 || found.reason != "nodes" || limit == left) break;
    }
    Line out;
    if (found.status == 0)
        for (const Undo& u : line) out.emplace_back(std::string(1, u.move.kind), u.move.card);
    return {found.status, found.reason, out, nodes, peak, table.bytes(), resets};
}

// The abstract moves of a position, for the differential test against the Python problem.
Line moves(const std::vector<int>& carpet, const std::vector<int>& stock, const std::vector<int>& waste,
           const std::vector<int>& heights, int passes, int max_passes, bool waste_first) {
    Position pos(carpet, stock, waste, heights, passes, max_passes, waste_first);
    Moves ms;
    pos.moves(ms);
    Line out;
    for (int i = 0; i < ms.count; ++i) out.emplace_back(std::string(1, ms.move[i].kind), ms.move[i].card);
    return out;
}

}  // namespace

NB_MODULE(_carpet, m) {
    m.doc() = "The search core of the Teppich waste-pile variant (see patience.solve.carpet).";
    m.def("solve", &solve, nb::arg("carpet"), nb::arg("stock"), nb::arg("waste"), nb::arg("heights"),
          nb::arg("passes"), nb::arg("max_passes"), nb::arg("waste_first"), nb::arg("seconds"), nb::arg("max_nodes"),
          nb::arg("memory_mb"), nb::arg("probes") = false);
    m.def("moves", &moves, nb::arg("carpet"), nb::arg("stock"), nb::arg("waste"), nb::arg("heights"),
          nb::arg("passes"), nb::arg("max_passes"), nb::arg("waste_first"));
}
