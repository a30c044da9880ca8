"""prepare: SEED-Bench-2 level-3 rows carry their option images and generation input, in mode generate-image."""

from __future__ import annotations

import json

from mmbatch.cli import main
from mmbatch.tableio import read_table
from tests.support.seed_level3 import write_level3_benchmark


def test_level3_rows_split_input_and_option_images(tmp_path, shared_data, capsys):
    source = write_level3_benchmark(tmp_path / "media", shared_data)
    out = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(source), "--output", str(out)]) == 0
    rows = {row["question_type_id"]: row for row in read_table(out).frame.iter_rows(named=True)}

    assert {row["mode"] for row in rows.values()} == {"generate-image"}
    assert {row["prompt_template"] for row in rows.values()} == {"image-generation"}
    assert rows[25]["prompt"] == rows[25]["generation_prompt"] == "A brown purse is sitting on a green bench."
    assert rows[25]["image_path"] is None
    assert json.loads(rows[25]["option_image_paths"]) == [f"task25/image/0/{n}.jpg" for n in (1, 2, 3, 4)]
    # dimension 26: the three preceding frames are the generator's input, the last four entries the options
    assert json.loads(rows[26]["image_path"]) == [f"task26/kitchen_start_end_frame/v17{n}/1.png" for n in (53, 47, 48)]
    assert json.loads(rows[26]["option_image_paths"])[1] == "task26/kitchen_start_end_frame/v1752/2.png"
    assert rows[26]["prompt"] == "What will happen next?"
    # dimension 27: the text options stay as A-D, the option images are beside them
    assert rows[27]["prompt"] == "What does the Sydney Opera House look like?"
    assert rows[27]["A"].startswith("The Sydney Opera House is a multi-venue")
    assert rows[27]["l2-category"] == "Image & Text Generation"
    assert main(["validate", str(out)]) == 0


def test_missing_option_image_is_exit_2(tmp_path, shared_data, capsys):
    source = write_level3_benchmark(tmp_path / "media", shared_data)
    (tmp_path / "media" / "task25" / "image" / "0" / "3.jpg").unlink()
    out = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(source), "--output", str(out)]) == 2
    message = capsys.readouterr().err
    assert "task25/image/0/3.jpg" in message and "option_image_paths" in message and "row index=0" in message
    assert not out.exists()
