"""A lab's own benchmark from outside mmbatch: a real package with its own reader, non-multiple-choice answer kind
and scorer, installed with pip and found through the ``mmbatch.benchmarks`` entry-point group, runs every stage.

The package is built here and installed with ``pip install --no-deps --no-build-isolation --target`` (no network);
each command runs as a subprocess whose ``PYTHONPATH`` holds the install, as a lab's environment would.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from tests.conftest import REPO_ROOT, run_cli

DECLARATION = '''
from mmbatch.benchmarks.declaration import Benchmark, ReportView

LABQA = Benchmark(
    name="{name}", aliases=(), version="1", summary="LabQA (a lab's short-answer questions, VLMEvalKit TSV)",
    reader="labbench.read:READER", scorer="labbench.score:SCORER", default_template="mme",
    default_mode="generate", answers="labbench.kinds:WORD_RECALL", circular=False, group_rule="row",
    view=ReportView(headline=(("overall", "Overall", "recall", "Recall"),), ability=("category", "recall")),
    export_formats=(), vlmevalkit_names=("{name}",), source_ids=None, sources=(),
)
'''

READER = '''
from mmbatch.formats.vlmevalkit_tsv import VlmevalkitReader

READER = VlmevalkitReader("labqa")
'''

KIND = '''
from dataclasses import dataclass, field

import polars as pl


@dataclass(frozen=True)
class WordRecall:
    """The share of the answer's words the prediction holds (a graded kind: scores between 0 and 1)."""

    name: str = "word-recall"
    version: str = "1"
    binary: bool = False
    judge: object = None
    options: dict = field(default_factory=dict)
    score_columns: tuple = ()

    def check_answers(self, rows, path):
        from mmbatch.errors import BadInputError

        blank = rows.filter(pl.col("answer").is_not_null() & (pl.col("answer").str.strip_chars() == ""))
        if blank.height:
            raise BadInputError("a blank answer", path=path, index=blank["index"][0], column="answer")

    def decide(self, rows, settings):
        empty = pl.col("answer_text").str.strip_chars() == ""
        return rows.select(
            pl.when(empty).then(None).otherwise(pl.col("answer_text")).alias("extracted"),
            pl.when(empty).then(pl.lit("unmatched")).otherwise(pl.lit("text")).alias("extract_method"),
            pl.when(empty).then(pl.lit("empty answer")).otherwise(None).alias("extract_note"),
            pl.lit(None, dtype=pl.String).alias("judge_prompt"))

    def score(self, rows):
        said = pl.col("extracted").fill_null("").str.to_lowercase().str.split(" ")
        truth = pl.col("answer").str.to_lowercase().str.split(" ")
        recall = said.list.set_intersection(truth).list.len() / truth.list.len()
        return rows.select(pl.when(pl.col("answer").is_null()).then(None).otherwise(recall)
                           .cast(pl.Float64).alias("score")).to_series()


WORD_RECALL = WordRecall()
'''

SCORER = '''
import polars as pl

from mmbatch.scoring.plan import STRATUM, CellLevel, ScorePlan, accuracy, collapse_units, count, groups_in_order

STATS = ("questions", "score", "unmatched", "failed")


class LabScorer:
    def plan(self, rows):
        units = rows.with_columns(pl.lit("Overall").alias("overall"), pl.lit(1, dtype=pl.Int64).alias("questions"),
                                  pl.col("category").alias(STRATUM))
        types = collapse_units(units, [STRATUM, "category", "overall", *STATS])
        metrics = [accuracy("overall", "Overall", "recall", "score", "questions")]
        metrics += [accuracy("category", group, "recall", "score", "questions")
                    for group in groups_in_order(types, "category")]
        metrics += [count("overall", "Overall", name, name, "questions") for name in ("unmatched", "failed")]
        cells = (CellLevel("category", "category"), CellLevel("overall", "overall"))
        return ScorePlan(types, cells, STATS, tuple(metrics))


