"""``extract`` and ``score`` read their input a batch at a time (mmbatch/table_batches.py): the files they write must
not depend on where the batches end.

Each real file goes through ``extract`` and ``score`` twice, in-process: with the default batches (the file in one)
and with batches of about a sixth of its rows, so that circular groups, MME's image pairs, the judge's groups and the
rules' remembered decisions all cross batch boundaries. The extracted file, the hits file and the metrics must be
the same, cell for cell and type for type, metadata included (but for the run's wall time).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from support.extract_rows import judge_rows, scripted_judge, write_predictions
from support.openai_server import OpenAIServer, ServerScript

import mmbatch.table_batches
from mmbatch.cli import main
from mmbatch.errors import BadInputError
from mmbatch.tableio import read_metadata, read_table

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "data"
NO_KEYS = {"OPENAI_API_KEY": "", "MMBATCH_JUDGE_API_KEY": "", "OPENAI_BASE_URL": ""}


def _run(folder: Path, predictions: Path, extract_args: list[str], score_args: list[str]) -> dict[str, Path]:
    folder.mkdir()
    extracted, metrics = folder / "extracted.parquet", folder / "metrics.json"
    assert main(["extract", "--input", str(predictions), "--output", str(extracted), *extract_args]) in (0, 3)
    assert main(["score", "--input", str(extracted), "--output", str(metrics), *score_args]) == 0
    return {"extracted": extracted, "hits": metrics.with_suffix(".hits.parquet"), "metrics": metrics}


def _without_timings(metadata: dict[str, Any]) -> dict[str, Any]:
    metadata = json.loads(json.dumps(metadata))
    for section in ("extract", "score"):
        if isinstance(metadata.get(section), dict):
            metadata[section].pop("input", None)
            metadata[section].pop("hits_sha256", None)
            metadata[section].get("counts", {}).pop("wall_s", None)
    return metadata


def assert_same_files(whole: dict[str, Path], batched: dict[str, Path]) -> None:
    for name in ("extracted", "hits"):
        before, after = read_table(whole[name]).frame, read_table(batched[name]).frame
        assert before.schema == after.schema, name
        for column in before.columns:
            assert before[column].equals(after[column]), f"{name}: column {column} differs"
        assert _without_timings(read_metadata(whole[name])) == _without_timings(read_metadata(batched[name])), name
    assert json.loads(whole["metrics"].read_text()) == json.loads(batched["metrics"].read_text())


def in_batches_of_a_sixth(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Make the batches of every file read from now on about a sixth of ``path``'s rows (at least 1)."""
    frame = read_table(path).frame
    monkeypatch.setattr(mmbatch.table_batches, "BATCH_CELLS", max(1, frame.height // 6) * (frame.width + 8))


CASES = {
    # (import arguments or None for a file extracted as it is, extract arguments, score arguments)
    "mmbench-llava-xlsx-imported": (["--format", "vlmevalkit", "--input",
                                     "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx",
                                     "--benchmark", "mmbench"], ["--no-judge"], []),
    "mmbench-llava-xlsx-as-it-is": (None, ["--no-judge", "--benchmark", "mmbench", "--input-file",
                                           "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"], []),
    "mme-lavin": (["--format", "mme-eval-tool", "--input", "mme/LaVIN"], ["--no-judge", "--yes-no-rule", "official"],
                  []),
    "textvqa-vila": (["--format", "vlmevalkit", "--input",
                      "real_results/vila_13b_vlmevalkit-pr320/vila_13b_TextVQA_VAL.xlsx"],
                     ["--no-judge", "--kind-option", "rules=vlmevalkit-2024"], []),
    "mmvet-stored-grades": (["--format", "vlmevalkit", "--input",
                             "real_results/instructblip_7b_vlmevalkit-pr7/instructblip_7b_MMVet.xlsx", "--judged",
                             "real_results/instructblip_7b_vlmevalkit-pr7/instructblip_7b_MMVet_gpt4.xlsx"],
                            ["--stored-verdicts"], []),
    "seedbench": (["--format", "vlmevalkit", "--input", "vlmevalkit_vila/vila_13b/vila_13b_SEEDBench_IMG.xlsx"],
                  ["--no-judge"], ["--benchmark", "seedbench"]),
    "pope": (["--format", "vlmevalkit", "--input", "real_results/vila_13b_vlmevalkit-pr320/vila_13b_POPE.xlsx"],
             ["--no-judge"], []),
    "hallusionbench": (["--format", "vlmevalkit", "--input",
                        "real_results/vila_13b_vlmevalkit-pr320/vila_13b_HallusionBench.xlsx"], ["--no-judge"], []),
}


@pytest.mark.parametrize("case", list(CASES))
def test_real_files_come_out_the_same_in_batches(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import_args, extract_args, score_args = CASES[case]
    extract_args = list(extract_args)
    if import_args is None:  # the other tool's file extracted directly: completed whole, then read in batches
        source = REAL / extract_args.pop(extract_args.index("--input-file") + 1)
        extract_args.remove("--input-file")
        predictions = source
    else:
        import_args = [REAL / arg if (REAL / arg).exists() else arg for arg in import_args]  # type: ignore[misc]
        predictions = tmp_path / "predictions.parquet"
        assert main(["import", *map(str, import_args), "--output", str(predictions)]) == 0
    whole = _run(tmp_path / "whole", predictions, extract_args, score_args)
    in_batches_of_a_sixth(monkeypatch, predictions)
    batched = _run(tmp_path / "batched", predictions, extract_args, score_args)
    assert mmbatch.table_batches.read_batched(whole["extracted"]).count >= 5  # the second run really was batched
    assert_same_files(whole, batched)


def test_judge_groups_cross_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One row per batch: a circular group whose first row the rules found wrong in one batch is not asked about in
    another (rows 3 and 1000003), and the judge is asked exactly what it is asked in one batch."""
    monkeypatch.setenv("OPENAI_API_KEY", "")
    predictions = write_predictions(tmp_path / "pred.parquet", judge_rows())
    runs, asked = {}, {}
    for name in ("whole", "batched"):
        if name == "batched":
            monkeypatch.setattr(mmbatch.table_batches, "BATCH_CELLS", 1)
        with OpenAIServer(ServerScript(reply=scripted_judge)) as server:
            runs[name] = _run(tmp_path / name, predictions,
                              ["--judge-base-url", server.base_url, "--judge-cache", str(tmp_path / f"{name}.sqlite"),
                               "--retry-backoff", "0.01", "--timeout", "5"], [])
            asked[name] = sorted(request.prompt for request in server.chat_requests)
    assert len(asked["whole"]) == 7 and asked["batched"] == asked["whole"]
    assert mmbatch.table_batches.read_batched(predictions).count == len(judge_rows())
    for name in ("extracted", "hits"):  # the judge's cache paths differ; the rows may not
        before, after = read_table(runs["whole"][name]).frame, read_table(runs["batched"][name]).frame
        assert before.equals(after), name
    assert json.loads(runs["whole"]["metrics"].read_text()) == json.loads(runs["batched"]["metrics"].read_text())


def test_rows_left_out_of_scoring_are_left_out_of_the_hits_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """``--subset answered``: the hits file holds the scored rows only, each whole, in batches as in one."""
    source = REAL / "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"
    predictions = tmp_path / "predictions.parquet"
    assert main(["import", "--format", "vlmevalkit", "--input", str(source), "--output", str(predictions)]) == 0
    frame = read_table(predictions).frame
    unanswered = frame.with_columns(pl.when(pl.int_range(pl.len()) % 7 == 3).then(None).otherwise(pl.col("answer"))
                                    .alias("answer"))
    unanswered.write_parquet(predictions, metadata={"mmbatch": json.dumps(read_metadata(predictions))})
    whole = _run(tmp_path / "whole", predictions, ["--no-judge"], ["--subset", "answered"])
    in_batches_of_a_sixth(monkeypatch, predictions)
    batched = _run(tmp_path / "batched", predictions, ["--no-judge"], ["--subset", "answered"])
    assert_same_files(whole, batched)
    hits = read_table(batched["hits"]).frame
    assert hits.height == frame.height - (frame.height + 3) // 7
    assert hits.columns[: frame.width] == frame.columns and hits["question"].null_count() == 0


def test_a_tsv_output_is_the_same_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = REAL / "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"
    outputs = {}
    for name in ("whole", "batched"):
        if name == "batched":
            in_batches_of_a_sixth(monkeypatch, source)
        outputs[name] = tmp_path / f"{name}.tsv"
        assert main(["extract", "--input", str(source), "--output", str(outputs[name]), "--no-judge",
                     "--benchmark", "mmbench"]) == 0
    assert outputs["whole"].read_bytes() == outputs["batched"].read_bytes()
    whole, batched = (read_metadata(path) for path in outputs.values())
    assert _without_timings(whole) == _without_timings(batched)
    assert pl.read_csv(outputs["batched"], separator="\t", infer_schema=False).height == 4377


def test_a_file_of_scored_columns_only_scores_the_same_in_batches(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """No text to copy into the hits file (every column is one scoring reads), rows left out (--benchmark), and a
    benchmark named in capitals (read as its lower-case name)."""
    frame = pl.DataFrame({"index": list(range(40)), "benchmark": ["MMBench", "mme"] * 20,
                          "extracted": ["A", "B", "Yes", "No"] * 10, "answer": ["A", "A", "Yes", "Yes"] * 10})
    extracted = tmp_path / "extracted.parquet"
    frame.write_parquet(extracted)
    outputs = {}
    for name in ("whole", "batched"):
        if name == "batched":
            monkeypatch.setattr(mmbatch.table_batches, "BATCH_CELLS", 7 * frame.width)
        metrics = tmp_path / f"{name}.json"
        assert main(["score", "--input", str(extracted), "--output", str(metrics), "--benchmark", "mmbench"]) == 0
        outputs[name] = (read_table(metrics.with_suffix(".hits.parquet")).frame, json.loads(metrics.read_text()))
    assert mmbatch.table_batches.read_batched(extracted).count == 6
    assert outputs["whole"][0].equals(outputs["batched"][0]) and outputs["whole"][1] == outputs["batched"][1]
    assert outputs["batched"][0]["index"].to_list() == list(range(0, 40, 2))
    assert outputs["batched"][0]["benchmark"].unique().to_list() == ["mmbench"]


def test_a_file_replaced_while_it_is_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch is read only from the file the first was read from: a file written to meanwhile fails the run (exit 2)
    and leaves no output."""
    source = REAL / "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"
    predictions = tmp_path / "predictions.parquet"
    assert main(["import", "--format", "vlmevalkit", "--input", str(source), "--output", str(predictions)]) == 0
    in_batches_of_a_sixth(monkeypatch, predictions)
    table = mmbatch.table_batches.read_batched(predictions)
    table.batch(0)
    predictions.write_bytes(predictions.read_bytes() + b"\0")  # another writer
    with pytest.raises(BadInputError, match="changed while it was being read"):
        table.batch(1)
    output = tmp_path / "x.parquet"
    original = mmbatch.table_batches.BatchedTable.batch

    def touch_then_read(self: mmbatch.table_batches.BatchedTable, k: int, columns: object = None) -> pl.DataFrame:
        if k == 2:
            os.utime(self.path, ns=(time.time_ns(), time.time_ns()))
        return original(self, k, columns)  # type: ignore[arg-type]

    assert main(["import", "--format", "vlmevalkit", "--input", str(source), "--output", str(predictions)]) == 0
    monkeypatch.setattr(mmbatch.table_batches.BatchedTable, "batch", touch_then_read)
    assert main(["extract", "--input", str(predictions), "--output", str(output), "--no-judge"]) == 2
    assert not output.exists()


def test_every_route_of_the_rules_comes_out_the_same_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """Generate rows, likelihood rows, rows that failed in infer and reasoning traces (closed and cut off), one row
    a batch against all in one: the same files, the same counts of traces."""
    from support.extract_rows import mcq_row

    rows = []
    for i in range(12):
        if i % 4 == 0:
            rows.append(mcq_row(i, None, mode="likelihood", choice_logprobs=[-3.0, -1.0 - i, -2.0, -4.0],
                                choice_ntokens=[1, 2, 1, 3]))
        elif i % 4 == 1:
            rows.append(mcq_row(i, None, error="CUDA out of memory"))
        else:
            rows.append(mcq_row(i, ["<think>maybe A</think> B", "<think>A or C", "C"][i % 3]))
    for row in rows:
        row.setdefault("choice_logprobs", None)
        row.setdefault("choice_ntokens", None)
    predictions = write_predictions(tmp_path / "pred.parquet", rows)
    outputs = {}
    for name in ("whole", "batched"):
        if name == "batched":
            monkeypatch.setattr(mmbatch.table_batches, "BATCH_CELLS", 1)
        outputs[name] = _run(tmp_path / name, predictions, ["--no-judge"], [])
    assert mmbatch.table_batches.read_batched(predictions).count == 12
    assert_same_files(outputs["whole"], outputs["batched"])
    extracted = read_table(outputs["batched"]["extracted"]).frame
    assert extracted["extract_method"].to_list()[:4] == ["likelihood", "error", "rule", "rule"]
    # rows 3 and 6 hold a closed trace, 7 and 10 one cut off (2 and 11 none)
    assert read_metadata(outputs["batched"]["extracted"])["extract"]["reasoning"]["rows"] == {"closed": 2,
                                                                                              "unclosed": 2}
