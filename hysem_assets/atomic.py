"""Files written whole or not at all: a temporary file beside the target, then a rename.

Caches and tables are read by other processes (a second run, `hysem ask`) while they are
written; a reader must find the old file or the new one, never half of either.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_json(path: Path, value: Any) -> None:
    """``value`` as UTF-8 JSON at ``path``, replacing it atomically; values JSON lacks are written as text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(value, file, ensure_ascii=False, default=str)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
