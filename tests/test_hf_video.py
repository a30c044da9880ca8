"""``--video-as``: video rows given to a processor that takes video as one video, or as their frames as images.

The video path runs on the matrix's tiny LLaVA-OneVision, LLaVA-NeXT-Video, Video-LLaVA, InternVL, SmolVLM, Gemma 4,
Qwen-VL (Qwen2-VL to Qwen3.5) and GLM-4V models with torchvision-free video processors
(:mod:`tests.support.frames_video_processor`: the library's need torchvision): a video row's answer equals
``model.generate`` on the model's own ``apply_chat_template`` inputs with the video, its option log-probs equal a plain
forward pass per option, and batches mixing video and image rows change nothing.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from PIL import Image

from mmbatch.backends.base import FrameTiming, Request
from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.boundaries import join_text
from mmbatch.backends.hf.cache_reuse import prefix_sharing_blocker
from mmbatch.backends.hf.messages import chat_text, template_has_bos
from mmbatch.backends.hf.options import HfOptions
from mmbatch.backends.hf.video import (
    FramesAsVideo,
    as_model_input,
    family_default,
    resolve_video_as,
    untimed_refusal,
)
from mmbatch.errors import BadInputError
from mmbatch.infer.settings import InferOptions, resume_settings
from tests.support import single_torch_thread
from tests.support.families import family_model

OPTIONS = ["a red square", "a blue circle", "a cat", "a green tree"]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield


VIDEO_FAMILIES = {
    "LLaVA-OneVision": ("llava_onevision", {}),
    "InternVL": ("internvl", {}),
    # SmolVLM's processor writes each frame's timestamp; its video processor returns `pixel_values` and keeps
    # SmolVLM2's frame settings, which its apply_chat_template reads.
    "SmolVLM": ("smolvlm", {"output_name": "pixel_values", "num_frames": 64, "fps": 1}),
}
"""Families whose builder takes a video processor, by the matrix's name: builder module, video processor settings."""

CLIP_VIDEO_FAMILIES = {"LLaVA-NeXT-Video": "llava_next_video", "Video-LLaVA": "video_llava"}
"""Families whose video processor takes CLIP's steps (shorter side resized, centre crop), by the matrix's name: builder
module, whose ``TILE`` is the frames' side. LLaVA-NeXT-Video pools each frame's features; Video-LLaVA's video tower
gives every frame's patches and class token."""

QWEN_FAMILIES = {"Qwen2-VL": ("qwen_vl", "build_qwen2_vl"), "Qwen2.5-VL": ("qwen_vl", "build_qwen2_5_vl"),
                 "Qwen3-VL": ("qwen_vl", "build_qwen3_vl"), "Qwen3-VL-MoE": ("qwen_vl", "build_qwen3_vl_moe"),
                 "Qwen3.5": ("qwen_vl", "build_qwen3_5"), "Qwen3.5-MoE": ("qwen_vl", "build_qwen3_5_moe"),
                 "GLM-4V": ("glm4v", "build_glm4v"), "GLM-4.5V": ("glm4v", "build_glm4v_moe")}
"""Families with Qwen2-VL's video layout (frame pairs cut into merged patches, M-RoPE time positions), by the matrix's
name: builder module and function. Built as the matrix builds them, then their video slot gets
:class:`~tests.support.frames_video_processor.QwenFramesVideoProcessor` with the stand-in's patch settings.
Qwen2.5-VL's time positions and the timestamps of Qwen3-VL, Qwen3.5 and GLM-4V (and their MoE variants) come from the
frames' times; Qwen3.5's linear attention shares no group prefix."""


