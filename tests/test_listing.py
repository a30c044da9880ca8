"""``mmbatch list``: benchmarks, backends, rule versions and model families, as tables and as JSON, read from the
same declarations the stages use; the families are docs/models.md's table (checked both ways)."""

from __future__ import annotations

import json

import pytest

from mmbatch.answers.letters import CHOICE_RULES
from mmbatch.backends.families_tested import FAMILIES_TESTED
from mmbatch.backends.registry import backend_names
from mmbatch.benchmarks.registry import registered
from mmbatch.cli import main
from tests.support.families import FAMILIES
from tests.test_family_table import table_rows


def listed(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["list", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_json_lists_what_the_stages_accept(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = listed(capsys, "--json")
    assert status == 0
    found = json.loads(out)
    assert list(found) == ["benchmarks", "backends", "rules", "families"]
    assert [b["name"] for b in found["benchmarks"]] == [b.name for b in registered()]
    mmbench = found["benchmarks"][0]
    assert (mmbench["kind"], mmbench["version"], mmbench["circular"]) == ("choice", "1.0", True)
    assert mmbench["sources"][0] == {
        "split": "dev", "file": "MMBench_DEV_EN.tsv", "md5": "b6caf1133a01c6bb705cf753bb527ed8", "fetched": True,
        "url": "https://opencompass.openxlab.space/utils/benchmarks/MMBench/MMBench_DEV_EN.tsv"}
    seed = next(b for b in found["benchmarks"] if b["name"] == "seedbench")
    assert seed["sources"][0]["fetched"] is False and seed["mode"] == "likelihood"
    assert [b["name"] for b in found["backends"]] == list(backend_names())
    rules = found["rules"]
    assert [r["name"] for r in rules["choice_rules"]] == list(CHOICE_RULES)
    assert [r["name"] for r in rules["yes_no_rules"]] == ["official", "vlmevalkit"]
    kinds = {k["name"]: k for k in rules["kinds"]}
    assert "pope" in kinds["yes-no"]["benchmarks"] and kinds["choice-scienceqa"]["options"]["answer_rule"][0]
    assert [f["family"] for f in found["families"]] == [f.family for f in FAMILIES_TESTED]


def test_sections_and_tables(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = listed(capsys, "backends", "--json")
    assert status == 0 and list(json.loads(out)) == ["backends"]
    status, out, _ = listed(capsys)
    assert status == 0
    for title in ("Benchmarks", "Backends", "Choice rules", "Yes/no rules", "Answer kinds", "Model families tested"):
        assert title in out
    for benchmark in registered():
        assert f"│ {benchmark.name} " in out
    assert "SEED-Bench.json (placed by hand)" in out and "MMBench_DEV_EN.tsv" in out
    status, _, err = listed(capsys, "modles")
    assert status == 2 and "nothing to list as 'modles'" in err


def test_the_families_are_the_docs_table_and_the_matrix() -> None:
    rows = table_rows("## Families tested", "family")
    assert rows == [
        [f.family, f"`{f.transformers_class}`", f.image, f.video, f.multi_image, f.likelihood, f.limitations, f.vllm]
        for f in FAMILIES_TESTED]
    assert sorted(f.family for f in FAMILIES_TESTED) == sorted(FAMILIES)
