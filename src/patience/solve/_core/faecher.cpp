// The search core of the Der Fächer solver (see src/patience/solve/faecher.py): the extension
// module patience.solve._faecher.
//
// A port, position for position, of FanProblem and of the portfolio of searches that
// solve_faecher runs on patience.solve.search.depth_first: the same cards in the solver's
// numbering (suit * 13 + order, order 0 for the 2 up to 12 for the Ace), the same moves in
// the same order for each of the four move orders, the same safe moves played at once
// (settle), the same positions counted as one. The Python module's docstring says why each
// rule is sound; tests/test_faecher_core.py compares the two move list by move list and
// search by search. What is new here is the machinery:
//
// - An exact 128-bit key. The stock and the waste, read in the order their cards come onto
//   the waste (the waste from its bottom up, then the stock from its top down), form the
//   talon sequence: cards only leave it, turning a card moves the border between waste and
//   stock, and a redeal leaves the sequence as it was. So the talon is a bit mask over the
//   root's sequence and the waste's top place. A reserve pile always builds down in suit,
//   so it is its bottom card and its length; the piles are sorted (they are interchangeable).
//   The foundations are the four heights, and the fan holds every other card (its places
//   are interchangeable). Equal keys are exactly the positions FanProblem.key() folds
//   together; the table stores whole keys, so no collision can make a position count as
//   searched.
// - An open-addressing set of keys that grows up to its memory bound and is then emptied
//   (the current line's keys put back), as the Python search does.
// - Positions searched to the end without a win stay known for the next search of the
//   portfolio (every move is one way, so they are lost for good); the current line's keys
//   are taken out when a search stops on its node cap.

#include "cpuclock.hpp"
#include "keyset.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

using u64 = std::uint64_t;

constexpr int kNone = -1;
constexpr int kF = -1;  // a move's target: the foundation
constexpr int kFan = 9;
constexpr int kRedealCost = 100;
enum Kind { TO_FOUNDATION = 0, RELOCATE = 1, ONTO = 2, FAN_BASE = 3, TO_EMPTY = 4 };
enum Order { NEAR = 0, SPARING = 1, FAN = 2, KIND = 3 };

// a position's key: lo the talon mask (52 bits), the waste top's place + 1 (6 bits), the passes
// (4 bits); hi the sorted pile codes (4 x 10 bits), the heights (4 x 4 bits), bit 63 set (never 0)
using Key = patience_core::Key128;
using Table = patience_core::KeySet;

// ("talon", d, redeal, d2, target); ("fan", places, slot, then) with then ("talon", d, redeal, d2) or
// ("relocate", q); ("relocate", q, k). See FanProblem.
struct Move {
    std::uint8_t kind;  // 0 talon, 1 fan, 2 relocate
    std::int8_t a;      // talon: target (kF: the foundation); fan: the first place; relocate: q
    std::int8_t b;      // fan: the slot; relocate: k
    std::int8_t q;      // fan then relocate: the pile carried; else -1
    std::uint8_t d, d2;
    bool redeal;
    std::uint8_t n = 0;          // fan: the places of the chain, a and then more[0..n-1]
    std::int8_t more[kFan - 1] = {};
};

struct Pos {
    std::int8_t fan[kFan];
    std::int8_t res[4][13];
    std::uint8_t rlen[4];
    std::int8_t stock[52];
    std::int8_t waste[52];
    std::uint8_t slen, wlen;
    std::uint8_t height[4];
    std::uint8_t passes;

    int top(int k) const { return rlen[k] ? res[k][rlen[k] - 1] : kNone; }
};

struct Reach {
    int card, d;
    bool redeal;
    int d2;
};

