"""The MME reader: the bundled release-folder example, the real eval-tool question files, MME.tsv, edge cases."""

from __future__ import annotations

import base64
import io
import shutil
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from mmbatch.benchmarks import get_reader
from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.mme.release_folder import read_eval_tool_templates
from mmbatch.benchmarks.mme.subtasks import COGNITION_SUBTASKS, PERCEPTION_SUBTASKS
from mmbatch.errors import BadInputError
from mmbatch.media import decode_base64_image
from mmbatch.tableio import read_table, write_table
from tests.conftest import EXAMPLES

READER = get_reader("mme")
REAL_QUESTIONS_PER_SUBTASK = {
    "existence": 60, "count": 60, "position": 60, "color": 60, "posters": 294, "celebrity": 340, "scene": 400,
    "landmark": 400, "artwork": 400, "OCR": 40, "commonsense_reasoning": 140, "numerical_calculation": 40,
    "text_translation": 40, "code_reasoning": 40,
}


def tiny_png(colour: tuple[int, int, int] = (10, 20, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (3, 2), colour).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def real_media_root(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """A stand-in release folder: a tiny image for every image the real question files name.

    ``artwork`` uses the ``images/`` sub-folder, as the real release does.
    """
    root = tmp_path_factory.mktemp("mme_release")
    for question_file in (shared_data / "mme" / "questions_template").glob("*.txt"):
        folder = root / question_file.stem / ("images" if question_file.stem == "artwork" else "")
        folder.mkdir(parents=True, exist_ok=True)
        for line in question_file.read_text(encoding="utf-8").splitlines():
            (folder / line.split("\t")[0]).write_bytes(tiny_png())
    return root


def test_example_folder_through_the_cli(cli, tmp_path: Path) -> None:
    output = tmp_path / "mme.parquet"
    result = cli("prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert "28 rows in 14 groups" in result.stdout
    table = read_table(output)
    frame = table.frame
    assert table.metadata["prepare"]["template"] == "mme" and table.metadata["prepare"]["mode"] == "generate"
    assert frame["index"].to_list() == list(range(28))
    assert frame["category"].unique(maintain_order=True).to_list() == [
        "existence", "count", "color", "OCR", "numerical_calculation"]
    assert frame.filter(pl.col("category") == "numerical_calculation")["l2-category"].unique().to_list() == [
        "cognition"]
    assert (frame["prompt"] == frame["question"]).all()  # the `mme` template is the question as it is
    pairs = frame.group_by("g_index", maintain_order=True).agg("answer", "image", "image_name", "index")
    for answers, images, names, indices in pairs.select("answer", "image", "image_name", "index").iter_rows():
        assert sorted(answers) == ["No", "Yes"]
        assert images[1] == str(indices[0])  # the second question refers to the first row's image
        assert len(set(names)) == 1
        Image.open(io.BytesIO(decode_base64_image(images[0]))).verify()


def test_example_tsv_and_parquet_outputs_hold_the_same_rows(cli, tmp_path: Path) -> None:
    outputs = [tmp_path / "mme.tsv", tmp_path / "mme.parquet"]
    for output in outputs:
        result = cli("prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(output))
        assert result.returncode == 0, result.stderr
    from_tsv, from_parquet = (read_table(output).frame for output in outputs)
    assert from_tsv.equals(from_parquet)
    assert from_tsv.select(READER.read(EXAMPLES / "mme", ReadOptions()).columns).equals(
        READER.read(EXAMPLES / "mme", ReadOptions()))


def test_example_folder_keeps_the_double_space_and_reads_both_layouts() -> None:
    frame = READER.read(EXAMPLES / "mme", ReadOptions())
    doubled = frame.filter(pl.col("question").str.contains("  Please answer yes or no."))
    assert doubled["category"].to_list() == ["color"]  # written in the images/ + questions_answers_YN/ layout
    assert frame.filter(pl.col("category") == "existence")["image_name"][0] == "existence_01.png"


def test_example_images_match_the_files() -> None:
    frame = READER.read(EXAMPLES / "mme", ReadOptions())
    first = frame.filter(pl.col("image_name") == "ocr_01.png")["image"][0]
    assert decode_base64_image(first) == (EXAMPLES / "mme" / "OCR" / "images" / "ocr_01.png").read_bytes()


def test_real_question_files_counts(shared_data: Path, real_media_root: Path) -> None:
    frame = READER.read(shared_data / "mme" / "questions_template", ReadOptions(media_root=real_media_root))
    assert frame.height == 2374
    assert dict(frame.group_by("category").len().iter_rows()) == REAL_QUESTIONS_PER_SUBTASK
    groups = frame.group_by("g_index").agg(pl.len(), pl.col("answer").sort(), pl.col("category").n_unique())
    assert groups.height == 1187
    assert (groups["len"] == 2).all() and (groups["category"] == 1).all()
    assert groups["answer"].to_list() == [["No", "Yes"]] * 1187
    assert frame["index"].is_unique().all()
    doubled = frame.filter(pl.col("question").str.contains("  Please answer"))["category"].value_counts()
    assert dict(doubled.iter_rows()) == {"color": 5, "count": 1, "position": 1}  # 7 double spaces, kept
    parts = dict(frame.group_by("l2-category").agg(pl.col("category").n_unique()).iter_rows())
    assert parts == {"perception": len(PERCEPTION_SUBTASKS), "cognition": len(COGNITION_SUBTASKS)}


def test_real_question_files_text_is_kept_byte_for_byte(shared_data: Path, real_media_root: Path) -> None:
    source = shared_data / "mme" / "questions_template" / "position.txt"
    frame = READER.read(source, ReadOptions(media_root=real_media_root))
    expected = [line.split("\t")[1] for line in source.read_text(encoding="utf-8").splitlines()]
    assert frame["question"].to_list() == expected
    assert "under the batter's body Please answer yes or no." in expected[1]  # no question mark in the source


def test_real_question_files_through_the_cli(cli, shared_data: Path, real_media_root: Path, tmp_path: Path) -> None:
    output = tmp_path / "mme.tsv"
    result = cli("prepare", "--benchmark", "mme", "--input", str(shared_data / "mme" / "questions_template"),
                 "--media-root", str(real_media_root), "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert "2374 rows in 1187 groups" in result.stdout
    frame = read_table(output).frame
    assert frame.filter(pl.col("category") == "artwork")["image_name"][0] == "10002.jpg"


def test_eval_tool_files_need_a_media_root(cli, shared_data: Path, tmp_path: Path) -> None:
    output = tmp_path / "mme.parquet"
    result = cli("prepare", "--benchmark", "mme", "--input", str(shared_data / "mme" / "questions_template"),
                 "--output", str(output))
    assert result.returncode == 2
    assert "--media-root" in result.stderr and "Traceback" not in result.stderr
    assert not output.exists()


def test_eval_tool_template_missing_image_names_the_line(shared_data: Path, tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as error:
        READER.read(shared_data / "mme" / "questions_template" / "OCR.txt", ReadOptions(media_root=tmp_path))
    assert "0001.jpg" in str(error.value) and "row index=0" in str(error.value)


def test_eval_tool_template_ignores_a_prediction_column(tmp_path: Path) -> None:
    (tmp_path / "count").mkdir()
    (tmp_path / "count" / "a.jpg").write_bytes(tiny_png())
    template = tmp_path / "count.txt"
    template.write_text("a.jpg\tIs there one dog? Please answer yes or no.\tYes\tyes\n"
                        "a.jpg\tAre there two dogs? Please answer yes or no.\tNo\tno, one\n", encoding="utf-8")
    questions = read_eval_tool_templates(template, tmp_path)
    assert [q.answer for q in questions] == ["Yes", "No"]
    frame = READER.read(template, ReadOptions(media_root=tmp_path))
    assert "prediction" not in frame.columns and frame["g_index"].to_list() == [0, 0]


def copy_example(tmp_path: Path) -> Path:
    root = tmp_path / "release"
    shutil.copytree(EXAMPLES / "mme", root)
    return root


def test_one_subtask_folder_crlf_and_trailing_blanks(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    text = root / "count" / "count_01.txt"
    text.write_bytes(text.read_bytes().replace(b"Yes\n", b"Yes \t\r\n").replace(b"No\n", b"no\r\n\r\n"))
    frame = READER.read(root / "count", ReadOptions())
    assert frame.height == 6 and frame["category"].unique().to_list() == ["count"]
    assert frame["answer"].to_list()[:2] == ["Yes", "No"]
    assert not frame["question"].str.ends_with("\r").any()


def test_limit_keeps_both_questions_of_an_image() -> None:
    frame = READER.read(EXAMPLES / "mme", ReadOptions(limit=3))
    assert frame["index"].to_list() == [0, 1, 2, 3]


@pytest.mark.parametrize(("change", "message"), [
    (lambda root: (root / "count" / "count_02.txt").write_text("Is it? Please answer yes or no.\tMaybe\n"),
     "must be Yes or No"),
    (lambda root: (root / "count" / "count_02.txt").write_text("no tab on this line\n"), "question<TAB>answer"),
    (lambda root: (root / "count" / "count_02.png").unlink(), "no image named count_02"),
    (lambda root: (root / "count" / "count_02.txt").write_bytes(b"Is it\xff?\tYes\n"), "not UTF-8"),
], ids=["answer", "no-tab", "missing-image", "not-utf8"])
def test_bad_release_folder_is_refused(cli, tmp_path: Path, change, message: str) -> None:
    root = copy_example(tmp_path)
    change(root)
    output = tmp_path / "out.parquet"
    result = cli("prepare", "--benchmark", "mme", "--input", str(root), "--output", str(output))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "count_02.txt" in result.stderr and "Traceback" not in result.stderr
    assert not output.exists()


def test_not_an_mme_folder(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    with pytest.raises(BadInputError, match="no MME subtask folder"):
        READER.read(tmp_path, ReadOptions())


# ------------------------------------------------------------------------------------------ VLMEvalKit MME.tsv


def vlmevalkit_table(tmp_path: Path, *, with_image_path: bool) -> Path:
    """An MME.tsv in VLMEvalKit's layout made from the example folder (second question: a reference)."""
    frame = READER.read(EXAMPLES / "mme", ReadOptions())
    table = frame.select(
        (pl.col("index") + 1).alias("index"),
        pl.when(pl.col("image").str.len_chars() > 64).then(pl.col("image"))
        .otherwise((pl.col("image").cast(pl.Int64) + 1).cast(pl.String)).alias("image"),
        "question", "answer", "category",
        (pl.col("category") + "/" + pl.col("image_name")).alias("image_path"),
    )
    if not with_image_path:
        table = table.drop("image_path")
    path = tmp_path / "MME.tsv"
    write_table(table, path)
    return path


@pytest.mark.parametrize("with_image_path", [True, False])
def test_vlmevalkit_table_groups_the_two_questions_of_an_image(tmp_path: Path, with_image_path: bool) -> None:
    frame = READER.read(vlmevalkit_table(tmp_path, with_image_path=with_image_path), ReadOptions())
    assert frame.height == 28
    assert frame["g_index"].to_list() == [i - (i + 1) % 2 for i in range(1, 29)]
    assert frame["l2-category"].to_list()[-1] == "cognition"
    assert (frame["benchmark"] == "mme").all()


def test_vlmevalkit_table_through_the_cli_with_limit(cli, tmp_path: Path) -> None:
    source = vlmevalkit_table(tmp_path, with_image_path=True)
    output = tmp_path / "prepared.parquet"
    result = cli("prepare", "--benchmark", "mme", "--input", str(source), "--output", str(output), "--limit", "1")
    assert result.returncode == 0, result.stderr
    frame = read_table(output).frame
    assert frame["index"].to_list() == [1, 2] and frame["image"][1] == "1"


def test_vlmevalkit_table_limit_inlines_a_reference_to_a_dropped_row(tmp_path: Path) -> None:
    source = vlmevalkit_table(tmp_path, with_image_path=True)
    frame = read_table(source).frame
    # Both questions of the first image refer to row 3's payload (the same picture filed twice), and row 3 is
    # not among the rows kept by --limit 1: the kept rows get the payload itself.
    payload = frame["image"][2]
    frame = frame.with_columns(pl.Series("image", ["3", "3", *frame["image"][2:]]))
    write_table(frame, source)
    limited = READER.read(source, ReadOptions(limit=1))
    assert limited["index"].to_list() == [1, 2]
    assert limited["image"].to_list() == [payload, payload]
    assert READER.read(source, ReadOptions())["g_index"].to_list()[:4] == [1, 1, 3, 3]


@pytest.mark.parametrize(("column", "value", "message"), [
    ("answer", "Perhaps", "must be Yes or No"),
    ("image", "999", "points at no row holding an image"),
    ("image", base64.b64encode(b"not an image at all, just some bytes" * 3).decode(), "not a readable image"),
    ("index", "1", "duplicate index"),
    ("category", "", "empty category"),
], ids=["answer", "dangling-reference", "corrupt-image", "duplicate-index", "category"])
def test_bad_vlmevalkit_table_is_refused(cli, tmp_path: Path, column: str, value: str, message: str) -> None:
    source = vlmevalkit_table(tmp_path, with_image_path=False)
    frame = read_table(source).frame
    frame = frame.with_columns(pl.when(pl.col("index") == 3).then(pl.lit(value)).otherwise(pl.col(column)
                                                                                            .cast(pl.String))
                               .alias(column))
    write_table(frame, source)
    output = tmp_path / "out.tsv"
    result = cli("prepare", "--benchmark", "mme", "--input", str(source), "--output", str(output))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and f"column '{column}'" in result.stderr and "Traceback" not in result.stderr
    assert not output.exists()


def test_circular_is_refused_and_no_circular_is_a_no_op(cli, tmp_path: Path) -> None:
    output = tmp_path / "mme.parquet"
    result = cli("prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(output),
                 "--circular")
    assert result.returncode == 2 and "--circular" in result.stderr and not output.exists()
    assert READER.read(EXAMPLES / "mme", ReadOptions(circular=False)).height == 28


def test_table_with_image_paths_only_embeds_the_files(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "mme", tmp_path / "media")
    table = READER.read(EXAMPLES / "mme", ReadOptions()).select(
        "index", "question", "answer", "category",
        pl.when(pl.col("category").is_in(["color", "OCR"]))
        .then(pl.col("category") + "/images/" + pl.col("image_name"))
        .otherwise(pl.col("category") + "/" + pl.col("image_name")).alias("image_path"))
    source = tmp_path / "mme_paths.parquet"
    write_table(table, source)
    frame = READER.read(source, ReadOptions(media_root=tmp_path / "media"))
    assert frame["g_index"].to_list() == [i - i % 2 for i in range(28)]
    assert decode_base64_image(frame["image"][0]) == (EXAMPLES / "mme" / "existence" / "existence_01.png").read_bytes()
    (tmp_path / "media" / "count" / "count_01.png").unlink()
    with pytest.raises(BadInputError) as error:
        READER.read(source, ReadOptions(media_root=tmp_path / "media"))
    assert error.value.index == 6 and error.value.column == "image_path" and "not found" in str(error.value)


def test_table_g_index_column_wins(tmp_path: Path) -> None:
    source = vlmevalkit_table(tmp_path, with_image_path=True)
    frame = read_table(source).frame.with_columns(pl.lit(7, dtype=pl.Int64).alias("g_index"))
    write_table(frame, source)
    assert READER.read(source, ReadOptions())["g_index"].unique().to_list() == [7]
