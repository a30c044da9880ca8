"""Lets Pixtral's processor (Mistral 3's) import without torchvision, for this test environment only.

Why it exists: ``transformers.models.pixtral.processing_pixtral`` imports one helper,
``get_resize_output_image_size``, from ``image_processing_pixtral``, the torchvision image processor's module, and
the library marks ``PixtralProcessor`` as needing torchvision, so ``AutoProcessor`` hands out a placeholder that
raises ``ImportError: PixtralProcessor requires the Torchvision library``. torchvision does not import on this
machine. The processor itself calls no torchvision code: the helper only counts image tokens for vLLM
(``_get_num_multimodal_tokens``), and images go through ``PixtralImageProcessorPil``.

:func:`register` puts a module under the torchvision module's name that holds the PIL module's copy of the helper
(the same source, which ``tests/test_pixtral_standin.py`` checks against the installed library, so the stand-in
cannot drift from it), then makes ``PixtralProcessor`` resolve to the real class. Nothing of the product changes: a
machine with torchvision loads the same processor the same way.
"""

from __future__ import annotations

import sys
import types

TORCHVISION_MODULE = "transformers.models.pixtral.image_processing_pixtral"
"""The module ``processing_pixtral`` imports its helper from (it imports torchvision)."""


def register() -> None:
    """Make ``PixtralProcessor`` importable and loadable by ``AutoProcessor`` here. Idempotent."""
    import transformers
    import transformers.models.pixtral as pixtral
    from transformers.models.pixtral import image_processing_pil_pixtral

    if TORCHVISION_MODULE not in sys.modules:
        stand_in = types.ModuleType(TORCHVISION_MODULE, "PIL-only stand-in (tests/support/pixtral_standin.py)")
        stand_in.get_resize_output_image_size = (  # type: ignore[attr-defined]
            image_processing_pil_pixtral.get_resize_output_image_size)
        sys.modules[TORCHVISION_MODULE] = stand_in
    from transformers.models.pixtral.processing_pixtral import PixtralProcessor

    # The lazy modules answer a name they hold without asking whether its backends are installed.
    for module in (pixtral, transformers):
        module.PixtralProcessor = PixtralProcessor  # type: ignore[attr-defined]
