// Playing cards drawn as SVG: suit symbols, faces and the back, all by this project (no images).
// A card face is a 100 × 140 drawing; it scales to any size without blurring.

const SVG_NS = "http://www.w3.org/2000/svg";

export const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };

// suit symbols in a 100 × 100 box
const SUIT_PATHS = {
  S: "M50 5C57 20 93 40 93 63C93 77 82 85 70 85C62 85 56 81 53 76C54 85 58 92 67 96H33C42 92 46 85 47 76C44 81 38 85 30 85C18 85 7 77 7 63C7 40 43 20 50 5Z",
  H: "M50 93C46 88 7 63 7 34C7 18 19 8 33 8C42 8 48 14 50 21C52 14 58 8 67 8C81 8 93 18 93 34C93 63 54 88 50 93Z",
  D: "M50 3C59 22 73 38 90 50C73 62 59 78 50 97C41 78 27 62 10 50C27 38 41 22 50 3Z",
  C: "M50 8a21 21 0 1 1 0 42a21 21 0 1 1 0-42ZM27 40a21 21 0 1 1 0 42a21 21 0 1 1 0-42ZM73 40a21 21 0 1 1 0 42a21 21 0 1 1 0-42ZM44 44H56V58C56 76 59 87 68 96H32C41 87 44 76 44 58Z",
};

// pip centres of the number cards (x, y, upside down)
const COLS = [34, 50, 66];
const PIPS = {
  2: [[1, 48, 0], [1, 120, 1]],
  3: [[1, 48, 0], [1, 84, 0], [1, 120, 1]],
  4: [[0, 48, 0], [2, 48, 0], [0, 120, 1], [2, 120, 1]],
  5: [[0, 48, 0], [2, 48, 0], [1, 84, 0], [0, 120, 1], [2, 120, 1]],
  6: [[0, 48, 0], [2, 48, 0], [0, 84, 0], [2, 84, 0], [0, 120, 1], [2, 120, 1]],
  7: [[0, 48, 0], [2, 48, 0], [1, 66, 0], [0, 84, 0], [2, 84, 0], [0, 120, 1], [2, 120, 1]],
  8: [[0, 48, 0], [2, 48, 0], [1, 66, 0], [0, 84, 0], [2, 84, 0], [1, 102, 1], [0, 120, 1], [2, 120, 1]],
  9: [[0, 48, 0], [2, 48, 0], [0, 72, 0], [2, 72, 0], [1, 84, 0], [0, 96, 1], [2, 96, 1], [0, 120, 1], [2, 120, 1]],
  10: [[0, 48, 0], [2, 48, 0], [1, 60, 0], [0, 72, 0], [2, 72, 0], [0, 96, 1], [2, 96, 1], [1, 108, 1],
    [0, 120, 1], [2, 120, 1]],
};

export function parseCard(text) {
  return { rank: text.slice(0, -1), suit: text.slice(-1) };
}

export function cardDisplay(text) {
  const { rank, suit } = parseCard(text);
  return rank + SUITS[suit];
}

export function isRed(text) {
  const suit = text.slice(-1);
  return suit === "H" || suit === "D";
}

/** The shared drawings (suits, back) once per page, referenced by every card. */
export function installDefs() {
  if (document.getElementById("card-defs")) return;
  const suits = Object.entries(SUIT_PATHS)
    .map(([s, d]) => `<symbol id="suit-${s}" viewBox="0 0 100 100"><path d="${d}" fill="currentColor"/></symbol>`)
    .join("");
  const defs = `
    <svg id="card-defs" xmlns="${SVG_NS}" width="0" height="0" style="position:absolute" aria-hidden="true">
      <defs>
        <pattern id="back-pattern" width="12" height="12" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <rect width="12" height="12" style="fill: var(--back-a, #1f4f8f)"/>
          <rect width="6" height="6" style="fill: var(--back-b, #2a63ad)"/>
          <rect x="6" y="6" width="6" height="6" style="fill: var(--back-b, #2a63ad)"/>
          <circle cx="6" cy="6" r="1.6" style="fill: var(--back-c, #9fc0ec)"/>
        </pattern>
        ${suits}
        <symbol id="card-back" viewBox="0 0 100 140">
          <rect x="0.5" y="0.5" width="99" height="139" rx="7" fill="#fdfdfb" stroke="#8c8c8c" stroke-width="0.8"/>
          <rect x="5" y="5" width="90" height="130" rx="4" fill="url(#back-pattern)"/>
          <rect x="5" y="5" width="90" height="130" rx="4" fill="none" style="stroke: var(--back-d, #163a6b)" stroke-width="1.5"/>
          <rect x="30" y="52" width="40" height="36" rx="6" style="fill: var(--back-d, #163a6b); stroke: var(--back-c, #9fc0ec)" stroke-width="1.5"/>
          <use href="#suit-S" x="34" y="55" width="15" height="15" color="#dfe9f7"/>
          <use href="#suit-H" x="51" y="55" width="15" height="15" color="#f3b0b0"/>
          <use href="#suit-D" x="34" y="71" width="15" height="15" color="#f3b0b0"/>
          <use href="#suit-C" x="51" y="71" width="15" height="15" color="#dfe9f7"/>
        </symbol>
      </defs>
    </svg>`;
  document.body.insertAdjacentHTML("afterbegin", defs);
}