class Fan {
  public:
    Fan(const std::vector<int>& fan, const std::vector<std::vector<int>>& reserves, const std::vector<int>& stock,
        const std::vector<int>& waste, const std::vector<int>& heights, int passes, int max_passes)
        : max_passes_(max_passes) {
        std::memset(&p_, 0, sizeof(p_));
        if (fan.size() != kFan) throw std::invalid_argument("the fan has nine places");
        if (reserves.size() != 4) throw std::invalid_argument("four reserve piles are needed");
        if (heights.size() != 4) throw std::invalid_argument("four foundation heights are needed");
        if (stock.size() + waste.size() > 52) throw std::invalid_argument("too many talon cards");
        if (passes < 1 || passes > 15 || max_passes < 1 || max_passes > 15)
            throw std::invalid_argument("passes are out of 1..15");
        bool seen[52] = {};
        auto take = [&](int c) {
            if (c < 0 || c >= 52) throw std::invalid_argument("a card is out of 0..51");
            if (seen[c]) throw std::invalid_argument("a card is there twice");
            seen[c] = true;
            return static_cast<std::int8_t>(c);
        };
        for (int s = 0; s < 4; ++s) {
            if (heights[s] < 0 || heights[s] > 13) throw std::invalid_argument("a height is out of 0..13");
            p_.height[s] = static_cast<std::uint8_t>(heights[s]);
            for (int o = 0; o < heights[s]; ++o) take(s * 13 + o);
        }
        for (int i = 0; i < kFan; ++i) p_.fan[i] = fan[i] < 0 ? kNone : take(fan[i]);
        for (int k = 0; k < 4; ++k) {
            const auto& pile = reserves[k];
            if (pile.size() > 13) throw std::invalid_argument("a reserve pile is too long");
            for (std::size_t j = 0; j < pile.size(); ++j) {
                p_.res[k][j] = take(pile[j]);
                if (j && !(pile[j] / 13 == pile[j - 1] / 13 && pile[j] == pile[j - 1] - 1))
                    throw std::invalid_argument("a reserve pile must build down in suit");
            }
            p_.rlen[k] = static_cast<std::uint8_t>(pile.size());
        }
        for (std::size_t j = 0; j < stock.size(); ++j) p_.stock[j] = take(stock[j]);
        for (std::size_t j = 0; j < waste.size(); ++j) p_.waste[j] = take(waste[j]);
        p_.slen = static_cast<std::uint8_t>(stock.size());
        p_.wlen = static_cast<std::uint8_t>(waste.size());
        for (int c = 0; c < 52; ++c)
            if (!seen[c]) throw std::invalid_argument("a card is missing");
        p_.passes = static_cast<std::uint8_t>(passes);
        // the talon sequence: the waste bottom up, then the stock top down (its top is its last)
        std::fill(std::begin(place_), std::end(place_), -1);
        int n = 0;
        for (int j = 0; j < p_.wlen; ++j) place_[p_.waste[j]] = n++;
        for (int j = p_.slen - 1; j >= 0; --j) place_[p_.stock[j]] = n++;
        settle();
    }

    void set_order(int order) { order_ = order; }
    bool won() const { return p_.height[0] == 13 && p_.height[1] == 13 && p_.height[2] == 13 && p_.height[3] == 13; }

    Key key() const {
        u64 mask = 0;
        for (int j = 0; j < p_.wlen; ++j) mask |= 1ULL << place_[p_.waste[j]];
        for (int j = 0; j < p_.slen; ++j) mask |= 1ULL << place_[p_.stock[j]];
        u64 top = p_.wlen ? static_cast<u64>(place_[p_.waste[p_.wlen - 1]] + 1) : 0;
        u64 lo = mask | top << 52 | static_cast<u64>(p_.passes) << 58;
        unsigned codes[4];
        for (int k = 0; k < 4; ++k)
            codes[k] = p_.rlen[k] ? (static_cast<unsigned>(p_.res[k][0] + 1) << 4 | p_.rlen[k]) : 0u;
        std::sort(codes, codes + 4);
        u64 hi = 1ULL << 63;
        for (int k = 0; k < 4; ++k) hi |= static_cast<u64>(codes[k]) << (10 * k);
        for (int s = 0; s < 4; ++s) hi |= static_cast<u64>(p_.height[s]) << (40 + 4 * s);
        return Key{lo, hi};
    }

