// The words of arena tournaments in English, German and Italian (i18n.js merges them into its tables).

export const TOUR_TEXT = {
  en: {
    nav: { tournaments: "Tournaments" },
    tour: {
      title: "Tournaments", list: "Tournaments", make: "Make a tournament", name: "Name", format: "Duel",
      when: "When", players: "Players", minutes: "Length (15 to 120 minutes)", start: "Start (empty: now)",
      with_password: "With a password: only those who know it may join",
      password_who: "Password (tell it to those you invite)", create: "Make the tournament",
      sign_in_make: "Sign in to make a tournament", hourly: "Hourly tournament: {game}", none: "No tournament to show.",
      soon: "starts {time}", on: "going on, ends {time}", over: "over, ended {time}",
      starts_in: "Starts in {time}", ends_in: "Ends in {time}", ended: "This tournament is over: the final standings.",
      facts: "{format} · {minutes} minutes in all · by {by}", facts_site: "{format} · {minutes} minutes in all · held by Patience Arena",
      locked: "needs a password",
      rules: "Each player is paired again as soon as their duel ends, with the closest free player by points and " +
        "rating (never the same opponent twice in a row). A win scores 2, a draw 1, a loss 0; after two wins in a " +
        "row each win scores double (×2) until a loss. Ratings change with each duel as usual. When the time is up " +
        "no new duel starts; duels still going on are played out and count. Whoever has the most points wins.",
      join: "Join", password: "Password", pause: "Pause", resume: "Come back", sign_in: "Sign in to join",
      joined: "You are in: keep this page open and you will be paired as soon as someone is free.",
      paused: "You have paused: you are not paired until you come back.",
      playing: "Your duel is going on.", to_duel: "Go to your duel",
      rank: "#", player: "Player", rating: "Rating", points: "Points", duels: "Duels", fire: "on fire: the next win scores double",
      paused_tag: "paused", you: "you", watch: "Watch", back: "Back to the tournament",
      back_in: "Back to the tournament for your next duel in {n} s.", stay: "Stay here",
      duel_title: "{result} against {opponent}: {points} points (replay)", duel_sub: "Tournament duel",
      winner: "{names} won the tournament with {points} points.", winners: "{names} share the win with {points} points.",
      still_playing: "Duels still going on are played out and count.",
      result: { w: "Won", d: "Draw", l: "Lost" },
      err: {
        no_such_tournament: "There is no such tournament.", tour_over: "This tournament is over.",
        bad_password: "That is not this tournament's password.", not_joined: "You have not joined this tournament.",
        sign_in: "Sign in first.", bad_tournament: "The tournament could not be made: {msg}",
        failed: "That did not work: try again.", busy: "The server is busy: try again in a few seconds.",
      },
    },
  },
  de: {
    nav: { tournaments: "Turniere" },
    tour: {
      title: "Turniere", list: "Turniere", make: "Ein Turnier anlegen", name: "Name", format: "Duell",
      when: "Wann", players: "Spieler", minutes: "Dauer (15 bis 120 Minuten)", start: "Beginn (leer: sofort)",
      with_password: "Mit Passwort: nur wer es kennt, kann teilnehmen",
      password_who: "Passwort (sag es denen, die du einlädst)", create: "Turnier anlegen",
      sign_in_make: "Melde dich an, um ein Turnier anzulegen", hourly: "Stündliches Turnier: {game}",
      none: "Kein Turnier vorhanden.",
      soon: "Beginn: {time}", on: "läuft, Ende: {time}", over: "beendet: {time}",
      starts_in: "Beginnt in {time}", ends_in: "Endet in {time}", ended: "Dieses Turnier ist vorbei: der Endstand.",
      facts: "{format} · {minutes} Minuten insgesamt · angelegt von {by}",
      facts_site: "{format} · {minutes} Minuten insgesamt · veranstaltet von Patience Arena",
      locked: "mit Passwort",
      rules: "Sobald sein Duell endet, bekommt jeder Spieler einen neuen Gegner: den freien Spieler, der ihm nach " +
        "Punkten und Wertung am nächsten ist (nie zweimal hintereinander denselben). Ein Sieg zählt 2 Punkte, ein " +
        "Unentschieden 1, eine Niederlage 0; nach zwei Siegen in Folge zählt jeder Sieg doppelt (×2), bis zur " +
        "nächsten Niederlage. Die Wertung ändert sich mit jedem Duell wie sonst auch. Ist die Zeit um, beginnt kein " +
        "neues Duell mehr; laufende Duelle werden zu Ende gespielt und zählen. Es gewinnt, wer die meisten Punkte hat.",
      join: "Teilnehmen", password: "Passwort", pause: "Pause", resume: "Weiterspielen",
      sign_in: "Zum Teilnehmen anmelden",
      joined: "Du bist dabei: Lass diese Seite offen, dann bekommst du einen Gegner, sobald jemand frei ist.",
      paused: "Du machst Pause: Du bekommst keinen Gegner, bis du weiterspielst.",
      playing: "Dein Duell läuft.", to_duel: "Zu deinem Duell",
      rank: "#", player: "Spieler", rating: "Wertung", points: "Punkte", duels: "Duelle",
      fire: "Siegesserie: der nächste Sieg zählt doppelt", paused_tag: "pausiert", you: "du", watch: "Zuschauen",
      back: "Zurück zum Turnier", back_in: "In {n} s geht es zurück zum Turnier, zum nächsten Duell.", stay: "Hierbleiben",
      duel_title: "{result} gegen {opponent}: {points} Punkte (Wiederholung)", duel_sub: "Turnierduell",
      winner: "{names} hat das Turnier mit {points} Punkten gewonnen.",
      winners: "{names} teilen sich den Sieg mit {points} Punkten.",
      still_playing: "Laufende Duelle werden noch zu Ende gespielt und zählen.",
      result: { w: "Gewonnen", d: "Unentschieden", l: "Verloren" },
      err: {
        no_such_tournament: "Dieses Turnier gibt es nicht.", tour_over: "Dieses Turnier ist vorbei.",
        bad_password: "Das ist nicht das Passwort dieses Turniers.",
        not_joined: "Du nimmst an diesem Turnier nicht teil.", sign_in: "Melde dich zuerst an.",
        bad_tournament: "Das Turnier konnte nicht angelegt werden: {msg}",
        failed: "Das hat nicht geklappt: Versuch es noch einmal.",
        busy: "Der Server ist gerade ausgelastet: Versuch es in ein paar Sekunden noch einmal.",
      },
    },
  },
  it: {
    nav: { tournaments: "Tornei" },
    tour: {
      title: "Tornei", list: "Tornei", make: "Crea un torneo", name: "Nome", format: "Sfida",
      when: "Quando", players: "Giocatori", minutes: "Durata (da 15 a 120 minuti)", start: "Inizio (vuoto: subito)",
      with_password: "Con password: può partecipare solo chi la conosce",
      password_who: "Password (dilla a chi inviti)", create: "Crea il torneo",
      sign_in_make: "Accedi per creare un torneo", hourly: "Torneo di ogni ora: {game}", none: "Nessun torneo da mostrare.",
      soon: "inizio: {time}", on: "in corso, fine: {time}", over: "concluso: {time}",
      starts_in: "Inizia tra {time}", ends_in: "Finisce tra {time}", ended: "Questo torneo è concluso: la classifica finale.",
      facts: "{format} · {minutes} minuti in tutto · creato da {by}",
      facts_site: "{format} · {minutes} minuti in tutto · organizzato da Patience Arena",
      locked: "con password",
      rules: "Appena finisce la sua sfida, ogni giocatore ne inizia un'altra con il giocatore libero più vicino per " +
        "punti e punteggio Elo (mai lo stesso avversario due volte di seguito). Una vittoria vale 2 punti, un " +
        "pareggio 1, una sconfitta 0; dopo due vittorie di fila ogni vittoria vale doppio (×2) fino alla prossima " +
        "sconfitta. Il punteggio Elo cambia a ogni sfida come sempre. Allo scadere del tempo non inizia più nessuna " +
        "sfida; quelle ancora in corso si giocano fino alla fine e contano. Vince chi ha più punti.",
      join: "Partecipa", password: "Password", pause: "Pausa", resume: "Riprendi", sign_in: "Accedi per partecipare",
      joined: "Ci sei: tieni aperta questa pagina e avrai un avversario appena qualcuno sarà libero.",
      paused: "Sei in pausa: non avrai avversari finché non riprendi.",
      playing: "La tua sfida è in corso.", to_duel: "Vai alla tua sfida",
      rank: "#", player: "Giocatore", rating: "Punteggio Elo", points: "Punti", duels: "Sfide",
      fire: "serie di vittorie: la prossima vale doppio", paused_tag: "in pausa", you: "tu", watch: "Guarda",
      back: "Torna al torneo", back_in: "Tra {n} s si torna al torneo per la prossima sfida.", stay: "Resta qui",
      duel_title: "{result} contro {opponent}: {points} punti (rivedi)", duel_sub: "Sfida di torneo",
      winner: "{names} ha vinto il torneo con {points} punti.", winners: "{names} vincono a pari merito con {points} punti.",
      still_playing: "Le sfide ancora in corso si giocano fino alla fine e contano.",
      result: { w: "Vinta", d: "Pareggio", l: "Persa" },
      err: {
        no_such_tournament: "Questo torneo non esiste.", tour_over: "Questo torneo è concluso.",
        bad_password: "Non è la password di questo torneo.", not_joined: "Non partecipi a questo torneo.",
        sign_in: "Prima accedi.", bad_tournament: "Non è stato possibile creare il torneo: {msg}",
        failed: "Non ha funzionato: riprova.", busy: "Il server è occupato: riprova tra qualche secondo.",
      },
    },
  },
};
