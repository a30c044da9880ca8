"""Commits as plain records (issue 21 item 5): ``infer`` appends each result as a JSON record, not a one-row frame
and an Arrow IPC stream; every value comes back exactly, from the live segment, from a dead process's segment, and
from the Parquet part a sealed segment becomes."""

from __future__ import annotations

import math
import os
import signal
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import mmbatch.journal as journal_module
from mmbatch.infer.outputs import PREDICTION_SCHEMA
from mmbatch.journal import RowJournal, committed_rows
from mmbatch.journal_segments import HEADER, RECORDS_MAGIC, SEGMENT_GLOB, read_segment
from tests.conftest import REPO_ROOT

RECORDS = [
    {"index": 1, "prediction": "B, because «the cat» 🐈", "choice_logprobs": None, "choice_ntokens": None,
     "model": "m", "error": None, "output_tokens": 7, "latency_ms": 0.1 + 0.2, "generated_image": None},
    {"index": 2, "prediction": "", "choice_logprobs": [-math.inf, -1e-300, -2.5], "choice_ntokens": [1, 2, 3],
     "model": "m", "error": None, "output_tokens": 0, "latency_ms": 12.0, "generated_image": None},
    {"index": 3, "prediction": None, "choice_logprobs": None, "choice_ntokens": None, "model": "m",
     "error": "HTTP 500 from the server:\n\tinternal error", "output_tokens": None, "latency_ms": None,
     "generated_image": None},
]


def journal(tmp_path: Path) -> RowJournal:
    return RowJournal(tmp_path / "preds.parquet", {"m": 1}, schema=PREDICTION_SCHEMA)


def expected() -> pl.DataFrame:
    return pl.DataFrame(RECORDS, schema=PREDICTION_SCHEMA)


def frames_of(segment: Path) -> list[bytes]:
    """The magic of every frame in a segment file."""
    data, offset, magics = segment.read_bytes(), 0, []
    while offset < len(data):
        magic, length, _ = HEADER.unpack_from(data, offset)
        magics.append(magic)
        offset += HEADER.size + length
    return magics


def test_records_come_back_exactly_from_the_segment_and_from_the_part(tmp_path: Path) -> None:
    progress = journal(tmp_path)
    for record in RECORDS:
        progress.commit_records([record])
    segment, = progress.dir.glob(SEGMENT_GLOB)
    assert frames_of(segment) == [RECORDS_MAGIC] * 3  # one record frame per commit, no Arrow IPC
    assert progress.rows().equals(expected())  # type: ignore[union-attr]
    progress.seal()
    assert not list(progress.dir.glob(SEGMENT_GLOB)) and len(list(progress.dir.glob("part-*.parquet"))) == 1
    assert journal(tmp_path).rows().equals(expected())  # type: ignore[union-attr]


def test_a_killed_process_segment_of_records_is_adopted_with_its_types(tmp_path: Path) -> None:
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from mmbatch.infer.outputs import PREDICTION_SCHEMA\n"
        "from mmbatch.journal import RowJournal\n"
        "from tests.test_journal_records import RECORDS\n"
        "journal = RowJournal(Path(sys.argv[1]) / 'preds.parquet', {'m': 1}, schema=PREDICTION_SCHEMA)\n"
        "for record in RECORDS:\n"
        "    journal.commit_records([record])\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    killed = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, cwd=REPO_ROOT, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    segment, = (tmp_path / "preds.parquet.partial").glob(SEGMENT_GLOB)
    adopted = journal(tmp_path)  # its lock died with it: the segment becomes a part
    assert not segment.exists()
    assert adopted.rows().equals(expected())  # type: ignore[union-attr]


