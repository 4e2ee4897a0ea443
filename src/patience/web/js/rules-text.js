// The rules as a player reads them, per game and variant, in the three languages: texts only, written
// from RULES.md (its Decisions included). Nothing here is checked by the browser; the server keeps the rules.

const EN_CARPET = [
  "The only move: a carpet card that is the next card of its suit's foundation (same suit, one rank higher) " +
  "goes onto it.",
  "Its gap is filled at once with the stock's top card; once the stock is empty, gaps stay empty. " +
  "Cards never go onto each other.",
  "Won when every foundation reaches its King; over when no carpet card can move.",
  "Score: the cards on the foundations (4 to 52). Undo as often as you like; no time limit.",
];
const EN_CARPET_WASTE = [
  "An ace starts its suit's foundation as soon as it can be played; each foundation then builds up by suit " +
  "to the King.",
  "Click the stock to turn its top card onto the waste; the stock is gone through once only (no redeal).",
  "A carpet card or the waste's top card goes onto its foundation when it is the next one. " +
  "Cards never go onto each other.",
  "A gap in the carpet is filled at once with the waste's top card, or with the stock's when the waste is empty.",
  "Won when every foundation reaches its King; over when no move is left. " +
  "Score: the cards on the foundations (0 to 52). Undo as often as you like; no time limit.",
];
const EN_RELOADED = [
  "Klondike: 7 piles of 1 to 7 cards, the top card of each face up; the other 24 cards are the stock.",
  "Click the stock to turn one card onto the waste; only the waste's top card plays. An empty stock takes the " +
  "waste back, as often as you like (−10 each time).",
  "Piles build down in alternating colours; a face-up run moves as one; only a King (or a run from a King) fills " +
  "an empty pile. A face-down card left on top turns up at once.",
  "Foundations build up by suit from Ace to King. A card may come back from a foundation to a pile (−15).",
  "Points: +5 a card turned up; +10 × its value a card onto a foundation, once per card (played up again it " +
  "earns nothing); +5 × its value a card from the waste onto a pile; solved: 2500 + 7000 ÷ moves made.",
  "−2 for every full 10 s of play (the clock runs from the deal); the score never goes below 0.",
  "Undo: each move adds one, up to 3 in store; each undo uses one and costs −1, and the undone move's points " +
  "are taken back.",
];
const EN_RELOADED_END = "The game ends when it is solved, when no move is left, when the time is up or when you give up.";
const EN_FAN = [
  "Ranks run 2, 3 … 10, Jack, Queen, King, Ace. The four 2s start the foundations, which build up by suit " +
  "to the Ace.",
  "9 cards lie face up in the fan, each playable; 4 reserve piles hold one card each; the other 35 cards are " +
  "the talon.",
  "A fan card goes to a foundation or a reserve pile, never back; its place is not refilled.",
  "Reserve piles build down by suit (a King goes on an Ace); only the top card moves, or a whole pile that fits " +
  "a foundation. An empty reserve pile takes any card.",
  "Click the talon to turn one card onto the waste; the waste's top card goes to a foundation or a reserve pile. " +
  "The talon may be gone through twice (one redeal).",
  "Points: a pool of 1500 drains evenly to 0 over the 10 minutes, and what is left is added at the end; +150 a " +
  "card onto a foundation (+75 from a reserve pile); +300 the fan emptied; +500 solved.",
];
const EN_FAN_ONE_PASS = [...EN_FAN.slice(0, 4), "Click the talon to turn one card onto the waste; the waste's top " +
  "card goes to a foundation or a reserve pile. The talon is gone through once only: no redeal.", ...EN_FAN.slice(5)];
const EN_FAN_END = "Over when solved, when the 10 minutes are up or when no move is left.";

