"""``--video-as video`` and ``--video-as frames`` on the families whose video processor exists only in transformers'
torchvision build (MiniCPM-V 4.6 and 4.7): the video assertions of ``tests/test_hf_video.py``, run on the matrix's tiny
model of each family with its own video processor, in the test environment that has torchvision (``make
torchvision-env``; ``tests/test_torchvision_families.py`` runs this module there).

The assertions are that module's own test functions, imported here: pytest gives them this module's ``video_dir`` and
``backends`` fixtures, so they check these families exactly as they check the others:

1. the family gets videos as one video by default, and the run's settings say so;
2. a video row's greedy answer equals ``model.generate`` on the model's own ``apply_chat_template`` inputs with the
   video, and batches mixing video and image rows change nothing;
3. a video row's option log-probs equal a plain forward pass per option (1e-4, float32), at batch size 1 and 4;
4. circular copies of a video question (one group) equal the same rows without a group;
5. ``--video-as frames`` gives the frames as images, as the model's own template writes several images.
"""

from __future__ import annotations

import importlib.util

import pytest

from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.options import HfOptions
from tests.support import single_torch_thread
from tests.support.families import family_model
from tests.test_hf_video import (
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
"""The assertions above, per family (``tests/test_torchvision_families.py`` counts them)."""

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


@pytest.fixture(scope="module")
def backends(video_dir):
    one = create_backend(HfOptions(model=str(video_dir), dtype="float32", device="cpu", batch_size=1))
    four = create_backend(HfOptions(model=str(video_dir), dtype="float32", device="cpu", batch_size=4))
    yield one, four
    one.close()
    four.close()
