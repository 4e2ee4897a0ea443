// The compiled search core of the Solitaire Reloaded solver (Klondike draw-one, unlimited
// redeals, every card known): the extension module patience.solve._klondike.
//
// It is a port of patience.solve.klondike.KlondikeProblem and of the depth-first search of
// patience.solve.search: the same position (piles with their face-down counts, foundation
// heights, the stock and waste as one set of talon cards, what the last move left pending),
// the same safe (and reversible) moves to the foundations made without branching (settle), the
// same pruned and ordered moves, the same key (piles folded together), the same skipping of
// positions whose stronger form (less pending) is known, the same dead ends (positions with a
// card that can never leave).
// The Python module's docstring says why each rule is sound; the tests compare the two move
// by move and node by node. What is new here is the machinery:
//
// - A position key of 256 bits that holds the whole position (each face-up card: which of
//   its two parents it lies on, or that it heads a pile; each pile's face-down count and
//   the card on them; the foundation heights; what is pending). Equal keys are exactly the
//   positions the Python key folds together, and the table stores whole keys: a hash
//   collision can never make a position count as searched.
// - A transposition table of positions searched to the end without a win (open addressing)
//   that grows up to a memory cap and then gives up the entry whose subtree was smallest.
//   Forgetting a position only means it may be searched again, so the search stays
//   complete. The positions on the current line are kept apart: they are never forgotten,
//   or a cycle could be walked again and again.
// - The children of a position are made together when it is entered, so that their table
//   slots are fetched from memory at once.
// - Budgets of nodes and seconds (of the searching thread's CPU time, cpuclock.hpp); the answer is
//   won (with the line), unwinnable or unknown.

#include "cpuclock.hpp"
#include "mix.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <unordered_set>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

constexpr int kPiles = 7;
constexpr int kCards = 52;
constexpr int kKingRank = 12;

// -- card relations ------------------------------------------------------------------------

constexpr int kOtherColour[4][2] = {{1, 2}, {0, 3}, {0, 3}, {1, 2}};
constexpr int kSameColourOther[4] = {3, 2, 1, 0};

struct Relations {
    int8_t parents[kCards][2];   // the cards a card may lie on in the tableau; -1 for Kings
    int8_t children[kCards][2];  // the cards that may lie on a card; -1 for Aces
    uint8_t twin[kCards];        // the card of the same rank and colour

    Relations() {
        for (int c = 0; c < kCards; ++c) {
            int rank = c % 13, suit = c / 13;
            for (int x = 0; x < 2; ++x) {
                int s = kOtherColour[suit][x];
                parents[c][x] = static_cast<int8_t>(rank == kKingRank ? -1 : s * 13 + rank + 1);
                children[c][x] = static_cast<int8_t>(rank == 0 ? -1 : s * 13 + rank - 1);
            }
            twin[c] = static_cast<uint8_t>(kSameColourOther[suit] * 13 + rank);
        }
    }
};

const Relations R;

inline bool fits_on(int card, int target) {
    return target % 13 == card % 13 + 1 && ((card >= 13 && card < 39) != (target >= 13 && target < 39));
}

// -- positions and moves -------------------------------------------------------------------

enum Kind : uint8_t { TF, SF, TT, ST, FT };
const char* const kKindNames[] = {"tf", "sf", "tt", "st", "ft"};

// ("tf", i) pile i's top to its foundation; ("sf", card) a talon card to its foundation;
// ("tt", i, k, n) the top n cards of pile i onto pile k; ("st", card, k) a talon card onto
// pile k; ("ft", suit, k) a foundation's top card back onto pile k.
struct Move {
    uint8_t kind, a, b, n;
};

struct Position {
    uint8_t cards[kPiles][kCards];  // bottom to top
    uint8_t len[kPiles];
    uint8_t down[kPiles];  // face-down cards at the bottom of each pile
    uint8_t height[4];     // cards on each suit's foundation
    uint64_t talon;        // bit c: card c is in the stock or the waste
    uint8_t pending;       // what the last move left pending: 0 nothing, or kCover, kUse, kKing
    uint8_t pending_pile, pending_card;
    uint64_t key[3];       // its key but for what is pending (see key_of), kept up to date by every move

    bool won() const { return height[0] == 13 && height[1] == 13 && height[2] == 13 && height[3] == 13; }
    bool in_talon(int c) const { return (talon >> c) & 1; }
    int top(int i) const { return len[i] ? cards[i][len[i] - 1] : -1; }
};

// What a move that only prepares leaves pending (as in KlondikeProblem): the next move must
// lay a card on the talon card just placed, use the face-up card a run left (lay a card on it
// or play it to its foundation), bring a King into an empty pile, or, after a card brought back
// from a foundation (kBack), lay a card on it or bring back another or leave pending a card that
// the foundation card under it could come onto.
constexpr uint8_t kCover = 1, kUse = 2, kKing = 3, kBack = 4;

bool is_safe(int card, const uint8_t* height) {
    int rank = card % 13 + 1;
    if (rank <= 2) return true;
    int suit = card / 13;
    return height[kOtherColour[suit][0]] >= rank - 1 && height[kOtherColour[suit][1]] >= rank - 1 &&
           height[kSameColourOther[suit]] >= rank - 2;
}

// The key's two bits of a card (see key_of): 0 not face up in the tableau, 3 heads the face-up
// part of its pile, 1 or 2 lies on its first or second parent.
inline void set_state(Position& p, int card, uint64_t state) {
    uint64_t& w = p.key[card >> 5];
    const int shift = 2 * (card & 31);
    w = (w & ~(uint64_t{3} << shift)) | state << shift;
}

// The state of a card laid on `under` (a face-up card, or -1: an empty pile).
inline uint64_t state_on(int card, int under) { return under < 0 ? 3 : (R.parents[card][0] == under ? 1 : 2); }

// A foundation's height in the key.
inline uint64_t height_unit(int suit) { return uint64_t{1} << (40 + 4 * suit); }

inline void flip(Position& p, int i) {
    if (p.len[i] && p.down[i] == p.len[i]) {
        --p.down[i];
        set_state(p, p.cards[i][p.len[i] - 1], 3);
        p.key[2] -= uint64_t{1} << (3 * i);
    }
}

// Make every safe move to the foundations, and every move of a tableau top card to its
// foundation that can be taken back (it lies on a face-up card) when nothing is pending or it is
// the card to cover or use, as KlondikeProblem._settle; append them to *made.
template <class Out>
void settle(Position& p, Out* made) {
    bool changed = true;
    while (changed) {
        changed = false;
        uint64_t tops = 0;  // the piles' top cards
        for (int i = 0; i < kPiles; ++i)
            if (p.len[i]) tops |= uint64_t{1} << p.cards[i][p.len[i] - 1];
        for (int suit = 0; suit < 4; ++suit) {
            int h = p.height[suit];
            if (h == 13) continue;
            int card = suit * 13 + h;
            if (p.in_talon(card)) {
                if (is_safe(card, p.height)) {
                    p.talon &= ~(uint64_t{1} << card);
                    ++p.height[suit];
                    p.key[1] += height_unit(suit);
                    if (made) made->push_back(Move{SF, static_cast<uint8_t>(card), 0, 0});
                    changed = true;
                }
                continue;
            }
            if (!((tops >> card) & 1)) continue;
            for (int i = 0; i < kPiles; ++i) {
                if (p.len[i] && p.cards[i][p.len[i] - 1] == card) {
                    bool back = p.len[i] - 1 > p.down[i] &&
                                (!p.pending || ((p.pending == kCover || p.pending == kUse) && p.pending_pile == i));
                    if (back || is_safe(card, p.height)) {
                        --p.len[i];
                        ++p.height[suit];
                        p.key[1] += height_unit(suit);
                        set_state(p, card, 0);
                        flip(p, i);
                        if (p.len[i]) tops |= uint64_t{1} << p.cards[i][p.len[i] - 1];
                        if (made) made->push_back(Move{TF, static_cast<uint8_t>(i), 0, 0});
                        changed = true;
                    }
                    break;
                }
            }
        }
        if ((p.pending == kCover || p.pending == kUse || p.pending == kBack) && p.top(p.pending_pile) != p.pending_card) {
            p.pending = 0;  // the safe moves played the card left for use
            changed = true;
        }
    }
}

