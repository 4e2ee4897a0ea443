// A connection that goes silent without closing (the network gone, a server process killed behind a
// proxy) is noticed within seconds: when nothing has come for a while the page pings, and when
// nothing comes back either, it counts the connection as lost. The browser going offline counts at once.

export const QUIET_MS = 4000; // nothing heard this long: ping
export const SILENT_MS = 9000; // nothing heard this long: the connection is lost

export class Liveness {
  constructor(ping, lost) {
    this.ping = ping;
    this.lost = lost;
    this.heard = Date.now();
    this.pinged = 0;
    this.timer = null;
  }

  start() {
    if (this.timer) return;
    this.timer = setInterval(() => this.check(), 1000);
    window.addEventListener("offline", () => this.lost());
  }

  heardNow() {
    this.heard = Date.now();
  }

  check() {
    const now = Date.now();
    const quiet = now - this.heard;
    if (quiet > SILENT_MS) {
      this.heard = now;
      this.lost();
    } else if (quiet > QUIET_MS && now - this.pinged > QUIET_MS) {
      this.pinged = now;
      this.ping();
    }
  }
}
