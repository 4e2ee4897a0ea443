// Moves drawn at once. The server sends with each table the moves the rules allow in it
// (``table.legal``: [src, pile, n], docs/protocol.md); a click or drag whose move is listed is drawn in
// the same frame and sent as before, and the server's answer settles it: its table (the card turned up,
// a carpet gap filled), the score and the ledger are drawn as they come, and a refusal puts the cards
// back. The page holds no rule: a move off the list is sent and waits for the answer, never refused here
// (in Der Fächer a wrong try is the player's to make and to pay for). A stock turn is never drawn before
// the answer (the card it turns up is unknown).
//
// One move at a time: the list belongs to the position it came with, so while any intent of the page
// awaits its answer the list is not used and a further click is sent and waits. Offline, a move drawn and
// not answered is put back and not sent again: nothing stays pending that the player cannot see.

const FOUNDATION = /^f[shdc]$/;

export class Instant {
  /**
   * board: the Board; net: the connection (its ``pending`` map of intents awaiting an answer, ``online``);
   * ready(): may the player move now (false before a duel's clocks start).
   */
  constructor(board, net, ready = () => true) {
    this.board = board;
    this.net = net;
    this.ready = ready;
    this.table = null; // the last table the server sent: the one its list belongs to
    this.over = false;
    this.drawn = null; // {ack}: a move drawn at once whose answer has not come yet
    this.turning = null; // the ack of a stock click awaiting its answer (the stock shows it waits)
    this.cards = new Map(); // ack -> the card a move intent moves (its run's first), as the page showed it
  }

  /** A stock click: nothing is drawn before the answer (the card it turns up is unknown); the stock
   * shows that it waits (``data-waiting="stock"`` on the board) until the answer comes. */
  stock(send) {
    const ack = send();
    this.turning = ack;
    this.board.root.dataset.waiting = "stock";
    return ack;
  }

  /** The stock's waiting mark goes once its intent is answered (or dropped). */
  settleStock() {
    if (this.turning != null && !this.net.pending.has(this.turning)) {
      this.turning = null;
      delete this.board.root.dataset.waiting;
    }
  }

  /** A game message or an event (``answer``: it is this page's answer to an intent). Call it before the
   * page draws the message. */
  heard(d, answer = false) {
    if (d.table) this.table = d.table;
    this.settleStock();
    this.over = !!(d.status && d.status.outcome);
    // the answer, or a message after it (an answer the page skipped for a gap in versions, then the whole game)
    if (this.drawn && ((answer && d.ack === this.drawn.ack) || !this.net.pending.has(this.drawn.ack))) {
      this.drawn = null;
      if (!d.table) this.board.update(this.table); // answered without a move: the cards go back
    }
  }

  /** A new game: nothing drawn is kept. */
  reset() {
    this.table = null;
    this.drawn = null;
    this.settleStock();
  }

  /** A ``rej`` or ``err`` for intent ``ack``: a move drawn for it goes back. */
  refused(ack) {
    this.settleStock();
    if (!this.drawn || ack == null || ack !== this.drawn.ack) return;
    this.drawn = null;
    if (this.table) this.board.update(this.table);
  }

  /** The connection is gone: a move drawn and not answered goes back, and is not sent again. */
  offline() {
    if (!this.drawn) return;
    this.net.pending.delete(this.drawn.ack);
    this.drawn = null;
    if (this.table) this.board.update(this.table);
  }

  /** The listed move an intent names (``n`` null: the largest listed count, as the server takes it), or
   * null: not listed, or the list is not the position's now. */
  find(src, dst, n) {
    const list = this.table && this.table.legal;
    if (!list || this.over || this.drawn || this.net.pending.size || !this.net.online || !this.ready()) return null;
    let best = null;
    for (const m of list) {
      if (m[0] !== src || (m[1] !== dst && !(dst === "f" && FOUNDATION.test(m[1]))) || (n != null && m[2] !== n)) continue;
      if (!best || m[2] > best[2]) best = m;
    }
    return best;
  }

  /** A move intent: drawn at once if listed, then sent with ``send()`` (which returns its ack). */
  move(src, dst, n, send) {
    const shown = this.board.table && this.board.table.piles[src];
    const card = shown ? shown[shown.length - (n || 1)] : null; // what the player moved, as they saw it
    const listed = this.find(src, dst, n);
    if (listed) this.draw(listed);
    const ack = send();
    if (listed) this.drawn = { ack };
    if (card) this.cards.set(ack, card);
    while (this.cards.size > 32) this.cards.delete(this.cards.keys().next().value);
    return ack;
  }

  /** The card that move intent ``ack`` moved, as the page showed it (null: unknown, a face-down card). */
  cardOf(ack) {
    return this.cards.get(ack) || null;
  }

  /** Draw listed move [src, pile, n]: the top cards of ``src`` onto ``pile`` (a foundation takes them top
   * card first, as a reserve pile goes up in Der Fächer). What lay under them shows as it was (a face-down
   * card stays down) until the answer's table. */
  draw([src, dst, n]) {
    const piles = { ...this.table.piles };
    const from = piles[src] || [];
    const cards = from.slice(from.length - n);
    piles[src] = from.slice(0, from.length - n);
    piles[dst] = [...(piles[dst] || []), ...(FOUNDATION.test(dst) ? cards.reverse() : cards)];
    this.board.update({ ...this.table, piles, legal: null });
  }
}