// Play a move (assumed legal), without the safe moves that follow.
void apply(Position& p, const Move& m) {
    p.pending = 0;
    if (m.kind == ST) {
        p.pending = kCover, p.pending_pile = m.b, p.pending_card = m.a;
    } else if (m.kind == TT) {
        if (m.n < p.len[m.a] - p.down[m.a])
            p.pending = kUse, p.pending_pile = m.a, p.pending_card = p.cards[m.a][p.len[m.a] - m.n - 1];
        else if (m.n == p.len[m.a])
            p.pending = kKing, p.pending_pile = m.a, p.pending_card = 0;
    } else if (m.kind == FT) {
        p.pending = kBack, p.pending_pile = m.b, p.pending_card = static_cast<uint8_t>(m.a * 13 + p.height[m.a] - 1);
    }
    switch (m.kind) {
        case TF: {
            int card = p.cards[m.a][--p.len[m.a]];
            ++p.height[card / 13];
            p.key[1] += height_unit(card / 13);
            set_state(p, card, 0);
            flip(p, m.a);
            break;
        }
        case SF:
            p.talon &= ~(uint64_t{1} << m.a);
            ++p.height[m.a / 13];
            p.key[1] += height_unit(m.a / 13);
            break;
        case TT: {
            int card = p.cards[m.a][p.len[m.a] - m.n];
            set_state(p, card, state_on(card, p.top(m.b)));
            std::memcpy(&p.cards[m.b][p.len[m.b]], &p.cards[m.a][p.len[m.a] - m.n], m.n);
            p.len[m.a] -= m.n;
            p.len[m.b] += m.n;
            flip(p, m.a);
            break;
        }
        case ST:
            set_state(p, m.a, state_on(m.a, p.top(m.b)));
            p.talon &= ~(uint64_t{1} << m.a);
            p.cards[m.b][p.len[m.b]++] = m.a;
            break;
        default: {
            int card = m.a * 13 + --p.height[m.a];
            p.key[1] -= height_unit(m.a);
            set_state(p, card, state_on(card, p.top(m.b)));
            p.cards[m.b][p.len[m.b]++] = static_cast<uint8_t>(card);
            break;
        }
    }
}

// A fixed-capacity list of moves (the pruned moves of a position are at most 7*13*2 runs,
// 11 to the foundations, 18 from the talon and 8 back from the foundations).
struct MoveList {
    std::array<Move, 256> items;
    int size = 0;
    void push_back(const Move& m) { items[size++] = m; }
};

// Card sets for the dead-end relaxation, one bit a card (suit * 13 + rank).
struct CardSets {
    uint64_t parents[kCards];  // the cards a card may lie on
    uint64_t children[kCards]; // the cards that may lie on a card
    uint64_t kings;
    uint64_t ranks[13];  // the four cards of each rank

    CardSets() : kings(0) {
        for (int r = 0; r < 13; ++r) ranks[r] = (uint64_t{1} | uint64_t{1} << 13 | uint64_t{1} << 26 | uint64_t{1} << 39) << r;
        for (int c = 0; c < kCards; ++c) {
            parents[c] = children[c] = 0;
            for (int y = 0; y < 2; ++y) {
                if (R.parents[c][y] >= 0) parents[c] |= uint64_t{1} << R.parents[c][y];
                if (R.children[c][y] >= 0) children[c] |= uint64_t{1} << R.children[c][y];
            }
            if (c % 13 == kKingRank) kings |= uint64_t{1} << c;
        }
    }
};

const CardSets S;

// The cards one of whose parents is in `placed` (a parent is one rank higher, of the other colour:
// each suit's 13 bits, shifted down a rank, go to the two suits of the other colour).
inline uint64_t children_of(uint64_t placed) {
    constexpr uint64_t kSuit = 0x1FFF;
    uint64_t red = (((placed >> 13) | (placed >> 26)) & kSuit) >> 1;
    uint64_t black = ((placed | (placed >> 39)) & kSuit) >> 1;
    return red | red << 39 | black << 13 | black << 26;
}

// The cards whose first (way 0) or second (way 1) child is in `cards`: a red card's children are
// of suits 0 and 3, a black card's of suits 1 and 2.
inline uint64_t lower_of(uint64_t cards, int way) {
    constexpr uint64_t kSuit = 0x1FFF;
    uint64_t for_red = (((cards >> (way ? 39 : 0)) & kSuit) << 1) & kSuit;
    uint64_t for_black = (((cards >> (way ? 26 : 13)) & kSuit) << 1) & kSuit;
    return for_black | for_black << 39 | for_red << 13 | for_red << 26;
}

// The cards one of whose children is in `cards` (a child is one rank lower, of the other colour).
inline uint64_t parents_of(uint64_t cards) { return lower_of(cards, 0) | lower_of(cards, 1); }

// The same card of the other suit of its colour (suits 0 and 3, 1 and 2).
inline uint64_t twin_of(uint64_t cards) {
    constexpr uint64_t kSuit = 0x1FFF;
    return (cards & kSuit) << 39 | (cards >> 39) | ((cards >> 13) & kSuit) << 26 | ((cards >> 26) & kSuit) << 13;
}

