// The table: where each game's piles lie, drawing the cards the server sends, and turning
// drags, clicks, taps and keys into intents. No rule of any game lives here: the server says
// what is legal; this only knows where piles are and which card the player pointed at.

import { BACK_SVG, faceSvg, installDefs } from "./cards.js";
import { cardName, pileName, t } from "./i18n.js";

const H = 1.4; // card height in card widths
const GAP = 0.14; // space between columns, in card widths
const COL = 1 + GAP;
const FOUNDATIONS = ["fs", "fh", "fd", "fc"];
const SUIT_OF = { fs: "S", fh: "H", fd: "D", fc: "C" };
const DOUBLE_TAP_MS = 400;
const DRAG_START_PX = 6;
// A face-up card under another shows at least its index (rank over suit, top corners: 0.37 card
// widths with the rank's descent); a face-down one at least a sliver. A pile longer than the table
// then makes the cards smaller instead of hiding ranks.
const INDEX_UP = 0.37;
const SLIVER_DOWN = 0.06;

// -- layouts: pile name -> {x, y (card widths), kind, fan, source} -------------------------------

function reloadedLayout() {
  const piles = {
    s: { x: 0, y: 0, kind: "stock" },
    w: { x: COL, y: 0, kind: "waste", source: true },
  };
  FOUNDATIONS.forEach((f, i) => (piles[f] = { x: (3 + i) * COL, y: 0, kind: "foundation", source: true }));
  for (let i = 0; i < 7; i++) piles[`t${i + 1}`] = { x: i * COL, y: H + 0.3, kind: "tableau", fan: true, source: true };
  return { width: 6 * COL + 1, height: H + 0.3 + H + 2.2, piles };
}

function carpetLayout(options, portrait) {
  const rows = options.rows || 4;
  const cols = options.cols || 5;
  const waste = !!options.waste;
  const piles = {};
  if (!portrait) {
    // wide screens: stock (and waste) left of the carpet, the foundations in a column right of it
    const side = 0.35;
    const left = COL + side;
    piles.s = { x: 0, y: 0, kind: "stock" };
    if (waste) piles.w = { x: 0, y: H + 0.45, kind: "waste", source: true };
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        piles[`c${r * cols + c + 1}`] = { x: left + c * COL, y: r * (H + GAP), kind: "cell", source: true };
      }
    }
    const right = left + cols * COL - GAP + side;
    FOUNDATIONS.forEach((f, i) => (piles[f] = { x: right, y: i * (H + GAP), kind: "foundation" }));
    return { width: right + 1, height: Math.max(rows, 4) * (H + GAP) - GAP, piles };
  }
  const top = waste ? 6 : 5;
  const width = Math.max(cols, top);
  piles.s = { x: 0, y: 0, kind: "stock" };
  if (waste) piles.w = { x: COL, y: 0, kind: "waste", source: true };
  FOUNDATIONS.forEach((f, i) => (piles[f] = { x: (width - 4 + i) * COL, y: 0, kind: "foundation" }));
  const left = ((width - cols) * COL) / 2;
  const y0 = H + 0.35;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      piles[`c${r * cols + c + 1}`] = { x: left + c * COL, y: y0 + r * (H + GAP), kind: "cell", source: true };
    }
  }
  return { width: (width - 1) * COL + 1, height: y0 + rows * (H + GAP) - GAP, piles };
}

function faecherLayout(options, portrait) {
  // landscape: the fan over seven columns; portrait: a tighter fan over five, so cards stay large
  const cols = portrait ? 5 : 7;
  const width = (cols - 1) * COL + 1;
  const spread = portrait ? 0.47 : 0.7;
  const turn = portrait ? 4 : 5.5; // degrees per card; the outer cards must stay on the table
  const piles = {};
  const middle = width / 2 - 0.5;
  for (let i = 0; i < 9; i++) {
    const k = (i - 4) / 4;
    piles[`v${i + 1}`] = {
      x: middle + (i - 4) * spread, y: 0.08 + 0.32 * k * k, angle: (i - 4) * turn, kind: "fan", source: true,
    };
  }
  const y1 = H + 0.75;
  const first = cols - 4; // column of the first foundation
  const y2 = y1 + H + 0.25;
  piles.s = { x: 0, y: y1, kind: "stock" };
  piles.w = portrait ? { x: 0, y: y2, kind: "waste", source: true } : { x: COL, y: y1, kind: "waste", source: true };
  FOUNDATIONS.forEach((f, i) => (piles[f] = { x: (first + i) * COL, y: y1, kind: "foundation" }));
  for (let i = 0; i < 4; i++) {
    piles[`r${i + 1}`] = { x: (first + i) * COL, y: y2, kind: "reserve", fan: true, source: true };
  }
  return { width, height: y2 + H + 1.2, piles };
}

