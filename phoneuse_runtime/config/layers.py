"""The one layered loader: defaults < the config file < `PREFIX<NAME>` environment < flags.

`load_layers(Record, ...)` fills a frozen dataclass `Record` from those layers, coercing each
value by its field's type (bool, int, float, str, Path, frozenset[str], and their optionals),
records where each value came from (`origins`: "flag", "environment", the file's path; a name
absent there has its default), and collects every problem ("setting (where from): what is
wrong": an unknown name, an unreadable value) instead of raising at the first. `serve`'s
`load_settings` (config/settings.py) and the fleet's `load_fleet_settings` both use it; each
hands the checks of its own values to `Loaded.raise_problems`, which raises its error listing
them all.
"""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Generic, TypeVar, Union, get_args, get_origin, get_type_hints

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

T = TypeVar("T")

FLAG = "flag"
ENVIRONMENT = "environment"
DEFAULT = "default"


@dataclass(frozen=True)
class Loaded(Generic[T]):
    """What `load_layers` made: the record, where each value given came from, and the problems."""

    value: T
    origins: dict[str, str]
    problems: list[str]

    def origin(self, name: str) -> str:
        return self.origins.get(name, DEFAULT)

    def given(self, *wheres: str) -> frozenset[str]:
        """The names whose value came from one of `wheres` (e.g. FLAG, ENVIRONMENT)."""
        return frozenset(name for name, where in self.origins.items() if where in wheres)

    def raise_problems(self, checks: Iterable[tuple[str, str]], error: type[Exception], noun: str) -> None:
        """Raises one `error` listing every problem: the layers' own, then the (setting, what
        is wrong) of `checks` with where each value came from, but none for a setting whose
        value could not be read at all (it already has its problem)."""
        bad = {p.partition(" (")[0] for p in self.problems}
        found = self.problems + [
            f"{name} ({self.origin(name)}): {what}" for name, what in checks if name not in bad
        ]
        if len(found) == 1:
            raise error(found[0])
        if found:
            raise error(f"{len(found)} {noun} are bad:\n" + "\n".join(f"  {p}" for p in found))


def coerce_bool(value: Any) -> bool:
    """A switch as a config file, a flag or the environment spells it."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def _optional(kind: Any) -> Any | None:
    """X of `X | None`, or None when `kind` is not optional."""
    if get_origin(kind) in (Union, types.UnionType):
        others = [a for a in get_args(kind) if a is not type(None)]
        if len(others) == 1 and len(others) < len(get_args(kind)):
            return others[0]
    return None


def coerce(value: Any, kind: Any) -> Any:
    """`value` (a TOML/JSON value, an environment string, a flag) as a field of type `kind`;
    ValueError (or TypeError) saying what was expected."""
    inner = _optional(kind)
    if inner is not None:
        return None if value is None or value == "" else coerce(value, inner)
    if kind is bool:
        return coerce_bool(value)
    if kind is int:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"expected a whole number, got {value!r}")
        if isinstance(value, (list, dict)):
            raise TypeError(f"expected a whole number, got {value!r}")
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"expected a whole number, got {value!r}") from None
    if kind is float:
        if isinstance(value, (bool, list, dict)):
            raise TypeError(f"expected a number, got {value!r}")
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"expected a number, got {value!r}") from None
    if kind is Path:
        if isinstance(value, (bool, int, float, list, dict)) or value == "":
            raise TypeError(f"expected a path, got {value!r}")
        return Path(str(value)).expanduser()
    if get_origin(kind) is frozenset:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple, set, frozenset)):
            raise TypeError(f"expected a list or comma-separated names, got {value!r}")
        if any(isinstance(v, (list, dict)) for v in items):
            raise TypeError(f"expected a list of names, got {value!r}")
        return frozenset(str(v).strip() for v in items if str(v).strip())
    if kind is str:
        if isinstance(value, (list, dict)):
            raise TypeError(f"expected text, got {value!r}")
        return str(value)
    raise TypeError(f"no way to read a setting of type {kind!r}")  # a record's own mistake


def flatten(table: Mapping[str, Any]) -> dict[str, Any]:
    """`[memory] retention_days = 30` as `memory_retention_days`: a table's keys are settings
    named with the table's name in front, as the PHONEUSE_MEMORY_* variables name them."""
    flat: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):  # [memory.embeddings] url: memory_embeddings_url
            flat.update({f"{key}_{inner}": v for inner, v in flatten(value).items()})
        else:
            flat[key] = value
    return flat


class FileProblem(Exception):
    """A config file that cannot be read as a table of settings."""


def read_table(path: Path) -> dict[str, Any]:
    """The settings table of a TOML file (JSON when its name ends in .json); FileProblem."""
    try:
        text = path.read_text(encoding="utf-8")
        table: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError is a ValueError
        raise FileProblem(f"{path}: {exc}") from exc
    if not isinstance(table, dict):
        raise FileProblem(f"{path}: expected a table of settings")
    return table


def load_layers(
    record: type[T],
    *,
    base: T,
    prefix: str,
    flags: Mapping[str, Any],
    file: tuple[str, Mapping[str, Any]] | None = None,
    names: Collection[str] | None = None,
    not_from_env: Collection[str] = (),
    own: Collection[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Loaded[T]:
    """`base` (the defaults) with the file's table (`(where, table)`, names as given), then the
    environment's `prefix + NAME.upper()`, then `flags` (None: not given) over it.

    `names` are the settings any layer may set (default: every field of `record`); another name
    in the file or the flags is a problem. `not_from_env` are never read from the environment
    (a data dir's own variable is its default's business). `own` are names the caller reads
    itself from the file (the fleet's `phones`): known, and left alone here."""
    hints = get_type_hints(record)
    known = set(names) if names is not None else {f.name for f in fields(record)}  # type: ignore[arg-type]
    env = os.environ if environ is None else environ
    origins: dict[str, str] = {}
    problems: list[str] = []
    layers: list[tuple[str, Mapping[str, Any]]] = []
    if file is not None:
        layers.append(file)
    variables = {n: f"{prefix}{n.upper()}" for n in sorted(known) if n not in not_from_env}
    layers.append((ENVIRONMENT, {n: env[v] for n, v in variables.items() if v in env}))
    layers.append((FLAG, flags))
    changes: dict[str, Any] = {}
    for where, values in layers:
        for name, value in values.items():
            if name in own:
                continue
            if name not in known:
                listed = ", ".join(sorted({*known, *own}))
                problems.append(f"{name} ({where}): unknown setting; known: {listed}")
                continue
            if value is None:
                continue
            try:
                changes[name] = coerce(value, hints[name])
            except (TypeError, ValueError) as exc:
                problems.append(f"{name} ({where}): bad value: {exc}")
                changes.pop(name, None)
                origins[name] = where
                continue
            origins[name] = where
    value = replace(base, **changes)  # type: ignore[type-var]
    return Loaded(value, origins, problems)