// Can some card of the tableau never leave its place, whatever is played? (See the docstring of
// KlondikeProblem.dead_end: a relaxation in which cards, once free, stay free.) Then the
// position is lost. Cards out of the tableau (talon, foundations) count as free from the start.
bool dead_end(const Position& p) {
    uint64_t gone = p.talon;
    // reach[suit]: the lowest reach[suit] cards of each suit can get to their foundation (each card
    // once the lower ones can and it can be uncovered: a talon card, a tableau card that left its
    // place and counts as a parent, or a pile's top card in its place)
    int reach[4];
    for (int suit = 0; suit < 4; ++suit) {
        gone |= ((uint64_t{1} << p.height[suit]) - 1) << (suit * 13);
        reach[suit] = p.height[suit];
    }
    const uint64_t off = gone;  // the cards off the tableau
    int tops[kPiles];
    int empty = 0;  // the piles whose cards have all left their places
    // placed: the cards that count as parents: a tableau card when it is the top, or when the cards
    // above it are gone and the card right on it could leave it by a move of its own (onto its
    // other parent, to its foundation, a King into another empty pile); a card off the tableau once
    // one of its own parents counts (a King: a pile is empty) and, on a foundation, once the cards
    // above it there count. See the docstring of KlondikeProblem.dead_end for why this is sound.
    uint64_t placed = 0;
    // the face-up cards with a face-up card on them (which is their child through the first or the
    // second of the two suits of the other colour): such a card counts once the other card the
    // one on it may lie on counts, or the one on it can go to its foundation
    uint64_t runs[2] = {0, 0};
    for (int i = 0; i < kPiles; ++i) {
        tops[i] = p.len[i];
        if (p.len[i]) placed |= uint64_t{1} << p.cards[i][p.len[i] - 1];
        else ++empty;
        for (int j = p.down[i]; j + 1 < p.len[i]; ++j) {
            int q = p.cards[i][j];
            runs[R.children[q][0] == p.cards[i][j + 1] ? 0 : 1] |= uint64_t{1} << q;
        }
    }
    while (true) {
        // the piles: cut each at its lowest card that can leave (onto a parent that counts, a King
        // into an empty pile, the top card to its foundation), until none can
        bool changed = false;
        const uint64_t goes = children_of(placed) | (empty ? S.kings : 0);  // pile i still holds cards
        for (int i = 0; i < kPiles; ++i) {
            while (tops[i]) {
                int n = tops[i], cut = -1;
                for (int j = std::min<int>(p.down[i], n - 1); j < n; ++j) {
                    if ((goes >> p.cards[i][j]) & 1) {
                        cut = j;
                        break;
                    }
                }
                if (cut < 0) {  // the top card to its foundation
                    int c = p.cards[i][n - 1];
                    if (reach[c / 13] < c % 13) break;
                    cut = n - 1;
                    ++reach[c / 13];
                }
                for (int j = cut; j < n; ++j) gone |= uint64_t{1} << p.cards[i][j];
                tops[i] = cut;
                if (!cut && ++empty == kPiles) return false;
                changed = true;
            }
        }
        // the parents that count now; a foundation card only once the cards above it there count
        // (they must come back to the tableau first)
        uint64_t more = off & ~placed & (children_of(placed) | (empty ? S.kings : 0));
        for (int suit = 0; suit < 4; ++suit) {
            const uint64_t blocked = (~(placed | more) >> (13 * suit)) & ((uint64_t{1} << p.height[suit]) - 1);
            if (blocked) more &= ~(((uint64_t{1} << (63 - __builtin_clzll(blocked))) - 1) << (13 * suit));
        }
        if (more) placed |= more, changed = true;
        uint64_t reached = 0;  // the cards that can get to their foundations
        for (int suit = 0; suit < 4; ++suit) reached |= ((uint64_t{1} << reach[suit]) - 1) << (13 * suit);
        uint64_t at_top = 0;  // the top card of each pile still in its place
        for (int i = 0; i < kPiles; ++i)
            if (tops[i]) at_top |= uint64_t{1} << p.cards[i][tops[i] - 1];
        more = (runs[0] & lower_of(reached, 0)) | (runs[1] & lower_of(reached, 1)) | ((runs[0] | runs[1]) & twin_of(placed));
        more &= (gone | at_top) & ~placed;
        if (more) placed |= more, changed = true;
        // the cards under a card that was face down
        for (int i = 0; i < kPiles; ++i) {
            const bool other_empty = empty > (tops[i] ? 0 : 1);
            for (int j = std::max(tops[i] - 1, 0); j < std::min<int>(p.down[i], p.len[i] - 1); ++j) {
                int q = p.cards[i][j], x = p.cards[i][j + 1];
                uint64_t bit = uint64_t{1} << q;
                if (placed & bit) continue;
                bool ok = (S.kings >> x) & 1 ? other_empty : (placed & S.parents[x] & ~bit) || ((reached >> x) & 1);
                if (ok) placed |= bit, changed = true;
            }
        }
        // the cards that can now get to their foundations
        const uint64_t open = p.talon | (gone & placed);
        for (int suit = 0; suit < 4; ++suit)
            while (reach[suit] < 13 && ((open >> (suit * 13 + reach[suit])) & 1)) ++reach[suit], changed = true;
        if (!changed) return true;
    }
}