const DE_CARPET = [
  "Einziger Zug: Eine Teppichkarte, die auf der Ablage ihrer Farbe als nächste dran ist (gleiche Farbe, " +
  "einen Wert höher), kommt dorthin.",
  "Ihre Lücke wird sofort mit der obersten Talonkarte gefüllt; ist der Talon leer, bleiben Lücken frei. " +
  "Karten werden nie aufeinandergelegt.",
  "Gewonnen, wenn jede Ablage bis zum König reicht; vorbei, wenn keine Teppichkarte mehr passt.",
  "Punkte: die Karten auf den Ablagen (4 bis 52). Zurücknehmen beliebig oft; kein Zeitlimit.",
];
const DE_CARPET_WASTE = [
  "Ein Ass beginnt die Ablage seiner Farbe, sobald es spielbar ist; jede Ablage steigt dann farbgleich " +
  "bis zum König.",
  "Ein Klick auf den Talon legt seine oberste Karte auf den Abwurf; der Talon wird nur einmal durchgespielt.",
  "Eine Teppichkarte oder die oberste Abwurfkarte kommt auf ihre Ablage, wenn sie die nächste ist. " +
  "Karten werden nie aufeinandergelegt.",
  "Eine Lücke im Teppich wird sofort mit der obersten Abwurfkarte gefüllt, bei leerem Abwurf mit der obersten " +
  "Talonkarte.",
  "Gewonnen, wenn jede Ablage bis zum König reicht; vorbei, wenn kein Zug mehr geht. " +
  "Punkte: die Karten auf den Ablagen (0 bis 52). Zurücknehmen beliebig oft; kein Zeitlimit.",
];
const DE_RELOADED = [
  "Klondike: 7 Reihen mit 1 bis 7 Karten, jeweils die oberste offen; die übrigen 24 Karten bilden den Talon.",
  "Ein Klick auf den Talon legt eine Karte auf den Abwurf; nur die oberste Abwurfkarte ist spielbar. Ist der " +
  "Talon leer, wird der Abwurf wieder zum Talon, so oft du willst (jedes Mal −10).",
  "In den Reihen abwärts, abwechselnd rot und schwarz; eine offene Folge wird als Ganzes verschoben; auf eine leere Reihe nur ein " +
  "König (oder eine Folge ab einem König). Eine verdeckte Karte, die oben liegt, wird sofort aufgedeckt.",
  "Die Ablagen steigen nach Farbe vom Ass bis zum König. Eine Karte darf von der Ablage zurück in eine Reihe (−15).",
  "Punkte: +5 je aufgedeckte Karte; +10 × Kartenwert für eine Karte auf die Ablage, einmal pro Karte (erneut " +
  "hochgelegt bringt sie nichts); +5 × Kartenwert vom Abwurf in eine Reihe; gelöst: 2500 + 7000 ÷ gemachte Züge.",
  "−2 für jede volle 10 s Spielzeit (die Uhr läuft ab dem Austeilen); der Punktestand fällt nie unter 0.",
  "Zurücknehmen: Jeder Zug gibt eine Rücknahme dazu, höchstens 3 auf Vorrat; jede verbraucht eine und kostet −1, " +
  "die Punkte des zurückgenommenen Zugs werden zurückgebucht.",
];
const DE_RELOADED_END = "Das Spiel endet, wenn es gelöst ist, kein Zug mehr geht, die Zeit um ist oder du aufgibst.";
const DE_FAN = [
  "Reihenfolge 2, 3 … 10, Bube, Dame, König, Ass. Die vier Zweier beginnen die Ablagen, die farbgleich bis zum " +
  "Ass steigen.",
  "9 Karten liegen offen im Fächer, jede für sich spielbar; 4 Hilfsstapel mit je einer Karte; die übrigen " +
  "35 Karten bilden den Talon.",
  "Eine Fächerkarte geht auf eine Ablage oder einen Hilfsstapel, nie zurück; ihr Platz wird nicht nachgefüllt.",
  "Hilfsstapel farbgleich absteigend (ein König auf ein Ass); bewegt wird nur die oberste Karte oder ein ganzer Stapel, " +
  "der auf eine Ablage passt. Ein leerer Hilfsstapel nimmt jede Karte.",
  "Ein Klick auf den Talon legt eine Karte auf den Abwurf; dessen oberste Karte geht auf eine Ablage oder einen " +
  "Hilfsstapel. Der Talon darf zweimal durchgespielt werden.",
  "Punkte: Ein Pool von 1500 schmilzt in den 10 Minuten gleichmäßig auf 0, der Rest kommt am Ende dazu; +150 je " +
  "Karte auf eine Ablage (+75 von einem Hilfsstapel); +300 für den leeren Fächer; +500 fürs Lösen.",
];
const DE_FAN_ONE_PASS = [...DE_FAN.slice(0, 4), "Ein Klick auf den Talon legt eine Karte auf den Abwurf; dessen " +
  "oberste Karte geht auf eine Ablage oder einen Hilfsstapel. Der Talon wird nur einmal durchgespielt: kein Umdrehen.",
  ...DE_FAN.slice(5)];
