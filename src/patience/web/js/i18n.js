// The words of the app in German, English and Italian; the browser's language by default.

import { ANALYSIS_TEXT } from "./analysis-text.js";
import { ARENA_TEXT } from "./arena-text.js";
import { RULES_TEXT } from "./rules-text.js";
import { TOUR_TEXT } from "./tour-text.js";

export const LANGS = { de: "Deutsch", en: "English", it: "Italiano" };
const KEY = "patience.lang";

const TEXT = {
  en: {
    tagline: "Three patience games with exact rules and honest scores.",
    play: "Play", continue: "Continue", variant: "Variant", game_no: "Game no.", random: "random",
    stats_title: "Your statistics", played: "Played", won: "Won", win_pct: "Win rate", best: "Best", streak: "Streak",
    best_streak: "Best streak", no_stats: "No games yet", won_hinted: "Won with hints",
    stats_of: "Your statistics: {variant}", custom_options: "Other options", unfinished: "Game in progress",
    unfinished_line: "{game} · game {seed} · {moves}", n_moves: { one: "1 move", many: "{n} moves" }, rules: "Rules",
    score: "Score", time: "Time", time_left: "Time left", pool: "Pool", moves: "Moves",
    undo: "Undo", undos_left: "{n} left", undos_of: "({n} of {max})",
    undo_store: "Undo: {n} in store; each move adds one, up to {max}", hint: "Hint", new_game: "New game", restart: "Same deal",
    give_up: "Give up", menu: "Menu", home: "All games", share: "Share link", copy: "Copy", copied: "Link copied",
    ledger: "Score ledger", ledger_empty: "No points yet.", close: "Close", go: "Go", language: "Language",
    clock_note: "The clock runs from the deal, not from the first move.",
    lost: { title: "Page not found", page: "There is no page at this address.", home: "All games",
      game: "There is no game called “{game}”. Choose one of the three games.",
      match: "There is no match number {id}: it may never have been played.", matches: "All matches",
      options: "This address asks for game settings that do not exist: no game can be dealt this way.",
      duel: "There is no such duel: the link may be wrong or the duel is over.",
      tournament: "There is no such tournament.", leaderboard: "There is no leaderboard for “{game}”.",
      day: "There is no deal of the day for {day}." },
    once: { done: "Your attempt at today's deal of the day is done: one attempt a day.",
      going: "Your attempt at today's deal of the day goes on: go on with it from the day's page.",
      today: "The deal of the day is played from its page, one attempt a day.",
      past: "The deal of the day of {day} is over: its key and the best games are on its page.",
      to_day: "To the deal of the day", now: "A game of Play now is played once: its result is among your games.",
      to_now: "Your games" },
    floor_note: "{from} → {to}: the score never goes below 0, so a charge takes only the points there are.",
    four_colour: "Four-colour suits",
    auto_move: "Auto-move safe cards", card_back: "Card back", back: { blue: "Blue", red: "Red", green: "Green" },
    winnable_only: "Winnable deals only", table: "Card table",
    settings: { title: "Settings", sound: "Sounds", theme: "Theme", theme_system: "Like the system", theme_light: "Light",
      theme_dark: "Dark", felt: "Table colour", felt_green: "Green", felt_blue: "Blue", felt_red: "Red", felt_grey: "Grey",
      cards: "Card size", cards_small: "Small", cards_normal: "Normal", cards_large: "Large",
      hand: "Stock and waste", hand_right: "Left (right-handed)", hand_left: "Right (left-handed)" },
    offline: { title: "You are offline", retry: "Try again",
      text: "There is no connection to Patience Arena. The games are played on the server, so they wait until it is back.",
      gone: "Patience Arena does not answer: this page asks again by itself.",
      failed: "Patience Arena did not answer: try again in a moment." },
    odds_one_in: "Won with perfect play: about 1 deal in {n}", odds_percent: "Won with perfect play: about {p} % of deals",
    odds_luck: "pure luck, no play changes the result", odds_title: "A solver that sees every card, over {deals} deals",
    play_again: "Play again", same_deal: "Same deal again", look: "Look at the table",
    final_score: "Final score", breakdown: "Where the points came from", your_stats: "Statistics: {game}",
    confirm_new: "Start a new game? The one in progress counts as given up.",
    confirm_giveup: "Give up this game?", yes: "Yes", no: "No", cancel: "Cancel",
    reconnecting: "Connection lost — reconnecting…", no_hint: "No useful move left.", hints_off: "Hints are off in the deal of the day.",
    server_error: "The server could not do that.",
    game_moved: "This game goes on in another window: reload the page to play it here.",
    too_many_games: "Too many new games from your network: wait a minute, then deal again.",
    hint_is: "Hint: {move}", stock_draw: "Draw a card", stock_redeal: "Turn the waste over", stock_none: "Stock used up",
    cards_left: "{n} cards", cards_left_one: "1 card", passes_left: "{n} redeals left",
    passes_left_one: "1 redeal left", empty: "empty", selected: "selected",
    face_down: "face-down card", downs_then_one: "1 face-down card, then {card}",
    downs_then: "{n} face-down cards, then {card}", turned_up: "Turned up: {cards}", moved: "{card} to {pile}", illegal: "Not allowed", penalty: "Wrong click: {points}",
    keys_help: "Keys: Tab to a card, Enter to pick it and Enter on a target; F sends it to its foundation, " +
      "U undoes, H hints, D draws, R shows the rules.",
    rank: { A: "Ace", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine",
      10: "Ten", J: "Jack", Q: "Queen", K: "King" },
    suit: { S: "spades", H: "hearts", D: "diamonds", C: "clubs" },
    card_name: "{rank} of {suit}",
    pile: { f: "Foundation {suit}", t: "Pile {n}", s: "Stock", s_faecher: "Talon", w: "Waste", c: "Carpet place {n}",
      v: "Fan card {n}", r: "Reserve pile {n}", f_any: "Foundation" },
    outcome: { won: "Won!", no_moves: "No move left", time_out: "Time is up", given_up: "Given up" },
    kind: { foundation: "Cards to the foundations", reveal: "Cards turned up", waste_to_tableau: "Waste to tableau",
      from_foundation: "Back from the foundations", redeal: "Stock turned again", time: "Time", undo: "Undos",
      take_back: "Points taken back", illegal: "Wrong moves", fan_emptied: "Fan emptied", solved: "Solved bonus",
      pool: "Pool left", start: "Aces at the start", floor: "Floor at 0" },
    variants: {
      teppich: { "4x5": "4 × 5 carpet", "5x6": "5 × 6 carpet", waste: "With waste pile",
        "5x6-waste": "5 × 6 with waste pile" },
      reloaded: { "5min": "5 minutes", "10min": "10 minutes", untimed: "No time limit" },
      faecher: { standard: "Standard", "with-undo": "With undo (up to 3)", "one-pass": "One pass" },
    },
    why: {
      alt_colour: "{card} cannot go on {top}: colours must alternate",
      down_rank: "{card} cannot go on {top}: build down one rank at a time",
      reserve_suit: "{card} cannot go on {top}: reserve piles build in suit",
      reserve_rank: "{card} cannot go on {top}: reserve piles build down one rank at a time",
      king_only: "Only a King may fill an empty pile, not {card}",
      found_suit: "{card} goes only on the {suit} foundation",
      found_complete: "The {suit} foundation is complete",
      found_start: "{card} cannot start a foundation: it starts with {need}",
      found_next: "{card} cannot go on the foundation yet: {need} comes next",
      stock_empty_redeal: "The stock is empty: click it to turn the waste over",
      stock_empty: "The stock is empty", stock_not_empty: "The stock is not empty yet",
      waste_empty_turn: "The waste is empty: nothing to turn over",
      passes: "The stock may be gone through {n} times only",
      own_pile: "A card cannot move onto its own pile",
      fan_empty: "This fan place is empty (used places are not refilled)",
      reserve_empty: "This reserve pile is empty",
      reserve_top_only: "Only a reserve pile's top card moves to another reserve pile",
      reserve_whole: { one: "A reserve pile goes to the foundation whole (1 card) or by its top card",
        many: "A reserve pile goes to the foundation whole ({n} cards) or by its top card" },
      waste_empty: "The waste is empty", draw_first: "Stock cards are turned onto the waste first",
      never_leave_foundation: "Cards never leave the foundations here",
      one_at_a_time: "Cards move one at a time here", never_to_fan: "Cards never go back to the fan",
      not_on_stock: "No card may be put on the stock or the waste",
      carpet_only_foundation: "Cards go only to the foundations, never onto each other",
      carpet_no_draw: "The stock only fills carpet gaps in this game", carpet_empty: "This carpet place is empty",
      pile_empty: "This pile is empty", face_up_count: "Only face-up cards can move",
      waste_top_only: "Only the waste's top card can move", foundation_empty: "This foundation is empty",
      foundation_top_only: "Only a foundation's top card can move",
      foundation_to_tableau: "A card from a foundation may only go back to the tableau",
      no_undo_game: "This game has no undo", no_undo_move: "There is no move to undo",
      undo_row: "No undo in store (each move adds one, up to {n}): make a move first", game_over: "The game is over",
      no_winnable: "No winnable deals are known yet for {variant}",
      stale: "{card} was not moved: the table had changed in another window. Nothing was charged.",
      stale_any: "The table had changed in another window: nothing was done, and nothing was charged.",
      l_start: "{n} aces start the foundations", l_foundation: "{card} onto its foundation",
      l_foundation_x: "{card} onto a foundation ({a} × {b})",
      l_foundation_reserve: "{card} from a reserve pile onto a foundation", l_reveal: "{card} turned face up",
      l_waste_tableau: "{card} from the waste onto the tableau ({a} × {b})",
      l_from_foundation: "{card} back from a foundation", l_redeal: "Stock turned over again",
      l_time: "{s} s of play", l_take_back: "Points of {move} taken back", l_undo: "Undo of {move}",
      l_illegal: "Wrong move {move}: {reason}", l_fan_emptied: "Fan emptied",
      l_solved_steps: "Solved in {steps} moves: {a} + {b} / {steps}", l_solved: "Solved",
      l_pool: "What is left of the pool after {s} s", l_floor: "The score never ends below 0",
    },
  },
  de: {
    tagline: "Drei Patiencen mit genauen Regeln und ehrlichen Punkten.",
    play: "Spielen", continue: "Weiterspielen", variant: "Variante", game_no: "Spiel-Nr.", random: "zufällig",
    stats_title: "Deine Statistik", played: "Gespielt", won: "Gewonnen", win_pct: "Gewinnquote", best: "Bestwert",
    streak: "Serie", best_streak: "Beste Serie", no_stats: "Noch keine Spiele", won_hinted: "Mit Tipps gewonnen",
    stats_of: "Deine Statistik: {variant}", custom_options: "Andere Einstellungen", unfinished: "Laufendes Spiel",
    unfinished_line: "{game} · Spiel {seed} · {moves}", n_moves: { one: "1 Zug", many: "{n} Züge" }, rules: "Regeln",
    score: "Punkte", time: "Zeit", time_left: "Restzeit", pool: "Pool", moves: "Züge",
    undo: "Zurücknehmen", undos_left: "noch {n}", undos_of: "({n} von {max})",
    undo_store: "Zurücknehmen: {n} auf Vorrat; jeder Zug gibt eine dazu, höchstens {max}", hint: "Tipp", new_game: "Neues Spiel", restart: "Gleiches Spiel",
    give_up: "Aufgeben", menu: "Menü", home: "Alle Spiele", share: "Link teilen", copy: "Kopieren",
    copied: "Link kopiert", ledger: "Punkteliste", ledger_empty: "Noch keine Punkte.", close: "Schließen",
    clock_note: "Die Uhr läuft ab dem Austeilen, nicht erst ab dem ersten Zug.",
    lost: { title: "Seite nicht gefunden", page: "Unter dieser Adresse gibt es keine Seite.", home: "Alle Spiele",
      game: "Ein Spiel namens „{game}“ gibt es nicht. Wähle eines der drei Spiele.",
      match: "Eine Partie mit der Nummer {id} gibt es nicht.", matches: "Alle Partien",
      options: "Diese Adresse verlangt Einstellungen, die es nicht gibt: so lässt sich kein Spiel austeilen.",
      duel: "Dieses Duell gibt es nicht: der Link ist falsch oder das Duell ist vorbei.",
      tournament: "Dieses Turnier gibt es nicht.", leaderboard: "Für „{game}“ gibt es keine Rangliste.",
      day: "Für den {day} gibt es kein Spiel des Tages." },
    once: { done: "Dein Versuch am heutigen Spiel des Tages ist beendet: ein Versuch am Tag.",
      going: "Dein Versuch am heutigen Spiel des Tages läuft: spiel ihn von der Seite des Tages aus weiter.",
      today: "Das Spiel des Tages wird von seiner Seite aus gespielt, ein Versuch am Tag.",
      past: "Das Spiel des Tages vom {day} ist vorbei: sein Schlüssel und die besten Spiele stehen auf seiner Seite.",
      to_day: "Zum Spiel des Tages", now: "Ein Spiel von „Jetzt spielen“ wird einmal gespielt: sein Ergebnis steht bei deinen Spielen.",
      to_now: "Deine Spiele" },
    floor_note: "{from} → {to}: Der Punktestand fällt nie unter 0, ein Abzug nimmt also nur die Punkte, die da sind.",
    go: "Los", language: "Sprache", four_colour: "Vierfarbiges Blatt",
    auto_move: "Automatisch ablegen", card_back: "Kartenrücken",
    back: { blue: "Blau", red: "Rot", green: "Grün" }, table: "Spieltisch",
    winnable_only: "Nur lösbare Spiele",
    settings: { title: "Einstellungen", sound: "Töne", theme: "Darstellung", theme_system: "Wie das System",
      theme_light: "Hell", theme_dark: "Dunkel", felt: "Tischfarbe", felt_green: "Grün", felt_blue: "Blau", felt_red: "Rot",
      felt_grey: "Grau", cards: "Kartengröße", cards_small: "Klein", cards_normal: "Normal", cards_large: "Groß",
      hand: "Talon und Ablage", hand_right: "Links (Rechtshänder)", hand_left: "Rechts (Linkshänder)" },
    offline: { title: "Keine Verbindung", retry: "Noch einmal versuchen",
      text: "Patience Arena ist gerade nicht erreichbar. Gespielt wird auf dem Server: Die Spiele warten, bis er wieder da ist.",
      gone: "Patience Arena antwortet nicht: die Seite fragt von selbst wieder nach.",
      failed: "Patience Arena hat nicht geantwortet: versuche es gleich noch einmal." },
    odds_one_in: "Mit bester Spielweise gewonnen: etwa 1 von {n} Spielen",
    odds_percent: "Mit bester Spielweise gewonnen: etwa {p} % der Spiele",
    odds_luck: "reines Glück, kein Zug ändert das Ergebnis",
    odds_title: "Ein Löser, der jede Karte sieht, über {deals} Spiele",
    play_again: "Noch einmal spielen", same_deal: "Dasselbe Spiel noch einmal", look: "Tisch ansehen",
    final_score: "Endstand", breakdown: "Woher die Punkte kommen", your_stats: "Statistik: {game}",
    confirm_new: "Neues Spiel beginnen? Das laufende zählt als aufgegeben.",
    confirm_giveup: "Dieses Spiel aufgeben?", yes: "Ja", no: "Nein", cancel: "Abbrechen",
    reconnecting: "Verbindung unterbrochen — wird wiederhergestellt …", no_hint: "Kein sinnvoller Zug mehr.", hints_off: "Beim Spiel des Tages gibt es keine Tipps.",
    server_error: "Das konnte der Server nicht ausführen.",
    game_moved: "Dieses Spiel geht in einem anderen Fenster weiter: lade die Seite neu, um es hier zu spielen.",
    too_many_games: "Zu viele neue Spiele aus deinem Netz: warte eine Minute und teile dann neu aus.",
    hint_is: "Tipp: {move}", stock_draw: "Karte ziehen", stock_redeal: "Abwurf umdrehen",
    stock_none: "Talon aufgebraucht", cards_left: "{n} Karten", cards_left_one: "1 Karte",
    passes_left: "noch {n}× umdrehen", passes_left_one: "noch 1× umdrehen", empty: "leer",
    selected: "ausgewählt", face_down: "verdeckte Karte", downs_then_one: "1 verdeckte Karte, darauf {card}",
    downs_then: "{n} verdeckte Karten, darauf {card}", turned_up: "Aufgedeckt: {cards}", moved: "{card} auf {pile}", illegal: "Nicht erlaubt",
    penalty: "Falscher Klick: {points}",
    keys_help: "Tasten: mit Tab zur Karte, Enter wählt sie, Enter auf dem Ziel legt sie; F schickt sie auf die " +
      "Ablage, U nimmt zurück, H gibt einen Tipp, D zieht, R zeigt die Regeln.",
    rank: { A: "Ass", 2: "Zwei", 3: "Drei", 4: "Vier", 5: "Fünf", 6: "Sechs", 7: "Sieben", 8: "Acht", 9: "Neun",
      10: "Zehn", J: "Bube", Q: "Dame", K: "König" },
    suit: { S: "Pik", H: "Herz", D: "Karo", C: "Kreuz" },
    card_name: "{suit} {rank}",
    pile: { f: "Ablage {suit}", t: "Reihe {n}", s: "Talon", s_faecher: "Talon", w: "Abwurf", c: "Teppichfeld {n}",
      v: "Fächerkarte {n}", r: "Hilfsstapel {n}", f_any: "Ablage" },
    outcome: { won: "Gewonnen!", no_moves: "Kein Zug mehr möglich", time_out: "Die Zeit ist um",
      given_up: "Aufgegeben" },
    kind: { foundation: "Karten auf die Ablagen", reveal: "Aufgedeckte Karten", waste_to_tableau: "Vom Abwurf in die Reihen",
      from_foundation: "Zurück von den Ablagen", redeal: "Talon umgedreht", time: "Zeit", undo: "Rücknahmen",
      take_back: "Zurückgenommene Punkte", illegal: "Falsche Züge", fan_emptied: "Fächer geleert",
      solved: "Bonus fürs Lösen", pool: "Restpool", start: "Asse zu Beginn", floor: "Untergrenze 0" },
    variants: {
      teppich: { "4x5": "Teppich 4 × 5", "5x6": "Teppich 5 × 6", waste: "Mit Abwurfstapel",
        "5x6-waste": "5 × 6 mit Abwurfstapel" },
      reloaded: { "5min": "5 Minuten", "10min": "10 Minuten", untimed: "Ohne Zeitlimit" },
      faecher: { standard: "Standard", "with-undo": "Mit Rücknahme (bis zu 3)", "one-pass": "Ein Durchgang" },
    },
    why: {
      alt_colour: "{card} passt nicht auf {top}: Rot und Schwarz müssen sich abwechseln",
      down_rank: "{card} passt nicht auf {top}: abwärts, immer um eins",
      reserve_suit: "{card} passt nicht auf {top}: Hilfsstapel nur in gleicher Farbe",
      reserve_rank: "{card} passt nicht auf {top}: Hilfsstapel absteigend um eins",
      king_only: "Nur ein König darf auf eine leere Reihe, nicht {card}",
      found_suit: "{card} gehört nur auf die {suit}-Ablage",
      found_complete: "Die {suit}-Ablage ist komplett",
      found_start: "{card} kann keine Ablage beginnen: sie beginnt mit {need}",
      found_next: "{card} passt noch nicht auf die Ablage: erst {need}",
      stock_empty_redeal: "Der Talon ist leer: anklicken, um den Abwurf umzudrehen",
      stock_empty: "Der Talon ist leer", stock_not_empty: "Der Talon ist noch nicht leer",
      waste_empty_turn: "Der Abwurf ist leer: nichts umzudrehen",
      passes: "Der Talon darf nur {n}-mal durchgespielt werden",
      own_pile: "Eine Karte kann nicht auf ihren eigenen Stapel",
      fan_empty: "Dieser Fächerplatz ist leer (er wird nicht nachgefüllt)",
      reserve_empty: "Dieser Hilfsstapel ist leer",
      reserve_top_only: "Nur die oberste Karte eines Hilfsstapels darf auf einen anderen",
      reserve_whole: { one: "Ein Hilfsstapel geht ganz (1 Karte) oder mit seiner obersten Karte auf die Ablage",
        many: "Ein Hilfsstapel geht ganz ({n} Karten) oder mit seiner obersten Karte auf die Ablage" },
      waste_empty: "Der Abwurf ist leer", draw_first: "Talonkarten werden zuerst aufgedeckt",
      never_leave_foundation: "Karten verlassen die Ablagen nie",
      one_at_a_time: "Karten werden hier einzeln bewegt", never_to_fan: "Karten gehen nie zurück in den Fächer",
      not_on_stock: "Auf Talon und Abwurf darf keine Karte gelegt werden",
      carpet_only_foundation: "Karten gehen nur auf die Ablagen, nie aufeinander",
      carpet_no_draw: "Der Talon füllt hier nur Lücken im Teppich", carpet_empty: "Dieses Teppichfeld ist leer",
      pile_empty: "Dieser Stapel ist leer", face_up_count: "Nur aufgedeckte Karten können bewegt werden",
      waste_top_only: "Nur die oberste Abwurfkarte kann bewegt werden", foundation_empty: "Diese Ablage ist leer",
      foundation_top_only: "Nur die oberste Karte einer Ablage kann bewegt werden",
      foundation_to_tableau: "Eine Karte von der Ablage darf nur zurück in die Reihen",
      no_undo_game: "In diesem Spiel gibt es keine Rücknahme", no_undo_move: "Kein Zug zum Zurücknehmen",
      undo_row: "Keine Rücknahme auf Vorrat (jeder Zug gibt eine dazu, höchstens {n}): erst einen Zug machen", game_over: "Das Spiel ist vorbei",
      no_winnable: "Für {variant} sind noch keine lösbaren Spiele bekannt",
      stale: "{card} wurde nicht gezogen: der Tisch war in einem anderen Fenster schon verändert. Nichts wurde berechnet.",
      stale_any: "Der Tisch war in einem anderen Fenster schon verändert: nichts wurde getan und nichts berechnet.",
      l_start: "{n} Asse beginnen die Ablagen", l_foundation: "{card} auf die Ablage",
      l_foundation_x: "{card} auf die Ablage ({a} × {b})",
      l_foundation_reserve: "{card} vom Hilfsstapel auf die Ablage", l_reveal: "{card} aufgedeckt",
      l_waste_tableau: "{card} vom Abwurf in die Reihen ({a} × {b})",
      l_from_foundation: "{card} zurück von der Ablage", l_redeal: "Talon erneut umgedreht",
      l_time: "{s} s Spielzeit", l_take_back: "Punkte von {move} zurückgenommen", l_undo: "Rücknahme von {move}",
      l_illegal: "Falscher Zug {move}: {reason}", l_fan_emptied: "Fächer geleert",
      l_solved_steps: "Gelöst in {steps} Zügen: {a} + {b} / {steps}", l_solved: "Gelöst",
      l_pool: "Restpool nach {s} s", l_floor: "Die Punkte enden nie unter 0",
    },
  },
  it: {
    tagline: "Tre solitari con regole esatte e punteggi onesti.",
    play: "Gioca", continue: "Continua", variant: "Variante", game_no: "Partita n.", random: "a caso",
    stats_title: "Le tue statistiche", played: "Giocate", won: "Vinte", win_pct: "% vittorie", best: "Record",
    streak: "Serie", best_streak: "Serie migliore", no_stats: "Ancora nessuna partita",
    won_hinted: "Vinte con suggerimenti", stats_of: "Le tue statistiche: {variant}", custom_options: "Altre opzioni",
    unfinished: "Partita in corso", unfinished_line: "{game} · partita {seed} · {moves}", n_moves: { one: "1 mossa", many: "{n} mosse" }, rules: "Regole",
    score: "Punti", time: "Tempo", time_left: "Tempo rimasto", pool: "Fondo", moves: "Mosse",
    undo: "Annulla", undos_left: "ancora {n}", undos_of: "({n} su {max})",
    undo_store: "Annulla: {n} di scorta; ogni mossa ne aggiunge uno, fino a {max}", hint: "Suggerimento", new_game: "Nuova partita",
    restart: "Stessa smazzata", give_up: "Abbandona", menu: "Menu", home: "Tutti i giochi", share: "Condividi link",
    copy: "Copia", copied: "Link copiato", ledger: "Dettaglio punti", ledger_empty: "Ancora nessun punto.",
    clock_note: "Il tempo corre dalla distribuzione delle carte, non dalla prima mossa.",
    lost: { title: "Pagina non trovata", page: "A questo indirizzo non c’è nessuna pagina.", home: "Tutti i giochi",
      game: "Non esiste un gioco chiamato «{game}». Scegli uno dei tre giochi.",
      match: "Non esiste un incontro numero {id}.", matches: "Tutti gli incontri",
      options: "Questo indirizzo chiede impostazioni che non esistono: così non si può distribuire nessuna partita.",
      duel: "Questa sfida non esiste: il link è sbagliato o la sfida è finita.",
      tournament: "Questo torneo non esiste.", leaderboard: "Non c’è una classifica per «{game}».",
      day: "Non c’è una partita del giorno per il {day}." },
    once: { done: "Il tuo tentativo alla partita del giorno di oggi è concluso: un tentativo al giorno.",
      going: "Il tuo tentativo alla partita del giorno di oggi è in corso: continualo dalla pagina del giorno.",
      today: "La partita del giorno si gioca dalla sua pagina, un tentativo al giorno.",
      past: "La partita del giorno del {day} è finita: la chiave e le partite migliori sono sulla sua pagina.",
      to_day: "Alla partita del giorno", now: "Una partita di «Gioca ora» si gioca una volta: il risultato è tra le tue partite.",
      to_now: "Le tue partite" },
    floor_note: "{from} → {to}: il punteggio non scende mai sotto 0, quindi una penalità toglie solo i punti che ci sono.",
    close: "Chiudi", go: "Vai", language: "Lingua", four_colour: "Semi a quattro colori",
    auto_move: "Mosse automatiche",
    card_back: "Dorso delle carte", back: { blue: "Blu", red: "Rosso", green: "Verde" }, table: "Tavolo",
    winnable_only: "Solo partite risolvibili",
    settings: { title: "Impostazioni", sound: "Suoni", theme: "Aspetto", theme_system: "Come il sistema",
      theme_light: "Chiaro", theme_dark: "Scuro", felt: "Colore del tavolo", felt_green: "Verde", felt_blue: "Blu",
      felt_red: "Rosso", felt_grey: "Grigio", cards: "Dimensione delle carte", cards_small: "Piccole",
      cards_normal: "Normali", cards_large: "Grandi",
      hand: "Mazzo e scarti", hand_right: "A sinistra (destrimani)", hand_left: "A destra (mancini)" },
    offline: { title: "Sei offline", retry: "Riprova",
      text: "Patience Arena non è raggiungibile. Si gioca sul server: le partite aspettano che torni.",
      gone: "Patience Arena non risponde: la pagina riprova da sola.",
      failed: "Patience Arena non ha risposto: riprova tra poco." },
    odds_one_in: "Vinte con il gioco perfetto: circa 1 partita su {n}",
    odds_percent: "Vinte con il gioco perfetto: circa {p} % delle partite",
    odds_luck: "pura fortuna, nessuna mossa cambia il risultato",
    odds_title: "Un risolutore che vede ogni carta, su {deals} partite",
    play_again: "Gioca ancora", same_deal: "Stessa smazzata", look: "Guarda il tavolo",
    final_score: "Punteggio finale", breakdown: "Da dove vengono i punti", your_stats: "Statistiche: {game}",
    confirm_new: "Iniziare una nuova partita? Quella in corso conta come abbandonata.",
    confirm_giveup: "Abbandonare questa partita?", yes: "Sì", no: "No", cancel: "Annulla",
    reconnecting: "Connessione persa — riconnessione in corso…", no_hint: "Nessuna mossa utile.", hints_off: "Nella partita del giorno i suggerimenti sono disattivati.",
    server_error: "Il server non ha potuto farlo.",
    game_moved: "Questa partita continua in un'altra finestra: ricarica la pagina per giocarla qui.",
    too_many_games: "Troppe partite nuove dalla tua rete: aspetta un minuto, poi dai di nuovo le carte.",
    hint_is: "Suggerimento: {move}", stock_draw: "Gira una carta", stock_redeal: "Rigira gli scarti",
    stock_none: "Mazzo esaurito", cards_left: "{n} carte", cards_left_one: "1 carta",
    passes_left: "ancora {n} giri", passes_left_one: "ancora 1 giro", empty: "vuota",
    selected: "selezionata", face_down: "carta coperta", downs_then_one: "1 carta coperta, poi {card}",
    downs_then: "{n} carte coperte, poi {card}", turned_up: "Scoperta: {cards}", moved: "{card} su {pile}", illegal: "Non consentito",
    penalty: "Clic sbagliato: {points}",
    keys_help: "Tasti: Tab per andare a una carta, Invio per sceglierla e Invio sulla destinazione; F la manda " +
      "sulla base, U annulla, H suggerisce, D gira una carta, R mostra le regole.",
    rank: { A: "Asso", 2: "Due", 3: "Tre", 4: "Quattro", 5: "Cinque", 6: "Sei", 7: "Sette", 8: "Otto", 9: "Nove",
      10: "Dieci", J: "Fante", Q: "Donna", K: "Re" },
    suit: { S: "picche", H: "cuori", D: "quadri", C: "fiori" },
    card_name: "{rank} di {suit}",
    pile: { f: "Base {suit}", t: "Colonna {n}", s: "Mazzo", s_faecher: "Tallone", w: "Scarti", c: "Casella {n}",
      v: "Ventaglio {n}", r: "Riserva {n}", f_any: "Base" },
    outcome: { won: "Vinto!", no_moves: "Nessuna mossa possibile", time_out: "Tempo scaduto", given_up: "Abbandonata" },
    kind: { foundation: "Carte sulle basi", reveal: "Carte scoperte", waste_to_tableau: "Dagli scarti alle colonne",
      from_foundation: "Riprese dalle basi", redeal: "Mazzo rigirato", time: "Tempo", undo: "Annullamenti",
      take_back: "Punti restituiti", illegal: "Mosse sbagliate", fan_emptied: "Ventaglio svuotato",
      solved: "Bonus risoluzione", pool: "Fondo rimasto", start: "Assi iniziali", floor: "Minimo 0" },
    variants: {
      teppich: { "4x5": "Tappeto 4 × 5", "5x6": "Tappeto 5 × 6", waste: "Con scarti",
        "5x6-waste": "5 × 6 con scarti" },
      reloaded: { "5min": "5 minuti", "10min": "10 minuti", untimed: "Senza limite di tempo" },
      faecher: { standard: "Standard", "with-undo": "Con annullamento (fino a 3)", "one-pass": "Un solo giro" },
    },
    why: {
      alt_colour: "{card} non va su {top}: i colori devono alternarsi",
      down_rank: "{card} non va su {top}: si scende di un valore alla volta",
      reserve_suit: "{card} non va su {top}: le riserve seguono il seme",
      reserve_rank: "{card} non va su {top}: le riserve scendono di un valore alla volta",
      king_only: "Solo un re può andare in una colonna vuota, non {card}",
      found_suit: "{card} va solo sulla base di {suit}",
      found_complete: "La base di {suit} è completa",
      found_start: "{card} non può aprire una base: si comincia con {need}",
      found_next: "{card} non va ancora sulla base: prima {need}",
      stock_empty_redeal: "Il mazzo è vuoto: cliccalo per rigirare gli scarti",
      stock_empty: "Il mazzo è vuoto", stock_not_empty: "Il mazzo non è ancora vuoto",
      waste_empty_turn: "Gli scarti sono vuoti: niente da rigirare",
      passes: "Il mazzo si può scorrere solo {n} volte",
      own_pile: "Una carta non può andare sulla propria pila",
      fan_empty: "Questo posto del ventaglio è vuoto (non si riempie)",
      reserve_empty: "Questa riserva è vuota",
      reserve_top_only: "Solo la carta in cima a una riserva passa su un'altra riserva",
      reserve_whole: { one: "Una riserva va sulla base intera (1 carta) o con la carta in cima",
        many: "Una riserva va sulla base intera ({n} carte) o con la carta in cima" },
      waste_empty: "Gli scarti sono vuoti", draw_first: "Le carte del mazzo si girano prima sugli scarti",
      never_leave_foundation: "Le carte non lasciano mai le basi",
      one_at_a_time: "Qui le carte si spostano una alla volta",
      never_to_fan: "Le carte non tornano mai nel ventaglio",
      not_on_stock: "Non si mettono carte sul mazzo o sugli scarti",
      carpet_only_foundation: "Le carte vanno solo sulle basi, mai una sull'altra",
      carpet_no_draw: "Qui il mazzo riempie solo i vuoti del tappeto", carpet_empty: "Questa casella è vuota",
      pile_empty: "Questa pila è vuota", face_up_count: "Si spostano solo carte scoperte",
      waste_top_only: "Si sposta solo la carta in cima agli scarti", foundation_empty: "Questa base è vuota",
      foundation_top_only: "Si sposta solo la carta in cima a una base",
      foundation_to_tableau: "Una carta dalla base può tornare solo nelle colonne",
      no_undo_game: "In questo gioco non si annulla", no_undo_move: "Nessuna mossa da annullare",
      undo_row: "Nessun annullamento di scorta (ogni mossa ne aggiunge uno, fino a {n}): prima fai una mossa", game_over: "La partita è finita",
      no_winnable: "Per {variant} non si conoscono ancora partite risolvibili",
      stale: "{card} non è stata mossa: il tavolo era già cambiato in un'altra finestra. Nessun punto tolto.",
      stale_any: "Il tavolo era già cambiato in un'altra finestra: non è successo niente e nessun punto è stato tolto.",
      l_start: "{n} assi aprono le basi", l_foundation: "{card} sulla base",
      l_foundation_x: "{card} sulla base ({a} × {b})",
      l_foundation_reserve: "{card} dalla riserva sulla base", l_reveal: "{card} scoperta",
      l_waste_tableau: "{card} dagli scarti alle colonne ({a} × {b})",
      l_from_foundation: "{card} ripresa dalla base", l_redeal: "Mazzo rigirato",
      l_time: "{s} s di gioco", l_take_back: "Punti di {move} restituiti", l_undo: "Annullata {move}",
      l_illegal: "Mossa sbagliata {move}: {reason}", l_fan_emptied: "Ventaglio svuotato",
      l_solved_steps: "Risolto in {steps} mosse: {a} + {b} / {steps}", l_solved: "Risolto",
      l_pool: "Fondo rimasto dopo {s} s", l_floor: "Il punteggio non finisce sotto 0",
    },
  },
};