def build_with_video_input(family: str, directory):
    """The matrix's tiny model of ``family`` in ``directory``, with a processor whose video input works here."""
    import importlib

    from tests.support.frames_video_processor import FramesVideoProcessor, QwenFramesVideoProcessor, register

    register()
    if family in QWEN_FAMILIES:
        from transformers import AutoProcessor

        module_name, builder = QWEN_FAMILIES[family]
        getattr(importlib.import_module(f"tests.support.families.{module_name}"), builder)(directory)
        processor = AutoProcessor.from_pretrained(directory)
        stand_in, images = processor.video_processor, processor.image_processor
        processor.video_processor = QwenFramesVideoProcessor(
            patch_size=stand_in.patch_size, merge_size=stand_in.merge_size,
            temporal_patch_size=stand_in.temporal_patch_size, size=dict(images.size),
            image_mean=tuple(images.image_mean), image_std=tuple(images.image_std))
        processor.save_pretrained(directory)
        return directory
    if family == "Gemma 4":
        from tests.support.families import gemma4
        from tests.support.frames_video_processor import Gemma4FramesVideoProcessor

        gemma4.build_gemma4(directory, video_processor=Gemma4FramesVideoProcessor(
            patch_size=gemma4.PATCH, pooling_kernel_size=gemma4.POOLING, max_soft_tokens=gemma4.SOFT_TOKENS))
        return directory
    if family in CLIP_VIDEO_FAMILIES:
        from tests.support.frames_video_processor import ClipFramesVideoProcessor

        name = CLIP_VIDEO_FAMILIES[family]
        module = importlib.import_module(f"tests.support.families.{name}")
        getattr(module, f"build_{name}")(directory, video_processor=ClipFramesVideoProcessor(
            size={"shortest_edge": module.TILE}, crop_size={"height": module.TILE, "width": module.TILE}))
        return directory
    name, settings = VIDEO_FAMILIES[family]
    module = importlib.import_module(f"tests.support.families.{name}")
    getattr(module, f"build_{name}")(
        directory, video_processor=FramesVideoProcessor(size={"height": module.TILE, "width": module.TILE}, **settings))
    return directory


@pytest.fixture(scope="module", params=sorted([*VIDEO_FAMILIES, *CLIP_VIDEO_FAMILIES, *QWEN_FAMILIES, "Gemma 4"]))
def video_dir(request, tmp_path_factory):
    """The matrix's tiny model of the family, with a processor whose video input works here."""
    return build_with_video_input(request.param, tmp_path_factory.mktemp("video"))


@pytest.fixture(scope="module")
def backends(video_dir):
    one = create_backend(HfOptions(model=str(video_dir), dtype="float32", device="cpu", batch_size=1))
    four = create_backend(HfOptions(model=str(video_dir), dtype="float32", device="cpu", batch_size=4))
    yield one, four
    one.close()
    four.close()


def frames(n: int, count: int = 4) -> list[Image.Image]:
    """A short video: its frames change colour over time, differently per row."""
    return [Image.new("RGB", (36 + 4 * n, 30), (40 * k % 256, 90 + 30 * n, 200 - 40 * k)) for k in range(count)]


TIMINGS = {0: FrameTiming(indices=(3, 10, 17, 24), video_len=30, fps=10.0),
           2: FrameTiming(indices=(0, 15, 29), video_len=30, fps=10.0),
           4: FrameTiming(indices=(2, 8, 14, 20, 26), video_len=40, fps=15.0)}
"""Where the video rows' frames lie in their (imagined) video files."""


def rows() -> list[Request]:
    """Three video rows (decoded from video files: frame numbers and rate known) and two image rows, interleaved."""
    return [
        Request(index=0, prompt="What happens in the video?", images=frames(0), is_video=True,
                frame_timing=TIMINGS[0], options=OPTIONS),
        Request(index=1, prompt="What is shown in the image?", images=[frames(1)[0]], options=OPTIONS),
        Request(index=2, prompt="What changes over time? Look carefully.", images=frames(2, 3), is_video=True,
                frame_timing=TIMINGS[2], options=OPTIONS),
        Request(index=3, prompt="Which colour is it?", images=[frames(3)[2]], options=OPTIONS),
        Request(index=4, prompt="What moves in the video?", images=frames(4, 5), is_video=True,
                frame_timing=TIMINGS[4], options=OPTIONS),
    ]


def answers(backend) -> list[str | None]:
    results = sorted((r for chunk in backend.generate(rows(), max_new_tokens=6) for r in chunk), key=lambda r: r.index)
    assert all(r.error is None for r in results), [r.error for r in results]
    return [r.prediction for r in results]


def logprobs(backend) -> list[list[float]]:
    results = sorted((r for chunk in backend.loglikelihood(rows()) for r in chunk), key=lambda r: r.index)
    assert all(r.error is None for r in results), [r.error for r in results]
    return [list(r.choice_logprobs or []) for r in results]


def decoded_metadata(request: Request):
    """The metadata ``transformers`` gives frames it decodes from a video file: frame numbers, rate, duration."""
    from transformers.video_utils import VideoMetadata

    timing = request.frame_timing
    assert timing is not None
    return VideoMetadata(total_num_frames=timing.video_len, fps=timing.fps, duration=timing.video_len / timing.fps,
                         frames_indices=list(timing.indices))


