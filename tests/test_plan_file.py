"""Plan files: every error names its key, nothing is written for a bad plan; the one-line form is the same plan; the
exit status is the worst pair's; row shards as units, and ``--merge`` that infers nothing. The echo backend stands
for a model here (the tiny-model plan is tests/test_plan_run.py)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES

MME = EXAMPLES / "mme"
POPE = EXAMPLES / "pope" / "pope_example.tsv"
GOOD = f"""output: out
models:
  - name: truth
    backend: echo
    model: answer
  - backend: echo
    model: "letter:A"
benchmarks:
  - benchmark: mme
    input: {MME}
  - benchmark: pope
    input: {POPE}
extract:
  no_judge: true
"""


def run(argv: list[str]) -> tuple[int, str]:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        status = main(argv)
    return status, stream.getvalue()


def write_plan(folder: Path, text: str) -> Path:
    plan = folder / "plan.yaml"
    plan.write_text(text)
    return plan


@pytest.mark.parametrize("edit, message", [
    (("  - backend: echo\n", "  - backend: echo\n    backend_args: {dtype: float8}\n"),
     "models[1].backend_args.dtype: 'float8' is not one of auto, bfloat16, float16, float32"),
    (("  - backend: echo\n", "  - backend: echo\n    backend_args: {flavour: mint}\n"),
     "models[1].backend_args.flavour: neither an infer option nor a echo backend option"),
    (("  - backend: echo\n", "  - backend: echo\n    backend_args: {batch_size: 0}\n"),
     "models[1].backend_args.batch_size: 0 is not a valid value"),
    (("  - backend: echo\n", "  - backend: echo\n    generation: {top_p: 2}\n"), "models[1].generation.top_p:"),
    (("  - backend: echo\n", "  - backend: nosuch\n"), "models[1].backend: 'nosuch' is not one of"),
    (("    model: answer\n", ""), "models[0].model: expected text, got None"),
    (("  - benchmark: pope\n", "  - benchmark: nosuch\n"), "benchmarks[1].benchmark: unknown benchmark 'nosuch'"),
    (("  - benchmark: pope\n", "  - benchmark: pope\n    limit: -1\n"), "benchmarks[1].limit: -1 is not a valid"),
    (("  - benchmark: pope\n", "  - benchmark: pope\n    circular: maybe\n"),
     "benchmarks[1].circular: expected true or false, got 'maybe'"),
    (("  - benchmark: pope\n", "  - benchmark: pope\n    name: mme\n"), "benchmarks[1].name: 'mme' is also the name"),
    (("  - benchmark: pope\n", "  - benchmark: pope\n    name: ../up\n"), "benchmarks[1].name: '../up' cannot be a"),
    (("  no_judge: true\n", "  judge_modle: gpt-4o\n"), "extract.judge_modle: not an extract option"),
    (("  no_judge: true\n", "  no_judge: true\n  choice_rules: vlmevalkit-1999\n"),
     "extract.choice_rules: 'vlmevalkit-1999' is not one of"),
    (("output: out\n", "outptu: out\n"), "outptu: not a plan key; accepted: output, models"),
    (("output: out\n", ""), "output: expected text, got None"),
    (("extract:\n", "score:\n  bootstrap: 10\n  seeed: 3\nextract:\n"), "score.seeed: not a score option"),
    (("  - benchmark: pope\n", "  - benchmark: pope\n    shards: 0\n"), "benchmarks[1].shards: expected a whole"),
    (("  - benchmark: pope\n", "  - benchmark: pope\n    split: test\n"),
     "benchmarks[1].split: give 'input' (a file of your own) or 'split'"),
    ((f"    input: {POPE}\n", "    split: val\n"), "benchmarks[1].split: pope has no split 'val'; its splits are test"),
])
def test_a_bad_plan_is_refused_naming_the_key(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    old, new = edit
    assert old in GOOD
    plan = write_plan(tmp_path, GOOD.replace(old, new, 1))
    status, log = run(["run", "--plan", str(plan)])
    assert status == 2, log
    assert message in log and str(plan) in log and "Traceback" not in log
    assert not (tmp_path / "out").exists(), "nothing is written for a bad plan"


def test_not_yaml_and_flags_beside_a_plan_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = write_plan(tmp_path, "models: [\n")
    status, log = run(["run", "--plan", str(plan)])
    assert status == 2 and "not a YAML file" in log
    plan = write_plan(tmp_path, GOOD)
    status, log = run(["run", "--plan", str(plan), "--batch-size", "4"])
    assert status == 2 and "--batch-size is set beside --plan" in log
    monkeypatch.setenv("MMBATCH_BATCH_SIZE", "4")  # a variable is a default, not a flag beside the plan
    monkeypatch.chdir(tmp_path)
    status, log = run(["run", "--plan", str(plan)])
    assert status == 0, log


def test_the_one_line_form_is_the_same_plan(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD.replace(f"  - benchmark: pope\n    input: {POPE}\n", "")
                      .replace("  - name: truth\n    backend", "  - backend"))
    assert run(["run", "--plan", str(plan)])[0] == 0
    status, log = run(["run", "--benchmark", "mme", "--input", str(MME), "--backend", "echo", "--model", "answer",
                       "--model", "letter:A", "--no-judge", "--output-dir", str(tmp_path / "oneline")])
    assert status == 0, log
    for model in ("answer", "letter-A"):
        pair = Path("models") / model / "mme"
        theirs = json.loads((tmp_path / "out" / pair / "metrics.json").read_text())
        assert json.loads((tmp_path / "oneline" / pair / "metrics.json").read_text()) == theirs
    assert (tmp_path / "oneline" / "report.csv").read_text() == (tmp_path / "out" / "report.csv").read_text()


def test_the_exit_status_is_the_worst_pair_and_the_others_still_finish(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD.replace(str(POPE), str(tmp_path / "missing.tsv")))
    status, log = run(["run", "--plan", str(plan)])
    assert status == 2, log
    assert "truth / pope: refused (exit 2)" in log and "missing.tsv" in log
    assert "truth / mme: finished (exit 0)" in log
    summary = pl.read_csv(tmp_path / "out" / "report.csv")
    assert summary["model"].to_list() == ["truth", "letter-A"] and "mme: Perception" in summary.columns
    assert not any(name.startswith("pope") for name in summary.columns)


def test_row_shards_are_units_and_merge_infers_nothing(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD.replace(f"    input: {POPE}\n", f"    input: {POPE}\n    shards: 2\n"))
    # 2 models x (mme + 2 pope row shards) = 6 units; machine 0 of 2 takes units 0, 2, 4.
    status, log = run(["run", "--plan", str(plan), "--shard", "0/2"])
    assert status == 0, log
    assert "truth / mme: finished" in log and "truth / pope: rows 1/2 inferred" in log
    assert "letter-A / pope: rows 0/2 inferred" in log and not (tmp_path / "out" / "report.csv").exists()
    status, log = run(["run", "--plan", str(plan), "--merge"])
    assert status == 2, log
    missing = tmp_path / "out" / "models" / "truth" / "pope" / "predictions.shard-0-of-2.parquet"
    assert f"not inferred yet ({missing} is missing)" in log
    assert run(["run", "--plan", str(plan), "--shard", "1/2"])[0] == 0
    status, log = run(["run", "--plan", str(plan), "--merge"])
    assert status == 0, log
    assert "merge 2 row shards" in log and "model loads: truth 0x, letter-A 0x" in log
    merged = read_table(tmp_path / "out" / "models" / "truth" / "pope" / "predictions.parquet").frame
    assert merged["index"].to_list() == list(range(1, 9))
    assert (tmp_path / "out" / "report.csv").is_file()
    status, log = run(["run", "--plan", str(plan), "--merge", "--shard", "0/2"])
    assert status == 2 and "--merge finishes the whole plan" in log
