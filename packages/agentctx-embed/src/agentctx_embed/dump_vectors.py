"""`python -m agentctx_embed.dump_vectors DB`: the stored vectors of every current record, on stdout.

The warm search service runs this in a child process when it starts. The service reads and
writes the store through the stdlib `sqlite3` (its search is the store's), and the vectors live
in a `vec0` table only `apsw` with sqlite-vec can read; two SQLite libraries must never share one
process (docs/consolidation.md, "Why two phases"), so the apsw side runs here, alone.

Output: one JSON line `{"model", "text", "dims", "ids"}` (`text`: the form of the embedded text,
`phase.TEXT_FORM` when current), then `len(ids) × dims` little-endian float32.
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
        out.write(b'{"model": "", "text": "", "dims": 0, "ids": []}\n')
        return 0
    with VectorStore.open(db) as vectors:
        meta = (
            vectors.meta()
            if vectors.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vector_meta'").fetchone()
            else {}
        )
        current = {row[0] for row in vectors.conn.execute("SELECT id FROM records WHERE superseded_at IS NULL")}
        ids: list[str] = []
        blobs: list[bytes] = []
        if meta.get("model") and vectors.has_table():
            # one pass over the table: a lookup per id is a scan per chunk on a vec0 table
            for record_id, blob in vectors.conn.execute(f"SELECT record_id, embedding FROM {vectors.table()}"):
                if record_id in current:
                    ids.append(record_id)
                    blobs.append(blob)
    header = {
        "model": meta.get("model", ""),
        "text": meta.get("text", ""),
        "dims": len(blobs[0]) // 4 if blobs else 0,
        "ids": ids,
    }
    out.write(json.dumps(header).encode("utf-8") + b"\n")
    for blob in blobs:
        out.write(blob)
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