def own_template_inputs(processor, request: Request, *, as_video: bool):
    """The model's own ``apply_chat_template(tokenize=True)`` inputs for the row, its frames as a video or as images."""
    if as_video and request.is_video:
        # The frames are the video, already sampled, at the times the stage read them.
        content = [{"type": "video", "video": request.images}, {"type": "text", "text": request.prompt}]
        media = {"processor_kwargs": {"do_sample_frames": False, "video_metadata": [decoded_metadata(request)]}}
    else:
        content = [*({"type": "image"} for _ in request.images), {"type": "text", "text": request.prompt}]
        media = {"images": request.images}
    inputs = processor.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True,
                                           tokenize=True, return_dict=True, return_tensors="pt", **media)
    inputs.pop("labels", None)
    return inputs


def generate_on_own_inputs(loaded, *, as_video: bool) -> list[str]:
    import torch

    texts = []
    for request in rows():
        inputs = own_template_inputs(loaded.processor, request, as_video=as_video)
        with torch.inference_mode():
            out = loaded.model.generate(**inputs, max_new_tokens=6, do_sample=False)
        texts.append(loaded.processor.tokenizer.decode(out[0, inputs["input_ids"].shape[1]:],
                                                       skip_special_tokens=True).strip())
    return texts


def test_the_family_gets_videos_by_default_and_records_it(backends) -> None:
    backend = backends[1]
    assert family_default(backend.loaded.model) == "video"
    assert backend.settings()["video_as"] == "video"
    assert backend.settings()["video"].startswith("one video")


def test_a_video_rows_answer_equals_generate_on_the_models_own_video_inputs(backends) -> None:
    one, four = backends
    ours = answers(four)
    assert ours == generate_on_own_inputs(four.loaded, as_video=True)
    assert ours == answers(one), "batches mixing video and image rows must change nothing"
    assert len(set(ours)) >= 2


def test_a_video_rows_option_logprobs_equal_a_plain_forward_pass(backends) -> None:
    import torch

    one, four = backends
    scores = logprobs(four)
    for single, batched in zip(logprobs(one), scores, strict=True):
        assert batched == pytest.approx(single, abs=1e-4)
    loaded = four.loaded
    processor = loaded.processor
    for request, got in zip(rows(), scores, strict=True):
        if not request.is_video:
            continue
        context = own_template_inputs(processor, request, as_video=True)["input_ids"][0].tolist()
        video = as_model_input([request], "video")[0]
        prompt = chat_text(processor, video)
        special = {"add_special_tokens": False} if template_has_bos(processor.tokenizer, [prompt]) else {}
        for option, score in zip(request.options, got, strict=True):
            inputs = processor(text=[prompt + join_text(prompt) + option], videos=[request.images],
                               video_metadata=[decoded_metadata(request)], do_sample_frames=False,
                               return_tensors="pt", **special)
            ids = inputs["input_ids"][0].tolist()
            assert ids[: len(context)] == context
            with torch.inference_mode():
                logits = loaded.model(**inputs).logits[0].float()
            expected = torch.log_softmax(logits[len(context) - 1: -1], dim=-1).gather(
                -1, torch.tensor(ids[len(context):]).unsqueeze(-1)).sum().item()
            assert score == pytest.approx(expected, abs=1e-4)


def test_circular_copies_of_a_video_question_share_their_prefix_and_change_nothing(backends) -> None:
    """Rows of one group with the same video prefill their common prefix once (video placeholders included) and
    answer and score as the same rows without a group."""
    from dataclasses import replace

    backend = backends[1]
    video = frames(1)
    grouped = []
    for shift in range(3):
        listed = OPTIONS[shift:] + OPTIONS[:shift]
        prompt = "What happens? " + " ".join(f"{letter}. {text}" for letter, text in zip("ABCD", listed, strict=True))
        grouped.append(Request(index=20 + shift, prompt=prompt, images=video, is_video=True, frame_timing=TIMINGS[0],
                               options=listed, group=3))
    strangers = [replace(request, group=None) for request in grouped]
    shared_before = (backend.sharing.shared_rows, backend.likelihood_sharing.shared_rows)

    def run(rows, likelihood):
        chunks = backend.loglikelihood(rows) if likelihood else backend.generate(rows, max_new_tokens=6)
        results = sorted((r for chunk in chunks for r in chunk), key=lambda r: r.index)
        assert all(r.error is None for r in results), [r.error for r in results]
        return [r.choice_logprobs if likelihood else r.prediction for r in results]

    assert run(grouped, False) == run(strangers, False)
    for together, alone in zip(run(grouped, True), run(strangers, True), strict=True):
        assert together == pytest.approx(alone, abs=1e-4)
    # Shared where the model allows it (prefix_sharing_blocker names the caches that cannot be continued so).
    shares = prefix_sharing_blocker(backend.loaded.model) is None
    assert (backend.sharing.shared_rows > shared_before[0]) == shares
    assert (backend.likelihood_sharing.shared_rows > shared_before[1]) == shares


