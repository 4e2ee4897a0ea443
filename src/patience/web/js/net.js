// The play connection: one websocket, intents with ack ids, versions, reconnecting and catching up, for a
// solo game's page and a duel's alike. Messages are {"t": type, "d": data}; docs/protocol.md describes them.

import { Liveness } from "./liveness.js";

const INTENTS = new Set(["move", "stock", "undo", "giveup"]);
// intents that say the version of the table they were made on (the page's last): another window's change
// since, and the server refuses them at no cost (docs/protocol.md)
export const ON_TABLE = new Set(["move", "stock"]);

/** A page's id (12 URL-safe characters): its acks and events are told apart from other pages'. */
export function randomId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"[b & 63]).join("");
}

/** What a page plays: a solo game (its snapshot "game", its events "ev", joined again by "join") or a duel
 * (a match's snapshot "duel", its events "dev", joined again by "match"; every message carries the page's id). */
export const SOLO = { snapshot: "game", event: "ev", join: "join", cid: false };
export const DUEL = { snapshot: "duel", event: "dev", join: "match", cid: true };
const NOT_MESSAGES = new Set(["game", "ev", "status", "opened"]); // handlers that no message type names

export class Net {
  /**
   * handlers: game(snapshot), ev(event, mine), status(online: bool), opened() (what a page without a game
   * says on each new connection, when connect() was given nothing to start with), and one for each other
   * message type, by its name: rej, err, hint, targets, lobby, ...
   * kinds: SOLO or DUEL.
   */
  constructor(handlers, kinds = SOLO) {
    this.handlers = handlers;
    this.kinds = kinds;
    this.cid = randomId();
    this.ack = 0;
    this.pending = new Map(); // ack -> [type, data] not yet answered
    this.gameId = null; // the game (or match) the page shows: joined again on each new connection
    this.v = 0;
    this.ws = null;
    this.start = null; // the message that (re)starts the game when connecting: new or join
    this.retry = 0;
    this.timer = null;
    this.online = false;
    this.liveness = new Liveness(() => this.raw("ping", {}), () => this.lost(this.ws));
  }

  connect(start) {
    this.start = start;
    this.open();
    this.liveness.start();
  }

  open() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${scheme}//${location.host}/ws`);
    this.ws = ws;
    ws.onopen = () => {
      // online once the server answers on this socket (below), not when it merely opens
      this.liveness.heardNow();
      if (this.gameId) {
        // the server reads messages in order: after the join, intents still unanswered are sent
        // again (it answers each once, so none is played twice)
        this.raw(this.kinds.join, { id: this.gameId, v: this.v, cid: this.cid });
        this.resendPending();
      } else if (this.start) {
        this.raw(this.start[0], { ...this.start[1], cid: this.cid });
      } else {
        this.handlers.opened?.();
      }
    };
    ws.onmessage = (e) => {
      this.liveness.heardNow();
      if (!this.online) {
        this.retry = 0;
        this.setOnline(true);
      }
      this.receive(e.data);
    };
    ws.onclose = () => this.lost(ws);
  }

  /** The connection ``ws`` is gone (closed, or silent): say so and open another soon. */
  lost(ws) {
    if (!ws || this.ws !== ws) return;
    this.ws = null;
    ws.onclose = null;
    try {
      ws.close();
    } catch {
      // closing a socket that is already gone
    }
    this.online = false; // said even if this socket never answered: the page is not connected
    this.handlers.status?.(false);
    const wait = Math.min(5000, 300 * 2 ** this.retry++);
    setTimeout(() => this.open(), wait);
  }

  setOnline(online) {
    if (this.online === online) return;
    this.online = online;
    this.handlers.status?.(online);
  }

  raw(type, data) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ t: type, d: data }));
      return true;
    }
    return false;
  }

  /** Send a message; an intent gets the next ack id and is sent again after a reconnect until answered. */
  send(type, data = {}) {
    if (INTENTS.has(type)) {
      const ack = ++this.ack;
      const body = ON_TABLE.has(type) ? { ...data, ack, v: this.v } : { ...data, ack }; // v: the table it was made on
      this.pending.set(ack, [type, body]);
      this.raw(type, body);
      return ack;
    }
    return this.raw(type, this.kinds.cid ? { ...data, cid: this.cid } : data);
  }

  newGame(data) {
    this.gameId = null; // the game (or match) the page shows: joined again on each new connection
    this.v = 0;
    this.pending.clear();
    this.start = ["new", data];
    this.raw("new", { ...data, cid: this.cid });
  }

  resendPending() {
    for (const [type, body] of [...this.pending.values()].sort((a, b) => a[1].ack - b[1].ack)) {
      this.raw(type, body);
    }
  }

  receive(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    const d = msg.d || {};
    // acks count per page: another page's event may carry the same number
    if (d.ack != null && (msg.t !== this.kinds.event || d.cid === this.cid)) this.pending.delete(d.ack);
    switch (msg.t) {
      case this.kinds.snapshot:
        this.gameId = d.id;
        this.v = d.v;
        this.handlers.game?.(d);
        break;
      case this.kinds.event:
        if (!this.gameId || d.v <= this.v) return; // before the game arrived, or seen already
        if (d.v > this.v + 1) {
          // something was missed: ask for it (the server sends the events or the whole game)
          this.raw(this.kinds.join, { id: this.gameId, v: this.v, cid: this.cid });
          return;
        }
        this.v = d.v;
        this.handlers.ev?.(d, d.cid === this.cid);
        break;
      default:
        if (!NOT_MESSAGES.has(msg.t) && Object.hasOwn(this.handlers, msg.t)) this.handlers[msg.t](d);
        break;
    }
  }
}