const LAYOUTS = { reloaded: reloadedLayout, teppich: carpetLayout, faecher: faecherLayout };
const MIRRORED = new Set(["stock", "waste", "foundation", "reserve"]);

/** The left-handed table (a setting of the player, on <html data-hand>): stock and waste on the right, the
 * foundations (and Der Fächer's reserves under them) on the left, still in their order; the rest stays. */
function mirrored(spec) {
  const piles = {};
  for (const [name, pile] of Object.entries(spec.piles)) {
    piles[name] = MIRRORED.has(pile.kind) ? { ...pile, x: spec.width - 1 - pile.x } : pile;
  }
  for (const kind of ["foundation", "reserve"]) {
    const names = Object.keys(piles).filter((name) => piles[name].kind === kind);
    const xs = names.map((name) => piles[name].x).sort((a, b) => a - b);
    names.forEach((name, i) => (piles[name] = { ...piles[name], x: xs[i] }));
  }
  return { ...spec, piles };
}
const STACKED = new Set(["stock", "waste", "foundation"]);

export class Board {
  /**
   * actions: move(src, dst, n|null, how), stock(how), select(pile, n) (after a card is picked or dragged),
   * announce(text). ``how`` is how the player made it, as fair play's evidence (docs/fairplay.md):
   * {how: "drag"|"click"|"key"|"dbl"} and for a drag its duration and path length {ms, px}.
   */
  constructor(root, actions) {
    installDefs();
    this.root = root;
    this.actions = actions;
    this.layer = document.createElement("div");
    this.layer.className = "layer";
    root.append(this.layer);
    this.cards = new Map(); // key -> element (a face-up card's key is its text)
    this.slots = new Map(); // pile -> element
    this.table = null;
    this.game = null;
    this.spec = null;
    this.w = 80;
    this.selection = null; // {pile, index, n}
    this.gesture = null;
    this.lastTap = null;
    this.taps = []; // the last two taps: {pile, index, did} (did: "pick", "put back", "double" or "other")
    this.marks = { target: [], hint: [] };
    this.bind();
    new ResizeObserver(() => this.table && this.place(false)).observe(root);
    // a setting of the look changed (hand, card size): the piles where it says
    window.addEventListener("patience:look", () => {
      if (!this.game) return;
      this.spec = this.layout(this.portrait);
      if (this.table) this.place(false);
    });
  }

  setGame(game, options) {
    this.game = game;
    this.options = options || {};
    this.portrait = this.isPortrait();
    this.spec = this.layout(this.portrait);
    this.root.dataset.game = game;
    for (const el of this.cards.values()) el.remove();
    for (const el of this.slots.values()) el.remove();
    this.badge?.remove();
    this.badge = null;
    this.cards.clear();
    this.slots.clear();
    this.table = null;
    this.selection = null;
    for (const [name, pile] of Object.entries(this.spec.piles)) {
      const slot = document.createElement("div");
      slot.className = `slot kind-${pile.kind}`;
      slot.dataset.pile = name;
      slot.setAttribute("role", "button");
      if (SUIT_OF[name]) {
        slot.innerHTML = `<svg viewBox="0 0 100 100" class="slot-suit s-${SUIT_OF[name]}" aria-hidden="true">` +
          `<use href="#suit-${SUIT_OF[name]}"/></svg>`;
      } else if (pile.kind === "stock") {
        slot.innerHTML = `<span class="slot-mark" aria-hidden="true"></span>`;
        this.badge = document.createElement("span");
        this.badge.className = "badge";
        this.badge.setAttribute("aria-hidden", "true");
        this.layer.append(this.badge);
      } else if (pile.kind === "tableau") {
        slot.innerHTML = `<span class="slot-mark" aria-hidden="true">K</span>`;
      }
      this.layer.append(slot);
      this.slots.set(name, slot);
    }
  }

  // -- geometry ------------------------------------------------------------------------------

  layout(portrait) {
    const spec = LAYOUTS[this.game](this.options, portrait);
    return document.documentElement.dataset.hand === "left" ? mirrored(spec) : spec;
  }

  isPortrait() {
    return this.root.clientHeight > this.root.clientWidth * 1.15;
  }