def test_timestamps_come_from_where_the_frames_lie_in_the_video(tmp_path) -> None:
    """SmolVLM writes each frame's time: those of the frames' numbers in the video at its rate. Frames without times
    (listed as files) fail their row instead of getting times made up at 24 frames per second."""
    from mmbatch.backends.hf.messages import encode

    backend = create_backend(HfOptions(model=str(build_with_video_input("SmolVLM", tmp_path)), device="cpu"))
    try:
        processor = backend.loaded.processor
        request = rows()[4]  # frames 2, 8, 14, 20, 26 of a 15 fps video: 0.13 s to 1.73 s
        [video] = as_model_input([request], "video")
        text = processor.tokenizer.decode(encode(processor, [chat_text(processor, video)], [video.images], "cpu",
                                                 None)["input_ids"][0])
        assert "five frames from a 0:00:02 [H:MM:SS] video" in text
        assert re.findall(r"Frame from (\d\d:\d\d):", text) == ["00:00", "00:00", "00:00", "00:01", "00:01"]
        untimed = Request(index=9, prompt="What happens?", images=frames(5), is_video=True)
        [result] = [r for chunk in backend.generate([untimed], max_new_tokens=2) for r in chunk]
        assert result.error is not None and "frames listed as files carry no times" in result.error
    finally:
        backend.close()


def test_a_video_file_through_infer_reaches_the_model_with_its_frames_times(tmp_path) -> None:
    """``mmbatch infer --video-as video`` on SmolVLM: the stage decodes the video file's frames and their times, and
    the answer equals ``model.generate`` on the model's own inputs for those frames at those times."""
    import polars as pl

    from mmbatch.cli import main
    from mmbatch.tableio import read_metadata, read_table
    from mmbatch.video import FrameRequest, read_video_frames
    from tests.support.prepared_files import prepared_frame, write_prepared
    from tests.test_video import make_video

    model = build_with_video_input("SmolVLM", tmp_path / "model")
    make_video(tmp_path / "clip.mp4", frames=30, fps=10)
    frame = prepared_frame(1, copies=1).drop("image").with_columns(pl.Series("video_path", ["clip.mp4"]))
    prepared = write_prepared(tmp_path / "prepared.parquet", frame)
    output = tmp_path / "predictions.parquet"
    assert main(["infer", "--input", str(prepared), "--output", str(output), "--backend", "hf", "--model", str(model),
                 "--device", "cpu", "--dtype", "float32", "--max-new-tokens", "6", "--num-frames", "4"]) == 0
    [row] = read_table(output).frame.iter_rows(named=True)
    assert read_metadata(output)["infer"]["backend_settings"]["video_as"] == "video"

    decoded = read_video_frames(tmp_path / "clip.mp4", FrameRequest(num_frames=4))
    request = Request(index=1, prompt=row["prompt"], images=decoded.images, is_video=True,
                      frame_timing=FrameTiming(tuple(decoded.indices), decoded.video_len, decoded.fps))
    backend = create_backend(HfOptions(model=str(model), device="cpu", dtype="float32"))
    try:
        inputs = own_template_inputs(backend.loaded.processor, request, as_video=True)
        assert "00:02" in backend.loaded.processor.tokenizer.decode(inputs["input_ids"][0])  # the last frame's time
        import torch

        with torch.inference_mode():
            out = backend.loaded.model.generate(**inputs, max_new_tokens=6, do_sample=False)
        expected = backend.loaded.processor.tokenizer.decode(out[0, inputs["input_ids"].shape[1]:],
                                                             skip_special_tokens=True).strip()
    finally:
        backend.close()
    assert row["error"] is None and row["prediction"] == expected


