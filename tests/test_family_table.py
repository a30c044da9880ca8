"""docs/models.md lists every family of the architecture matrix, and no family the matrix does not test; every other
image-text-to-text model type of ``transformers`` is listed with a reason that still holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.families import FAMILIES

DOC = Path(__file__).resolve().parents[1] / "docs" / "models.md"


def family_rows() -> dict[str, str]:
    """The rows of the "Families tested" table, by family name (first cell) -> transformers class (second)."""
    return {cells[0]: cells[1].strip("`") for cells in table_rows("## Families tested", "family")}


def untested_rows() -> dict[str, tuple[str, str]]:
    """The rows of the "Families not in the matrix" table: model type -> (transformers class, reason)."""
    return {cells[0]: (cells[1].strip("`"), cells[2])
            for cells in table_rows("## Families not in the matrix", "model type")}


def table_rows(heading: str, first_header: str) -> list[list[str]]:
    """The cells of each body row of the table in the section under ``heading``."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index(heading):].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] not in (first_header, "") and not set(cells[0]) <= {"-"}:
            rows.append(cells)
    return rows


def test_every_family_of_the_matrix_has_a_row_and_every_row_a_family() -> None:
    assert sorted(family_rows()) == sorted(FAMILIES)


def test_each_row_names_a_transformers_class() -> None:
    import transformers

    missing = {name: cls for name, cls in family_rows().items() if not hasattr(transformers, cls)}
    assert not missing


def test_every_image_text_to_text_model_type_is_tested_or_listed_with_a_reason() -> None:
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES as registered

    tested = set(family_rows().values())
    untested = untested_rows()
    assert sorted(mt for mt, cls in registered.items() if cls not in tested and mt not in untested) == []
    # No stale row: each names a registered model type, its class, and a class the matrix does not test (unless the
    # row says the class is tested under another model type).
    assert {mt: cls for mt, (cls, _) in untested.items() if registered.get(mt) != cls} == {}
    assert [mt for mt, (cls, why) in untested.items() if cls in tested and not why.startswith("its class is")] == []


def test_each_reason_for_leaving_a_family_out_still_holds() -> None:
    import inspect
    import re

    import transformers
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    for model_type, (_, why) in untested_rows().items():
        named = re.findall(r"`(\w+)`", why)
        if why.startswith("needs torchvision"):
            with pytest.raises(ImportError, match="Torchvision"):
                getattr(transformers, named[0])()
        elif why.startswith("refused: an encoder-decoder"):
            assert transformers.CONFIG_MAPPING[model_type]().is_encoder_decoder, model_type
        elif why.startswith("needs timm"):
            with pytest.raises(ImportError, match="timm"):
                transformers.AutoModel.from_config(transformers.CONFIG_MAPPING[model_type]().vision_config)
        elif "no processor registered" in why:
            assert model_type not in PROCESSOR_MAPPING_NAMES, model_type
        elif "has a video processor" in why:
            assert "video_processor" in inspect.signature(getattr(transformers, named[0]).__init__).parameters
        elif "also takes audio" in why:
            assert "feature_extractor" in inspect.signature(getattr(transformers, named[0]).__init__).parameters
