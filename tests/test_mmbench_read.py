"""The MMBench reader on the bundled examples and on the layouts docs/rules.md §1 describes."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from mmbatch.benchmarks import get_reader
from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.mmbench.read import READER
from mmbatch.benchmarks.registry import get_benchmark
from mmbatch.errors import BadInputError
from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES, run_cli

VLMEVALKIT = EXAMPLES / "mmbench" / "mmbench_example.tsv"
LEGACY = EXAMPLES / "mmbench" / "mmbench_legacy_example.tsv"
PLAIN = EXAMPLES / "mmbench" / "mcq_plain_example.tsv"


@pytest.fixture(scope="module")
def example() -> pl.DataFrame:
    return READER.read(VLMEVALKIT, ReadOptions())


def png_base64(colour: str = "red") -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def test_groups_of_one_to_four_rows(example: pl.DataFrame) -> None:
    assert example.height == 87
    assert example.columns[:2] == ["index", "g_index"]
    assert (example["g_index"] == example["index"] % 1_000_000).all()
    sizes = example["g_index"].value_counts(name="rows").group_by("rows").len().sort("rows")
    assert dict(sizes.iter_rows()) == {1: 2, 2: 7, 3: 5, 4: 14}


def test_copies_keep_their_short_image_references(example: pl.DataFrame) -> None:
    copies = example.filter(pl.col("index") != pl.col("g_index"))
    assert (copies["image"] == copies["g_index"].cast(pl.String)).all()
    originals = example.filter(pl.col("index") == pl.col("g_index"))
    assert (originals["image"].str.len_bytes() > 64).all()


def test_multi_image_list_strings_are_carried_as_they_are(example: pl.DataFrame) -> None:
    source = pl.read_csv(VLMEVALKIT, separator="\t", infer_schema=False)
    lists = example.filter(pl.col("image").str.starts_with("["))
    assert lists["index"].to_list() == [121, 122]
    assert lists["image"].to_list() == source.filter(pl.col("image").str.starts_with("["))["image"].to_list()


def test_text_hints_options_and_extra_columns_are_untouched(example: pl.DataFrame) -> None:
    rows = {row["index"]: row for row in example.iter_rows(named=True)}
    assert rows[100]["hint"] is None  # an empty (NaN) hint
    assert rows[104]["hint"] == "Look carefully.\nThe picture is small."
    assert rows[119]["question"] == "图中的圆形是什么颜色？" and rows[119]["A"] == "红色"
    assert rows[123]["C"] == "None" and rows[1_000_123]["B"] == "None"  # "None" is an option text, not a null
    assert (rows[124]["A"], rows[124]["B"], rows[124]["C"], rows[124]["D"]) == ("red", "blue", None, "green")
    assert rows[124]["answer"] == "D"
    assert {"source", "comment", "l2-category", "category", "split", "benchmark"} <= set(example.columns)
    assert set(example["split"].to_list()) == {"dev", "test"}
    assert set(example["benchmark"].to_list()) == {"mmbench"}


def test_legacy_file_reads_the_same_but_for_the_images(example: pl.DataFrame) -> None:
    legacy = READER.read(LEGACY, ReadOptions())
    assert legacy.drop("image").equals(example.drop("image"))
    assert (legacy["image"].str.len_bytes() > 64).all()


def test_circular_options(example: pl.DataFrame) -> None:
    assert READER.read(VLMEVALKIT, ReadOptions(circular=True)).equals(example)  # copies exist: unchanged
    originals = READER.read(VLMEVALKIT, ReadOptions(circular=False))
    assert originals.height == 28 and (originals["index"] == originals["g_index"]).all()
    assert READER.read(PLAIN, ReadOptions(circular=True)).equals(example)


def test_limit_keeps_whole_groups_and_inlines_references_it_would_break(tmp_path: Path) -> None:
    limited = READER.read(VLMEVALKIT, ReadOptions(limit=3))
    assert limited["g_index"].unique(maintain_order=True).to_list() == [100, 101, 102]
    assert limited.height == 12
    payload = png_base64()
    source = tmp_path / "refs.tsv"
    pl.DataFrame({"index": ["2", "1"], "question": ["q2", "q1"], "A": ["x", "x"], "B": ["y", "y"],
                  "answer": ["A", "B"], "image": ["1", payload]}).write_csv(source, separator="\t")
    first = READER.read(source, ReadOptions(limit=1))
    assert first["index"].to_list() == [2] and first["image"].to_list() == [payload]


def test_ccbench_and_any_mcq_file_use_the_same_reader() -> None:
    assert get_reader("ccbench") is READER and get_reader("MMBench") is READER
    mmbench = get_benchmark("mmbench")
    assert mmbench.default_template == "vlmevalkit" and mmbench.default_mode == "generate"


def test_parquet_and_xlsx_inputs_read_like_the_tsv(tmp_path: Path, example: pl.DataFrame) -> None:
    raw = pl.read_csv(VLMEVALKIT, separator="\t", infer_schema=False)
    typed = raw.with_columns(pl.col("index").cast(pl.Int64))  # a Parquet file a user wrote with typed indices
    typed.write_parquet(tmp_path / "in.parquet")
    assert READER.read(tmp_path / "in.parquet", ReadOptions()).equals(example)
    plain = pl.read_csv(PLAIN, separator="\t", infer_schema=False)
    plain.write_excel(tmp_path / "in.xlsx")
    from_xlsx = READER.read(tmp_path / "in.xlsx", ReadOptions(circular=True))
    assert from_xlsx.equals(example)


def test_image_paths_are_resolved_under_the_input_folder_by_default(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    Image.new("RGB", (10, 10), "blue").save(tmp_path / "img" / "a.png")
    source = tmp_path / "mcq.tsv"
    pl.DataFrame({"index": ["1"], "question": ["q"], "A": ["x"], "B": ["y"], "answer": ["A"],
                  "image_path": ["img/a.png"]}).write_csv(source, separator="\t")
    frame = READER.read(source, ReadOptions())
    assert frame["image_path"].to_list() == ["img/a.png"]
    with pytest.raises(BadInputError, match="not found"):
        READER.read(source, ReadOptions(media_root=tmp_path / "elsewhere"))


def test_prepare_prints_a_one_line_summary(tmp_path: Path) -> None:
    output = tmp_path / "prepared.tsv"
    result = run_cli("prepare", "--benchmark", "mmbench", "--input", str(VLMEVALKIT), "--output", str(output))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"prepared 87 rows in 28 groups -> {output}")
    assert "attribute_recognition 33" in lines[0] and "ocr 12" in lines[0]
    metadata = read_table(output).metadata
    assert metadata["stage"] == "prepared"
    assert metadata["prepare"]["group_sizes"] == {"1": 2, "2": 7, "3": 5, "4": 14}
    assert run_cli("validate", str(output)).returncode == 0


def test_options_from_the_environment(tmp_path: Path) -> None:
    output = tmp_path / "prepared.parquet"
    result = run_cli("prepare", "--input", str(PLAIN), "--output", str(output),
                     env={"MMBATCH_BENCHMARK": "mmbench", "MMBATCH_LIMIT": "2", "MMBATCH_CIRCULAR": "1"})
    assert result.returncode == 0, result.stderr
    frame = read_table(output).frame
    assert frame["g_index"].unique().sort().to_list() == [100, 101] and frame.height == 8


def test_the_example_generator_is_deterministic(tmp_path: Path) -> None:
    import subprocess
    import sys

    subprocess.run([sys.executable, str(EXAMPLES / "generate" / "mmbench.py"), str(tmp_path)], check=True,
                   capture_output=True)
    for name in ("mmbench_example.tsv", "mmbench_legacy_example.tsv", "mcq_plain_example.tsv"):
        assert (tmp_path / "mmbench" / name).read_bytes() == (EXAMPLES / "mmbench" / name).read_bytes(), name


def test_the_example_answers_are_in_the_pictures(example: pl.DataFrame) -> None:
    colours = {"red": (220, 30, 30), "green": (30, 160, 60), "blue": (40, 70, 220), "yellow": (240, 200, 20)}
    originals = example.filter(pl.col("index") == pl.col("g_index"))
    asked = originals.filter(pl.col("question").str.starts_with("What colour is the"))
    assert asked.height >= 6
    for row in asked.iter_rows(named=True):
        picture = Image.open(io.BytesIO(base64.b64decode(row["image"]))).convert("RGB")
        shape = row["question"].removeprefix("What colour is the ").rstrip("?")
        # the centre of a circle or square, the lower middle of a triangle or star
        point = (48, 48) if shape in ("circle", "square") else (48, 60)
        assert picture.getpixel(point) == colours[row[row["answer"]]], row["index"]


def test_ccbench_rows_are_labelled_ccbench(tmp_path: Path) -> None:
    from mmbatch.prepare import PrepareOptions, prepare

    output = tmp_path / "ccbench.parquet"
    prepare(PrepareOptions(benchmark="CCBench", input=PLAIN, output=output, limit=2))
    table = read_table(output)
    assert set(table.frame["benchmark"]) == {"ccbench"}
    assert table.metadata["prepare"]["benchmark"] == "ccbench" and table.metadata["prepare"]["reader"] == "mmbench"
