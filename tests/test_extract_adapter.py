"""VLMEvalKit/LLaVA prediction files made to look like mmbatch prediction files."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.extract.input_adapter import adapt_predictions

PATH = Path("mmbench_dev_llava_upload.xlsx")


def test_mmbench_file_gets_circular_groups_benchmark_model_and_mode() -> None:
    frame = pl.DataFrame({"index": [3, 1_000_003, 2_000_003, 4], "prediction": ["A", "B", "C", "D"]})
    adapted, fmt = adapt_predictions(frame, path=PATH, benchmark="MMBench", model_name=None)
    assert fmt == "vlmevalkit"
    assert adapted["g_index"].to_list() == [3, 3, 3, 4]
    assert set(adapted["benchmark"]) == {"mmbench"}
    assert set(adapted["model"]) == {"llava"}  # the file name without the benchmark, split and kind of file
    assert set(adapted["mode"]) == {"generate"}
    named, _ = adapt_predictions(frame, path=PATH, benchmark="mmbench", model_name="llava-v1.5-13b")
    assert set(named["model"]) == {"llava-v1.5-13b"}


def test_mme_file_groups_by_image() -> None:
    frame = pl.DataFrame({"index": [10, 11, 12, 13], "category": ["color", "color", "color", "OCR"],
                          "image_path": ["1.jpg", "1.jpg", "2.jpg", "1.jpg"], "prediction": ["Yes"] * 4})
    adapted, _ = adapt_predictions(frame, path=PATH, benchmark="mme", model_name=None)
    assert adapted["g_index"].to_list() == [10, 10, 12, 13]


def test_likelihood_rows_are_recognised() -> None:
    frame = pl.DataFrame({"index": [1, 2], "prediction": [None, "A"],
                          "choice_logprobs": [[-1.0, -2.0], None]})
    adapted, _ = adapt_predictions(frame, path=PATH, benchmark="seedbench", model_name=None)
    assert adapted["mode"].to_list() == ["likelihood", "generate"]


def test_an_mmbatch_file_is_left_as_it_is() -> None:
    frame = pl.DataFrame({"index": [1], "g_index": [7], "benchmark": ["mme"], "model": ["m"], "mode": ["generate"],
                          "prediction": ["Yes"]})
    adapted, fmt = adapt_predictions(frame, path=PATH, benchmark=None, model_name=None)
    assert fmt == "mmbatch" and adapted.equals(frame)


@pytest.mark.parametrize(
    ("frame", "bench_name", "message"),
    [
        (pl.DataFrame({"index": [1]}), "mmbench", "no 'prediction' column"),
        (pl.DataFrame({"prediction": ["A"]}), "mmbench", "no 'index' column"),
        (pl.DataFrame({"index": [1, 1], "prediction": ["A", "B"]}), "mmbench", "duplicate index"),
        (pl.DataFrame({"index": [1], "prediction": ["A"]}), None, "--benchmark"),
    ],
)
def test_bad_files(frame: pl.DataFrame, bench_name: str | None, message: str) -> None:
    with pytest.raises(BadInputError, match=message) as error:
        adapt_predictions(frame, path=PATH, benchmark=bench_name, model_name=None)
    assert str(PATH) in str(error.value)
