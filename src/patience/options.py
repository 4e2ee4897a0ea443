"""Game options: typed, documented, validated ``KEY=VALUE`` settings of a game.

Each game declares a frozen dataclass whose fields carry an :func:`option` description;
:func:`parse_options` reads command-line strings or a JSON object into it and refuses
unknown keys and values out of range with a message that says what is allowed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from patience.errors import BadInputError

__all__ = ["OptionSpec", "describe_options", "option", "options_to_dict", "parse_options"]

OptionsT = TypeVar("OptionsT")


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    doc: str
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None


def option(default: Any, doc: str, *, choices: Iterable[Any] | None = None,
           low: float | None = None, high: float | None = None) -> Any:
    """A dataclass field that is a documented game option."""
    spec = OptionSpec(doc, tuple(choices) if choices is not None else None, low, high)
    return dataclasses.field(default=default, metadata={"option": spec})


def _spec(field: dataclasses.Field[Any]) -> OptionSpec:
    spec = field.metadata.get("option")
    assert isinstance(spec, OptionSpec), field.name
    return spec


_TRUE = {"1", "true", "yes", "on", "y", "ja", "si", "sì"}
_FALSE = {"0", "false", "no", "off", "n", "nein"}


def _convert(name: str, kind: type, raw: Any) -> Any:
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise BadInputError(f"option {name} is yes or no, not {raw!r}")
    if kind is int:
        if isinstance(raw, bool):
            raise BadInputError(f"option {name} is a whole number, not {raw!r}")
        if isinstance(raw, int):
            return raw
        if isinstance(raw, float) and raw.is_integer():
            return int(raw)
        try:
            return int(str(raw).strip())
        except ValueError:
            raise BadInputError(f"option {name} is a whole number, not {raw!r}") from None
    if kind is float:
        if isinstance(raw, bool):
            raise BadInputError(f"option {name} is a number, not {raw!r}")
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise BadInputError(f"option {name} is a number, not {raw!r}") from None
    if isinstance(raw, str):
        return raw.strip().lower()
    raise BadInputError(f"option {name} is a word, not {raw!r}")


def _fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    return {f.name: f for f in dataclasses.fields(cls)}


def parse_options(cls: type[OptionsT], given: Mapping[str, Any] | Iterable[str] | None = None) -> OptionsT:
    """Build ``cls`` from ``{"key": value}`` or ``["key=value", ...]``; unknown keys are errors."""
    pairs: dict[str, Any] = {}
    if given is None:
        given = {}
    if isinstance(given, Mapping):
        items: Iterable[tuple[str, Any]] = given.items()
    else:
        items = []
        for text in given:
            if not isinstance(text, str) or "=" not in text:
                raise BadInputError(f"an option is written KEY=VALUE, not {text!r}")
            key, _, value = text.partition("=")
            items.append((key, value))  # type: ignore[attr-defined]
    fields = _fields(cls)
    hints = {f.name: f.type if isinstance(f.type, str) else f.type.__name__
             for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key, raw in items:
        name = str(key).strip().lower().replace("-", "_")
        if name not in fields:
            known = ", ".join(sorted(fields))
            raise BadInputError(f"unknown option {key!r} (known: {known})")
        kind = {"bool": bool, "int": int, "float": float, "str": str}[hints[name]]
        value = _convert(name, kind, raw)
        spec = _spec(fields[name])
        if spec.choices is not None and value not in spec.choices:
            allowed = ", ".join(str(c) for c in spec.choices)
            raise BadInputError(f"option {name} is one of {allowed}, not {raw!r}")
        if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
            raise BadInputError(f"option {name} must be from {spec.low} to {spec.high}, not {raw!r}")
        pairs[name] = value
    made = cls(**pairs)
    check = getattr(made, "check", None)
    if check is not None:
        check()
    return made


def options_to_dict(options: object, *, only_changed: bool = False) -> dict[str, Any]:
    """The options as a JSON-ready dict (all of them, or only those not at their default)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(options):  # type: ignore[arg-type]
        value = getattr(options, f.name)
        if only_changed and value == f.default:
            continue
        out[f.name] = value
    return out


def _number(value: float | None) -> str:
    return str(int(value)) if value is not None and float(value).is_integer() else str(value)


def describe_options(cls: type) -> list[tuple[str, Any, str]]:
    """``(name, default, doc)`` for every option of ``cls``, for help texts and the README."""
    rows = []
    for f in dataclasses.fields(cls):
        spec = _spec(f)
        doc = spec.doc
        if spec.choices is not None:
            doc += f" ({' | '.join(str(c) for c in spec.choices)})"
        elif spec.low is not None:
            doc += f" ({_number(spec.low)}..{_number(spec.high)})"
        rows.append((f.name, f.default, doc))
    return rows
