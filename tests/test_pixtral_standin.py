"""The test environment's Pixtral stand-in stays honest: what it replaces is exactly what the installed library
imports, and the function it substitutes is the same source as the torchvision module's."""

from __future__ import annotations

import ast
from pathlib import Path


def pixtral_source(name: str) -> str:
    import transformers.models.pixtral

    return (Path(transformers.models.pixtral.__path__[0]) / f"{name}.py").read_text(encoding="utf-8")


def function_source(module_source: str, name: str) -> str:
    for node in ast.parse(module_source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            segment = ast.get_source_segment(module_source, node)
            assert segment is not None
            return segment
    raise AssertionError(f"{name} is not defined there")


def test_the_processor_imports_only_the_helper_the_stand_in_provides() -> None:
    tree = ast.parse(pixtral_source("processing_pixtral"))
    imported = {(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names if node.module and "image_processing_pixtral" in node.module}
    assert imported == {("image_processing_pixtral", "get_resize_output_image_size")}


def test_the_substituted_helper_is_the_torchvision_modules_own_source() -> None:
    name = "get_resize_output_image_size"
    assert function_source(pixtral_source("image_processing_pil_pixtral"), name) == \
        function_source(pixtral_source("image_processing_pixtral"), name)


def test_registered_the_real_processor_class_loads() -> None:
    import transformers

    from tests.support.pixtral_standin import register

    register()
    from transformers.models.pixtral.processing_pixtral import PixtralProcessor

    assert transformers.PixtralProcessor is PixtralProcessor