    // the moves of FanProblem.moves(), in its order, appended to `out`
    void moves(std::vector<Move>& out) const {
        const Pos& p = p_;
        int tops[4];
        int empties = 0, first_empty = kNone;
        for (int k = 0; k < 4; ++k) {
            tops[k] = p.top(k);
            if (!p.rlen[k]) {
                ++empties;
                if (first_empty == kNone) first_empty = k;
            }
        }
        int capacity = 1 << empties;
        items_.clear();
        auto add = [&](int rank, const Move& m) { items_.emplace_back(rank, m); };
        auto rank = [&](int kind, int dist, bool empty = false, bool fan = false) {
            if (order_ == KIND) return kind * 1000 + dist;
            int base = dist * 8 + kind;
            if (order_ == SPARING) return base + (empty ? 100000 : 0);
            if (order_ == FAN) return base + (fan ? 0 : 100000);
            return base;
        };
        // whole piles carried onto the card one above their bottom card
        for (int q = 0; q < 4; ++q) {
            if (p.rlen[q] && p.res[q][0] % 13 != 12) {
                int up = p.res[q][0] + 1;
                for (int k = 0; k < 4; ++k)
                    if (tops[k] == up && p.rlen[q] <= capacity) add(rank(RELOCATE, 0), talon_free_move(2, q, k));
            }
        }
        // talon cards: the waste's top, each card the talon turns up, then after a redeal
        reach_.clear();
        if (p.wlen) reach_.push_back({p.waste[p.wlen - 1], 0, false, 0});
        int n = p.slen;
        for (int d = 1; d <= n; ++d) reach_.push_back({p.stock[n - d], d, false, 0});
        if (p.passes < max_passes_) {
            int d2 = 1;
            for (int j = 0; j < p.wlen; ++j, ++d2) reach_.push_back({p.waste[j], n, true, d2});
            for (int j = n - 1; j >= 0; --j, ++d2) reach_.push_back({p.stock[j], n, true, d2});
        }
        for (const Reach& r : reach_) {
            int dist = r.redeal ? r.d2 + kRedealCost : r.d;
            int card = r.card;
            if (card % 13 == p.height[card / 13]) {
                add(rank(TO_FOUNDATION, dist), talon_move(r, kF));
                continue;
            }
            if (card % 13 != 12) {
                int up = card + 1;
                for (int k = 0; k < 4; ++k)
                    if (tops[k] == up) add(rank(ONTO, dist), talon_move(r, k));
            }
            if (first_empty != kNone) add(rank(TO_EMPTY, dist, true), talon_move(r, first_empty));
        }
        // fan cards as a base for a card one below, taken at once: a chain of fan cards, each
        // one below the last, then a talon card or a pile one below the chain's last card
        int in_fan[52];
        std::fill(std::begin(in_fan), std::end(in_fan), kNone);
        for (int i = 0; i < kFan; ++i)
            if (p.fan[i] != kNone) in_fan[p.fan[i]] = i;
        for (int i = 0; i < kFan; ++i) {
            int card = p.fan[i];
            if (card == kNone || card % 13 == 0) continue;
            int fit = kNone;
            if (card % 13 != 12)
                for (int k = 0; k < 4; ++k)
                    if (tops[k] == card + 1) fit = k;
            for (int slot : {fit, first_empty}) {
                if (slot == kNone) continue;
                Move chain{1, static_cast<std::int8_t>(i), static_cast<std::int8_t>(slot), -1, 0, 0, false};
                int below = card - 1;
                while (true) {
                    for (const Reach& r : reach_) {
                        if (r.card == below) {
                            int dist = r.redeal ? r.d2 + kRedealCost : r.d;
                            Move m = chain;
                            m.d = static_cast<std::uint8_t>(r.d);
                            m.d2 = static_cast<std::uint8_t>(r.d2);
                            m.redeal = r.redeal;
                            add(rank(FAN_BASE, dist, slot != fit, true), m);
                        }
                    }
                    if (slot == fit) {
                        for (int q = 0; q < 4; ++q) {
                            if (q != fit && p.rlen[q] && p.res[q][0] == below && p.rlen[q] <= capacity) {
                                Move m = chain;
                                m.q = static_cast<std::int8_t>(q);
                                add(rank(RELOCATE, 0, false, true), m);
                            }
                        }
                    }
                    if (below % 13 == 0 || in_fan[below] == kNone) break;
                    chain.more[chain.n++] = static_cast<std::int8_t>(in_fan[below]);
                    --below;
                }
            }
        }
        std::stable_sort(items_.begin(), items_.end(),
                         [](const std::pair<int, Move>& x, const std::pair<int, Move>& y) { return x.first < y.first; });
        for (const auto& it : items_) out.push_back(it.second);
    }