def test_frames_and_records_keep_their_commit_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal_module, "ROTATE_COMMITS", 4)
    progress = journal(tmp_path)
    progress.commit_records([{**RECORDS[0], "error": "timeout"}])
    progress.commit(expected().head(1))  # the same row done, as a frame: the later success wins
    progress.commit_records(RECORDS[1:2])
    progress.commit_records([{**RECORDS[1], "prediction": "later"}])  # the 4th commit seals the segment
    progress.commit_records(RECORDS[2:])
    rows = progress.rows()
    assert rows is not None and rows["index"].to_list() == [1, 2, 3]
    assert rows.filter(pl.col("index") == 1)["error"].to_list() == [None]
    assert rows.filter(pl.col("index") == 2)["prediction"].to_list() == ["later"]
    segment, = progress.dir.glob(SEGMENT_GLOB)
    assert frames_of(segment) == [RECORDS_MAGIC]


def test_numpy_scalars_are_written_as_numbers_and_other_objects_refused(tmp_path: Path) -> None:
    progress = journal(tmp_path)
    progress.commit_records([{**RECORDS[1], "choice_logprobs": [np.float32(-0.5), np.float64(-1.25)],
                              "output_tokens": np.int64(3)}])
    rows = progress.rows()
    assert rows is not None and rows["choice_logprobs"].to_list() == [[-0.5, -1.25]]
    assert rows["output_tokens"].to_list() == [3]
    with pytest.raises(TypeError, match="not object"):
        progress.commit_records([{**RECORDS[0], "prediction": object()}])


def test_a_column_the_schema_does_not_declare_is_refused(tmp_path: Path) -> None:
    progress = journal(tmp_path)
    with pytest.raises(ValueError, match=r"\['confidence'\]"):
        progress.commit_records([{**RECORDS[0], "confidence": 0.9}])  # a frame built from it would drop the column
    assert progress.rows() is None


def test_a_torn_record_is_not_committed_and_a_damaged_one_is_reported(tmp_path: Path) -> None:
    progress = journal(tmp_path)
    progress.commit_records(RECORDS[:2])
    segment, = progress.dir.glob(SEGMENT_GLOB)
    intact = segment.read_bytes()
    segment.write_bytes(intact + intact[: HEADER.size + 5])  # a kill in the middle of the next append
    contents = read_segment(segment, PREDICTION_SCHEMA)
    assert contents.corruption is None and contents.frames[0].height == 2
    payload = b'{"index": 9'  # a complete frame, checksum right, JSON cut: cannot come from a kill
    segment.write_bytes(intact + struct.pack(HEADER.format, RECORDS_MAGIC, len(payload), zlib.crc32(payload))
                        + payload)
    contents = read_segment(segment, PREDICTION_SCHEMA)
    assert contents.corruption is not None and "unreadable frame" in contents.corruption
    assert contents.frames[0].height == 2


def test_committed_rows_reads_record_segments_from_outside(tmp_path: Path) -> None:
    progress = journal(tmp_path)
    progress.commit_records(RECORDS)
    rows = committed_rows(progress.dir, PREDICTION_SCHEMA)
    assert rows is not None and rows.equals(expected())
    untyped = committed_rows(progress.dir)  # types inferred from the values
    assert untyped is not None and untyped["index"].to_list() == [1, 2, 3]


def test_a_commit_stopped_before_it_appended_leaves_nothing_to_seal(tmp_path: Path) -> None:
    # Found by tests/test_messages.py's SIGTERM test on a loaded box: the stop came after the commit had opened its
    # segment and before it appended, and the stage's closing seal() then failed on no frames ("cannot concat empty
    # list"), a traceback and exit 1 in place of the SIGTERM message. A value the encoder refuses stops a commit at
    # the same point, deterministically.
    progress = journal(tmp_path)
    with pytest.raises(TypeError, match="a committed value must be"):
        progress.commit_records([{**RECORDS[0], "prediction": object()}])
    assert len(list(progress.dir.glob(SEGMENT_GLOB))) == 1  # opened, holding no frame
    progress.seal()
    assert not list(progress.dir.glob(SEGMENT_GLOB)) and committed_rows(progress.dir) is None
    progress.commit_records(RECORDS)  # the journal goes on as before
    progress.seal()
    assert committed_rows(progress.dir).equals(expected())
