"""The types of a profile's fields: each checks its value where it comes in and says what to fix.

They are shared by every reader of a profile (the hub's config, the portal's API, its table
and its admin form: gpuportal_core.profiles.ProfileSpec), so a rule lives here once.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PlainSerializer,
    Strict,
    WithJsonSchema,
)

from gpuportal_core.gres import GPU_KIND_RE
from gpuportal_core.slurm_time import RuntimeFormatError, format_runtime, parse_runtime

# Slugs and Slurm names end up in sbatch options: keep them to a plain, shell-inert alphabet.
SLUG_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?")
SLURM_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# LDAP/Unix group names, as the hub and the portal see them.
GROUP_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
# The sbatch options an admin may add to a profile, each with the values it takes. Anything
# else (--wrap, --export, --uid, ...) could change what runs or as whom, so it is not offered.
EXTRA_SBATCH_OPTIONS: dict[str, re.Pattern[str]] = {
    "account": SLURM_NAME_RE,
    "qos": SLURM_NAME_RE,
    "reservation": SLURM_NAME_RE,
    # Node features with Slurm's operators: "a100", "a100&ib", "[rack1|rack2]".
    "constraint": re.compile(r"[A-Za-z0-9_.&|,:*\[\]-]{1,200}"),
}


class ProfileError(ValueError):
    """A profile definition that breaks a rule; the message names the field and the rule."""


def check_sbatch_option(option: str, value: str, *, where: str) -> None:
    """Refuse an extra sbatch option outside the allow-list, or a value outside its alphabet."""
    rule = EXTRA_SBATCH_OPTIONS.get(option)
    if rule is None:
        raise ProfileError(
            f"{where}: sbatch option {option!r} is not allowed; "
            f"allowed: {', '.join(EXTRA_SBATCH_OPTIONS)}"
        )
    if not rule.fullmatch(value):
        raise ProfileError(
            f"{where}: {option} value {value!r} may only hold letters, digits and _ . -"
            + (" & | , : * [ ]" if option == "constraint" else "")
        )


def _parse(text: str) -> int:
    try:
        return parse_runtime(text)
    except RuntimeFormatError:
        raise ValueError("must be HH:MM:SS, e.g. 08:00:00") from None


def _seconds(value: object) -> object:
    # Config files and the API write "HH:MM:SS"; code and the stored form may hand seconds.
    return _parse(value) if isinstance(value, str) else value


def _runtime(seconds: int) -> int:
    if seconds < 60:
        raise ValueError("must be at least 00:01:00")
    return seconds


def _runtime_text(text: str) -> str:
    _runtime(_parse(text))
    return text


def _limit(seconds: int) -> int:
    if seconds < 0 or 0 < seconds < 60:
        raise ValueError("must be 00:00:00 (never) or at least 00:01:00")
    return seconds


def one_line(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    if "\n" in text or "\r" in text:
        raise ValueError("must be one line")
    return text.strip()


def _slurm_name(text: str) -> str:
    if not SLURM_NAME_RE.fullmatch(text):
        raise ValueError("must be a Slurm name: letters, digits and _ . - (up to 64)")
    return text


def _gpu_kind(text: str) -> str:
    if text and not GPU_KIND_RE.fullmatch(text):
        raise ValueError(
            "must be a GPU kind as gres.conf names it (letters, digits and _ . + -, up to 32, "
            "e.g. a100 or 1g.10gb), or empty for any kind"
        )
    return text


def _slug(text: str) -> str:
    if not SLUG_RE.fullmatch(text):
        raise ValueError("must be 1-40 lowercase letters, digits and inner dashes, e.g. gpu-2")
    return text


def _groups(groups: tuple[str, ...]) -> tuple[str, ...]:
    for group in groups:
        if not GROUP_RE.fullmatch(group):
            raise ValueError(f"{group!r} is not a group name (letters, digits and _ . -)")
    return tuple(sorted(set(groups)))


def _sbatch_options(options: dict[str, str]) -> dict[str, str]:
    for option, value in options.items():
        try:
            check_sbatch_option(option, value, where="sbatch_options")
        except ProfileError as error:
            raise ValueError(str(error).removeprefix("sbatch_options: ")) from None
    return dict(sorted(options.items()))


# Seconds, written "HH:MM:SS" (hours may pass 24) or given as a number of seconds; always
# shown as "HH:MM:SS" in JSON. Strict: true/false are not 1/0 seconds.
_SECONDS_IN = WithJsonSchema(
    {
        "anyOf": [
            {"type": "string", "description": "HH:MM:SS", "examples": ["08:00:00"]},
            {"type": "integer", "description": "seconds"},
        ]
    },
    mode="validation",
)
_SECONDS_OUT = WithJsonSchema({"type": "string", "examples": ["08:00:00"]}, mode="serialization")
_AS_TEXT = PlainSerializer(format_runtime, return_type=str, when_used="json")
Runtime = Annotated[
    int,
    Strict(),
    AfterValidator(_runtime),
    BeforeValidator(_seconds),
    _AS_TEXT,
    _SECONDS_IN,
    _SECONDS_OUT,
]
# A runtime kept as the text it was written in ("HH:MM:SS", at least a minute), as jobs take it.
RuntimeText = Annotated[str, AfterValidator(_runtime_text)]
# A culling limit: as a runtime, or 0 (00:00:00) for never.
Limit = Annotated[
    int,
    Strict(),
    AfterValidator(_limit),
    BeforeValidator(_seconds),
    _AS_TEXT,
    _SECONDS_IN,
    _SECONDS_OUT,
]
Title = Annotated[str, Field(max_length=100), AfterValidator(one_line)]
Description = Annotated[str, Field(max_length=500)]
Slug = Annotated[str, AfterValidator(_slug)]
PartitionName = Annotated[str, AfterValidator(_slurm_name)]
GpuKind = Annotated[str, AfterValidator(_gpu_kind)]
# Sorted, each once; a tuple so that a profile stays hashable.
Groups = Annotated[tuple[str, ...], AfterValidator(_groups)]
SbatchOptions = Annotated[dict[str, str], AfterValidator(_sbatch_options)]


def is_seconds(metadata: list[object]) -> bool:
    """Whether a field (by its pydantic metadata) holds seconds written HH:MM:SS."""
    return _AS_TEXT in metadata