// duels, accounts, profiles and the rest of the arena keep their words in a file of their own
for (const [code, words] of Object.entries(ARENA_TEXT)) Object.assign(TEXT[code], words);
for (const [code, words] of Object.entries(ANALYSIS_TEXT)) Object.assign(TEXT[code], words);
// and the rules of every game and variant too
for (const [code, words] of Object.entries(RULES_TEXT)) Object.assign(TEXT[code], words);
// and the tournaments' (their navigation link joins the others)
for (const [code, { nav, ...words }] of Object.entries(TOUR_TEXT)) {
  Object.assign(TEXT[code].nav, nav);
  Object.assign(TEXT[code], words);
}

let current = pickLanguage();
const listeners = new Set();

function pickLanguage() {
  let saved = null;
  try {
    saved = localStorage.getItem(KEY);
  } catch {
    // storage may be off (private mode); the browser's language still counts
  }
  if (saved && TEXT[saved]) return saved;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const code = String(tag).slice(0, 2).toLowerCase();
    if (TEXT[code]) return code;
  }
  return "en";
}

export function lang() {
  return current;
}

export function setLang(code) {
  if (!TEXT[code] || code === current) return;
  current = code;
  try {
    localStorage.setItem(KEY, code);
  } catch {
    // not kept across visits then
  }
  document.documentElement.lang = code;
  for (const fn of listeners) fn(code);
}

