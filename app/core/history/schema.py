"""The shape of a chat and its messages, with types and ranges: what an import must hold, and what a row read
back from the history is checked against (pydantic v2, strict: no string is taken for a number).

Two uses:

- ``check_export(doc)``: an export document (``app.core.history.export``) is checked completely before anything is
  written; the first problem raises ``ChatImportError`` with a sentence naming the chat, the message and the field
  (``chat 2 ("Title"), message 3, field metrics.ttft_ms: must be a number, not "soon"``).
- ``clean_params`` / ``clean_metrics`` / ``clean_provenance`` / ``clean_versions`` / ``clean_time``: a value read
  back from the history file (which another program, an older Brook or an import made before this check may have
  written) keeps only the fields of the right type and range; the rest is dropped and logged. A read never raises
  for a value's shape.

Ranges: times are seconds since the epoch within years 1970–9999 (what ``datetime`` can show); durations are ms
with ``|x| ≤ 1e12``; counts are whole numbers ``0 … 2**53``; every number is finite (no NaN, no Infinity).
Keys this Brook does not know (a newer Brook's fields) are kept when they are plain JSON nested at most
``MAX_EXTRA_DEPTH`` deep.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import typing
from typing import Annotated, Any, Literal

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.core.conversation import MessageStatus, Role
from app.core.errors import BrookError
from app.core.history.clean import MAX_TIME, clean_text, clean_time
from app.core.history.folders import FolderNameError, folder_name

__all__ = ["MAX_TIME", "ChatImportError", "check_export", "clean_metrics", "clean_params", "clean_provenance",
           "clean_text", "clean_time", "clean_versions", "plain"]

log = logging.getLogger("brook.store.schema")

#: Largest duration in ms and largest count accepted.
MAX_MS = 1e12
MAX_COUNT = 2 ** 53

Time = Annotated[float, Field(ge=0, le=MAX_TIME, allow_inf_nan=False)]
Ms = Annotated[float, Field(ge=-MAX_MS, le=MAX_MS, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Rate = Annotated[float, Field(ge=0, le=MAX_MS, allow_inf_nan=False)]

ROLES = tuple(r.value for r in Role)
STATUSES = tuple(s.value for s in MessageStatus)


class ChatImportError(BrookError):
    """The file is not a Brook chat export, or part of it is malformed (nothing was imported)."""


#: How deep a value of a field this Brook does not know may nest (a newer Brook's field: kept as it is).
MAX_EXTRA_DEPTH = 8


class _Open(BaseModel):
    """Known fields typed; other keys (a newer Brook's) kept as plain JSON nested at most ``MAX_EXTRA_DEPTH``."""

    model_config = ConfigDict(strict=True, extra="allow")

    @model_validator(mode="after")
    def _extras(self) -> _Open:
        for key, value in (self.__pydantic_extra__ or {}).items():
            why = _json_problem(value)
            if why:
                raise ValueError(f"{key}: {why}")
        return self


def _json_problem(value: Any) -> str | None:
    """Why ``value`` is not plain JSON nested at most ``MAX_EXTRA_DEPTH`` deep (None when it is); iterative."""
    todo = [(value, 0)]
    while todo:
        v, depth = todo.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return "must be a finite number"
        if v is None or isinstance(v, (str, bool, int, float)):
            continue
        if depth >= MAX_EXTRA_DEPTH:
            return f"is nested more than {MAX_EXTRA_DEPTH} deep"
        if isinstance(v, list):
            todo.extend((x, depth + 1) for x in v)
        elif isinstance(v, dict) and all(isinstance(k, str) for k in v):
            todo.extend((x, depth + 1) for x in v.values())
        else:
            return f"is not JSON ({type(v).__name__})"
    return None


class Params(_Open):
    """Sampling parameters (``app.core.types.GenerationParams``'s fields)."""

    temperature: Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    top_k: Annotated[int, Field(ge=0, le=1_000_000)] | None = None
    repeat_penalty: Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)] | None = None
    min_p: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    max_tokens: Annotated[int, Field(ge=0, le=100_000_000)] | None = None
    seed: Annotated[int, Field(ge=-(2 ** 63), lt=2 ** 64)] | None = None
    stop: Annotated[list[Annotated[str, Field(max_length=10_000)]], Field(max_length=1_000)] | None = None


class Metrics(_Open):
    """A reply's figures (``app.core.streaming.metrics.ReplySummary`` and ``left_out``)."""

    ttft_ms: Ms | None = None
    prefill_ms: Ms | None = None
    first_paint_ms: Ms | None = None
    wait_ms: Ms | None = None
    decode_tokens: Count | None = None
    decode_tokens_per_s: Rate | None = None
    chunks: Count | None = None
    chunks_painted: Count | None = None
    queue_high_water: Count | None = None
    backpressure_waits: Count | None = None
    backpressure_wait_ms: Ms | None = None
    ticks: Count | None = None
    longest_tick_ms: Ms | None = None
    stop_latency_ms: Ms | None = None
    total_ms: Ms | None = None
    left_out: Count | None = None