  measure() {
    const portrait = this.isPortrait();
    if (portrait !== this.portrait) {
      this.portrait = portrait;
      this.spec = this.layout(portrait);
    }
    const spec = this.spec;
    const width = this.root.clientWidth;
    const height = this.root.clientHeight;
    const pad = Math.max(6, Math.min(16, width * 0.02));
    const byWidth = (width - 2 * pad) / spec.width;
    const byHeight = (height - 2 * pad) / spec.height;
    const byPiles = this.byPiles(height - pad - 6);
    const fit = Math.min(byWidth, byHeight, byPiles, 150);
    // the card size the player chose (--card-scale on <html>): smaller, or larger as far as the table allows
    const scale = parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--card-scale")) || 1;
    let w = fit;
    if (scale < 1) w = fit * scale;
    else if (scale > 1) w = Math.min(byWidth, byPiles, Math.max(fit, Math.min(byHeight * scale, 150 * scale)));
    this.w = Math.max(24, w);
    this.ox = Math.round((width - spec.width * this.w) / 2);
    this.oy = pad;
    this.heightPx = height;
    this.root.style.setProperty("--cw", `${this.w}px`);
  }

  /** The largest card width (px) at which every fanned pile, squeezed to the least, fits in height. */
  byPiles(height) {
    let w = Infinity;
    for (const [name, pile] of Object.entries(this.spec.piles)) {
      const cards = (pile.fan && this.table && this.table.piles[name]) || [];
      const downs = cards.filter((c) => c === null).length;
      const ups = cards.length - downs;
      const widths = pile.y + H + downs * SLIVER_DOWN + Math.max(0, ups - 1) * INDEX_UP;
      w = Math.min(w, height / widths);
    }
    return w;
  }

  /** Offsets of a fanned pile's cards (px from the pile's top), squeezed to fit the table: the
   * face-down cards first, the face-up ones never below their index. */
  offsets(name, cards) {
    const pile = this.spec.piles[name];
    const w = this.w;
    let down = 0.16 * w;
    let up = (this.portrait ? 0.42 : INDEX_UP) * w;
    const downs = cards.filter((c) => c === null).length;
    const ups = cards.length - downs;
    const room = this.heightPx - (this.oy + pile.y * w) - H * w - 6;
    const excess = downs * down + Math.max(0, ups - 1) * up - room;
    if (excess > 0 && downs) down = Math.max(SLIVER_DOWN * w, down - excess / downs);
    if (ups > 1) up = Math.max(INDEX_UP * w, Math.min(up, (room - downs * down) / (ups - 1)));
    const out = [];
    let y = 0;
    cards.forEach((c, i) => {
      out.push(y);
      y += c === null ? down : up;
      if (i === cards.length - 1) y -= c === null ? down : up;
    });
    return out;
  }

  pilePosition(name) {
    const pile = this.spec.piles[name];
    return { x: this.ox + pile.x * this.w, y: this.oy + pile.y * this.w, angle: pile.angle || 0 };
  }

  /** The area that counts as "on this pile" for a drop. */
  pileRect(name) {
    const { x, y } = this.pilePosition(name);
    const cards = (this.table && this.table.piles[name]) || [];
    const pile = this.spec.piles[name];
    let bottom = y + H * this.w;
    if (pile.fan && cards.length) bottom += this.offsets(name, cards).at(-1);
    return { left: x, top: y, right: x + this.w, bottom };
  }

  // -- drawing -------------------------------------------------------------------------------

  /** Show a new table; cards that moved glide to their new places. */
  update(table) {
    const before = this.table;
    this.table = table;
    this.clearMarks();
    if (this.selection) {
      const cards = table.piles[this.selection.pile] || [];
      if (cards.length - this.selection.index !== this.selection.n) this.selection = null;
    }
    this.place(true, before);
    this.keepFocus();
  }

  /** After F sent a card away, the focus stays on the pile the player was at (its new top card, or
   * its empty place), not on the card that flew to the foundation. */
  keepFocus() {
    const pile = this.focusPile;
    this.focusPile = null;
    if (!pile || !this.spec.piles[pile]) return;
    const cards = this.table.piles[pile] || [];
    if (cards.length && cards.at(-1) === null) {
      this.focusPile = pile; // a move drawn ahead of the answer: the card it turns up comes with the answer
      return;
    }
    for (let i = cards.length - 1; i >= 0; i--) {
      const el = this.cardEl(pile, i);
      if (el && !el.hidden && el.tabIndex >= 0) {
        el.focus({ preventScroll: true });
        return;
      }
    }
    const slot = this.slots.get(pile);
    if (slot) {
      slot.tabIndex = 0;
      slot.focus({ preventScroll: true });
    }
  }

  /** Put every card back where the table says (after a refused drop or a resize). */
  snapBack() {
    this.focusPile = null;
    this.place(true, this.table);
  }

