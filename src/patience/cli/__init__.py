"""The ``patience`` command: one subcommand a module, listed in :data:`COMMANDS`.

Each command module has ``register(subparsers)``, which adds its parser and sets
``func`` to a function taking the parsed arguments and returning the exit code.
Errors of the package (bad input, illegal moves, corrupt records) end the command with a
one-line message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from patience import __version__
from patience.errors import PatienceError

__all__ = ["COMMANDS", "main"]

COMMANDS = ("patience.cli.admin", "patience.cli.backup", "patience.cli.play", "patience.cli.serve",
            "patience.cli.solve")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="patience",
        description="Patience Arena: Teppich, Solitaire Reloaded and Der Fächer with exact rules and scores.",
    )
    parser.add_argument("--version", action="version", version=f"patience-arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except PatienceError as exc:
        print(f"patience: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def add_game_arguments(parser: argparse.ArgumentParser, *, seed_required: bool = False) -> None:
    """The arguments every game command shares: GAME, --seed, --option KEY=VALUE, --variant."""
    parser.add_argument("game", help="teppich (carpet, tappeto), reloaded (klondike), faecher (fächer, fan)")
    parser.add_argument("--seed", type=str, required=seed_required,
                        help="the deal: a game number (0..2**63-1) or a duel's deal key (64 hex digits)")
    parser.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                        help="a game option; repeat for several (patience games lists them)")
    parser.add_argument("--variant", help="a named variant, e.g. 5x6 or waste for Teppich")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
