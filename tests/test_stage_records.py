"""Typed stage records: prepare and infer write a versioned record the next stage reads back."""

from __future__ import annotations

from pathlib import Path

from mmbatch.cli import main
from mmbatch.stage_records import RECORD_VERSION, InferRecord, PrepareRecord
from mmbatch.tableio import read_metadata
from tests.conftest import EXAMPLES


def test_prepare_and_infer_records_round_trip_through_the_files(tmp_path: Path) -> None:
    prepared, predictions = tmp_path / "prepared.parquet", tmp_path / "predictions.parquet"
    assert main(["prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(prepared),
                 "--limit", "2"]) == 0
    record = PrepareRecord.from_metadata(read_metadata(prepared))
    assert record == PrepareRecord(benchmark="mme", benchmark_version="1.0", template="mme", mode="generate",
                                   media_root=record.media_root, rows=2, groups=1, record_version=RECORD_VERSION)
    assert record is not None and Path(record.media_root or "").is_dir()
    assert main(["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo", "--model",
                 "answer", "--likelihood-target", "letter"]) == 0
    metadata = read_metadata(predictions)
    assert InferRecord.from_metadata(metadata) == InferRecord(
        backend="echo", model="answer", likelihood_target="letter",
        input_fingerprint=metadata["infer"]["resume"]["input_fingerprint"], shard=metadata["infer"]["shard"],
        backend_options={"model": "answer", "temperature": 0.0})
    assert PrepareRecord.from_metadata(metadata) == record  # the prepare record travels with the rows


def test_files_from_before_versioned_records_read_as_version_0() -> None:
    old = {"prepare": {"benchmark": "mmbench", "media_root": "/data/mmbench", "template": "vlmevalkit",
                       "reader": "mmbench", "limit": None}}
    record = PrepareRecord.from_metadata(old)
    assert record is not None and (record.record_version, record.media_root, record.benchmark_version) == (
        0, "/data/mmbench", None)
    assert InferRecord.from_metadata(old) is None and PrepareRecord.from_metadata({}) is None


def test_a_partial_record_still_reads() -> None:
    record = InferRecord.from_metadata({"infer": {"likelihood_target": "letter"}})
    assert record is not None and (record.likelihood_target, record.backend, record.record_version) == (
        "letter", None, 0)