  place(animate, before = this.table) {
    if (!this.table) return;
    this.measure();
    const piles = this.table.piles;
    const stockBefore = before && before.piles.s ? before.piles.s.length : 0;
    const drew = before && piles.s && piles.s.length < stockBefore;
    const stockPos = this.spec.piles.s ? this.pilePosition("s") : null;
    const seen = new Set();
    Object.keys(this.spec.piles).forEach((name, pileNumber) => {
      const cards = piles[name] || [];
      const pile = this.spec.piles[name];
      const base = this.pilePosition(name);
      const offs = pile.fan ? this.offsets(name, cards) : null;
      const slot = this.slots.get(name);
      this.placeSlot(slot, name, base, cards);
      const stacked = STACKED.has(pile.kind);
      cards.forEach((text, i) => {
        const key = text || `down:${name}:${i}`;
        let el = this.cards.get(key);
        const fresh = !el;
        if (fresh) {
          el = this.makeCard(text);
          this.cards.set(key, el);
          this.layer.append(el);
        }
        seen.add(key);
        const x = base.x;
        const y = base.y + (offs ? offs[i] : 0);
        const angle = base.angle;
        const top = i === cards.length - 1;
        el.dataset.pile = name;
        el.dataset.index = String(i);
        el.hidden = stacked && i < cards.length - 2;
        const selected = this.selection && this.selection.pile === name && i >= this.selection.index;
        el.classList.toggle("selected", !!selected);
        if (text) {
          el.tabIndex = !stacked || top ? 0 : -1;
          // the first face-up card of a pile says how many face-down cards lie under it
          const downs = i > 0 && cards[i - 1] === null ? cards.filter((c) => c === null).length : 0;
          const what = downs ? t(downs === 1 ? "downs_then_one" : "downs_then", { n: downs, card: cardName(text) })
            : cardName(text);
          el.setAttribute("aria-label", `${what}, ${pileName(name, this.game)}${selected ? `, ${t("selected")}` : ""}`);
        }
        const moved = el._x !== x || el._y !== y || el._a !== angle;
        if (fresh && text && animate && drew && stockPos && (name === "w" || pile.kind === "cell")) {
          // a card just turned from the stock: it comes from there
          this.setPos(el, stockPos.x, stockPos.y, 0, false);
          el.getBoundingClientRect();
        } else if (fresh && text && animate && before && (before.piles[name] || [])[i] === null) {
          el.classList.add("flip");
          setTimeout(() => el.classList.remove("flip"), 260);
        }
        // a card's layer follows its pile and place; a moving card flies above the others
        el._z = 10 + pileNumber * 60 + i;
        const lift = animate && moved && !fresh;
        const rest = () => String(el.classList.contains("selected") ? 4500 + el._z : el._z);
        el.style.zIndex = lift ? String(5000 + el._z) : rest();
        if (lift) {
          clearTimeout(el._liftTimer);
          el._liftTimer = setTimeout(() => (el.style.zIndex = rest()), 230);
        }
        this.setPos(el, x, y, angle, animate && (!fresh || (drew && text)));
        el.classList.remove("pending", "dragging");
      });
    });
    for (const [key, el] of this.cards) {
      if (!seen.has(key)) {
        el.remove();
        this.cards.delete(key);
      }
    }
    clearTimeout(this.reorderTimer);
    this.reorderTimer = setTimeout(() => this.reorder(), 300);
  }

  /** Keep the elements in table order (pile by pile, bottom to top), so Tab walks the table in
   * order. Done once cards stand still, with moveBefore, which keeps focus and transitions. */
  reorder() {
    if (typeof this.layer.moveBefore !== "function" || !this.table || this.gesture) return;
    const order = [];
    for (const name of Object.keys(this.spec.piles)) {
      order.push(this.slots.get(name));
      const cards = this.table.piles[name] || [];
      for (let i = 0; i < cards.length; i++) {
        const el = this.cardEl(name, i);
        if (el) order.push(el);
      }
    }
    let ref = this.layer.firstElementChild;
    for (const el of order) {
      if (el === ref) {
        ref = ref.nextElementSibling;
      } else if (el) {
        this.layer.moveBefore(el, ref);
      }
    }
  }