const DE_FAN_END = "Vorbei, wenn das Spiel gelöst ist, die 10 Minuten um sind oder kein Zug mehr geht.";

const IT_CARPET = [
  "L'unica mossa: una carta del tappeto che è la successiva sulla base del suo seme (stesso seme, un valore " +
  "in più) va su quella base.",
  "Il vuoto si riempie subito con la carta in cima al mazzo; finito il mazzo, i vuoti restano. " +
  "Le carte non vanno mai una sull'altra.",
  "Si vince quando ogni base arriva al re; la partita finisce quando nessuna carta del tappeto può muoversi.",
  "Punti: le carte sulle basi (da 4 a 52). Si annulla quanto si vuole; nessun limite di tempo.",
];
const IT_CARPET_WASTE = [
  "Un asso apre la base del suo seme appena si può giocare; ogni base sale poi per seme fino al re.",
  "Un clic sul mazzo gira la carta in cima sugli scarti; il mazzo si scorre una volta sola.",
  "Una carta del tappeto o quella in cima agli scarti va sulla sua base quando è la successiva. " +
  "Le carte non vanno mai una sull'altra.",
  "Un vuoto nel tappeto si riempie subito con la carta in cima agli scarti, o con quella del mazzo se gli " +
  "scarti sono vuoti.",
  "Si vince quando ogni base arriva al re; si finisce quando non resta nessuna mossa. " +
  "Punti: le carte sulle basi (da 0 a 52). Si annulla quanto si vuole; nessun limite di tempo.",
];
const IT_RELOADED = [
  "Klondike: 7 colonne da 1 a 7 carte, l'ultima di ognuna scoperta; le altre 24 carte formano il mazzo.",
  "Un clic sul mazzo gira una carta sugli scarti; si gioca solo quella in cima. A mazzo vuoto gli scarti " +
  "tornano nel mazzo, quante volte si vuole (−10 ogni volta).",
  "Nelle colonne si scende a colori alterni; una sequenza scoperta si sposta intera; in una colonna vuota va solo " +
  "un re (o una sequenza che parte da un re). Una carta coperta rimasta in cima si scopre subito.",
  "Le basi salgono per seme dall'asso al re. Una carta può tornare da una base a una colonna (−15).",
  "Punti: +5 per ogni carta scoperta; +10 × il valore per una carta sulla base, una volta sola per carta " +
  "(rigiocata non dà nulla); +5 × il valore dagli scarti a una colonna; risolta: 2500 + 7000 ÷ le mosse fatte.",
  "−2 per ogni 10 s pieni di gioco (il tempo corre dalla distribuzione); il punteggio non scende mai sotto 0.",
  "Annullamenti: ogni mossa ne aggiunge uno, fino a 3 di scorta; ogni annullamento ne consuma uno e costa −1, e i punti " +
  "della mossa annullata vengono stornati.",
];
const IT_RELOADED_END = "La partita finisce quando è risolta, quando non ci sono più mosse, quando scade il tempo o " +
  "quando abbandoni.";
