"""``--video-as video`` and ``--video-as frames`` on the families whose video processor exists only in transformers'
torchvision build (MiniCPM-V 4.6 and 4.7): the video assertions of ``tests/test_hf_video.py``, run on the matrix's tiny
model of each family with its own video processor, in the test environment that has torchvision (``make
torchvision-env``; ``tests/test_torchvision_families.py`` runs this module there).

The assertions are that module's own test functions, imported here: pytest gives them this module's ``video_dir`` (and
that module's ``backends`` fixture built on it), so they check these families exactly as they check the others:

1. the family gets videos as one video by default, and the run's settings say so;
2. a video row's greedy answer equals ``model.generate`` on the model's own ``apply_chat_template`` inputs with the
   video, and batches mixing video and image rows change nothing;
3. a video row's option log-probs equal a plain forward pass per option (1e-4, float32), at batch size 1 and 4;
4. circular copies of a video question (one group) equal the same rows without a group;
5. ``--video-as frames`` gives the frames as images, as the model's own template writes several images.

And a checkpoint whose video processor stacks frames (``stack_frames`` > 1) has its video rows refused, with the
reason, while its image rows and ``--video-as frames`` run.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.options import HfOptions
from tests.support import single_torch_thread
from tests.support.families import family_model
from tests.test_hf_video import (
    answers,
    backends,  # noqa: F401  (that module's fixture, found by name: it builds on this module's video_dir)
    generate_on_own_inputs,
    rows,
    test_a_video_rows_answer_equals_generate_on_the_models_own_video_inputs,
    test_a_video_rows_option_logprobs_equal_a_plain_forward_pass,
    test_circular_copies_of_a_video_question_share_their_prefix_and_change_nothing,
    test_the_family_gets_videos_by_default_and_records_it,
    test_video_as_frames_gives_the_frames_as_images,
)

__all__ = [
    "test_a_video_rows_answer_equals_generate_on_the_models_own_video_inputs",
    "test_a_video_rows_option_logprobs_equal_a_plain_forward_pass",
    "test_circular_copies_of_a_video_question_share_their_prefix_and_change_nothing",
    "test_the_family_gets_videos_by_default_and_records_it",
    "test_video_as_frames_gives_the_frames_as_images",
]

TORCHVISION_VIDEO_FAMILIES = ["MiniCPM-V 4.6", "MiniCPM-V 4.7"]
"""Matrix families (``tests/support/families``) whose own video processor needs torchvision, tested here."""

TESTS_PER_FAMILY = len(__all__)
"""The assertions above, per family."""

TEST_COUNT = len(TORCHVISION_VIDEO_FAMILIES) * TESTS_PER_FAMILY + 1
"""The tests of this module: the assertions per family and the stacked-frames refusal
(``tests/test_torchvision_families.py`` counts them)."""

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                                reason="needs torchvision: runs in `make torchvision-env` "
                                       "(tests/test_torchvision_families.py)")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield


@pytest.fixture(scope="module", params=TORCHVISION_VIDEO_FAMILIES)
def video_dir(request):
    """The matrix's tiny model of the family, its own video processor in its processor."""
    return family_model(request.param)


def stacking_copy(source: Path, target: Path, stack_frames: int) -> Path:
    """The tiny model in ``source`` saved again in ``target`` with its video processor stacking ``stack_frames``
    sub-frames a second, as a checkpoint's ``processor_config.json`` would say."""
    from transformers import AutoProcessor

    shutil.copytree(source, target)
    processor = AutoProcessor.from_pretrained(source)
    processor.video_processor.stack_frames = stack_frames
    processor.save_pretrained(target)
    assert json.loads((target / "processor_config.json").read_text())["video_processor"]["stack_frames"] == 2
    return target


def test_a_video_processor_that_stacks_frames_has_its_video_rows_refused(tmp_path) -> None:
    """MiniCPM-V 4.6 saved with ``stack_frames=2``: given frames already sampled, its video processor would paste the
    last of them into a composite image of sub-frames, so each video row fails with the reason, in generation and
    likelihood; its image rows answer as the model's own inputs give, and ``--video-as frames`` runs its video rows."""
    stacking = stacking_copy(family_model("MiniCPM-V 4.6"), tmp_path / "stacking", stack_frames=2)
    backend = create_backend(HfOptions(model=str(stacking), dtype="float32", device="cpu", batch_size=4))
    try:
        assert backend.loaded.processor.video_processor.stack_frames == 2
        videos = {request.index for request in rows() if request.is_video}
        for results in ([r for chunk in backend.generate(rows(), max_new_tokens=6) for r in chunk],
                        [r for chunk in backend.loglikelihood(rows()) for r in chunk]):
            assert sorted(r.index for r in results) == [0, 1, 2, 3, 4]
            for result in results:
                if result.index in videos:
                    assert result.error is not None and "stacks frames (stack_frames=2)" in result.error
                    assert "--video-as frames" in result.error
                else:
                    assert result.error is None, result.error
        images = sorted((r for chunk in backend.generate(rows(), max_new_tokens=6) for r in chunk
                         if r.index not in videos), key=lambda r: r.index)
        own = generate_on_own_inputs(backend.loaded, as_video=False)
        assert [r.prediction for r in images] == [own[1], own[3]]
    finally:
        backend.close()
    frames = create_backend(HfOptions(model=str(stacking), dtype="float32", device="cpu", batch_size=4,
                                      video_as="frames"))
    try:
        assert answers(frames) == generate_on_own_inputs(frames.loaded, as_video=False)
    finally:
        frames.close()