  /** A won game: the cards leave the foundations one after another and bounce down the table (the
   * old cascade), then come back. None for a player who asked for less motion. Returns its length in ms. */
  celebrate() {
    if (!this.table || matchMedia("(prefers-reduced-motion: reduce)").matches) return 0;
    const cards = [];
    for (const name of FOUNDATIONS) {
      const pile = this.table.piles[name] || [];
      for (let i = pile.length - 1; i >= 0; i--) {
        const el = this.cardEl(name, i);
        if (el) cards.push(el);
      }
    }
    const floor = this.heightPx - H * this.w;
    let last = 0;
    cards.forEach((el, k) => {
      // round-robin over the four foundations, tops first
      const delay = (k % 4) * 90 + Math.floor(k / 4) * 120;
      const dir = k % 2 ? -1 : 1;
      const dx = dir * (120 + ((k * 37) % 160));
      // down to the table's bottom edge, then two bounces, each lower, drifting sideways all the while
      const fall = Math.max(40, floor - el._y);
      const path = [[0, el._y], [0.36, floor], [0.55, floor - fall * 0.45], [0.72, floor],
        [0.84, floor - fall * 0.18], [0.94, floor], [1, floor]];
      const frames = path.map(([at, y]) => ({ transform: `translate(${el._x + dx * at}px, ${y}px)`, offset: at }));
      el.style.zIndex = String(6000 + k);
      el.hidden = false;
      el.animate(frames, { duration: 900, delay, easing: "ease-in", fill: "none" });
      last = Math.max(last, delay + 900);
    });
    this.root.dataset.celebrating = "1";
    setTimeout(() => {
      delete this.root.dataset.celebrating;
      this.place(false);
    }, last + 50);
    return last;
  }

  setPos(el, x, y, angle, animate) {
    el.classList.toggle("still", !animate);
    el._x = x;
    el._y = y;
    el._a = angle;
    el.style.transform = `translate(${x}px, ${y}px)${angle ? ` rotate(${angle}deg)` : ""}`;
  }

  placeSlot(slot, name, base, cards) {
    slot.style.transform = `translate(${base.x}px, ${base.y}px)${base.angle ? ` rotate(${base.angle}deg)` : ""}`;
    const pile = this.spec.piles[name];
    const empty = cards.length === 0;
    slot.classList.toggle("empty", empty);
    let label = pileName(name, this.game);
    if (pile.kind === "stock") {
      const action = this.table.stock_action;
      slot.dataset.action = action || "none";
      slot.querySelector(".slot-mark").textContent = empty ? (action === "redeal" ? "↻" : "∅") : "";
      const badge = this.badge;
      const passes = this.passesLeft();
      // "35 cards" and, where the stock may be turned again, "1 redeal left" under it
      const count = t(cards.length === 1 ? "cards_left_one" : "cards_left", { n: cards.length });
      const again = passes === null ? "" : t(passes === 1 ? "passes_left_one" : "passes_left", { n: passes });
      badge.replaceChildren(Object.assign(document.createElement("span"), { textContent: count }));
      if (again) badge.append(Object.assign(document.createElement("span"), { className: "again", textContent: again }));
      badge.style.left = `${base.x + this.w / 2}px`;
      badge.style.top = `${base.y + H * this.w * 0.97}px`;
      label += `, ${count}${again ? `, ${again}` : ""}, ` +
        t(action === "draw" ? "stock_draw" : action === "redeal" ? "stock_redeal" : "stock_none");
      slot.tabIndex = 0;
    } else {
      slot.tabIndex = empty ? 0 : -1;
      if (empty) label += `, ${t("empty")}`;
    }
    slot.setAttribute("aria-label", label);
  }

  /** Redeals still allowed, for the stock's badge (null: unlimited, or none at all in this game). */
  passesLeft() {
    const options = this.options || {};
    const used = (this.table.counters || {}).passes;
    let total = null;
    if (this.game === "faecher") total = options.passes;
    else if (this.game === "teppich" && options.waste) total = options.waste_passes;
    if (used === undefined || !total || total < 2) return null;
    return Math.max(0, total - used);
  }

  makeCard(text) {
    const el = document.createElement("div");
    if (text) {
      el.className = `card up s-${text.slice(-1)}`;
      el.dataset.card = text;
      el.setAttribute("role", "button");
      el.innerHTML = faceSvg(text);
    } else {
      el.className = "card down";
      el.setAttribute("aria-hidden", "true");
      el.tabIndex = -1;
      el.innerHTML = BACK_SVG;
    }
    return el;
  }

  // -- selection, targets, hints -------------------------------------------------------------

  select(pile, index) {
    const cards = this.table.piles[pile] || [];
    const n = cards.length - index;
    this.selection = { pile, index, n };
    this.refreshSelection();
    this.actions.announce?.(`${cardName(cards[index])}: ${t("selected")}`);
    this.actions.select?.(pile, n);
  }

