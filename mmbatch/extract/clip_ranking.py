"""CLIP similarity between a generated picture and each option picture (SEED-Bench-2 level 3, docs/rules.md §7).

"We calculate the CLIP similarity score between the generated image and each candidate image option, selecting the
highest-scoring option as the final prediction" (SEED-Bench-2). Any CLIP-family model that ``transformers`` loads
with ``AutoModel`` / ``AutoProcessor`` and that has ``get_image_features`` works (CLIP, SigLIP...). Similarity is
the cosine of the two image embeddings. Option pictures recur (SEED-Bench-2 reuses candidates across questions), so
each distinct file is embedded once per run; embeddings are computed in batches, on the GPU when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

DEFAULT_CLIP_MODEL = "openai/clip-vit-large-patch14"
"""The CLIP the SEED-Bench-2 paper cites; recorded in the extracted file's metadata."""


class ClipRanker:
    """Embeds pictures with one CLIP-family model and compares them.

    Raises:
        BadInputError: the model cannot be loaded or embeds no pictures (exit 2, before any row is decided).

    Args:
        model: Hugging Face id or local folder of the model.
        batch_size: pictures per forward pass.
        device: ``auto`` (CUDA when present), ``cpu``, ``cuda`` or ``cuda:N``.
    """

    def __init__(self, model: str, *, batch_size: int = 16, device: str = "auto") -> None:
        import torch
        from transformers import AutoModel, AutoProcessor

        from mmbatch.backends.model_source import check_model_source
        from mmbatch.errors import BadInputError

        check_model_source(model, flag="--clip-model")
        self.device = torch.device("cuda" if device == "auto" and torch.cuda.is_available() else
                                   "cpu" if device == "auto" else device)
        try:
            self.processor = AutoProcessor.from_pretrained(model)
            self.model = AutoModel.from_pretrained(model).to(self.device).eval()
        except (OSError, ValueError, KeyError) as exc:
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise BadInputError(f"--clip-model {model!r} cannot be loaded: {first_line}") from exc
        if not callable(getattr(self.model, "get_image_features", None)):
            raise BadInputError(f"--clip-model {model!r} ({type(self.model).__name__}) has no get_image_features: "
                                "choose a CLIP-family model (CLIP, SigLIP...)")
        self.batch_size = batch_size
        self._cache: dict[Path, torch.Tensor] = {}
        self.embedded = 0
        """Pictures embedded so far (cache hits are not counted)."""

    def embed(self, files: Sequence[Path]) -> torch.Tensor:
        """Unit-length embeddings of ``files`` (one row each), from the cache where a file was embedded before.

        Raises:
            OSError: a file cannot be read.
            PIL.UnidentifiedImageError: a file is not a picture.
        """
        import torch

        keys = [Path(file).resolve() for file in files]
        missing = list(dict.fromkeys(key for key in keys if key not in self._cache))
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start:start + self.batch_size]
            for key, vector in zip(batch, self._embed_batch(batch), strict=True):
                self._cache[key] = vector
        return torch.stack([self._cache[key] for key in keys])

    def similarities(self, generated: Path, options: Sequence[Path]) -> list[float]:
        """Cosine similarity of the generated picture to each option picture, in the order given."""
        vectors = self.embed([generated, *options])
        return [float(value) for value in vectors[1:] @ vectors[0]]

    def settings(self) -> dict[str, Any]:
        """What changes the similarities, for the metadata."""
        return {"model": getattr(self.model.config, "_name_or_path", None), "similarity": "cosine of image "
                "embeddings (get_image_features)", "device": str(self.device)}

    def _embed_batch(self, files: list[Path]) -> torch.Tensor:
        import torch
        from PIL import Image  # here, not at the top: extract imports this module for every run, CLIP or not

        pictures = []
        for file in files:
            with Image.open(file) as picture:
                pictures.append(picture.convert("RGB"))
        inputs = self.processor(images=pictures, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            features = self.model.get_image_features(pixel_values=inputs["pixel_values"])
        # transformers 5 returns the projected embedding as ``pooler_output``; older versions return the tensor
        vectors = features if isinstance(features, torch.Tensor) else features.pooler_output
        vectors = vectors.float()
        self.embedded += len(files)
        return (vectors / vectors.norm(dim=-1, keepdim=True)).cpu()
