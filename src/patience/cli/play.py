"""Terminal commands: ``play`` a whole game, print a ``deal``, ``replay`` a record, list ``games``."""

from __future__ import annotations

import argparse
import io
import json
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from patience.cli import add_game_arguments
from patience.errors import BadInputError, GameOverError, PatienceError
from patience.games import GAMES, State, get_game
from patience.options import describe_options, options_to_dict
from patience.rng import Seed, check_seed

if TYPE_CHECKING:
    from patience.session import Session

# the board's drawing (rich), records and sessions are imported by the commands that use them: a command
# that needs none of them (``patience solve`` of a deal) starts without loading them

__all__ = ["game_options", "register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("play", help="play a game in the terminal")
    add_game_arguments(p)
    p.add_argument("--no-colour", "--no-color", dest="colour", action="store_false", default=None,
                   help="draw without ANSI colours")
    p.add_argument("--winnable", action="store_true",
                   help="deal a seed proved winnable (from the shipped list; 'patience winnable' extends it)")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("deal", help="print a whole deal (every card, face-down ones too)")
    add_game_arguments(p, seed_required=True)
    p.add_argument("--json", action="store_true", help="the position as JSON")
    p.set_defaults(func=cmd_deal)

    p = sub.add_parser("replay", help="replay a game record and check its result")
    p.add_argument("file", help="a record written by 'save' in play, or by the app")
    p.add_argument("--json", action="store_true", help="the result and final position as JSON")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("games", help="list the games, their variants and options")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_games)


def game_options(args: argparse.Namespace) -> tuple[type[State], dict[str, Any]]:
    """The game class and its validated options from GAME, --variant and --option."""
    cls = get_game(args.game)
    chosen: dict[str, Any] = {}
    if getattr(args, "variant", None):
        variants = cls.INFO.variants
        if args.variant not in variants:
            known = ", ".join(variants) or "none"
            raise BadInputError(f"{cls.INFO.id} has no variant {args.variant!r} (variants: {known})")
        chosen.update(variants[args.variant])
    for text in args.option:
        if "=" not in text:
            raise BadInputError(f"an option is written KEY=VALUE, not {text!r}")
        key, _, value = text.partition("=")
        chosen[key] = value
    options = cls.make_options(chosen)
    return cls, options_to_dict(options, only_changed=True)


def _seed(args: argparse.Namespace) -> Seed:
    return check_seed(args.seed) if args.seed is not None else secrets.randbelow(1_000_000_000)


# -- deal, replay, games -----------------------------------------------------------------------


def cmd_deal(args: argparse.Namespace) -> int:
    cls, options = game_options(args)
    state = cls.deal(_seed(args), options)
    if args.json:
        print(json.dumps(state.position(), ensure_ascii=False, indent=2))
    else:
        from patience.notation import position_text

        print(position_text(state.position()))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from patience.cli.board import Painter, draw_view
    from patience.record import load_record, replay

    session = replay(load_record(args.file))
    summary = session.summary()
    if args.json:
        out = {"result": summary, "position": session.state.position(),
               "ledger": [e.to_dict() for e in session.ledger]}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    painter = Painter.for_stream(sys.stdout)
    print(draw_view(session.state.view(), painter))
    print()
    _print_result(session, sys.stdout)
    print("The record replays exactly.")
    return 0


def cmd_games(args: argparse.Namespace) -> int:
    if args.json:
        out = {gid: {"names": dict(cls.INFO.names), "aliases": list(cls.INFO.aliases),
                     "variants": {k: dict(v) for k, v in cls.INFO.variants.items()},
                     "options": [{"name": n, "default": d, "doc": doc}
                                 for n, d, doc in describe_options(cls.INFO.options)]}
               for gid, cls in GAMES.items()}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    for gid, cls in GAMES.items():
        info = cls.INFO
        print(f"{gid}: {info.names['de']} / {info.names['it']} / {info.names['en']}")
        print(f"  aliases: {', '.join(info.aliases)}")
        if info.variants:
            variants = ", ".join(
                f"{k} ({' '.join(f'{a}={b}' for a, b in v.items()) or 'standard'})"
                for k, v in info.variants.items())
            print(f"  variants (--variant): {variants}")
        print("  options (--option KEY=VALUE):")
        for name, default, doc in describe_options(info.options):
            print(f"    {name}={_word(default)}: {doc}")
        print()
    return 0


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


# -- play ------------------------------------------------------------------------------------

HELP = {
    "teppich": "c7 or 7 (carpet place 7 to its foundation), c7>f; waste variant: draw, w>f",
    "reloaded": "draw, redeal, w>t3, w>f, t2>f, t6>t1 (the run that fits; t6>t1:3 for 3 cards), fh>t4",
    "faecher": "v3>f, v3>r2 (fan), r1>r4, r2>f (top card), r2>f:3 (whole pile), w>f, w>r1, draw, redeal",
}

COMMANDS_HELP = """\
  moves      list the legal moves
  hint       a suggested move
  undo       take back the last move where the game allows it: each move adds one undo, up to
             the game's store (Solitaire Reloaded: 3; "undos left" below the board), each undo uses one
  score      the score ledger: every change and why
  save FILE  write the game record (JSON)
  board      draw the board again
  quit       give up (the score so far is the result)"""