  clearSelection() {
    if (!this.selection) return;
    this.selection = null;
    this.refreshSelection();
    this.clearMarks("target");
  }

  refreshSelection() {
    for (const el of this.cards.values()) {
      const sel = this.selection;
      const on = !!sel && el.dataset.pile === sel.pile && Number(el.dataset.index) >= sel.index;
      el.classList.toggle("selected", on);
      // a picked card comes to the front (in the fan its neighbours cover part of it)
      if (el._z !== undefined) el.style.zIndex = String(on ? 4500 + el._z : el._z);
    }
  }

  /** Mark piles: "target" (where the picked card may go) or "hint". */
  mark(kind, piles, cardsOf = null) {
    this.clearMarks(kind);
    const els = [];
    for (const name of piles) {
      const cards = (this.table && this.table.piles[name]) || [];
      const top = cards.length ? this.cardEl(name, cards.length - 1) : null;
      els.push(top || this.slots.get(name));
    }
    if (cardsOf) {
      const cards = this.table.piles[cardsOf.pile] || [];
      for (let i = cards.length - cardsOf.n; i < cards.length; i++) {
        const el = this.cardEl(cardsOf.pile, i);
        if (el) els.push(el);
      }
    }
    for (const el of els) if (el) el.classList.add(`mark-${kind}`);
    this.marks[kind] = els;
  }

  clearMarks(kind = null) {
    for (const k of kind ? [kind] : Object.keys(this.marks)) {
      for (const el of this.marks[k]) el.classList.remove(`mark-${k}`);
      this.marks[k] = [];
    }
  }

  cardEl(pile, index) {
    const text = this.table.piles[pile][index];
    return this.cards.get(text || `down:${pile}:${index}`) || null;
  }

  // -- pointer, tap and keys -----------------------------------------------------------------

  bind() {
    const root = this.root;
    root.addEventListener("pointerdown", (e) => this.down(e));
    window.addEventListener("pointermove", (e) => this.move(e));
    window.addEventListener("pointerup", (e) => this.up(e));
    window.addEventListener("pointercancel", () => this.cancelGesture());
    root.addEventListener("keydown", (e) => this.key(e));
    root.addEventListener("dblclick", (e) => this.doubleClick(e));
    // Escape puts a picked card down wherever the focus is (a move redraws the table and drops the focus)
    window.addEventListener("keydown", (e) => { if (e.key === "Escape" && !root.contains(e.target)) this.clearSelection(); });
    root.addEventListener("contextmenu", (e) => e.preventDefault());
  }

  hit(target) {
    const el = target.closest && target.closest(".card, .slot");
    if (!el || !el.dataset.pile) return null;
    const isCard = el.classList.contains("card");
    return { el, pile: el.dataset.pile, index: isCard ? Number(el.dataset.index) : -1, up: el.classList.contains("up") };
  }

  down(e) {
    if (!this.table || (e.pointerType === "mouse" && e.button !== 0)) return;
    // a card just turned to the waste flies out over the stock: a press on the stock's place is the
    // stock's. A card that fills a carpet's gap flies from there too: a press on it is the card's.
    const card = this.hit(e.target);
    const stock = this.stockAt(e.clientX, e.clientY);
    const hit = stock && (!card || card.pile === "s" || card.pile === "w") ? stock : card;
    if (!hit) {
      this.clearSelection();
      return;
    }
    e.preventDefault();
    const home = hit.el.getBoundingClientRect();
    this.gesture = { ...hit, id: e.pointerId, x: e.clientX, y: e.clientY, dragging: false, els: [], home,
      t0: performance.now(), px: 0, lx: e.clientX, ly: e.clientY };
  }

  stockAt(x, y) {
    const slot = this.slots.get("s");
    if (!slot) return null;
    const r = slot.getBoundingClientRect();
    if (x < r.left || x > r.right || y < r.top || y > r.bottom) return null;
    return { el: slot, pile: "s", index: -1, up: false };
  }

  draggable(g) {
    const pile = this.spec.piles[g.pile];
    if (!g.up || !pile || !pile.source) return false;
    const cards = this.table.piles[g.pile];
    return !STACKED.has(pile.kind) || g.index === cards.length - 1;
  }