SCORER = LabScorer()
'''


def build_package(root: Path, distribution: str, benchmark: str) -> Path:
    """Write the lab's package (``labbench``, distribution ``distribution``) under ``root`` and pip-install it into
    ``root / "site"``; returns that folder."""
    source = root / "src"
    package = source / "labbench"
    package.mkdir(parents=True)
    (source / "pyproject.toml").write_text(textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{distribution}"
        version = "0.1"

        [project.entry-points."mmbatch.benchmarks"]
        {benchmark} = "labbench:LABQA"

        [tool.setuptools]
        packages = ["labbench"]
    """), encoding="utf-8")
    (package / "__init__.py").write_text(DECLARATION.format(name=benchmark), encoding="utf-8")
    for name, text in (("read.py", READER), ("kinds.py", KIND), ("score.py", SCORER)):
        (package / name).write_text(text, encoding="utf-8")
    site = root / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--disable-pip-version-check", "--target", str(site), str(source)],
                          capture_output=True, text=True, timeout=300, cwd=root)
    assert done.returncode == 0, done.stderr
    return site


def with_sites(*sites: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(REPO_ROOT), *map(str, sites)])}


def png() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 10, 10)).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture(scope="module")
def lab_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_package(tmp_path_factory.mktemp("labbench"), "labbench", "labqa")


def test_a_plugin_benchmark_with_its_own_kind_runs_every_stage(lab_site: Path, tmp_path: Path) -> None:
    pl.DataFrame({
        "index": [1, 2, 3, 4], "question": ["What is red?", "Which colour?", "What animal?", "What is above?"],
        "answer": ["a red car", "red", "a dog", "blue sky"], "category": ["colours", "colours", "animals", "animals"],
        "image": [png(), "1", "1", "1"],
    }).write_csv(tmp_path / "labqa.tsv", separator="\t")
    env = with_sites(lab_site)
    files = {name: str(tmp_path / name) for name in ("prep.parquet", "pred.parquet", "ext.parquet", "m.json",
                                                     "board.md", "view.html")}
    for args in (
        ["prepare", "--benchmark", "labqa", "--input", str(tmp_path / "labqa.tsv"), "--output", files["prep.parquet"]],
        ["infer", "--input", files["prep.parquet"], "--output", files["pred.parquet"], "--backend", "echo",
         "--model", "fixed:a red dog"],
        ["extract", "--input", files["pred.parquet"], "--output", files["ext.parquet"], "--no-judge"],
        ["score", "--input", files["ext.parquet"], "--output", files["m.json"]],
        ["report", files["m.json"], "--output", files["board.md"]],
        ["view", files["ext.parquet"], "--output", files["view.html"], "--images", files["prep.parquet"]],
    ):
        done = run_cli(*args, env=env)
        assert done.returncode == 0, f"{args[0]}: {done.stderr}"
    extracted = pl.read_parquet(files["ext.parquet"])
    # "a red dog" holds 2 of the 3 words of "a red car", the one word of "red", both of "a dog", none of "blue sky"
    assert extracted["extract_method"].to_list() == ["text"] * 4
    assert extracted["score"].to_list() == pytest.approx([2 / 3, 1.0, 1.0, 0.0])
    values = {(r["level"], r["group"], r["metric"]): r["value"] for r in json.loads(Path(files["m.json"]).read_text())}
    assert values[("overall", "Overall", "recall")] == pytest.approx(100 * (2 / 3 + 2) / 4)
    assert values[("category", "colours", "recall")] == pytest.approx(100 * (2 / 3 + 1) / 2)
    assert values[("category", "animals", "recall")] == pytest.approx(50.0)
    hits = pl.read_parquet(tmp_path / "m.hits.parquet")
    assert hits["hit"].null_count() == 4  # a graded kind has scores, no hits
    assert "Recall" in Path(files["board.md"]).read_text(encoding="utf-8")
    page = Path(files["view.html"]).read_text(encoding="utf-8")
    assert '"sc":0.6666666666666666' in page and '"em":"text"' in page
    metadata = json.loads(pl.read_parquet_metadata(files["ext.parquet"])["mmbatch"])
    assert metadata["extract"]["answer_kinds"] == {"labqa": {"kind": "word-recall", "version": "1", "binary": False,
                                                             "judge": None}}
    # a second model ("red" everywhere: 1/3, 1, 0, 0) compared with the first: a paired difference, and the sign
    # test instead of McNemar's, whose right-or-wrong verdicts a graded kind does not have
    for args in (["infer", "--input", files["prep.parquet"], "--output", str(tmp_path / "b.pred.parquet"),
                  "--backend", "echo", "--model", "fixed:red"],
                 ["extract", "--input", str(tmp_path / "b.pred.parquet"), "--output", str(tmp_path / "b.parquet"),
                  "--no-judge"],
                 ["score", "--input", str(tmp_path / "b.parquet"), "--output", str(tmp_path / "b.json")],
                 ["compare", str(tmp_path / "m.hits.parquet"), str(tmp_path / "b.hits.parquet"), "--output",
                  str(tmp_path / "cmp.json"), "--bootstrap", "50"]):
        done = run_cli(*args, env=env)
        assert done.returncode == 0, f"{args[0]}: {done.stderr}"
    compared = json.loads((tmp_path / "cmp.json").read_text())["comparisons"]
    overall = next(r for r in compared if (r["level"], r["metric"]) == ("overall", "recall"))
    assert overall["diff"] == pytest.approx(100 * (1 / 3 + 1) / 4 - 100 * (2 / 3 + 2) / 4)
    assert overall["ci_low"] is not None
    # the first scored higher on rows 1 and 3, the second on none: 2 * P(Binomial(2, 1/2) <= 0) = 1/2
    assert (overall["test"], overall["a_only"], overall["b_only"]) == ("sign-exact", 2, 0)
    assert overall["p_value"] == pytest.approx(0.5)


def test_plugins_are_listed_in_help_and_not_read_when_the_parser_is_built(lab_site: Path) -> None:
    done = run_cli("prepare", "--help", env=with_sites(lab_site))
    assert "labqa: LabQA" in done.stdout
    probe = ("from mmbatch.cli import build_parser; build_parser(); from mmbatch.benchmarks import registry; "
             "print(registry.registered.cache_info().currsize)")
    built = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env={**os.environ, **with_sites(lab_site)}, cwd=REPO_ROOT, timeout=120)
    assert built.stdout.strip() == "0", built.stderr


def test_two_packages_declaring_one_name_is_an_error_naming_both(lab_site: Path, tmp_path: Path) -> None:
    other = build_package(tmp_path / "other", "labclash", "labqa")
    done = run_cli("prepare", "--benchmark", "labqa", "--input", str(tmp_path / "x.tsv"), "--output",
                   str(tmp_path / "p.parquet"), env=with_sites(lab_site, other))
    assert done.returncode == 2
    assert "two packages declare the benchmark name 'labqa': labbench and labclash" in done.stderr
    built_in = build_package(tmp_path / "mine", "mymmbench", "mmbench")
    done = run_cli("prepare", "--benchmark", "mmbench", "--input", str(tmp_path / "x.tsv"), "--output",
                   str(tmp_path / "p.parquet"), env=with_sites(built_in))
    assert done.returncode == 2 and "declare the benchmark name 'mmbench': mmbatch and mymmbench" in done.stderr