// The moves worth trying, best first: a port of KlondikeProblem.moves() (see its docstring).
void pruned_moves(const Position& p, MoveList& out) {
    if (!p.pending && dead_end(p)) return;  // checked only with nothing pending (as in the Python search)
    int8_t top_of[kCards];
    std::memset(top_of, -1, sizeof top_of);
    int first_empty = -1;
    // where each card is (a set each): face up in the tableau, in the talon, on a foundation; and
    // the cards next to go to their foundations
    const uint64_t talon = p.talon;
    uint64_t up = 0, found = 0, next_up = 0;
    for (int suit = 0; suit < 4; ++suit) {
        found |= ((uint64_t{1} << p.height[suit]) - 1) << (suit * 13);
        if (p.height[suit] < 13) next_up |= uint64_t{1} << (suit * 13 + p.height[suit]);
    }
    bool king_up = false;  // a face-up King lies on another card
    for (int k = 0; k < kPiles; ++k) {
        if (p.len[k]) {
            top_of[p.cards[k][p.len[k] - 1]] = static_cast<int8_t>(k);
            for (int j = p.down[k]; j < p.len[k]; ++j) {
                up |= uint64_t{1} << p.cards[k][j];
                if (j && (S.kings >> p.cards[k][j]) & 1) king_up = true;
            }
        } else if (first_empty < 0) {
            first_empty = k;
        }
    }
    // rank by rank: carry (a card that may lie on it is good), dig (the foundation card under it
    // carries or digs), good (face up in the tableau, or off it and carrying, or on its foundation
    // and digging)
    uint64_t carry = 0, dig = 0, good = up & S.ranks[0];
    for (int r = 1; r < 13; ++r) {
        const uint64_t carry_r = parents_of(good & S.ranks[r - 1]);
        const uint64_t dig_r = ((carry | dig) & found & S.ranks[r - 1]) << 1;
        carry |= carry_r;
        dig |= dig_r;
        good |= S.ranks[r] & (up | ((talon | found) & carry_r) | (found & dig_r));
    }
    // the face-up cards whose run is worth moving onto a parent: it lies on a card that can then go to
    // its foundation or take the other card of the run's rank and colour, or on face-down cards;
    // and the cards at a pile's bottom (worth it only for a King to come into the pile)
    uint64_t run_ok = 0, bottoms = 0;
    for (int i = 0; i < kPiles; ++i) {
        for (int j = p.down[i]; j < p.len[i]; ++j) {
            int card = p.cards[i][j];
            if (j == 0)
                bottoms |= uint64_t{1} << card;
            else if (j == p.down[i] || ((next_up >> p.cards[i][j - 1]) & 1) || ((good >> R.twin[card]) & 1))
                run_ok |= uint64_t{1} << card;
        }
    }
    // the foundation cards worth bringing back: each suit's top when not safe and it or a card
    // under it carries
    uint64_t back_ok = 0;
    for (int suit = 0; suit < 4; ++suit) {
        int h = p.height[suit], card = suit * 13 + h - 1;
        if (h >= 3 && !is_safe(card, p.height) && ((carry | dig) >> card) & 1) back_ok |= uint64_t{1} << card;
    }
    // the cards that can come at once onto a card just laid: a run, a talon card that carries, a
    // foundation card back; a pile's bottom card only while a King could come into its pile
    const uint64_t can_come = run_ok | (talon & carry) | back_ok;
    // the Kings that could come into an empty pile: face up on another card, back from a foundation,
    // or from the talon when it carries and a Queen can come onto it (from a pile's bottom only if
    // another King could come into that pile)
    const uint64_t talon_kings = S.kings & talon & carry & parents_of(can_come | bottoms);
    const bool king_other = king_up || (S.kings & back_ok);
    const bool king_free = king_other || talon_kings;
    // tableau runs: those that turn a card up or empty a pile first (deeper piles first), then
    // the foundations; the other runs after the talon cards
    struct Keyed {
        int order;
        Move move;
    };
    Keyed reveal[2 * kPiles];
    int n_reveal = 0;
    Move other[2 * kPiles * 13];
    int n_other = 0;
    for (int i = 0; i < kPiles; ++i) {
        int size = p.len[i], d = p.down[i];
        for (int j = d; j < size; ++j) {
            int card = p.cards[i][j];
            if (j ? !((run_ok >> card) & 1) : !king_free) continue;
            int targets[2];
            int n_targets = 0;
            if (card % 13 == kKingRank) {
                if (first_empty < 0 || j == 0) continue;
                targets[n_targets++] = first_empty;
            } else {
                for (int x = 0; x < 2; ++x) {
                    int t = top_of[R.parents[card][x]];
                    if (t >= 0) targets[n_targets++] = t;
                }
            }
            for (int x = 0; x < n_targets; ++x) {
                Move move{TT, static_cast<uint8_t>(i), static_cast<uint8_t>(targets[x]), static_cast<uint8_t>(size - j)};
                if (j == d && j > 0) {
                    reveal[n_reveal++] = Keyed{-j, move};
                } else if (j == 0) {
                    reveal[n_reveal++] = Keyed{0, move};
                } else {
                    other[n_other++] = move;
                }
            }
        }
    }
    // a stable sort of the few reveals
    for (int x = 1; x < n_reveal; ++x) {
        Keyed item = reveal[x];
        int y = x;
        while (y > 0 && reveal[y - 1].order > item.order) {
            reveal[y] = reveal[y - 1];
            --y;
        }
        reveal[y] = item;
    }
    for (int x = 0; x < n_reveal; ++x) out.push_back(reveal[x].move);
    // to the foundations (the safe ones were made already), after the runs that turn a card up
    for (int i = 0; i < kPiles; ++i) {
        int top = p.top(i);
        if (top >= 0 && top % 13 == p.height[top / 13]) out.push_back(Move{TF, static_cast<uint8_t>(i), 0, 0});
    }
    for (int suit = 0; suit < 4; ++suit) {
        int h = p.height[suit];
        if (h < 13 && p.in_talon(suit * 13 + h)) out.push_back(Move{SF, static_cast<uint8_t>(suit * 13 + h), 0, 0});
    }
    // talon cards onto the tableau, only as a base for a card to come at once (or when it goes up to
    // its foundation at once)
    for (int k = 0; k < kPiles; ++k) {
        int top = p.top(k);
        if (top < 0) continue;
        for (int x = 0; x < 2; ++x) {
            int card = R.children[top][x];
            if (card >= 0 && p.in_talon(card) && ((carry >> card) & 1) &&
                ((S.children[card] & (can_come | (king_free ? bottoms : 0))) || ((next_up >> card) & 1)))
                out.push_back(Move{ST, static_cast<uint8_t>(card), static_cast<uint8_t>(k), 0});
        }
    }
    if (first_empty >= 0) {
        for (int suit = 0; suit < 4; ++suit) {
            int king = suit * 13 + kKingRank;
            // a Queen can come onto it (from a pile's bottom only while another King could come)
            bool others = king_other || (talon_kings & ~(uint64_t{1} << king));
            if (p.in_talon(king) && ((carry >> king) & 1) && (S.children[king] & (can_come | (others ? bottoms : 0))))
                out.push_back(Move{ST, static_cast<uint8_t>(king), static_cast<uint8_t>(first_empty), 0});
        }
    }
    for (int x = 0; x < n_other; ++x) out.push_back(other[x]);
    // foundation cards back to the tableau, when they or a card under them might carry
    for (uint64_t rest = back_ok; rest; rest &= rest - 1) {
        const int card = __builtin_ctzll(rest), suit = card / 13;
        if (card % 13 == kKingRank) {
            if (first_empty >= 0)
                out.push_back(Move{FT, static_cast<uint8_t>(suit), static_cast<uint8_t>(first_empty), 0});
        } else {
            for (int x = 0; x < 2; ++x) {
                int t = top_of[R.parents[card][x]];
                if (t >= 0) out.push_back(Move{FT, static_cast<uint8_t>(suit), static_cast<uint8_t>(t), 0});
            }
        }
    }
    if (p.pending) {  // keep the moves that do what is pending
        // after a card back from a foundation: does the move leave pending a card that the
        // foundation card under it could come onto?
        auto under_back = [&](const Move& m) {
            int x = p.pending_card - 1;
            if (p.pending_card % 13 == 0) return false;
            if (m.kind == ST) return fits_on(x, m.a);
            if (m.kind != TT || m.n >= p.len[m.a] - p.down[m.a]) return false;
            return fits_on(x, p.cards[m.a][p.len[m.a] - m.n - 1]);
        };
        int kept = 0;
        for (int x = 0; x < out.size; ++x) {
            const Move& m = out.items[x];
            bool onto = m.kind == TT || m.kind == ST || m.kind == FT;
            bool keep = p.pending == kKing ? onto && p.len[m.b] == 0
                                           : (onto && m.b == p.pending_pile) ||
                                                 (p.pending == kUse && m.kind == TF && m.a == p.pending_pile) ||
                                                 (p.pending == kBack && (m.kind == FT || under_back(m)));
            if (keep) out.items[kept++] = m;
        }
        out.size = kept;
    }
}

// Every legal move by the rules, any talon card standing for the waste's top (no pruning).
std::vector<Move> legal_moves(const Position& p) {
    std::vector<Move> out;
    auto targets = [&](int card, int from, auto&& emit) {
        for (int k = 0; k < kPiles; ++k) {
            if (k == from) continue;
            int top = p.top(k);
            if (top < 0 ? card % 13 == kKingRank : fits_on(card, top)) emit(k);
        }
    };
    for (int i = 0; i < kPiles; ++i) {
        int top = p.top(i);
        if (top < 0) continue;
        if (top % 13 == p.height[top / 13]) out.push_back(Move{TF, static_cast<uint8_t>(i), 0, 0});
        for (int j = p.down[i]; j < p.len[i]; ++j) {
            targets(p.cards[i][j], i, [&](int k) {
                out.push_back(Move{TT, static_cast<uint8_t>(i), static_cast<uint8_t>(k), static_cast<uint8_t>(p.len[i] - j)});
            });
        }
    }
    for (int c = 0; c < kCards; ++c) {
        if (!p.in_talon(c)) continue;
        if (c % 13 == p.height[c / 13]) out.push_back(Move{SF, static_cast<uint8_t>(c), 0, 0});
        targets(c, -1, [&](int k) { out.push_back(Move{ST, static_cast<uint8_t>(c), static_cast<uint8_t>(k), 0}); });
    }
    for (int suit = 0; suit < 4; ++suit) {
        if (!p.height[suit]) continue;
        targets(suit * 13 + p.height[suit] - 1, -1, [&](int k) {
            out.push_back(Move{FT, static_cast<uint8_t>(suit), static_cast<uint8_t>(k), 0});
        });
    }
    return out;
}

// -- keys ----------------------------------------------------------------------------------

// w[0..1]: two bits a card (face-up cards only: 1 or 2 lies on its first or second parent, 3
// heads the face-up part of a pile) and the foundation heights at bits 104..119 of the pair;
// w[2]: three bits a pile, its face-down count, and at bits 24..32 what is pending (its kind
// and, but for kKing, its card). The card lying on a pile's face-down cards needs no room:
// within one search the face-down cards never move, and the card on the first d of them is
// always the root's card at place d of that pile (it leaves only by turning the card under it
// up). So a key is 24 bytes. The top bits of w[1] are not part of the key (the table keeps a
// weight and a mark there).
struct Key {
    uint64_t w[3];
};

constexpr int kPendingShift = 24;
constexpr uint64_t kPendingClear = (uint64_t{1} << kPendingShift) - 1;

constexpr uint64_t kKeyMask1 = (uint64_t{1} << 56) - 1;

inline bool same_key(const Key& a, const Key& b) {
    return a.w[0] == b.w[0] && ((a.w[1] ^ b.w[1]) & kKeyMask1) == 0 && a.w[2] == b.w[2];
}