class Provenance(_Open):
    """Where a reply came from (``app.core.streaming.provenance``)."""

    model_file: str | None = None
    model_bytes: Count | None = None
    model_sha256: str | None = None
    chat_template: str | None = None
    seed_random: bool | None = None
    backend: str | None = None          # what it ran on (``runtime_facts``): CPU or a GPU device
    device: str | None = None
    gpu_layers: Count | None = None
    n_layers: Count | None = None
    cpu_variant: str | None = None


class _Reply(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    content: str
    status: Literal[STATUSES]      # type: ignore[valid-type]
    created: Time
    model: str | None = None
    params: Params | None = None
    stop_reason: str | None = None
    error: str | None = None
    metrics: Metrics | None = None
    provenance: Provenance | None = None


class Version(_Reply):
    """One other version of a reply (``app.core.chat.versions.VERSION_FIELDS``)."""

    created: Time = 0.0
    status: Literal[STATUSES] = "done"     # type: ignore[valid-type]


class Versions(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    shown: Count
    others: list[Version]


class ExportMessage(_Reply):
    role: Literal[ROLES]            # type: ignore[valid-type]
    versions: Versions | None = None
    timeline: Any = None

    @field_validator("timeline")
    @classmethod
    def _timeline(cls, v: Any) -> Any:
        from app.core.history import timelines

        if v is None:
            return None
        return timelines.normalised(timelines.validated(v))     # only its known fields, at the stored resolution


class ExportChat(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    title: str
    system_prompt: str | None = None
    preset: str | None = None
    params: Params | None = None
    created: Time
    updated: Time
    pinned: bool | None = None
    #: the name of its folder (``app.core.history.folders.folder_name``: blank is no folder; too long is refused)
    folder: str | None = None      # (a length constraint would make pydantic refuse lone surrogates)
    messages: list[ExportMessage]

    @field_validator("folder")
    @classmethod
    def _folder(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        try:
            return folder_name(v)
        except FolderNameError as exc:
            raise ValueError(str(exc)) from None


class ExportDoc(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    conversations: list[ExportChat]


def plain(model: BaseModel | None) -> dict[str, Any] | None:
    """A validated part as the plain dict stored (fields that were absent stay absent)."""
    return None if model is None else model.model_dump(exclude_unset=True)


# -- imports --------------------------------------------------------------------------------------------------
def check_export(doc: Any) -> ExportDoc:
    """``doc`` (parsed JSON) checked completely as an export of this Brook's format. Raises ``ChatImportError``
    with one sentence naming the chat, the message and the field of the first problem."""
    try:
        return ExportDoc.model_validate(doc)
    except ValidationError as exc:
        raise ChatImportError(_sentence(doc, exc)) from None


def _sentence(doc: Any, exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    loc = list(err["loc"])
    where: list[str] = []
    if loc[:1] == ["conversations"] and len(loc) > 1 and isinstance(loc[1], int):
        i = loc[1]
        title = _get(doc, "conversations", i, "title")
        where.append(f"chat {i + 1}" + (f" ({_short(title)})" if isinstance(title, str) else ""))
        loc = loc[2:]
        if loc[:1] == ["messages"] and len(loc) > 1 and isinstance(loc[1], int):
            where.append(f"message {loc[1] + 1}")
            loc = loc[2:]
    field = ".".join(str(p) for p in loc if not str(p).startswith(("function-", "constrained-")))
    if field:
        where.append(f"field {field}")
    return f"{', '.join(where) or 'the file'}: {_why(err)}."


def _why(err: Any) -> str:
    kind, value = err["type"], err.get("input")
    shown = _short(value)
    if kind == "missing":
        return "is missing"
    if kind in ("finite_number",):
        return f"must be a finite number, not {shown}"
    if kind in ("float_type", "int_type", "int_from_float"):
        return f"must be a {'whole ' if kind != 'float_type' else ''}number, not {shown}"
    if kind in ("string_type", "bool_type", "dict_type", "list_type", "model_type", "model_attributes_type"):
        want = {"string_type": "text", "bool_type": "true or false", "dict_type": "an object",
                "list_type": "a list"}.get(kind, "an object")
        return f"must be {want}, not {shown}"
    if kind == "literal_error":
        return f"must be one of {err['ctx']['expected']}, not {shown}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return f"{shown} is out of range ({err['msg'].removeprefix('Input should be ')})"
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    return f"{err['msg']} (got {shown})"


def _get(doc: Any, *path: Any) -> Any:
    for p in path:
        try:
            doc = doc[p]
        except (KeyError, IndexError, TypeError):
            return None
    return doc


def _short(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    text = json.dumps(value, ensure_ascii=True) if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


# -- reads ----------------------------------------------------------------------------------------------------
@functools.cache
def _known_fields(kind: type[BaseModel]) -> frozenset[str]:
    return frozenset(kind.model_fields)


def _clean(kind: type[BaseModel], value: Any, what: object) -> dict[str, Any] | None:
    """``value`` checked as ``kind``; fields that fail are dropped (logged), never raised."""
    if value is None:
        return None
    if not isinstance(value, dict):
        log.warning("history: %s is not an object; left out", what)
        return None
    value = dict(value)
    known = _known_fields(kind)
    odd = [k for k, v in value.items() if k not in known and _json_problem(v)]
    for k in odd:
        del value[k]
    dropped = bool(odd)
    if odd:
        log.warning("history: %s: left out %s (not plain JSON)", what, ", ".join(map(str, odd)))
    for _ in range(len(value) + 1):
        try:
            kind.model_validate(value)
            out = value         # as stored (validation checked it; dumping would cost as much again)
            return None if dropped and not out else out
        except ValidationError as exc:
            bad = {e["loc"][0] for e in exc.errors(include_url=False) if e["loc"]}
            log.warning("history: %s: left out %s (wrong type or range)", what, ", ".join(sorted(map(str, bad))))
            if not bad & value.keys():
                return None
            for k in bad:
                value.pop(k, None)
            dropped = True
    return None


def clean_params(value: Any, what: object = "params") -> dict[str, Any] | None:
    """Stored sampling parameters with only fields of the right type and range (see the module docstring)."""
    return _clean(Params, value, what)


def _number_bounds(kind: type[BaseModel]) -> dict[str, tuple[type, float, float]]:
    """Each field of ``kind`` (all optional numbers with ``ge``/``le``) → (int or float, lowest, highest)."""
    out = {}
    for name, field in kind.model_fields.items():
        number = next(a for a in typing.get_args(field.annotation) if a is not type(None))   # Annotated[int, …]
        base, info = typing.get_args(number)
        lo = next(m.ge for m in info.metadata if hasattr(m, "ge"))
        hi = next(m.le for m in info.metadata if hasattr(m, "le"))
        out[name] = (base, float(lo), float(hi))
    return out


_METRICS_BOUNDS = _number_bounds(Metrics)


def _plain_figures(value: dict[str, Any]) -> bool:
    """Whether every key of ``value`` is a ``Metrics`` field holding None or a number of its type within its
    range: then pydantic would accept it as it is. False sends it the slow way (``_clean``), which then finds and
    logs what is wrong. Opening a chat checks every reply's figures: 2 µs here against 9 µs in pydantic."""
    bounds = _METRICS_BOUNDS
    for k, v in value.items():
        b = bounds.get(k)
        if b is None:
            return False
        if v is None:
            continue
        t = type(v)
        if not (t is int or (t is float and b[0] is float)):   # bool is not int here; a float is no count
            return False
        if not b[1] <= v <= b[2]:                              # NaN and ±inf fail this too
            return False
    return True


def loads_json(v: Any) -> Any:
    """A stored JSON value parsed by pydantic-core's parser, or None (not text, or not JSON): the values of
    ``json.loads`` (NaN and ±inf too, checked by the cleaners) at a third of its cost (2.6 µs against 7 µs for a
    reply's figures), for what is read once per message when a chat opens."""
    if not isinstance(v, (str, bytes)):
        return None
    try:
        return pydantic_core.from_json(v)
    except ValueError:            # not JSON, or nested past its recursion limit
        return None


def clean_metrics(value: Any, what: object = "metrics") -> dict[str, Any] | None:
    """Stored reply figures with only fields of the right type and range (a copy)."""
    if type(value) is dict and _plain_figures(value):
        return dict(value)
    return _clean(Metrics, value, what)


def clean_provenance(value: Any, what: object = "provenance") -> dict[str, Any] | None:
    """Stored provenance with only fields of the right type and range."""
    return _clean(Provenance, value, what)


def clean_versions(others: list[dict[str, Any]] | None, what: object = "versions") -> list[dict[str, Any]] | None:
    """A reply's other versions read back: each one's fields cleaned like the reply's own; a version without
    text of its own is left out."""
    out = []
    for v in others or []:
        if not isinstance(v.get("content"), str):
            log.warning("history: %s: a version without text left out", what)
            continue
        status = v.get("status") if v.get("status") in STATUSES else "stopped"
        out.append({"content": v["content"], "status": status, "created": clean_time(v.get("created")),
                    "model": clean_text(v.get("model")), "params": clean_params(v.get("params"), what),
                    "stop_reason": clean_text(v.get("stop_reason")), "error": clean_text(v.get("error")),
                    "metrics": clean_metrics(v.get("metrics"), what),
                    "provenance": clean_provenance(v.get("provenance"), what)})
    return out or None