function pip(suit, x, y, size, flip) {
  const h = size;
  const t = flip ? ` transform="rotate(180 ${x} ${y})"` : "";
  return `<use href="#suit-${suit}" x="${x - h / 2}" y="${y - h / 2}" width="${h}" height="${h}"${t}/>`;
}

// The court cards' figures, drawn for this project: a bust (King with crown and beard, Queen with
// tiara and long hair, Jack with a feathered cap) in the suit's colour, twice, head to head as on a
// real card, in a 63 × 96 frame. Each a few hundred bytes of SVG.
const SKIN = "#f4d3b4";
const HAIR = "#6b4423";
const GOLD = "#d9a520";
const HAT = {
  K: `<path d="M46 44 47 33 51.5 39 55.5 31 59.5 39 64 33 65 44Z" fill="${GOLD}" stroke="#7a5a0c" stroke-width="1"/>` +
    `<path d="M48 53Q55.5 68 63 53Q55.5 59 48 53Z" fill="${HAIR}"/>`,
  Q: `<path d="M45.5 53Q43 38 55.5 38Q68 38 65.5 53L67 63 61.5 60V50Q55.5 44 49.5 50V60L44 63Z" fill="${HAIR}"/>` +
    `<path d="M47.5 43Q55.5 35 63.5 43Z" fill="${GOLD}" stroke="#7a5a0c" stroke-width="1"/>` +
    `<circle cx="55.5" cy="37" r="1.8" fill="#e8f4ff" stroke="#7a5a0c" stroke-width=".6"/>`,
  J: `<path d="M46 46Q46 35 56 35Q66 36 65.5 46Z" fill="ROBE"/>` +
    `<path d="M45 46H66" stroke="${GOLD}" stroke-width="2.4"/>` +
    `<path d="M63 37Q73 28 72 42" fill="none" stroke="${GOLD}" stroke-width="2"/>` +
    `<path d="M47 47Q46 55 49 57M64 47Q65 55 62 57" fill="none" stroke="${HAIR}" stroke-width="2"/>`,
};

function courtHalf(rank, suit, robe) {
  return `<path d="M29 86V75Q31 64 44 62H67Q80 64 82 75V86Z" fill="${robe}"/>` +
    `<path d="M44 62 55.5 75 67 62" fill="none" stroke="${GOLD}" stroke-width="2.4"/>` +
    `<path d="M29 79H82" stroke="${GOLD}" stroke-width="1.6"/>` +
    `<rect x="52.5" y="56" width="6" height="7" fill="${SKIN}"/>` +
    `<circle cx="55.5" cy="50" r="8" fill="${SKIN}" stroke="#9b7455" stroke-width=".6"/>` +
    `<circle cx="52.6" cy="49" r=".95" fill="#222"/><circle cx="58.4" cy="49" r=".95" fill="#222"/>` +
    `<path d="M53.3 53.6Q55.5 55.2 57.7 53.6" fill="none" stroke="#a0523d" stroke-width=".9"/>` +
    HAT[rank].replace("ROBE", robe) +
    `<use href="#suit-${suit}" x="33" y="66" width="10" height="10" color="#fff"/>`;
}

function courtFigure(rank, suit, red) {
  const robe = red ? "#c8102e" : "#1d3f73";
  const tint = red ? "#fdebe8" : "#e9eef3";
  const half = courtHalf(rank, suit, robe);
  return `<rect x="24" y="36" width="63" height="96" rx="5" fill="${tint}" stroke="currentColor" stroke-width="1.3"/>` +
    `<g transform="translate(55.5 84) scale(.9) translate(-55.5 -84)">${half}</g>` +
    `<g transform="rotate(180 55.5 84) translate(55.5 84) scale(.9) translate(-55.5 -84)">${half}</g>` +
    `<path d="M24 84H87" stroke="currentColor" stroke-width="1"/>`;
}

const faceCache = new Map();

/** The SVG markup of a card's face, e.g. faceSvg("QH"). */
export function faceSvg(text) {
  let svg = faceCache.get(text);
  if (svg) return svg;
  const { rank, suit } = parseCard(text);
  const red = suit === "H" || suit === "D";
  const parts = [
    `<rect x="0.5" y="0.5" width="99" height="139" rx="7" fill="#fffefa" stroke="#8c8c8c" stroke-width="0.8"/>`,
    // the index: rank and suit across the top (seen when cards overlap downwards) and rank over
    // suit down the left edge (seen when they overlap sideways, as in the fan)
    `<text x="5" y="29" class="rank${rank === "10" ? " ten" : ""}">${rank}</text>`,
    pip(suit, 82, 17, 25, false),
    pip(suit, 12.5, 41, 15, false),
  ];
  if (PIPS[rank]) {
    for (const [col, y, flip] of PIPS[rank]) parts.push(pip(suit, COLS[col], y, 19, flip));
  } else if (rank === "A") {
    parts.push(pip(suit, 50, 86, 54, false));
  } else {
    parts.push(courtFigure(rank, suit, red));
  }
  svg = `<svg viewBox="0 0 100 140" xmlns="${SVG_NS}" focusable="false" aria-hidden="true">${parts.join("")}</svg>`;
  faceCache.set(text, svg);
  return svg;
}

export const BACK_SVG =
  `<svg viewBox="0 0 100 140" xmlns="${SVG_NS}" focusable="false" aria-hidden="true"><use href="#card-back"/></svg>`;