def _status(session: Session) -> str:
    parts = [f"score {session.score}"]
    left = session.time_left_ms()
    if left is not None:
        parts.append(f"time left {left // 60000}:{left // 1000 % 60:02d}")
    pool = session.pool_left()
    if pool is not None:
        parts.append(f"pool {pool}")
    undos = session.undos_left()
    if session.table.undo_limit != 0:
        parts.append("undo: any" if undos is None else f"undos left {undos}")
    parts.append(f"moves {session.moves_made}")
    return " · ".join(parts)


def _print_ledger(session: Session, out: TextIO) -> None:
    for e in session.ledger:
        change = f"{e.applied:+d}" if e.applied == e.points else f"{e.applied:+d} (of {e.points:+d})"
        out.write(f"  {e.t_ms / 1000:7.1f}s  {change:>14}  = {e.total:<6} {e.reason}\n")
    out.write(f"  score {session.score}\n")


def _print_result(session: Session, out: TextIO) -> None:
    words = {"won": "Won!", "no_moves": "No move left.", "time_out": "Time is up.", "given_up": "Given up."}
    outcome = session.outcome.value if session.outcome else "playing"
    out.write(f"{words.get(outcome, outcome)} Score {session.score} after {session.moves_made} moves "
              f"and {session.elapsed_ms() / 1000:.1f} s.\n")
    out.write("Score breakdown:\n")
    _print_ledger(session, out)


def _hint(session: Session) -> str:
    from patience.solve import hint

    suggestion = hint(session)
    return f"try {suggestion}" if suggestion is not None else "no move helps any more"


def cmd_play(args: argparse.Namespace) -> int:
    cls, options = game_options(args)
    if args.winnable and args.seed is not None:
        raise BadInputError("--winnable picks the seed itself: give --seed or --winnable, not both")
    seed: Seed
    if args.winnable:
        from patience.solve.winnable import pick

        seed = pick(cls.INFO.id, options)
    else:
        seed = _seed(args)
    from patience.session import Session

    session = Session(cls, seed, options)
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(errors="replace")  # bytes that are no text become '�': not a move, no crash
    return play_loop(session, sys.stdin, sys.stdout, colour=args.colour)


def play_loop(session: Session, inp: TextIO, out: TextIO, *, colour: bool | None = None) -> int:
    """The interactive game: read commands from ``inp`` until the game ends or input does."""
    from patience.cli.board import Painter, draw_view

    painter = Painter.for_stream(out) if colour is None else Painter(colour)
    gid = session.game_id
    name = session.state.INFO.names["de"]
    changed = session.options_dict
    opts = " ".join(f"{k}={_word(v)}" for k, v in changed.items())
    out.write(painter.bold(f"{name} · game {session.seed}" + (f" · {opts}" if opts else "")) + "\n")
    out.write("Type a move, or help. Moves: " + HELP[gid] + "\n\n")
    out.write(draw_view(session.state.view(), painter) + "\n" + _status(session) + "\n")
    while not session.is_over:
        out.write("> ")
        out.flush()
        line = inp.readline()
        if not line:  # end of input: the game ends as given up
            out.write("\n")
            session.give_up()
            break
        command = line.strip()
        if not command:
            continue
        word, _, rest = command.partition(" ")
        word = word.lower()
        charged = len(session.ledger)
        try:
            if word in ("help", "?", "h"):
                out.write("Moves: " + HELP[gid] + "\n" + COMMANDS_HELP + "\n")
                continue
            if word in ("moves", "legal"):
                moves = session.state.legal_moves()
                out.write(("  " + " ".join(str(m) for m in moves) if moves else "  no legal move") + "\n")
                continue
            if word in ("score", "ledger"):
                _print_ledger(session, out)
                continue
            if word == "board":
                out.write(draw_view(session.state.view(), painter) + "\n" + _status(session) + "\n")
                continue
            if word == "hint":
                out.write(_hint(session) + "\n")
                continue
            if word == "save":
                _save(session, rest.strip(), out)
                continue
            if word in ("quit", "exit", "giveup", "resign"):
                session.give_up()
                break
            if word == "undo":
                move = session.undo()
                out.write(f"undone: {move}\n")
            else:
                session.play(command)
        except GameOverError as exc:
            out.write(f"✗ {exc}\n")
            break
        except PatienceError as exc:  # bad input, a refused move, a file that cannot be written
            # the charge of this very attempt, if the game made one (Der Fächer's wrong click)
            charge = "".join(f" ({e.applied:+d})" for e in session.ledger[charged:] if e.kind == "illegal")
            session.tick()
            out.write(painter.bold("✗ ") + str(exc) + charge + "\n")
            if session.is_over:
                break
            continue
        out.write(draw_view(session.state.view(), painter) + "\n" + _status(session) + "\n")
    out.write("\n")
    _print_result(session, out)
    return 0


def _save(session: Session, path: str, out: TextIO) -> None:
    if not path:
        raise BadInputError("save needs a file name: save FILE")
    target = Path(path)
    try:
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(json.dumps(session.record(), ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(target)
    except OSError as exc:
        raise PatienceError(f"cannot write {path}: {exc.strerror or exc}") from None
    out.write(f"saved to {target}\n")
