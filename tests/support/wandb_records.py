"""Read an offline W&B run back from its ``run-<id>.wandb`` file, with W&B's own record type.

wandb 0.31 ships no Python reader of its transaction log (its Go core writes and uploads it), so this walks the
file's framing, LevelDB's log format that W&B documents for it (a 7-byte header ``:W&B`` + magic + version, then
32 KiB blocks of records, each ``crc32c (4) | length (2) | type (1)``: full, or first/middle/last pieces), and parses
every record with ``wandb.proto.wandb_internal_pb2.Record``. Run with the tracking environment's Python:
``python tests/support/wandb_records.py RUN_FOLDER`` prints ``{"config", "summary", "artifacts"}`` as JSON.
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

BLOCK = 32 * 1024
HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def frames(data: bytes) -> Iterator[bytes]:
    """The records of a ``.wandb`` file, their pieces joined."""
    if data[:4] != b":W&B":
        raise ValueError("not a W&B transaction log")
    position, pending = HEADER, b""
    while position + HEADER <= len(data):
        left = BLOCK - position % BLOCK
        if left < HEADER:  # a block ends in padding
            position += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[position:position + HEADER])
        if kind == 0 and length == 0:  # zero padding up to the block's end
            position += left
            continue
        body = data[position + HEADER:position + HEADER + length]
        position += HEADER + length
        if kind == FULL:
            yield body
        elif kind == FIRST:
            pending = body
        elif kind == MIDDLE:
            pending += body
        elif kind == LAST:
            yield pending + body
            pending = b""


def read_run(folder: Path) -> dict[str, object]:
    """The config, summary and artifact files recorded in a run folder."""
    from wandb.proto.wandb_internal_pb2 import Record

    log = next(folder.glob("run-*.wandb"))
    config: dict[str, object] = {}
    summary: dict[str, object] = {}
    artifacts: list[list[str]] = []
    name = None
    for frame in frames(log.read_bytes()):
        record = Record.FromString(frame)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            name = record.run.display_name
            config.update({_key(item): json.loads(item.value_json) for item in record.run.config.update})
        elif kind == "config":
            config.update({_key(item): json.loads(item.value_json) for item in record.config.update})
        elif kind == "summary":
            summary.update({_key(item): json.loads(item.value_json) for item in record.summary.update})
        elif kind == "artifact":
            artifacts.append(sorted(entry.path for entry in record.artifact.manifest.contents))
    return {"name": name, "config": config, "summary": summary, "artifacts": artifacts}


def _key(item: object) -> str:
    """An item's key; W&B's own entries (``_wandb.runtime``) carry a nested key instead."""
    key = getattr(item, "key", "")
    return key or ".".join(getattr(item, "nested_key", []))


if __name__ == "__main__":
    print(json.dumps({folder: read_run(Path(folder)) for folder in sys.argv[1:]}))