// The key but for what is pending, from the whole position (each move keeps Position::key up to date).
void init_key(Position& p) {
    p.key[0] = p.key[1] = p.key[2] = 0;
    for (int i = 0; i < kPiles; ++i) {
        int d = p.down[i];
        for (int j = d; j < p.len[i]; ++j) set_state(p, p.cards[i][j], j == d ? 3 : state_on(p.cards[i][j], p.cards[i][j - 1]));
        p.key[2] |= static_cast<uint64_t>(d) << (3 * i);
    }
    for (int suit = 0; suit < 4; ++suit) p.key[1] += p.height[suit] * height_unit(suit);
}

Key key_of(const Position& p) {
    Key key{{p.key[0], p.key[1], p.key[2]}};
    if (p.pending) key.w[2] |= (uint64_t{p.pending} | uint64_t{p.pending == kKing ? 0u : p.pending_card} << 3) << kPendingShift;
    return key;
}

using patience_core::mix;

inline uint64_t hash_of(const Key& k) {
    return mix(k.w[0] ^ mix(k.w[1] & kKeyMask1) * 3 ^ mix(k.w[2] + 0x9e3779b97f4a7c15ULL) * 5);
}

// -- the transposition table ---------------------------------------------------------------

// Positions searched to the end without a win: open addressing, an entry within a window of
// kWindow slots from its home. The table doubles when three quarters full, as long as the old
// and the new slots together stay within the memory cap; an insertion into a full window gives
// up the entry there whose subtree was smallest (its weight, a bit length). Whole keys are
// stored (24 bytes): forgetting a position only means it may be searched again.
class LostTable {
  public:
    static constexpr size_t kWindow = 32;

    // `most`: the entries a search can make at most (0: not known). A search bounded by a few thousand
    // positions starts with a table it can fill to less than half (never doubled, and an entry is given up
    // only in a full window of kWindow slots, which practically never occurs at that load: the answers of
    // a large table), not with the 16,384 slots of an open search, which it would make and clear anew.
    explicit LostTable(size_t max_bytes, size_t most = 0) {
        size_t slots = 1024;  // doubling from n slots holds 3n slots at once
        while (slots * 3 * sizeof(Key) <= max_bytes) slots *= 2;
        max_slots_ = slots;
        size_t first = 1 << 14;
        if (most) {
            first = 1024;
            while (first < 2 * most && first < (size_t{1} << 14)) first *= 2;
        }
        resize(std::min<size_t>(max_slots_, first));
    }

    bool contains(const Key& k, uint64_t h) const {
        for (size_t x = 0, i = h & mask_; x < kWindow; ++x, i = (i + 1) & mask_) {
            const Key& e = slots_[i];
            if (!(e.w[1] >> 63)) return false;
            if (same_key(e, k)) return true;
        }
        return false;
    }

    void insert(const Key& k, uint64_t h, unsigned weight) {
        // the table doubles when three quarters full, up to the cap; a full window gives up its entry
        // of the smallest subtree (rare below that load; doubling for it would leave the table mostly
        // empty: that doubled the memory of hard deals)
        while (slots_.size() < max_slots_ && size_ * 4 >= slots_.size() * 3) resize(slots_.size() * 2);
        place(k, h, weight);
    }

    void prefetch(uint64_t h) const {  // the first slots of the window (a miss reads on to an empty slot)
        const char* at = reinterpret_cast<const char*>(&slots_[h & mask_]);
        __builtin_prefetch(at);
        __builtin_prefetch(at + 64);
        __builtin_prefetch(at + 128);
    }

    size_t size() const { return size_; }
    size_t bytes() const { return peak_bytes_; }
    uint64_t replaced() const { return replaced_; }

  private:
    void place(const Key& k, uint64_t h, unsigned weight) {
        Key entry = k;
        entry.w[1] = (entry.w[1] & kKeyMask1) | uint64_t{1} << 63 | static_cast<uint64_t>(std::min(weight, 127u)) << 56;
        size_t victim = h & mask_;
        unsigned least = ~0u;
        for (size_t x = 0, i = h & mask_; x < kWindow; ++x, i = (i + 1) & mask_) {
            Key& e = slots_[i];
            if (!(e.w[1] >> 63)) {
                e = entry;
                ++size_;
                return;
            }
            unsigned w = (e.w[1] >> 56) & 127;
            if (w < least) least = w, victim = i;
        }
        slots_[victim] = entry;
        ++replaced_;
    }

    void resize(size_t n) {
        std::vector<Key> old;
        old.swap(slots_);
        slots_.assign(n, Key{{0, 0, 0}});
        peak_bytes_ = std::max(peak_bytes_, (old.size() + n) * sizeof(Key));
        mask_ = n - 1;
        size_ = 0;
        for (const Key& e : old)
            if (e.w[1] >> 63) place(e, hash_of(e), (e.w[1] >> 56) & 127);
    }

    std::vector<Key> slots_;
    size_t mask_ = 0, size_ = 0, max_slots_ = 0, peak_bytes_ = 0;
    uint64_t replaced_ = 0;
};

// The keys of the positions on the current line: open addressing, removal by backward shift.
class PathSet {
  public:
    PathSet() : slots_(64), used_(64, 0) {}

    bool contains(const Key& k, uint64_t h) const {
        for (size_t x = h & (slots_.size() - 1);; x = (x + 1) & (slots_.size() - 1)) {
            if (!used_[x]) return false;
            if (same_key(slots_[x], k)) return true;
        }
    }

    void insert(const Key& k, uint64_t h) {
        if ((size_ + 1) * 2 > slots_.size()) grow();
        size_t x = h & (slots_.size() - 1);
        while (used_[x]) x = (x + 1) & (slots_.size() - 1);
        slots_[x] = k;
        used_[x] = 1;
        ++size_;
    }

    void erase(const Key& k, uint64_t h) {
        size_t m = slots_.size() - 1, x = h & m;
        while (!same_key(slots_[x], k)) x = (x + 1) & m;
        used_[x] = 0;
        --size_;
        for (size_t y = (x + 1) & m; used_[y]; y = (y + 1) & m) {
            size_t home = hash_of(slots_[y]) & m;
            // move y back into the hole at x unless its home lies cyclically in (x, y]
            bool stays = x <= y ? (x < home && home <= y) : (x < home || home <= y);
            if (!stays) {
                slots_[x] = slots_[y];
                used_[x] = 1;
                used_[y] = 0;
                x = y;
            }
        }
    }

    size_t size() const { return size_; }
    size_t bytes() const { return slots_.size() * (sizeof(Key) + 1); }

  private:
    void grow() {
        std::vector<Key> old_slots(slots_.size() * 2);
        std::vector<uint8_t> old_used(slots_.size() * 2, 0);
        old_slots.swap(slots_);
        old_used.swap(used_);
        size_ = 0;
        for (size_t x = 0; x < old_slots.size(); ++x)
            if (old_used[x]) insert(old_slots[x], hash_of(old_slots[x]));
    }

    std::vector<Key> slots_;
    std::vector<uint8_t> used_;
    size_t size_ = 0;
};

// -- the search ----------------------------------------------------------------------------

struct Outcome {
    std::string status;  // won, unwinnable, unknown
    std::string reason;
    std::vector<Move> line;  // the moves searched, each followed by its safe moves
    uint64_t nodes = 0;
    double seconds = 0;
    uint64_t table_peak = 0;
    uint64_t table_bytes = 0;
    uint64_t replaced = 0;
};

constexpr uint64_t kCheckEvery = 1024;

// Probes (see depth_first): the search alone until kProbeFrom positions; then probes of
// kProbeUnit times the Luby sequence 1 1 2 1 1 2 4 1 1 2 ... positions, each followed by
// kSearchPerProbe times as many positions of the search itself. Probes are a tenth of the work:
// at a third, the search itself fell short on large unwinnable deals such as 290, which takes 12
// million positions; at a sixth, 902 took 18.0 million positions instead of 16.4; at a tenth,
// every deal of seeds 1..1000 that a probe wins is still won (678 at 2.4 million positions
// instead of 1.6). A probe's table gets a quarter of the memory.
constexpr uint64_t kProbeFrom = 400000;
constexpr uint64_t kProbeUnit = 50000;
constexpr uint64_t kSearchPerProbe = 9;

