"""`python -m agentctx_embed.dump_vectors DB`: the stored vectors of every current record, on stdout.

The warm search service runs this in a child process when it starts. The service reads and
writes the store through the stdlib `sqlite3` (its search is the store's), and the vectors live
in a `vec0` table only `apsw` with sqlite-vec can read; two SQLite libraries must never share one
process (docs/consolidation.md, "Why two phases"), so the apsw side runs here, alone.

Output: one JSON line `{"model", "dims", "ids"}`, then `len(ids) × dims` little-endian float32.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentctx_embed.vectors import VectorStore


def main(argv: list[str]) -> int:
    db = Path(argv[0])
    out = sys.stdout.buffer
    if not db.exists():
        out.write(b'{"model": "", "dims": 0, "ids": []}\n')
        return 0
    with VectorStore.open(db) as vectors:
        meta = (
            vectors.meta()
            if vectors.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vector_meta'").fetchone()
            else {}
        )
        current = [row[0] for row in vectors.conn.execute("SELECT id FROM records WHERE superseded_at IS NULL")]
        ids, matrix = vectors.matrix(current) if meta.get("model") else ([], None)
    header = {
        "model": meta.get("model", ""),
        "dims": int(matrix.shape[1]) if matrix is not None and ids else 0,
        "ids": ids,
    }
    out.write(json.dumps(header).encode("utf-8") + b"\n")
    if ids and matrix is not None:
        out.write(matrix.astype("<f4").tobytes())
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
