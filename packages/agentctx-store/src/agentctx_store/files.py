"""Writing files so that a reader never sees half of one: temp file beside it, then rename."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def atomic_write(target: Path, text: str) -> None:
    """Replace `target` with `text` atomically, keeping the permissions of the file it replaces."""
    import tempfile
    from pathlib import Path

    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as temp:
            temp.write(text)
        if target.exists():
            os.chmod(temp_name, target.stat().st_mode & 0o7777)
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