uint64_t luby(uint64_t i) {  // the i-th term (from 1) of the Luby sequence
    uint64_t k = 1;
    while (((uint64_t{1} << k) - 1) < i) ++k;
    while (true) {
        if (i == (uint64_t{1} << k) - 1) return uint64_t{1} << (k - 1);
        i -= (uint64_t{1} << (k - 1)) - 1;
        k = 1;
        while (((uint64_t{1} << k) - 1) < i) ++k;
    }
}

// The depth-first search from `root`. With `shuffle` the moves of each position are tried in
// another order (a fixed shuffle of each position's list, drawn from its key and `shuffle`);
// the search is as complete as with the reference order. With `probes`, the search pauses now
// and then (see kProbeFrom) for a short search in another order, with a table of its own: a
// deal whose win the reference order finds late is often won at once in another order (the
// times of such searches are heavy-tailed), and a probe that ends without a win proves the deal
// unwinnable just as well. Nothing a probe saw is kept: positions left in a table while a search
// was cut short need not be lost (the positions on its line were not searched to the end).
Outcome depth_first(const Position& root, std::optional<double> seconds, std::optional<uint64_t> max_nodes,
                    double memory_mb, uint64_t shuffle = 0, bool probes = false) {
    // the budget is this thread's CPU time (cpuclock.hpp): a probe runs on the same thread, within it
    const double start = patience_core::thread_cpu_seconds();
    auto elapsed = [&] { return patience_core::thread_cpu_seconds() - start; };
    Outcome out;
    if (root.won()) {
        out.status = "won";
        out.reason = "a winning line";
        out.seconds = elapsed();
        return out;
    }
    // A position is entered once all its children are made: each child's table slots are
    // fetched from memory together, and children already known are marked then; the others
    // are looked up again when their turn comes (a sibling's search may have met them).
    struct Child {
        Position pos;
        Key key;
        uint64_t hash;
        Move move;
        bool won, known, ready;  // ready: made (else only its move is known yet: a small search's)
        Child() {}  // made in place by push(): `children` grows without zeroing
    };
    struct Frame {
        Key key;
        uint64_t hash;
        uint64_t nodes_at_entry;
        uint32_t begin, end, next;  // its children in `children`
        Move via;
        int32_t self;  // where its own position lies in `children` (-1: the root)
    };
    // A small search (a hint's: a few thousand positions at most, no probes) starts with a table it
    // can fill to less than half and reuses this thread's lists of frames and children: making and
    // growing them anew was a good part of each of a hint's thousands of small searches. (A frame is
    // entered for each position searched, so a search of n positions leaves at most n + 1 entries.)
    const bool small = max_nodes && !probes && *max_nodes < (uint64_t{1} << 13);
    LostTable lost(static_cast<size_t>(std::max(0.0, memory_mb) * 1024 * 1024),
                   small ? static_cast<size_t>(*max_nodes) + 1 : 0);
    PathSet path;
    static thread_local std::vector<Frame> kept_frames;
    static thread_local std::vector<Child> kept_children;
    static thread_local bool kept_busy = false;
    struct Keep {  // the thread's lists are this search's until it returns
        bool on;
        ~Keep() {
            if (on) kept_busy = false;
        }
    } keep{small && !kept_busy};
    std::vector<Frame> own_frames;
    std::vector<Child> own_children;
    std::vector<Frame>& frames = keep.on ? kept_frames : own_frames;
    std::vector<Child>& children = keep.on ? kept_children : own_children;
    if (keep.on) {
        kept_busy = true;
        frames.clear();
        children.clear();
    }
    MoveList list;
    auto known = [&](const Key& k, uint64_t h) { return path.contains(k, h) || lost.contains(k, h); };
    // a position with something pending is skipped when the same position with less pending
    // (so every move it has, and more) is known: nothing pending, or a card to use, not only to
    // cover (not for kBack: with nothing pending, cards would go back to the foundations)
    auto stronger = [](const Key& key, uint8_t kind) {
        Key k = key;
        k.w[2] &= ~(uint64_t{7} << kPendingShift);
        if (kind == kUse) k.w[2] |= uint64_t{kUse} << kPendingShift;
        if (kind != kUse) k.w[2] &= kPendingClear;
        return k;
    };
    auto seen = [&](const Child& c) {
        if (known(c.key, c.hash)) return true;
        if (!c.pos.pending || c.pos.pending == kBack) return false;
        Key plain = stronger(c.key, 0);
        if (known(plain, hash_of(plain))) return true;
        if (c.pos.pending != kCover) return false;
        Key use = stronger(c.key, kUse);
        return known(use, hash_of(use));
    };
    // A small search makes a child only when its turn comes (lazy): it reaches a win by visiting a
    // few children of each position on the way, and making every child first was most of its work.
    // The answers are the same: a child known when its parent is entered is still known when its turn
    // comes (its ancestors are still on the path; a small search's table never gives up an entry),
    // and each child is looked up when its turn comes either way.
    auto push = [&](const Position& at, const Key key, uint64_t h, Move via, int32_t self) {
        const Position pos = at;  // `at` may lie in `children`, which grows
        list.size = 0;
        pruned_moves(pos, list);
        if (shuffle) {  // another order of the same moves (a probe for a win: see solve_klondike)
            uint64_t r = mix(h ^ shuffle);
            for (int x = list.size - 1; x > 0; --x) {
                r = mix(r + 0x9e3779b97f4a7c15ULL);
                int y = static_cast<int>(r % static_cast<uint64_t>(x + 1));
                std::swap(list.items[x], list.items[y]);
            }
        }
        auto begin = static_cast<uint32_t>(children.size());
        children.resize(begin + list.size);
        path.insert(key, h);
        if (small) {
            for (int x = 0; x < list.size; ++x) {
                children[begin + x].move = list.items[x];
                children[begin + x].ready = false;
            }
            frames.push_back(Frame{key, h, out.nodes, begin, static_cast<uint32_t>(children.size()), begin, via, self});
            return;
        }
        for (int x = 0; x < list.size; ++x) {
            Child& c = children[begin + x];
            c.move = list.items[x];
            c.ready = true;
            c.pos = pos;
            apply(c.pos, c.move);
            settle<std::vector<Move>>(c.pos, nullptr);
            c.won = c.pos.won();
            c.key = key_of(c.pos);
            c.hash = hash_of(c.key);
            lost.prefetch(c.hash);
            if (c.pos.pending && c.pos.pending != kBack) {
                Key plain = stronger(c.key, 0);
                lost.prefetch(hash_of(plain));
            }
        }
        for (int x = 0; x < list.size; ++x) {
            Child& c = children[begin + x];
            c.known = !c.won && seen(c);
        }
        frames.push_back(Frame{key, h, out.nodes, begin, static_cast<uint32_t>(children.size()), begin, via, self});
    };
    {
        Key key = key_of(root);
        push(root, key, hash_of(key), Move{}, -1);
    }
    out.table_peak = 1;
    out.status = "unwinnable";
    out.reason = "every line searched";
    const bool timed = seconds.has_value();
    const double limit = timed ? *seconds : 0;
    uint64_t probe_nodes = 0, probe_bytes = 0, probe_count = 0, next_probe = kProbeFrom;
    while (!frames.empty()) {
        Frame& f = frames.back();
        if (f.next == f.end) {
            path.erase(f.key, f.hash);
            unsigned weight = 0;
            for (uint64_t n = out.nodes - f.nodes_at_entry; n; n >>= 1) ++weight;
            lost.insert(f.key, f.hash, weight);
            children.resize(f.begin);
            frames.pop_back();
            continue;
        }
        const uint32_t at = f.next++;
        ++out.nodes;
        if (!children[at].ready) {
            Child& c = children[at];
            c.pos = f.self < 0 ? root : children[f.self].pos;
            apply(c.pos, c.move);
            settle<std::vector<Move>>(c.pos, nullptr);
            c.won = c.pos.won();
            c.key = key_of(c.pos);
            c.hash = hash_of(c.key);
            c.known = false;
            c.ready = true;
        }
        if (children[at].won) {
            // the line from the root, each move followed by the safe moves it brought
            Position replay = root;
            for (size_t x = 1; x < frames.size(); ++x) {
                out.line.push_back(frames[x].via);
                apply(replay, frames[x].via);
                settle(replay, &out.line);
            }
            out.line.push_back(children[at].move);
            apply(replay, children[at].move);
            settle(replay, &out.line);
            out.status = "won";
            out.reason = "a winning line";
            break;
        }
        if (!children[at].known && !seen(children[at])) {
            const Child& c = children[at];
            push(c.pos, c.key, c.hash, c.move, static_cast<int32_t>(at));
            out.table_peak = std::max<uint64_t>(out.table_peak, lost.size() + path.size());
        }
        if (timed && out.nodes % kCheckEvery == 0 && elapsed() > limit) {
            out.status = "unknown";
            out.reason = "time";
            break;
        }
        if (max_nodes && out.nodes + probe_nodes >= *max_nodes) {
            out.status = "unknown";
            out.reason = "nodes";
            break;
        }
        if (probes && out.nodes >= next_probe) {
            uint64_t size = kProbeUnit * luby(++probe_count);
            if (max_nodes) size = std::min(size, *max_nodes - out.nodes - probe_nodes);
            std::optional<double> left;
            if (timed) left = std::max(0.0, limit - elapsed());
            Outcome probe = depth_first(root, left, size, memory_mb / 4, probe_count, false);
            probe_nodes += probe.nodes;
            probe_bytes = std::max<uint64_t>(probe_bytes, probe.table_bytes);
            next_probe = out.nodes + kSearchPerProbe * size;
            if (probe.status != "unknown") {
                out.status = probe.status;
                out.reason = probe.reason;
                out.line = std::move(probe.line);
                break;
            }
        }
    }
    out.table_peak = std::max<uint64_t>(out.table_peak, lost.size() + path.size());
    out.table_bytes = lost.bytes() + path.bytes() + children.capacity() * sizeof(Child) + frames.capacity() * sizeof(Frame) +
                      probe_bytes;
    out.replaced = lost.replaced();
    out.nodes += probe_nodes;
    out.seconds = elapsed();
    return out;
}