    void play(const Move& m) {
        undo_.push_back(p_);
        if (m.kind == 0) {
            talon(m.d, m.redeal, m.d2, m.a);
        } else if (m.kind == 1) {
            int target = m.b;
            p_.res[target][p_.rlen[target]++] = p_.fan[m.a];
            p_.fan[m.a] = kNone;
            for (int j = 0; j < m.n; ++j) {
                p_.res[target][p_.rlen[target]++] = p_.fan[m.more[j]];
                p_.fan[m.more[j]] = kNone;
            }
            if (m.q < 0)
                talon(m.d, m.redeal, m.d2, target);
            else
                carry(m.q, target);
        } else {
            carry(m.a, m.b);
        }
        settle();
    }

    void undo() {
        p_ = undo_.back();
        undo_.pop_back();
    }

  private:
    static Move talon_free_move(int kind, int q, int k) {
        return Move{static_cast<std::uint8_t>(kind), static_cast<std::int8_t>(q), static_cast<std::int8_t>(k), -1, 0, 0,
                    false};
    }
    static Move talon_move(const Reach& r, int target) {
        return Move{0, static_cast<std::int8_t>(target), -1, -1, static_cast<std::uint8_t>(r.d),
                    static_cast<std::uint8_t>(r.d2), r.redeal};
    }

    void talon(int d, bool redeal, int d2, int target) {
        Pos& p = p_;
        for (int j = 0; j < d; ++j) p.waste[p.wlen++] = p.stock[--p.slen];
        if (redeal) {  // the waste turned over is the new stock (the stock is empty: d took every card)
            for (int j = 0; j < p.wlen; ++j) p.stock[j] = p.waste[p.wlen - 1 - j];
            p.slen = p.wlen;
            p.wlen = 0;
            ++p.passes;
            for (int j = 0; j < d2; ++j) p.waste[p.wlen++] = p.stock[--p.slen];
        }
        int card = p.waste[--p.wlen];
        if (target == kF)
            ++p.height[card / 13];
        else
            p.res[target][p.rlen[target]++] = static_cast<std::int8_t>(card);
    }

    void carry(int src, int dst) {  // the whole pile src onto dst (through the empty piles: one move here)
        Pos& p = p_;
        for (int j = 0; j < p.rlen[src]; ++j) p.res[dst][p.rlen[dst]++] = p.res[src][j];
        p.rlen[src] = 0;
    }

    void settle() {  // every card that fits its foundation goes there, wherever it lies
        Pos& p = p_;
        bool changed = true;
        while (changed) {
            changed = false;
            for (int suit = 0; suit < 4; ++suit) {
                while (p.height[suit] < 13) {
                    int need = suit * 13 + p.height[suit];
                    bool found = false;
                    for (int i = 0; i < kFan && !found; ++i)
                        if (p.fan[i] == need) {
                            p.fan[i] = kNone;
                            found = true;
                        }
                    if (!found && p.wlen && p.waste[p.wlen - 1] == need) {
                        --p.wlen;
                        found = true;
                    }
                    for (int k = 0; k < 4 && !found; ++k)
                        if (p.rlen[k] && p.res[k][p.rlen[k] - 1] == need) {
                            --p.rlen[k];
                            found = true;
                        }
                    if (!found) break;
                    ++p.height[suit];
                    changed = true;
                }
            }
        }
    }

