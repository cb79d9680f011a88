"""The admin's profile form, laid out from the profile spec's fields (their titles, hints,
types and sections: gpuportal_core.profiles.ProfileSpec), so that a new field shows on the
form without touching the page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotated_types import MaxLen
from pydantic.fields import FieldInfo
from starlette.datastructures import FormData

from gpuportal_core.partitions import Partition
from gpuportal_core.profile_fields import EXTRA_SBATCH_OPTIONS, is_seconds
from gpuportal_core.profiles import ProfileSpec, spec_values

# Longer texts than this get a text area.
ONE_LINE_CHARACTERS = 100


@dataclass(frozen=True)
class FormField:
    name: str
    label: str
    hint: str
    # How it is typed: text, seconds (HH:MM:SS text), number, textarea, checkbox,
    # options (one input per allowed sbatch option), names (a comma-separated list).
    widget: str
    section: str  # a fieldset's legend, or "" for none
    section_hint: str


def _widget(field: FieldInfo) -> str:
    kind = field.annotation
    if is_seconds(field.metadata):
        return "seconds"
    if kind is bool:
        return "checkbox"
    if kind is int:
        return "number"
    if kind is str:
        longest = max((m.max_length for m in field.metadata if isinstance(m, MaxLen)), default=0)
        return "textarea" if longest > ONE_LINE_CHARACTERS else "text"
    return "options" if getattr(kind, "__origin__", None) is dict else "names"


def _extra(field: FieldInfo, key: str) -> str:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    return str(extra.get(key, ""))


def form_fields() -> list[FormField]:
    """The spec's fields in order, as the form shows them."""
    return [
        FormField(
            name=name,
            label=field.title or name,
            hint=field.description or "",
            widget=_widget(field),
            section=_extra(field, "section"),
            section_hint=_extra(field, "section_hint"),
        )
        for name, field in ProfileSpec.model_fields.items()
    ]


def blank_form(partition: str) -> dict[str, Any]:
    """A new profile's form: the spec's defaults, on the deployment's partition."""
    defaults = spec_values(ProfileSpec(title="-", gpus=1, partition=partition))
    return {**defaults, "slug": "", "title": ""}


def read_form(form: FormData, *, creating: bool) -> dict[str, Any]:
    """The form's fields as API values; an empty number or time falls back to the default."""
    text = {key: str(value).strip() for key, value in form.items() if isinstance(value, str)}
    values: dict[str, Any] = {"slug": text.get("slug", "")} if creating else {}
    if not creating:
        values["version"] = text.get("version", "")
    for field in form_fields():
        name = field.name
        if field.widget == "checkbox":
            values[name] = name in text
        elif field.widget == "options":
            values[name] = {
                option: text[f"{name}_{option}"]
                for option in EXTRA_SBATCH_OPTIONS
                if text.get(f"{name}_{option}")
            }
        elif field.widget == "names":
            values[name] = [part.strip() for part in text.get(name, "").split(",") if part.strip()]
        elif name in text and (text[name] or field.widget in ("text", "textarea")):
            values[name] = text[name]
    return values


@dataclass(frozen=True)
class KindOffer:
    """A GPU kind the cluster carries, with what a profile of it gets per GPU."""

    kind: str
    partitions: tuple[str, ...]
    cores_per_gpu: int
    mem_per_gpu_gb: int
    site: bool  # the site's figures (PORTAL_GPU_KINDS); else what its nodes give

    @property
    def said(self) -> str:
        where = ", ".join(self.partitions)
        source = "the site's rule" if self.site else "what its nodes give"
        return (
            f"{self.kind} ({where}): {self.cores_per_gpu} cores and {self.mem_per_gpu_gb} GB "
            f"per GPU, {source}"
        )


def kind_offers(
    partitions: dict[str, Partition], site: dict[str, tuple[int, int]]
) -> list[KindOffer]:
    """Each GPU kind of the cluster's partitions, with the cores and memory per GPU the admin
    form offers for it: the site's figures where it set them, else the nodes' (their cores and
    memory over their GPUs, the smallest share of the nodes that carry it)."""
    found: dict[str, list[str]] = {}
    shares: dict[str, tuple[int, int]] = {}
    for name, partition in sorted(partitions.items()):
        for kind in partition.gpu_kinds:
            share = partition.per_gpu(kind)
            if not kind or share is None:
                continue
            found.setdefault(kind, []).append(name)
            known = shares.get(kind, share)
            shares[kind] = (min(known[0], share[0]), min(known[1], share[1]))
    return [
        KindOffer(
            kind,
            tuple(names),
            *site.get(kind, shares[kind]),
            site=kind in site,
        )
        for kind, names in sorted(found.items())
    ]
