"""Group prefix sharing in the ``hf`` backend: circular copies and MME-style pairs prefill their common prefix once,
and the greedy answers are identical to the ordinary batched path's, on both tiny architectures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mmbatch.backends.base import Request
from mmbatch.backends.hf.backend import HFBackend
from mmbatch.backends.hf.generation import generate_batch
from mmbatch.backends.hf.group_prefix import common_prefix, split_groups
from mmbatch.backends.hf.loading import load_model
from mmbatch.backends.hf.options import HfOptions
from tests.support.tiny_models import session_model_dir

OPTIONS = ["a red square", "a blue circle", "a green tree", "a small cat"]


def noise(seed: int, size: tuple[int, int] = (40, 30)) -> Image.Image:
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    return Image.fromarray(pixels)


def circular_rows(question: int, image: Image.Image, start: int) -> list[Request]:
    """The 4 circular copies of one question (options rotated), sharing one image and one group."""
    rows = []
    for shift in range(4):
        rotated = OPTIONS[shift:] + OPTIONS[:shift]
        listed = "\n".join(f"{letter}. {text}" for letter, text in zip("ABCD", rotated, strict=True))
        prompt = f"Question {question}: what is shown here?\n{listed}\nAnswer with the option's letter."
        rows.append(Request(start + shift, prompt, images=[image], group=question))
    return rows


def mixed_rows() -> list[Request]:
    """3 circular groups, 2 MME-style pairs (two questions, one image), a lone row, and a group key reused with a
    different image (which must not share)."""
    rows = []
    for question in range(3):
        rows += circular_rows(question, noise(question), start=10 * question)
    for pair in range(2):
        image = noise(100 + pair, (30 + pair, 20))
        rows += [Request(100 + 2 * pair, "Is there a cat in the image? Please answer yes or no.", [image],
                         group=50 + pair),
                 Request(101 + 2 * pair, "Is there a dog in this picture? Please answer yes or no.", [image.copy()],
                         group=50 + pair)]
    rows.append(Request(200, "Describe the image.", [noise(7)], group=60))
    rows += [Request(300, "What colour dominates?", [noise(8)], group=70),
             Request(301, "What colour dominates?", [noise(9)], group=70)]
    return rows


@pytest.fixture(scope="module", params=["llava", "idefics3"])
def loaded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    directory: Path = session_model_dir(tmp_path_factory, request.param)
    return load_model(str(directory), revision=None, dtype="float32", device="cpu")


def test_groups_are_adjacent_rows_with_the_same_key_and_pixels() -> None:
    groups = split_groups(mixed_rows())
    assert [len(group) for group in groups] == [4, 4, 4, 2, 2, 1, 1, 1]
    assert common_prefix([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]]) == 2
    assert common_prefix([[1, 2], [1, 2]]) == 1  # each row keeps at least one token of its own


def test_shared_prefix_answers_equal_the_unshared_batch(loaded) -> None:
    rows = mixed_rows()
    backend = HFBackend(HfOptions(model="tiny", batch_size=8), loaded)
    shared = {result.index: result for batch in backend.generate(rows, max_new_tokens=8) for result in batch}
    reference = generate_batch(loaded, rows, max_new_tokens=8, temperature=0.0)
    assert all(result.error is None for result in shared.values())
    assert [shared[r.index].prediction for r in reference] == [r.prediction for r in reference]
    assert [shared[r.index].output_tokens for r in reference] == [r.output_tokens for r in reference]
    assert len({r.prediction for r in reference}) > 5  # random weights, different rows: the answers differ
    # Batches of 8 cut the groups as 4+4, 4+2+2, 1+1+1: every group of 2 or more rows shared its prefix.
    assert backend.sharing.shared_rows == 16 and backend.sharing.groups == 5
    assert backend.sharing.unshared == {"single row": 3}
    assert "16 generated rows shared the prefix of their group (5 groups); 3 ran unshared (3 single row)" in \
        backend.sharing.line()


def test_sampling_never_shares(loaded) -> None:
    rows = circular_rows(0, noise(0), start=0)
    backend = HFBackend(HfOptions(model="tiny", batch_size=8, temperature=0.7), loaded)
    results = [result for batch in backend.generate(rows, max_new_tokens=4) for result in batch]
    assert all(result.error is None for result in results)
    assert backend.sharing.shared_rows == 0 and backend.sharing.unshared == {"sampling": 4}


def test_likelihood_groups_share_their_prefix_and_score_as_the_ordinary_path(loaded) -> None:
    from mmbatch.backends.hf.group_prefix import SharingCounts
    from mmbatch.backends.hf.likelihood_batch import score_batch

    rows = []
    for question in range(2):
        for request in circular_rows(question, noise(question), start=10 * question):
            rotation = (request.index % 10) % 4
            request.options = OPTIONS[rotation:] + OPTIONS[:rotation]
            rows.append(request)
    rows.append(Request(99, "Which colour is it?", [noise(5)], options=["red", "a light blue"], group=9))
    counts = SharingCounts(kind="likelihood")
    shared = score_batch(loaded, rows, 1, counts)
    reference = score_batch(loaded, rows, 1)
    assert [r.index for r in shared] == [r.index for r in reference]
    for ours, theirs in zip(shared, reference, strict=True):
        assert ours.error is None and ours.choice_ntokens == theirs.choice_ntokens
        assert max(abs(a - b) for a, b in zip(ours.choice_logprobs, theirs.choice_logprobs, strict=True)) < 1e-4
    assert len({tuple(r.choice_logprobs) for r in reference}) == len(reference)  # every row scores differently
    assert counts.shared_rows == 8 and counts.groups == 2 and counts.unshared == {"single row": 1}
