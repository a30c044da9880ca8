"""The model families the test matrix runs, as ``mmbatch list`` shows them and docs/models.md tables them.

One row per family of ``tests/support/families/`` (a tiny random-weight model of the family, built offline, loaded by
the ``hf`` backend and checked on images, video, several images and likelihood ranking). This is the source of the
"Families tested" table of docs/models.md: ``tests/test_listing.py`` checks that the table shows exactly these rows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TestedFamily:
    """One family of the matrix and what was tested on it."""

    family: str
    """The family's name (``Qwen2-VL``)."""
    transformers_class: str
    """The ``transformers`` class that loads it."""
    image: str
    """Image rows: ``yes``."""
    video: str
    """How video rows reach it: ``video`` (the processor's video input) and/or ``frames``; the default marked."""
    multi_image: str
    """Several images in one message: ``yes``."""
    likelihood: str
    """Likelihood ranking of options: ``yes``."""
    limitations: str
    """What differs from the other families ("" when nothing)."""
    vllm: str
    """How the vllm backend compares with hf on the family's tiny model (``equal``, or why it is refused or differs)."""


FAMILIES_TESTED: tuple[TestedFamily, ...] = (
    TestedFamily("LLaVA-1.5", "LlavaForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "equal (tests/test_infer_vllm.py)"),
    TestedFamily("LLaVA-NeXT", "LlavaNextForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "equal"),
    TestedFamily("LLaVA-NeXT-Video", "LlavaNextVideoForConditionalGeneration",
                 "yes", "video (default), frames", "yes", "yes",
                 "",
                 "not compared"),
    TestedFamily("VipLLaVA", "VipLlavaForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "equal"),
    TestedFamily("Video-LLaVA", "VideoLlavaForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "",
                 "refused at start: vLLM has no Video-LLaVA model (its Transformers fallback needs "
                 "`_get_num_multimodal_tokens`, which the processor lacks)"),
    TestedFamily("LLaVA-OneVision", "LlavaOnevisionForConditionalGeneration",
                 "yes", "video (default), frames", "yes", "yes",
                 "",
                 "equal on one-image rows; rows with several images fail (vLLM encodes them otherwise: 2.07 nats off)"),
    TestedFamily("InternVL", "InternVLForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "",
                 "equal"),
    TestedFamily("Idefics2", "Idefics2ForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "refused at start: no vLLM model (fallback needs `_get_num_multimodal_tokens`)"),
    TestedFamily("Idefics3", "Idefics3ForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "equal"),
    TestedFamily("SmolVLM", "SmolVLMForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "",
                 "equal"),
    TestedFamily("Gemma 3", "Gemma3ForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "likelihood: full pass per option, no group sharing (sliding-window layers)",
                 "refused on the CPU build: its attention reads the image tokens causally (0.03-0.12 nats off); GPU "
                 "builds not tested here"),
    TestedFamily("Gemma 4", "Gemma4ForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "likelihood: full pass per option, no group sharing (sliding-window layers)",
                 "refused at start: vLLM 0.32 reads `Gemma4VisionConfig.default_output_length`, which transformers "
                 "5.23 lacks"),
    TestedFamily("Mistral3", "Mistral3ForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "equal"),
    TestedFamily("Mllama", "MllamaForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "no group sharing (per-token `cross_attention_mask`)",
                 "refused at start: no vLLM V1 model (fallback needs `_get_num_multimodal_tokens`)"),
    TestedFamily("Aya Vision", "AyaVisionForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "likelihood: full pass per option, no group sharing (sliding-window layers)",
                 "every row fails inside vLLM 0.32 (`Encoder cache miss`) on the tiny model"),
    TestedFamily("Janus", "JanusForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "not compared (its tiny model's 128 positions are fewer than the test's `max_model_len`)"),
    TestedFamily("Ovis2", "Ovis2ForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "refused at start: vLLM's Ovis reads the original checkpoints, not transformers' (fallback needs "
                 "`_get_num_multimodal_tokens`)"),
    TestedFamily("DeepSeek-VL", "DeepseekVLForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "",
                 "refused at start: no vLLM model for transformers' DeepSeek-VL (fallback needs "
                 "`_get_num_multimodal_tokens`)"),
    TestedFamily("DeepSeek-VL hybrid", "DeepseekVLHybridForConditionalGeneration",
                 "yes", "frames (default)", "yes", "yes",
                 "",
                 "as DeepSeek-VL"),
    TestedFamily("PaliGemma", "PaliGemmaForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "no chat template: the processor's own prefix format; options scored as its suffix; no system "
                 "prompt; no group sharing (per-token `token_type_ids`)",
                 "refused on the CPU build (its prefix read causally: answers changed); generation runs without a "
                 "chat template elsewhere; likelihood rows refused (suffix scoring is hf's)"),
    TestedFamily("PaliGemma 2", "PaliGemmaForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "as PaliGemma; likelihood: full pass per option with the suffix marked (sliding-window layers)",
                 "as PaliGemma"),
    TestedFamily("Qwen2-VL", "Qwen2VLForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "M-RoPE: options and group rows continue the cache at the model's `rope_deltas`",
                 "equal"),
    TestedFamily("Qwen2.5-VL", "Qwen2_5_VLForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "M-RoPE: options and group rows continue the cache at the model's `rope_deltas`",
                 "equal"),
    TestedFamily("Qwen3-VL", "Qwen3VLForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "M-RoPE: options and group rows continue the cache at the model's `rope_deltas`",
                 "equal"),
    TestedFamily("Qwen3-VL-MoE", "Qwen3VLMoeForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "as Qwen3-VL; expert MLPs (4 experts, 2 per token)",
                 "refused at start: vLLM 0.32 reads `norm_topk_prob`, which transformers 5.23's config lacks"),
    TestedFamily("Qwen3.5", "Qwen3_5ForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "M-RoPE as Qwen3-VL; options continue the linear-attention state; no group sharing (linear-attention"
                 " layers)",
                 "refused on the CPU build except in bfloat16 (its linear-attention kernels take bfloat16 only); "
                 "bfloat16 not compared"),
    TestedFamily("Qwen3.5-MoE", "Qwen3_5MoeForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "as Qwen3.5; expert MLPs plus a shared expert",
                 "as Qwen3.5"),
    TestedFamily("GLM-4V", "Glm4vForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "M-RoPE: options and group rows continue the cache at the model's `rope_deltas`",
                 "equal"),
    TestedFamily("GLM-4.5V", "Glm4vMoeForConditionalGeneration", "yes", "video (default), frames", "yes", "yes",
                 "as GLM-4V; routed and shared experts after a dense first layer",
                 "refused at start: vLLM 0.32 reads `use_qk_norm`, which transformers 5.23's config lacks"),
    TestedFamily("Llama 4", "Llama4ForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "torchvision environment; likelihood: full pass per option, no group sharing (chunked-attention "
                 "layers)",
                 "equal (hf side in the torchvision environment)"),
    TestedFamily("Cohere2-Vision", "Cohere2VisionForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "torchvision environment; likelihood: full pass per option, no group sharing (sliding-window layers)",
                 "refused at start: vLLM 0.32 runs it, but its option log-probs are up to 2.57 nats from "
                 "transformers' (greedy answers agree; cause not found)"),
    TestedFamily("LFM2-VL", "Lfm2VlForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "torchvision environment; likelihood: full pass per option, no group sharing (convolution layers)",
                 "refused at start: vLLM 0.32 reads `Lfm2Config.conv_dim`, which transformers 5.23 lacks"),
    TestedFamily("Molmo2", "Molmo2ForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "torchvision environment; the published chat template refuses a system turn (`--system-prompt` "
                 "tested on a template that writes one)",
                 "refused at start: vLLM 0.32 reads `Molmo2Config.image_col_id` (the original checkpoints' "
                 "configuration), which transformers 5.23's lacks"),
    TestedFamily("Kimi-K2.5", "Kimi_K25ForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "torchvision environment; DeepSeek-V3 text model: latent attention, routed and shared experts after "
                 "a dense first layer",
                 "refused at start: vLLM 0.32 fails on the tiny model (`expert parallel group is not initialized`)"),
    TestedFamily("MiniCPM-V 4.6", "MiniCPMV4_6ForConditionalGeneration", "yes", "video (default), frames", "yes",
                 "yes",
                 "torchvision environment (its video processor); Qwen3.5 text model: options continue the "
                 "linear-attention state, no group sharing (linear-attention layers)",
                 "as Qwen3.5 (its text model's linear-attention layers: bfloat16 only on the CPU build)"),
    TestedFamily("MiniCPM-V 4.7", "MiniCPMV4_7ForConditionalGeneration", "yes", "video (default), frames", "yes",
                 "yes",
                 "as MiniCPM-V 4.6; canvas M-RoPE: options continue the cache at the model's `rope_deltas`",
                 "as MiniCPM-V 4.6"),
    TestedFamily("MiniCPM-OCR", "MiniCPMOcrForConditionalGeneration", "yes", "frames (default)", "yes", "yes",
                 "torchvision environment; MiniCPM-V 4.6's layout read at `4x` (no window merger); its video input "
                 "not tested",
                 "as MiniCPM-V 4.6"),
    TestedFamily("Phi-4-multimodal", "Phi4MultimodalForCausalLM", "yes", "frames (default)", "yes", "yes",
                 "torchvision environment; loaded as a causal LM; its processor's chat template restored from the "
                 "checkpoint (transformers drops it); image token in its vision configuration; its checkpoint's vision "
                 "LoRA adapter (`vision-lora/`) loaded and active (needs peft; without it, exit 2)",
                 "refused at start: vLLM 0.32 no longer has its model (dropped after 0.12) and runs the checkpoint as "
                 "a text-only model"),
)
"""Every family of the matrix, in the order of docs/models.md."""
