"""A row's identity does not depend on its route (issue 25 item 6): the same real VLMEvalKit files of
../shared/data/real_results prepared as the benchmark's table, imported as they are, imported with their rows in
another order and imported as a subset give every question the same ``index``, and ``compare`` pairs them.

Before mmbatch numbered OCRVQA's text keys (``<ISBN>_<n>``) in file order, a reordered or partial file gave its
questions other indices, so ``merge`` and ``compare`` paired different questions."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.tableio import read_raw, read_table
from tests.support.vqa_tables import png_base64

REAL = "real_results/vila_13b_vlmevalkit-pr320"
FILES = {
    "ocrvqa": "vila_13b_OCRVQA_TESTCORE.xlsx",  # text keys 184215012X_1: the route used to change the index
    "hallusionbench": "vila_13b_HallusionBench.xlsx",  # text ids VD_illusion_1_0_0_0
    "textvqa": "vila_13b_TextVQA_VAL.xlsx",  # integer keys
    "ocrbench": "vila_13b_OCRBench.xlsx",
}


def key_of(frame: pl.DataFrame) -> str:
    """The column naming the source's own key in a stage file: ``question_id`` where the source key was text."""
    return "question_id" if "question_id" in frame.columns else "index"


def index_by_key(path: Path) -> dict[str, int]:
    frame = read_table(path).frame
    return dict(zip(frame[key_of(frame)].cast(pl.String).to_list(), frame["index"].to_list(), strict=True))


@pytest.fixture(scope="module", params=list(FILES))
def routes(request: pytest.FixtureRequest, shared_data: Path,
           tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Path]]:
    """One real file prepared (as its benchmark's table), imported whole, shuffled, and as a reversed subset."""
    benchmark = request.param
    source = shared_data / REAL / FILES[benchmark]
    folder = tmp_path_factory.mktemp(benchmark)
    raw = read_raw(source).frame
    # the benchmark's own table: the rows without predictions, each with a small image (the real media is not here)
    table = folder / f"{benchmark}.tsv"
    raw.drop("prediction", "image_path", strict=False).with_columns(pl.lit(png_base64()).alias("image")).write_csv(
        table, separator="\t")
    shuffled = raw.sample(fraction=1.0, shuffle=True, seed=7)
    subset = raw.gather_every(3).reverse()
    inputs = {"whole": source, "shuffled": folder / f"shuffled_{source.stem}.tsv",
              "subset": folder / f"subset_{source.stem}.tsv"}
    shuffled.write_csv(inputs["shuffled"], separator="\t")
    subset.write_csv(inputs["subset"], separator="\t")
    outputs = {"prepared": folder / "prepared.parquet"}
    assert main(["prepare", "--benchmark", benchmark, "--input", str(table), "--output",
                 str(outputs["prepared"])]) == 0
    for name, path in inputs.items():
        outputs[name] = folder / f"{name}.parquet"
        assert main(["import", "--format", "vlmevalkit", "--benchmark", benchmark, "--input", str(path),
                     "--output", str(outputs[name])]) == 0
    return benchmark, outputs


def test_every_route_gives_each_question_the_same_index(routes: tuple[str, dict[str, Path]]) -> None:
    _, outputs = routes
    prepared = index_by_key(outputs["prepared"])
    assert len(prepared) == len(set(prepared.values()))
    for route in ("whole", "shuffled", "subset"):
        imported = index_by_key(outputs[route])
        assert imported == {key: prepared[key] for key in imported}, route
    assert len(index_by_key(outputs["subset"])) == -(-len(prepared) // 3)


def test_compare_pairs_the_same_questions(routes: tuple[str, dict[str, Path]], tmp_path: Path) -> None:
    """The whole file against its shuffled subset: every shared question has the same prediction on both sides, so
    a right pairing gives equal values and no discordant pair; a wrong one would not."""
    _, outputs = routes
    hits = {}
    for route in ("whole", "subset"):
        extracted, metrics = tmp_path / f"{route}.extracted.parquet", tmp_path / f"{route}.metrics.json"
        assert main(["extract", "--input", str(outputs[route]), "--output", str(extracted), "--no-judge"]) == 0
        assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
        hits[route] = metrics.with_suffix(".hits.parquet")
    output = tmp_path / "compare.json"
    assert main(["compare", str(hits["whole"]), str(hits["subset"]), "--bootstrap", "0", "--output",
                 str(output)]) == 0
    result = json.loads(output.read_text())
    coverage = result["coverage"][0]
    subset = len(index_by_key(outputs["subset"]))
    assert (coverage["rows_both"], coverage["rows_only_b"]) == (subset, 0)
    assert coverage["rows_only_a"] == len(index_by_key(outputs["whole"])) - subset
    for row in result["comparisons"]:
        assert row["value_a"] == pytest.approx(row["value_b"], abs=1e-9), row
        assert row["a_only"] in (None, 0) and row["b_only"] in (None, 0), row
