// The table's sounds, made by the Web Audio API (short synthesized tones: no audio files), one switch for all
// of them (kept in this browser; off until the player turns them on). The pages say what happened (a deal,
// a move, a card onto a foundation, a refusal, a win, an opponent found, a second of the last ten).
// A browser lets audio start only after a gesture on the page: none is made before the first one (a sound
// due earlier, such as the deal's at the page's start, is left out), and the first one starts it.

const KEY = "patience.sound";

// each sound: notes [frequency (Hz), start (s), length (s), wave, loudness]
const SOUNDS = {
  deal: [[392, 0, 0.05, "triangle", 0.08], [523, 0.05, 0.05, "triangle", 0.08], [659, 0.1, 0.07, "triangle", 0.08]],
  move: [[440, 0, 0.05, "triangle", 0.09]],
  foundation: [[660, 0, 0.07, "sine", 0.12], [990, 0.06, 0.1, "sine", 0.1]],
  refusal: [[196, 0, 0.12, "square", 0.05], [165, 0.1, 0.14, "square", 0.05]],
  win: [[523, 0, 0.12, "sine", 0.12], [659, 0.12, 0.12, "sine", 0.12], [784, 0.24, 0.12, "sine", 0.12],
    [1047, 0.36, 0.3, "sine", 0.12]],
  found: [[784, 0, 0.12, "sine", 0.14], [1175, 0.13, 0.22, "sine", 0.14]],
  tick: [[1200, 0, 0.04, "square", 0.04]],
};

let context = null;
let allowed = false; // a gesture was made on this page: audio may start

const GESTURES = ["pointerdown", "pointerup", "touchend", "keydown", "click"];

function gesture() {
  // a pointerdown of a touch is no gesture to the browser yet (its touchend is): wait for one that is
  if (navigator.userActivation && !navigator.userActivation.isActive) return;
  allowed = true;
  for (const type of GESTURES) removeEventListener(type, gesture, true);
  if (soundOn()) {
    try {
      audio(); // started within the gesture: the sounds after it (a move's, when the server answers) are heard
    } catch {
      // no sound then
    }
  }
}

for (const type of GESTURES) addEventListener(type, gesture, { capture: true, passive: true });

/** The state of the page's audio: "none" before it was started, else the AudioContext's ("running"). */
export function audioState() {
  return context ? context.state : "none";
}

/** The sound switch: set it when ``on`` is given; returns it. */
export function soundOn(on) {
  try {
    if (on !== undefined) localStorage.setItem(KEY, on ? "1" : "0");
    return localStorage.getItem(KEY) === "1";
  } catch {
    return !!on;
  }
}

function audio() {
  if (!allowed && !(navigator.userActivation && navigator.userActivation.hasBeenActive)) return null;
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return null;
  if (!context) context = new Context();
  if (context.state === "suspended") context.resume().catch(() => {});
  return context;
}

/** Play the sound ``name`` if sounds are on (``always``: even when off, e.g. a background tab's alert). */
export function sound(name, always = false) {
  const notes = SOUNDS[name];
  if (!notes || (!always && !soundOn())) return;
  let ctx;
  try {
    ctx = audio();
  } catch {
    return;
  }
  if (!ctx) return;
  const t0 = ctx.currentTime + 0.01;
  for (const [freq, start, length, wave, loud] of notes) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = wave;
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t0 + start);
    gain.gain.exponentialRampToValueAtTime(loud, t0 + start + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + start + length);
    osc.connect(gain).connect(ctx.destination);
    osc.start(t0 + start);
    osc.stop(t0 + start + length + 0.02);
  }
}

/** The sound of a move the server made (its text "src>dst[:n]"): onto a foundation, or any other. */
export function moveSound(move) {
  sound(/>f[shdc]?(?::|$)/.test(move || "") ? "foundation" : "move");
}

/** A second of the clock's last ten: one tick each (``left`` in ms; ``state`` keeps the last second ticked). */
export function lastSeconds(state, left, running) {
  const second = Math.ceil(left / 1000);
  if (!running || left <= 0 || second > 10) {
    state.second = null;
    return;
  }
  if (state.second !== second) {
    state.second = second;
    sound("tick");
  }
}