const IT_FAN = [
  "Ordine 2, 3 … 10, fante, donna, re, asso. I quattro 2 aprono le basi, che salgono per seme fino all'asso.",
  "9 carte scoperte nel ventaglio, ognuna giocabile; 4 riserve di una carta ciascuna; le altre 35 carte formano " +
  "il tallone.",
  "Una carta del ventaglio va su una base o su una riserva, mai indietro; il suo posto non si riempie.",
  "Le riserve scendono per seme (un re va su un asso); si sposta solo la carta in cima, o una riserva intera che " +
  "sale su una base. Una riserva vuota accetta qualsiasi carta.",
  "Un clic sul tallone gira una carta sugli scarti; quella in cima va su una base o su una riserva. " +
  "Il tallone si scorre due volte.",
  "Punti: un fondo di 1500 scende in modo uniforme a 0 nei 10 minuti e ciò che resta si aggiunge alla fine; " +
  "+150 per carta su una base (+75 da una riserva); +300 ventaglio svuotato; +500 risolta.",
];
const IT_FAN_ONE_PASS = [...IT_FAN.slice(0, 4), "Un clic sul tallone gira una carta sugli scarti; quella in cima va " +
  "su una base o su una riserva. Il tallone si scorre una volta sola: nessuna ridistribuzione.", ...IT_FAN.slice(5)];
const IT_FAN_END = "Finisce quando è risolta, quando scadono i 10 minuti o quando non ci sono più mosse.";