  move(e) {
    const g = this.gesture;
    if (!g || e.pointerId !== g.id) return;
    const dx = e.clientX - g.x;
    const dy = e.clientY - g.y;
    g.px += Math.hypot(e.clientX - g.lx, e.clientY - g.ly); // the path the pointer took, for the evidence
    g.lx = e.clientX;
    g.ly = e.clientY;
    if (!g.dragging) {
      if (Math.hypot(dx, dy) < DRAG_START_PX || !this.draggable(g)) return;
      g.dragging = true;
      const cards = this.table.piles[g.pile];
      for (let i = g.index; i < cards.length; i++) g.els.push(this.cardEl(g.pile, i));
      g.els.forEach((el, k) => {
        el.classList.add("dragging");
        el.classList.add("still");
        el.style.zIndex = String(9000 + k);
      });
      g.selection = this.selection; // given back if the drag turns out to be a click
      this.clearSelection();
      this.actions.select?.(g.pile, cards.length - g.index);
    }
    for (const el of g.els) {
      el.style.transform = `translate(${el._x + dx}px, ${el._y + dy}px)`;
    }
  }

  up(e) {
    const g = this.gesture;
    if (!g || e.pointerId !== g.id) return;
    this.gesture = null;
    g.at = e.timeStamp; // when the player let go, not when a busy page got round to it
    if (g.dragging) {
      this.drop(g, e);
      return;
    }
    this.tap(g);
  }

  cancelGesture() {
    if (this.gesture && this.gesture.dragging) this.snapBack();
    this.gesture = null;
  }

  /** Where a drag ends: a move only if it clearly ends on another pile. A drag that ends on the
   * card's own place is a click that slipped (the fan's cards overlap, so a few pixels reach the
   * neighbour's edge); one that ends nowhere in particular goes back. Neither costs anything. */
  drop(g, e) {
    this.clearMarks("target");
    const h = g.home;
    if (e.clientX >= h.left && e.clientX <= h.right && e.clientY >= h.top && e.clientY <= h.bottom) {
      this.snapBack();
      this.selection = g.selection || null;
      this.refreshSelection();
      this.tap(g);
      return;
    }
    const best = this.pileUnder(g, e.clientX, e.clientY) || this.pileCovered(g, e);
    if (!best) {
      this.snapBack();
      return;
    }
    for (const el of g.els) {
      el.classList.remove("dragging");
      el.classList.add("pending");
    }
    const n = this.table.piles[g.pile].length - g.index;
    this.actions.move(g.pile, best, n, {
      how: "drag",
      ms: Math.min(600000, Math.round(performance.now() - g.t0)),
      px: Math.min(100000, Math.round(g.px + Math.hypot(e.clientX - g.lx, e.clientY - g.ly))),
    });
  }

  /** The pile whose card (or empty place) is under the pointer, seen past the dragged cards. */
  pileUnder(g, x, y) {
    for (const el of document.elementsFromPoint(x, y)) {
      if (g.els.includes(el) || g.els.some((d) => d.contains(el))) continue;
      const hit = this.hit(el);
      if (!hit) continue;
      const pile = this.spec.piles[hit.pile];
      return hit.pile === g.pile || !pile || pile.kind === "stock" ? null : hit.pile;
    }
    return null;
  }

  /** With the pointer over no pile: the pile the dragged card covers most, if it covers a good part
   * of it and more than the card's own place. */
  pileCovered(g, e) {
    const box = this.root.getBoundingClientRect();
    const dx = e.clientX - g.x;
    const dy = e.clientY - g.y;
    const first = g.els[0];
    const card = { left: first._x + dx, top: first._y + dy };
    card.right = card.left + this.w;
    card.bottom = card.top + H * this.w;
    const overlap = (r) => Math.max(0, Math.min(r.right, card.right) - Math.max(r.left, card.left)) *
      Math.max(0, Math.min(r.bottom, card.bottom) - Math.max(r.top, card.top));
    const h = g.home;
    let bestArea = Math.max(0.3 * H * this.w * this.w, overlap({
      left: h.left - box.left, right: h.right - box.left, top: h.top - box.top, bottom: h.bottom - box.top,
    }));
    let best = null;
    for (const name of Object.keys(this.spec.piles)) {
      if (name === g.pile || this.spec.piles[name].kind === "stock") continue;
      const area = overlap(this.pileRect(name));
      if (area > bestArea) {
        bestArea = area;
        best = name;
      }
    }
    return best;
  }

  /** A click or tap. A double click is two clicks on the same card that both pick it: a click that
   * put the picked card onto this one (a drop) is not the first half of one. */
  tap(g) {
    const now = g.at ?? performance.now();
    const last = this.lastTap;
    const double = last && g.index >= 0 && last.pile === g.pile && last.index === g.index &&
      now - last.time < DOUBLE_TAP_MS;
    this.lastTap = null;
    const tapped = (did) => (this.taps = [this.taps.at(-1), { pile: g.pile, index: g.index, did }]);
    if (double && g.up) {
      tapped("double");
      this.toFoundation(g.pile, g.index, "dbl");
      return;
    }
    const before = this.selection;
    this.click(g.pile, g.index, g.up, "click");
    const sel = this.selection;
    if (g.index >= 0 && sel && sel !== before && sel.pile === g.pile) {
      this.lastTap = { pile: g.pile, index: g.index, time: now };
      tapped("pick");
    } else {
      tapped(before && !sel && before.pile === g.pile ? "put back" : "other");
    }
  }