    Pos p_;
    int max_passes_;
    int order_ = NEAR;
    int place_[52];
    std::vector<Pos> undo_;
    mutable std::vector<std::pair<int, Move>> items_;
    mutable std::vector<Reach> reach_;
};

nb::object move_object(const Move& m) {
    if (m.kind == 0) return nb::make_tuple("talon", int(m.d), m.redeal, int(m.d2), int(m.a));
    if (m.kind == 2) return nb::make_tuple("relocate", int(m.a), int(m.b));
    nb::object then = m.q < 0 ? nb::object(nb::make_tuple("talon", int(m.d), m.redeal, int(m.d2)))
                              : nb::object(nb::make_tuple("relocate", int(m.q)));
    nb::list places;
    places.append(int(m.a));
    for (int j = 0; j < m.n; ++j) places.append(int(m.more[j]));
    return nb::make_tuple("fan", nb::tuple(places), int(m.b), then);
}

int order_number(const std::string& order) {
    if (order == "near") return NEAR;
    if (order == "sparing") return SPARING;
    if (order == "fan") return FAN;
    if (order == "kind") return KIND;
    throw std::invalid_argument("unknown move order " + order);
}

struct Outcome {
    int status;  // 0 won, 1 unwinnable, 2 unknown
    std::string reason;
    u64 nodes = 0;
    double seconds = 0;
};

using patience_core::thread_cpu_seconds;

// depth_first of patience.solve.search on one move order, with `table` as what is known lost
// (it is the table, as `lost` is in Python); `line` gets the won line
Outcome depth_first(Fan pos, Table& table, double seconds, long long max_nodes, std::vector<Move>& line,
                    u64& peak, u64& resets) {
    const double start = thread_cpu_seconds();  // the budget is this thread's CPU time (cpuclock.hpp)
    Outcome out{1, "every line searched"};
    if (pos.won()) {
        out.status = 0;
        out.reason = "a winning line";
        return out;
    }
    Key root = pos.key();
    if (table.contains(root)) return out;
    table.add(root);
    struct Frame {
        std::size_t begin, end, next;
    };
    std::vector<Move> stack;
    std::vector<Frame> frames;
    std::vector<Key> path{root};
    std::vector<Move> played;
    stack.reserve(4096);
    pos.moves(stack);
    frames.push_back({0, stack.size(), 0});
    u64 nodes = 0;
    while (!frames.empty()) {
        Frame& f = frames.back();
        if (f.begin + f.next == f.end) {
            stack.resize(f.begin);
            frames.pop_back();
            path.pop_back();
            if (!played.empty()) {
                played.pop_back();
                pos.undo();
            }
            continue;
        }
        Move m = stack[f.begin + f.next++];
        pos.play(m);
        ++nodes;
        if (pos.won()) {
            played.push_back(m);
            out.status = 0;
            out.reason = "a winning line";
            break;
        }
        Key k = pos.key();
        if (table.contains(k)) {
            pos.undo();
        } else {
            if (table.full()) {
                peak = std::max<u64>(peak, table.size());
                table.clear();
                for (const Key& q : path) table.add(q);
                ++resets;
            }
            table.add(k);
            path.push_back(k);
            played.push_back(m);
            std::size_t begin = stack.size();
            pos.moves(stack);
            frames.push_back({begin, stack.size(), 0});
        }
        if (nodes % 1024 == 0 && seconds >= 0 && thread_cpu_seconds() - start > seconds) {
            out.status = 2;
            out.reason = "time";
            break;
        }
        if (max_nodes >= 0 && nodes >= static_cast<u64>(max_nodes)) {
            out.status = 2;
            out.reason = "nodes";
            break;
        }
    }
    peak = std::max<u64>(peak, table.size());
    if (out.status == 2)  // what is left besides the current line was searched to the end
        for (const Key& q : path) table.erase(q);
    if (out.status == 0) line = played;
    out.nodes = nodes;
    out.seconds = thread_cpu_seconds() - start;
    return out;
}