export const RULES_TEXT = {
  en: {
    rules_title: "Rules", rules_of: "Rules: {game}",
    rules_text: {
      teppich: {
        "4x5": ["The four aces start the foundations; the other 48 cards are shuffled.",
          "20 cards lie face up as a carpet of 4 rows × 5 columns; the other 28 are the stock, face down.",
          ...EN_CARPET],
        "5x6": ["The four aces start the foundations; the other 48 cards are shuffled.",
          "30 cards lie face up as a carpet of 5 rows × 6 columns; the other 18 are the stock, face down.",
          ...EN_CARPET],
        waste: ["All 52 cards are shuffled, the aces too: 20 lie face up as a carpet of 4 × 5, the other 32 are " +
          "the stock. The foundations start empty.", ...EN_CARPET_WASTE],
        "5x6-waste": ["All 52 cards are shuffled, the aces too: 30 lie face up as a carpet of 5 × 6, the other 22 " +
          "are the stock. The foundations start empty.", ...EN_CARPET_WASTE],
      },
      reloaded: {
        "5min": [...EN_RELOADED, `Time limit: 5 minutes. ${EN_RELOADED_END}`],
        "10min": [...EN_RELOADED, `Time limit: 10 minutes. ${EN_RELOADED_END}`],
        untimed: [...EN_RELOADED, `No time limit. ${EN_RELOADED_END}`],
      },
      faecher: {
        standard: [...EN_FAN, "Pick a card, then its target: a wrong click costs −50. No undo.", EN_FAN_END],
        "with-undo": [...EN_FAN, "Pick a card, then its target: a wrong click costs −50.",
          "Undo: each move adds one, up to 3 in store; each undo uses one.", EN_FAN_END],
        "one-pass": [...EN_FAN_ONE_PASS, "Pick a card, then its target: a wrong click costs −50. No undo.", EN_FAN_END],
      },
    },
  },
  de: {
    rules_title: "Regeln", rules_of: "Regeln: {game}",
    rules_text: {
      teppich: {
        "4x5": ["Die vier Asse bilden die Ablagen; die übrigen 48 Karten werden gemischt.",
          "20 Karten liegen offen als Teppich aus 4 Reihen × 5 Spalten, die übrigen 28 verdeckt als Talon.",
          ...DE_CARPET],
        "5x6": ["Die vier Asse bilden die Ablagen; die übrigen 48 Karten werden gemischt.",
          "30 Karten liegen offen als Teppich aus 5 Reihen × 6 Spalten, die übrigen 18 verdeckt als Talon.",
          ...DE_CARPET],
        waste: ["Alle 52 Karten werden gemischt, auch die Asse: 20 liegen offen als Teppich aus 4 × 5, die übrigen " +
          "32 bilden den Talon. Die Ablagen sind anfangs leer.", ...DE_CARPET_WASTE],
        "5x6-waste": ["Alle 52 Karten werden gemischt, auch die Asse: 30 liegen offen als Teppich aus 5 × 6, die " +
          "übrigen 22 bilden den Talon. Die Ablagen sind anfangs leer.", ...DE_CARPET_WASTE],
      },
      reloaded: {
        "5min": [...DE_RELOADED, `Zeitlimit: 5 Minuten. ${DE_RELOADED_END}`],
        "10min": [...DE_RELOADED, `Zeitlimit: 10 Minuten. ${DE_RELOADED_END}`],
        untimed: [...DE_RELOADED, `Kein Zeitlimit. ${DE_RELOADED_END}`],
      },
      faecher: {
        standard: [...DE_FAN, "Erst die Karte wählen, dann ihr Ziel: Ein falscher Klick kostet −50. " +
          "Zurücknehmen gibt es nicht.", DE_FAN_END],
        "with-undo": [...DE_FAN, "Erst die Karte wählen, dann ihr Ziel: Ein falscher Klick kostet −50.",
          "Zurücknehmen: Jeder Zug gibt eine Rücknahme dazu, höchstens 3 auf Vorrat; jede verbraucht eine.",
          DE_FAN_END],
        "one-pass": [...DE_FAN_ONE_PASS, "Erst die Karte wählen, dann ihr Ziel: Ein falscher Klick kostet −50. " +
          "Zurücknehmen gibt es nicht.", DE_FAN_END],
      },
    },
  },
  it: {
    rules_title: "Regole", rules_of: "Regole: {game}",
    rules_text: {
      teppich: {
        "4x5": ["I quattro assi aprono le basi; le altre 48 carte si mescolano.",
          "20 carte scoperte formano un tappeto di 4 righe × 5 colonne, le altre 28 restano coperte nel mazzo.",
          ...IT_CARPET],
        "5x6": ["I quattro assi aprono le basi; le altre 48 carte si mescolano.",
          "30 carte scoperte formano un tappeto di 5 righe × 6 colonne, le altre 18 restano coperte nel mazzo.",
          ...IT_CARPET],
        waste: ["Si mescolano tutte le 52 carte, assi compresi: 20 scoperte formano un tappeto di 4 × 5, le altre " +
          "32 il mazzo. All'inizio le basi sono vuote.", ...IT_CARPET_WASTE],
        "5x6-waste": ["Si mescolano tutte le 52 carte, assi compresi: 30 scoperte formano un tappeto di 5 × 6, le " +
          "altre 22 il mazzo. All'inizio le basi sono vuote.", ...IT_CARPET_WASTE],
      },
      reloaded: {
        "5min": [...IT_RELOADED, `Tempo: 5 minuti. ${IT_RELOADED_END}`],
        "10min": [...IT_RELOADED, `Tempo: 10 minuti. ${IT_RELOADED_END}`],
        untimed: [...IT_RELOADED, `Nessun limite di tempo. ${IT_RELOADED_END}`],
      },
      faecher: {
        standard: [...IT_FAN, "Scegli una carta, poi la destinazione: un clic sbagliato costa −50. " +
          "Non si annulla.", IT_FAN_END],
        "with-undo": [...IT_FAN, "Scegli una carta, poi la destinazione: un clic sbagliato costa −50.",
          "Annullamenti: ogni mossa ne aggiunge uno, fino a 3 di scorta; ogni annullamento ne consuma uno.", IT_FAN_END],
        "one-pass": [...IT_FAN_ONE_PASS, "Scegli una carta, poi la destinazione: un clic sbagliato costa −50. " +
          "Non si annulla.", IT_FAN_END],
      },
    },
  },
};