// -- Python ----------------------------------------------------------------------------------

nb::tuple move_to_python(const Move& m) {
    const char* kind = kKindNames[m.kind];
    switch (m.kind) {
        case TF:
        case SF:
            return nb::make_tuple(kind, int{m.a});
        case TT:
            return nb::make_tuple(kind, int{m.a}, int{m.b}, int{m.n});
        default:
            return nb::make_tuple(kind, int{m.a}, int{m.b});
    }
}

template <class Moves>
nb::list moves_to_python(const Moves& moves, size_t n) {
    nb::list out;
    for (size_t x = 0; x < n; ++x) out.append(move_to_python(moves[x]));
    return out;
}

std::vector<int> int_list(nb::handle seq, const char* what) {
    std::vector<int> out;
    for (nb::handle item : seq) {
        if (!nb::isinstance<nb::int_>(item)) throw nb::type_error((std::string(what) + " must hold whole numbers").c_str());
        out.push_back(nb::cast<int>(item));
    }
    return out;
}

bool same_move(const Move& a, const Move& b) {
    return a.kind == b.kind && a.a == b.a && a.b == b.b && (a.kind != TT || a.n == b.n);
}

// A position for Python: what KlondikeProblem offers (moves, play, undo, key), the legal
// moves by the rules for the tests, and solve().
class Klondike {
  public:
    Klondike(nb::sequence piles, nb::sequence down, nb::sequence height, nb::sequence talon, bool settle_now) {
        std::memset(&pos_, 0, sizeof pos_);
        std::vector<int> downs = int_list(down, "down"), heights = int_list(height, "height"),
                         talon_cards = int_list(talon, "talon");
        if (nb::len(piles) != kPiles || downs.size() != kPiles) throw nb::value_error("a position has 7 piles");
        if (heights.size() != 4) throw nb::value_error("a position has 4 foundations");
        bool seen[kCards] = {};
        auto take = [&](int card) {
            if (card < 0 || card >= kCards) throw nb::value_error(("no card " + std::to_string(card)).c_str());
            if (seen[card]) throw nb::value_error(("card " + std::to_string(card) + " is there twice").c_str());
            seen[card] = true;
        };
        for (int suit = 0; suit < 4; ++suit) {
            if (heights[suit] < 0 || heights[suit] > 13) throw nb::value_error("a foundation holds 0 to 13 cards");
            pos_.height[suit] = static_cast<uint8_t>(heights[suit]);
            for (int r = 0; r < heights[suit]; ++r) take(suit * 13 + r);
        }
        int i = 0;
        for (nb::handle pile : piles) {
            std::vector<int> cards = int_list(pile, "a pile");
            for (int card : cards) take(card);
            if (downs[i] < 0 || downs[i] > static_cast<int>(cards.size()) || (!cards.empty() && downs[i] == static_cast<int>(cards.size())))
                throw nb::value_error("a pile's top card is face up, the face-down ones lie under it");
            for (size_t j = downs[i] + 1; j < cards.size(); ++j)
                if (!fits_on(cards[j], cards[j - 1])) throw nb::value_error("face-up cards build down in alternating colours");
            pos_.len[i] = static_cast<uint8_t>(cards.size());
            pos_.down[i] = static_cast<uint8_t>(downs[i]);
            std::copy(cards.begin(), cards.end(), pos_.cards[i]);
            ++i;
        }
        for (int card : talon_cards) {
            take(card);
            pos_.talon |= uint64_t{1} << card;
        }
        for (int c = 0; c < kCards; ++c)
            if (!seen[c]) throw nb::value_error(("card " + std::to_string(c) + " is missing").c_str());
        init_key(pos_);
        if (settle_now) settle(pos_, &initial_auto_);
    }

    nb::list initial_auto() const { return moves_to_python(initial_auto_, initial_auto_.size()); }

    nb::list moves() const {
        MoveList list;
        pruned_moves(pos_, list);
        return moves_to_python(list.items, list.size);
    }

    nb::list legal() const {
        std::vector<Move> moves = legal_moves(pos_);
        return moves_to_python(moves, moves.size());
    }

    nb::list play(nb::tuple move) {
        Move m = parse(move);
        std::vector<Move> legal = legal_moves(pos_);
        if (std::none_of(legal.begin(), legal.end(), [&](const Move& x) { return same_move(x, m); }))
            throw nb::value_error(("not a legal move here: " + nb::cast<std::string>(nb::repr(move))).c_str());
        undo_.push_back(pos_);
        apply(pos_, m);
        std::vector<Move> made;
        settle(pos_, &made);
        return moves_to_python(made, made.size());
    }

    void undo() {
        if (undo_.empty()) throw nb::value_error("no move to undo");
        pos_ = undo_.back();
        undo_.pop_back();
    }

    bool is_won() const { return pos_.won(); }

    nb::object pending() const {
        if (!pos_.pending) return nb::none();
        return nb::make_tuple(int{pos_.pending}, int{pos_.pending_pile},
                              pos_.pending == kKing ? -1 : int{pos_.pending_card});
    }

