"""A file replaced whole: written beside its place, then renamed over it, so that a reader (or a
crash) never meets half a file. The temporary file is made 0600, and so is the result."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace_whole(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