def test_video_as_frames_gives_the_frames_as_images(video_dir) -> None:
    backend = create_backend(HfOptions(model=str(video_dir), dtype="float32", device="cpu", batch_size=4,
                                       video_as="frames"))
    try:
        assert backend.settings()["video_as"] == "frames"
        assert answers(backend) == generate_on_own_inputs(backend.loaded, as_video=False)
    finally:
        backend.close()


def test_video_as_video_for_a_processor_without_video_input_is_refused() -> None:
    with pytest.raises(BadInputError, match="takes no video; run with --video-as frames"):
        create_backend(HfOptions(model=str(family_model("LLaVA-1.5")), device="cpu", video_as="video"))
    with pytest.raises(BadInputError, match="choose one of video, frames"):
        create_backend(HfOptions(model=str(family_model("LLaVA-1.5")), device="cpu", video_as="clip"))


def test_the_default_is_the_familys_where_the_processor_takes_video_and_frames_elsewhere() -> None:
    onevision = SimpleNamespace(config=SimpleNamespace(model_type="llava_onevision"))
    llava = SimpleNamespace(config=SimpleNamespace(model_type="llava"))
    with_video, without = SimpleNamespace(video_processor=object()), SimpleNamespace()
    assert resolve_video_as(None, onevision, with_video, "m") == "video"
    assert resolve_video_as(None, onevision, without, "m") == "frames"
    assert resolve_video_as(None, llava, with_video, "m") == "frames"
    assert resolve_video_as("video", llava, with_video, "m") == "video"


def test_frames_without_times_are_refused_where_the_processor_reads_times() -> None:
    video = Request(index=7, prompt="?", images=frames(0), is_video=True)
    qwen25 = SimpleNamespace(config=SimpleNamespace(model_type="qwen2_5_vl"))
    onevision = SimpleNamespace(config=SimpleNamespace(model_type="llava_onevision"))
    [given] = as_model_input([video], "video")
    assert isinstance(given.images, FramesAsVideo)
    assert "frames listed as files carry no times" in (untimed_refusal(qwen25, given) or "")
    assert untimed_refusal(onevision, given) is None
    timed = Request(index=8, prompt="?", images=frames(0), is_video=True,
                    frame_timing=FrameTiming(indices=(5, 15, 25, 35), video_len=40, fps=10.0))
    [given] = as_model_input([timed], "video")
    assert untimed_refusal(qwen25, given) is None
    assert given.images.metadata().timestamps == [0.5, 1.5, 2.5, 3.5]
    assert as_model_input([video], "frames")[0].images == video.images


def test_a_processor_call_never_mixes_videos_and_images(backends) -> None:
    """Rows of one processor call are all videos or all images (given as images, a video's frames would be read as
    pictures): the batches are cut by kind, and ``encode`` refuses a mixed one."""
    from mmbatch.backends.hf.messages import encode, media_kind, uniform_batches

    given = as_model_input(rows(), "video")
    assert [[media_kind(r) for r in batch] for batch in uniform_batches(given, 4)] == [
        ["video"], ["images"], ["video"], ["images"], ["video"]]
    processor = backends[1].loaded.processor
    with pytest.raises(ValueError, match="mixes rows given as videos with rows given as images"):
        encode(processor, [chat_text(processor, r) for r in given[:2]], [r.images for r in given[:2]], "cpu", None)


def test_video_as_is_a_flag_and_a_resume_setting(tmp_path, capsys) -> None:
    """``--video-as`` is the ``video_as`` backend option: part of the resume settings, refused by backends without it,
    and ``video`` for a model whose processor takes no video stops the run before any row (exit 2)."""
    from mmbatch.cli import main
    from tests.conftest import EXAMPLES

    base = {"input": tmp_path / "in.parquet", "output": tmp_path / "out.parquet", "model": "m", "backend": "hf"}
    assert resume_settings(InferOptions(**base, backend_args=("video_as=video",)), "f")["video_as"] == "video"
    assert resume_settings(InferOptions(**base), "f")["video_as"] is None
    prepared = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(prepared),
                 "--limit", "1"]) == 0
    capsys.readouterr()
    common = ["infer", "--input", str(prepared), "--output", str(tmp_path / "predictions.parquet"), "--video-as",
              "video"]
    assert main([*common, "--backend", "echo", "--model", "answer"]) == 2
    assert "video_as" in capsys.readouterr().err
    assert main([*common, "--backend", "hf", "--model", str(family_model("LLaVA-1.5")), "--device", "cpu"]) == 2
    assert "takes no video; run with --video-as frames" in capsys.readouterr().err