  /** The browser's own double click, for a mouse whose two clicks it counts as one double click though they
   * came further apart than DOUBLE_TAP_MS (the system's setting, or a page too busy to see the first in
   * time): its first click picked the card and its second put it down again, so this sends it to its
   * foundation. Any other pair is not a double click of the page: a click that dropped a card here and one
   * that picked it (a double click would cost 50 in Der Fächer), or the taps that already sent it (that move
   * may still await its answer). */
  doubleClick(e) {
    const hit = this.hit(e.target);
    const [first, second] = this.taps;
    this.taps = [];
    const same = (tap) => tap && tap.pile === hit.pile && tap.index === hit.index;
    if (!hit || !hit.up || !same(first) || !same(second)) return;
    if (first.did !== "pick" || second.did !== "put back") return;
    this.toFoundation(hit.pile, hit.index, "dbl");
  }

  /** A double click, a double tap or the F key: the card (or run) to its foundation. */
  toFoundation(pile, index, how) {
    const spec = this.spec.piles[pile];
    if (!spec || !spec.source || spec.kind === "foundation") return;
    const cards = this.table.piles[pile] || [];
    if (index < 0 || cards[index] == null) return;
    this.clearSelection();
    const n = cards.length - index;
    this.actions.move(pile, "f", n === 1 ? null : n, { how });
  }

  /** A click (or Enter: ``how`` "key") on a card or an empty place: pick a card, or put the picked one there. */
  click(pile, index, up, how = "click") {
    const spec = this.spec.piles[pile];
    if (!spec) return;
    if (spec.kind === "stock") {
      this.clearSelection();
      this.actions.stock({ how });
      return;
    }
    const cards = this.table.piles[pile] || [];
    const sel = this.selection;
    if (sel) {
      if (sel.pile === pile) {
        if (index === sel.index || !up) this.clearSelection();
        else this.select(pile, index);
        return;
      }
      this.clearSelection();
      this.actions.move(sel.pile, pile, sel.n, { how });
      return;
    }
    if (!up || !spec.source) return;
    if (STACKED.has(spec.kind)) index = cards.length - 1;
    this.select(pile, index);
  }

  key(e) {
    if (e.key === "Escape") {  // a picked card is put down, wherever the focus is
      this.clearSelection();
      return;
    }
    const hit = this.hit(e.target);
    if (!hit || !this.table) return;
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      this.click(hit.pile, hit.index, hit.up, "key");
    } else if ((e.key === "f" || e.key === "F") && hit.up) {
      e.preventDefault();
      this.focusPile = hit.pile;
      this.toFoundation(hit.pile, hit.index, "key");
    } else if (e.key === "Escape") {
      this.clearSelection();
    } else if (e.key.startsWith("Arrow")) {
      e.preventDefault();
      this.moveFocus(hit, e.key);
    }
  }

  /** Arrow keys walk the piles (left, right) and the cards of a pile (up, down). */
  moveFocus(hit, key) {
    const focusable = (el) => el && !el.hidden && el.tabIndex >= 0;
    const names = Object.keys(this.spec.piles);
    const topOf = (name) => {
      const cards = this.table.piles[name] || [];
      for (let i = cards.length - 1; i >= 0; i--) {
        const el = this.cardEl(name, i);
        if (focusable(el)) return el;
      }
      const slot = this.slots.get(name);
      return focusable(slot) ? slot : null;
    };
    if (key === "ArrowLeft" || key === "ArrowRight") {
      const step = key === "ArrowLeft" ? -1 : 1;
      let i = names.indexOf(hit.pile);
      for (let k = 0; k < names.length; k++) {
        i = (i + step + names.length) % names.length;
        const el = topOf(names[i]);
        if (el) {
          el.focus();
          return;
        }
      }
    } else if (hit.index >= 0) {
      const cards = this.table.piles[hit.pile];
      const step = key === "ArrowUp" ? -1 : 1;
      for (let i = hit.index + step; i >= 0 && i < cards.length; i += step) {
        const el = this.cardEl(hit.pile, i);
        if (focusable(el)) {
          el.focus();
          return;
        }
      }
    }
  }
}