    nb::bytes key() const {
        Key k = key_of(pos_);
        return nb::bytes(reinterpret_cast<const char*>(k.w), sizeof k.w);
    }

    nb::tuple state() const {
        nb::list piles, down, height, talon;
        for (int i = 0; i < kPiles; ++i) {
            nb::list pile;
            for (int j = 0; j < pos_.len[i]; ++j) pile.append(int{pos_.cards[i][j]});
            piles.append(pile);
            down.append(int{pos_.down[i]});
        }
        for (int suit = 0; suit < 4; ++suit) height.append(int{pos_.height[suit]});
        for (int c = 0; c < kCards; ++c)
            if (pos_.in_talon(c)) talon.append(c);
        return nb::make_tuple(piles, down, height, talon);
    }

    nb::dict solve(std::optional<double> seconds, std::optional<int64_t> nodes, double memory_mb,
                   uint64_t shuffle, bool probes, bool line) const {
        if (nodes && *nodes < 0) throw nb::value_error("nodes must not be negative");
        std::optional<uint64_t> max_nodes;
        if (nodes) max_nodes = static_cast<uint64_t>(*nodes);
        Outcome o;
        {
            nb::gil_scoped_release release;
            o = depth_first(pos_, seconds, max_nodes, memory_mb, shuffle, probes);
        }
        nb::dict d;
        d["status"] = o.status;
        d["reason"] = o.reason;
        d["line"] = line ? moves_to_python(o.line, o.line.size()) : nb::list();
        d["nodes"] = o.nodes;
        d["seconds"] = o.seconds;
        d["table_peak"] = o.table_peak;
        d["table_bytes"] = o.table_bytes;
        d["replaced"] = o.replaced;
        return d;
    }

    // The hint's lines from this position (patience.solve.hints._lines, whose docstring says what they
    // are): the moves up to the next face-down card turned up (any pile's count below this position's),
    // the win, or `depth` moves, each move followed by the safe moves it brings, through positions not
    // met before on the walk; at most `most` of them, in the walk's order, then sorted (stably) by the
    // face-down cards of the pile the line turns a card up in (a win first, nothing turned up last) and
    // by length. The same lines, in the same order, as that walk made move by move from Python.
    nb::list lines(int depth, int most) const {
        if (depth < 1 || most < 0) throw nb::value_error("depth must be at least 1 and most not negative");
        struct Line {
            int rank;  // the face-down cards of the pile a card is turned up in; a win kWon, nothing -1
            std::vector<Move> moves;
        };
        constexpr int kWon = 1 << 20;
        struct KeyHash {
            size_t operator()(const Key& k) const { return static_cast<size_t>(hash_of(k)); }
        };
        struct KeyEq {
            bool operator()(const Key& a, const Key& b) const { return same_key(a, b); }
        };
        std::vector<Line> found;
        std::unordered_set<Key, KeyHash, KeyEq> seen{key_of(pos_)};
        std::vector<Move> line;
        const Position& root = pos_;
        auto walk = [&](auto&& self, const Position& at) -> void {
            MoveList list;
            pruned_moves(at, list);
            for (int x = 0; x < list.size; ++x) {
                if (static_cast<int>(found.size()) >= most) return;
                Position next = at;
                apply(next, list.items[x]);
                settle<std::vector<Move>>(next, nullptr);
                line.push_back(list.items[x]);
                const bool won = next.won();
                int turned = -1;
                for (int i = 0; i < kPiles; ++i)
                    if (next.down[i] != root.down[i]) turned = std::max(turned, int{root.down[i]});
                if (won || turned >= 0 || static_cast<int>(line.size()) >= depth) {
                    found.push_back(Line{won ? kWon : turned, line});
                } else if (seen.insert(key_of(next)).second) {
                    self(self, next);
                }
                line.pop_back();
            }
        };
        walk(walk, pos_);
        std::stable_sort(found.begin(), found.end(), [](const Line& a, const Line& b) {
            return a.rank != b.rank ? a.rank > b.rank : a.moves.size() < b.moves.size();
        });
        nb::list out;
        for (const Line& l : found) out.append(moves_to_python(l.moves, l.moves.size()));
        return out;
    }

  private:
    static Move parse(nb::tuple move) {
        size_t n = nb::len(move);
        if (n < 2) throw nb::value_error("a move is a tuple: kind, then numbers");
        std::string kind = nb::cast<std::string>(move[0]);
        int kind_index = -1;
        for (int x = 0; x < 5; ++x)
            if (kind == kKindNames[x]) kind_index = x;
        size_t want = kind_index < 0 ? 0 : kind_index == TT ? 4 : kind_index <= SF ? 2 : 3;
        if (kind_index < 0 || n != want) throw nb::value_error(("not a move: " + nb::cast<std::string>(nb::repr(move))).c_str());
        int v[3] = {0, 0, 0};
        for (size_t x = 1; x < n; ++x) {
            v[x - 1] = nb::cast<int>(move[x]);
            if (v[x - 1] < 0 || v[x - 1] > 60) throw nb::value_error(("not a move: " + nb::cast<std::string>(nb::repr(move))).c_str());
        }
        return Move{static_cast<uint8_t>(kind_index), static_cast<uint8_t>(v[0]), static_cast<uint8_t>(v[1]), static_cast<uint8_t>(v[2])};
    }

    Position pos_;
    std::vector<Move> initial_auto_;
    std::vector<Position> undo_;
};

}  // namespace

NB_MODULE(_klondike, m) {
    m.doc() = "The compiled search core of the Solitaire Reloaded solver (see patience.solve.klondike).";
    nb::class_<Klondike>(m, "Klondike",
                         "A Solitaire Reloaded position for the search: piles (bottom to top), face-down counts, "
                         "foundation heights, talon cards (stock and waste). settle=True makes the safe moves at once.")
        .def(nb::init<nb::sequence, nb::sequence, nb::sequence, nb::sequence, bool>(), nb::arg("piles"),
             nb::arg("down"), nb::arg("height"), nb::arg("talon"), nb::arg("settle") = true)
        .def_prop_ro("initial_auto", &Klondike::initial_auto, "The safe moves made when the position was set up.")
        .def("moves", &Klondike::moves, "The moves worth trying, best first (as KlondikeProblem.moves()).")
        .def("legal_moves", &Klondike::legal, "Every legal move by the rules; any talon card may be played.")
        .def("play", &Klondike::play, nb::arg("move"), "Play a legal move and the safe moves after it; return those.")
        .def("undo", &Klondike::undo, "Take back the last play().")
        .def("is_won", &Klondike::is_won)
        .def_prop_ro("pending", &Klondike::pending,
                     "What the last move left pending, as KlondikeProblem.pending: None or (kind, pile, card).")
        .def("key", &Klondike::key, "The position's key: equal for positions the search folds together.")
        .def("lines", &Klondike::lines, nb::arg("depth"), nb::arg("most"),
             "The hint's lines from this position (see patience.solve.hints._lines), best first, each a list "
             "of moves.")
        .def("state", &Klondike::state, "(piles, down, height, talon) as lists.")
        .def("solve", &Klondike::solve, nb::arg("seconds") = nb::none(), nb::arg("nodes") = nb::none(),
             nb::arg("memory_mb") = 512.0, nb::arg("shuffle") = 0, nb::arg("probes") = false,
             nb::arg("line") = true,
             "Depth-first search from this position: a dict with status, reason, line, nodes, seconds, "
             "table_peak, table_bytes, replaced. shuffle: another order of each position's moves (0: the "
             "reference order); probes: short searches in other orders now and then (see depth_first); "
             "line=False: the line is left empty (a caller that wants the verdict only).");
}