using Portfolio = std::vector<std::pair<std::string, long long>>;

// solve_faecher's portfolio: each (order, node cap) in turn (cap -1: none), what was searched to the
// end kept for the next. Returns status, reason, line, nodes, seconds, peak entries, table bytes, resets.
std::tuple<int, std::string, nb::list, u64, double, u64, u64, u64> solve(
    const std::vector<int>& fan, const std::vector<std::vector<int>>& reserves, const std::vector<int>& stock,
    const std::vector<int>& waste, const std::vector<int>& heights, int passes, int max_passes,
    const Portfolio& portfolio, double seconds, long long max_nodes, double memory_mb) {
    Fan root(fan, reserves, stock, waste, heights, passes, max_passes);
    std::vector<int> orders;
    for (const auto& [order, cap] : portfolio) orders.push_back(order_number(order));
    if (orders.empty()) throw std::invalid_argument("the portfolio is empty");
    std::size_t entries = static_cast<std::size_t>(memory_mb * 1024 * 1024 / (2 * sizeof(Key)));
    if (entries < 1024) entries = 1024;
    Outcome outcome;
    std::vector<Move> line;
    u64 total = 0, peak = 1, resets = 0;
    double spent = 0;
    std::size_t bytes = 0;
    {
        nb::gil_scoped_release release;
        Table table(entries);
        for (std::size_t i = 0; i < portfolio.size(); ++i) {
            double left_s = seconds < 0 ? -1.0 : std::max(0.0, seconds - spent);
            long long left_n = max_nodes < 0 ? -1 : std::max<long long>(0, max_nodes - static_cast<long long>(total));
            long long cap = portfolio[i].second;
            long long nodes = cap < 0 ? left_n : (left_n < 0 ? cap : std::min(cap, left_n));
            Fan pos = root;
            pos.set_order(orders[i]);
            outcome = depth_first(pos, table, left_s, nodes, line, peak, resets);
            total += outcome.nodes;
            spent += outcome.seconds;
            if (outcome.status != 2 || outcome.reason != "nodes" || nodes == left_n) break;
        }
        bytes = table.bytes();
    }
    nb::list out;
    for (const Move& m : line) out.append(move_object(m));
    return {outcome.status, outcome.reason, out, total, spent, peak, bytes, resets};
}

// FanProblem(state, order).moves() of a position, for the differential test
nb::list moves(const std::vector<int>& fan, const std::vector<std::vector<int>>& reserves,
               const std::vector<int>& stock, const std::vector<int>& waste, const std::vector<int>& heights,
               int passes, int max_passes, const std::string& order) {
    Fan pos(fan, reserves, stock, waste, heights, passes, max_passes);
    pos.set_order(order_number(order));
    std::vector<Move> ms;
    pos.moves(ms);
    nb::list out;
    for (const Move& m : ms) out.append(move_object(m));
    return out;
}

}  // namespace

NB_MODULE(_faecher, m) {
    m.doc() = "The search core of the Der Fächer solver (see patience.solve.faecher).";
    m.def("solve", &solve, nb::arg("fan"), nb::arg("reserves"), nb::arg("stock"), nb::arg("waste"),
          nb::arg("heights"), nb::arg("passes"), nb::arg("max_passes"), nb::arg("portfolio"), nb::arg("seconds"),
          nb::arg("max_nodes"), nb::arg("memory_mb"));
    m.def("moves", &moves, nb::arg("fan"), nb::arg("reserves"), nb::arg("stock"), nb::arg("waste"),
          nb::arg("heights"), nb::arg("passes"), nb::arg("max_passes"), nb::arg("order"));
}