export function onLang(fn) {
  listeners.add(fn);
}

function lookup(path, table) {
  let node = table;
  for (const part of path.split(".")) {
    if (node == null) return undefined;
    node = node[part];
  }
  return node;
}

/** The text of ``key`` in the current language, with ``{name}`` filled from ``params``. */
export function t(key, params = {}) {
  let text = lookup(key, TEXT[current]);
  if (text === undefined) text = lookup(key, TEXT.en);
  if (text === undefined) return key;
  // a text with a singular and a plural ({one, many}) given a count n: the form for that count
  if (text && typeof text === "object" && typeof text.one === "string" && /^-?\d+$/.test(String(params.n))) {
    text = Number(params.n) === 1 ? text.one : text.many;
  }
  if (typeof text !== "string") return text;
  return text.replace(/\{(\w+)\}/g, (m, name) => (params[name] !== undefined ? String(params[name]) : m));
}

const CLOSED_NAME = /^<closed:([A-Za-z0-9_-]+)>$/;

/** A player's name as the server sends it, for people: a closed account's (the server's mark "<closed:ID>",
 * roles.closed_name) in this language, "Geschlossenes Konto 1a2B3c4D"; every page shows names through it. */
export function playerName(name) {
  const closed = CLOSED_NAME.exec(name ?? "");
  return closed ? t("closed_account", { id: closed[1] }) : name;
}

