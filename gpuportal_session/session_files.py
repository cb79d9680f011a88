"""What a session finds in the user's home: the template notebooks and a link to shared data.

Run in the job as the user, before JupyterLab starts. Template files are copied on the first
start and refreshed when the shipped version changes, but a file the user edited (or deleted) is
never overwritten (or brought back) unless the shipped file changed since.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = ".gpuportal-templates.json"
SHIPPED_SUFFIXES = (".ipynb", ".md", ".py")


@dataclass
class SyncReport:
    copied: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # edited by the user: left alone


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sync_templates(source: Path, target: Path) -> SyncReport:
    """Bring target (e.g. ~/templates) up to date with source without losing the user's edits.

    The manifest remembers, per file, the digest of the shipped version last written there, and
    of that shipped version: an unchanged digest on disk means the user has not touched it.
    """
    report = SyncReport()
    target.mkdir(parents=True, exist_ok=True)
    manifest_path = target / MANIFEST
    try:
        manifest: dict[str, str] = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        manifest = {}
    for shipped in sorted(source.iterdir()):
        if not shipped.is_file() or shipped.suffix not in SHIPPED_SUFFIXES:
            continue
        name, shipped_digest = shipped.name, _digest(shipped)
        dest = target / name
        written = manifest.get(name)
        if not dest.exists():
            if written == shipped_digest:
                continue  # the user deleted it, and there is nothing new to bring back
            shutil.copyfile(shipped, dest)
            report.copied.append(name)
        elif written is not None and _digest(dest) == written:
            if written == shipped_digest:
                continue
            shutil.copyfile(shipped, dest)
            report.updated.append(name)
        else:
            report.kept.append(name)
            continue
        manifest[name] = shipped_digest
    tmp = manifest_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(tmp, manifest_path)
    return report


def link_shared(home: Path, shared: Path, name: str = "shared") -> bool:
    """Make ~/shared point at the cluster's shared data area, unless the user has their own."""
    link = home / name
    if not shared.is_dir() or link.exists() or link.is_symlink():
        return False
    link.symlink_to(shared)
    return True