/** The rules of a game's variant as lines of text (a variant without text of its own: the game's first). */
export function rulesOf(game, variant) {
  const all = t(`rules_text.${game}`);
  if (!all || typeof all !== "object") return [];
  return all[variant] || Object.values(all)[0];
}

export function cardName(text) {
  const rank = text.slice(0, -1);
  const suit = text.slice(-1);
  return t("card_name", { rank: t(`rank.${rank}`), suit: t(`suit.${suit}`) });
}

const SUIT_OF_FOUNDATION = { fs: "♠", fh: "♥", fd: "♦", fc: "♣" };

/** A pile's name for people: "Pile 3", "Foundation ♥", "Talon". */
export function pileName(name, game) {
  if (SUIT_OF_FOUNDATION[name]) return t("pile.f", { suit: SUIT_OF_FOUNDATION[name] });
  if (name === "f") return t("pile.f_any");
  if (name === "s") return t(game === "faecher" ? "pile.s_faecher" : "pile.s");
  if (name === "w") return t("pile.w");
  const kind = name[0];
  return t(`pile.${kind}`, { n: name.slice(1) });
}

/** A move text ("t6>t1:3") for people: "Pile 6 → Pile 1". */
export function moveName(text, game) {
  const match = /^([a-z]+\d*)>([a-z]+\d*)(?::\d+)?$/.exec(text || "");
  if (!match) return text;
  return `${pileName(match[1], game)} → ${pileName(match[2], game)}`;
}

/** Why an intent was refused (a ``rej``), in this language. A move made on a table that another window had
 * changed names the card the player moved (``card``), as their page showed it, not the one there now. */
export function refusal(d, game, card) {
  if (d.why && d.why.k === "stale") return t(card ? "why.stale" : "why.stale_any", { card: card ? cardName(card) : "" });
  return say(d.why, d.reason, game);
}

/** A sentence of the server in this language (its key and parameters), or its English text. */
export function say(why, fallback, game) {
  if (!why || !why.k) return fallback || "";
  const params = { ...why.p };
  if (params.move) params.move = moveName(params.move, game);
  if (why.k === "l_illegal") {
    // the reason of a wrong move in its own words, or the engine's when it has no key
    params.reason = params.rk ? t(`why.${params.rk}`, params) : (fallback || "").replace(/^illegal move \S+: /, "");
  }
  const text = t(`why.${why.k}`, params);
  return text === `why.${why.k}` ? fallback : text;
}
