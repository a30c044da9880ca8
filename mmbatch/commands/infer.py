"""``mmbatch infer``: run a model over a prepared file (resumable, shardable)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmbatch.backends.registry import BACKENDS, backend_names
from mmbatch.commands import summary
from mmbatch.options import non_negative_float, non_negative_int, positive_float, positive_int

if TYPE_CHECKING:
    from mmbatch.infer.on_ray.options import RayOptions
    from mmbatch.infer.settings import InferOptions
    from mmbatch.infer.stage import BackendSource


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``infer`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "infer",
        help=summary("infer"),
        description="Answer every row of a prepared file with a model: generation (generate rows) or option "
        "ranking by log-likelihood (likelihood rows). Rerunning the same command resumes; --shard K/N runs 1/N "
        "of the rows and writes OUTPUT as NAME.shard-K-of-N.EXT (join them with `mmbatch merge`).",
    )
    parser.add_argument("--input", required=True, type=Path, help="prepared file (.parquet or .tsv)")
    parser.add_argument("--output", required=True, type=Path, help="predictions file (.parquet or .tsv)")
    parser.add_argument("--backend", required=True, choices=backend_names(),
                        help=", ".join(f"{backend.name} ({backend.summary})" for backend in BACKENDS))
    parser.add_argument("--backend-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting of the backend's options class, repeatable (unknown keys are refused, naming "
                        "the backend's keys); also MMBATCH_BACKEND_ARGS='KEY=VALUE KEY=VALUE'")
    parser.add_argument("--model", required=True,
                        help="Hugging Face id or local path (hf), model name (openai), or echo mode "
                        "(answer, fixed:TEXT, letter:X, prompt, media)")
    parser.add_argument("--revision", help="model revision (hf)")
    parser.add_argument("--batch-size", type=positive_int, default=8, help="rows per forward pass (hf; default 8)")
    parser.add_argument("--max-new-tokens", type=positive_int, default=512,
                        help="longest generated answer in tokens (default 512)")
    parser.add_argument("--temperature", type=non_negative_float, default=0.0,
                        help="sampling temperature (default 0: greedy)")
    parser.add_argument("--dtype", choices=("auto", "bfloat16", "float16", "float32"), default="auto",
                        help="weights dtype (hf; default auto)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda or cuda:N (hf)")
    parser.add_argument("--device-map", metavar="MAP",
                        help="hf: spread a model larger than one GPU over the GPUs and the CPU past them (auto, "
                        "balanced, balanced_low_0, sequential); same as --backend-arg device_map=MAP")
    parser.add_argument("--max-memory", metavar="DEVICE=SIZE,...",
                        help="hf, with --device-map: memory each device may hold, e.g. 0=75GiB,1=75GiB,cpu=200GiB")
    parser.add_argument("--attn-implementation", metavar="KERNEL",
                        help="hf: eager, sdpa, flash_attention_2... (default: transformers' choice for the model); "
                        "recorded and part of the resume settings")
    parser.add_argument("--trust-remote-code", action="store_true",
                        help="hf: run the model repository's own code (models not in transformers); off by default, "
                        "recorded")
    parser.add_argument("--num-frames", type=positive_int, default=8,
                        help="frames sampled from each video, by the SEED-Bench rule (default 8)")
    parser.add_argument("--video-as", choices=("video", "frames"),
                        help="hf: video rows as one video, to a processor that takes video, or as their frames given "
                        "as images (default: as the model's authors evaluated videos, see docs/models.md); same as "
                        "--backend-arg video_as=...; recorded and part of the resume settings")
    parser.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://localhost:8000/v1 (openai)")
    parser.add_argument("--concurrency", type=positive_int, default=16, help="requests in flight (openai; 16)")
    parser.add_argument("--timeout", type=positive_float, default=120.0, help="seconds per request (openai; 120)")
    parser.add_argument("--max-retries", type=non_negative_int, default=5, help="retries per request (openai; 5)")
    parser.add_argument("--shard", metavar="K/N",
                        help="run shard K (0-based) of N; default from SLURM_ARRAY_TASK_ID or "
                        "JOB_COMPLETION_INDEX with MMBATCH_NUM_SHARDS, else the whole file")
    parser.add_argument("--media-root", type=Path,
                        help="folder of image_path/video_path files (default: the one recorded by prepare, "
                        "else the prepared file's folder)")
    parser.add_argument("--likelihood-target", choices=("content", "letter"), default="content",
                        help="likelihood rows score the option texts (content) or the letters 'A.'.. (letter)")
    parser.add_argument("--max-pixels", type=positive_int, default=64_000_000,
                        help="largest image accepted, width x height (default 64000000)")
    parser.add_argument("--image-steps", type=positive_int,
                        help="generate-image rows: denoising steps (diffusers; default: the pipeline's own)")
    parser.add_argument("--image-size", metavar="WxH",
                        help="generate-image rows: picture size, e.g. 512x512 (diffusers, openai; default: the "
                        "model's own)")
    # Not an argparse exclusive group: `mmbatch run` declares the stage options again, one by one, and one of the two
    # may come from the environment; system_prompt() refuses both at once.
    parser.add_argument("--system-prompt", metavar="TEXT",
                        help="system message of every conversation (hf and vllm through the model's chat template, "
                        "which must take a system message; openai as a system message); recorded, part of resume")
    parser.add_argument("--system-prompt-file", type=Path, metavar="FILE",
                        help="the same, read from a UTF-8 text file (one trailing newline dropped)")
    parser.add_argument("--gen-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="decoding setting, repeatable: top_p, top_k, min_p, seed (sampling only), "
                        "repetition_penalty, stop (a string or a JSON list); hf, vllm and openai; recorded, part "
                        "of resume; also MMBATCH_GEN_ARG='KEY=VALUE KEY=VALUE'")
    parser.add_argument("--force", action="store_true",
                        help="discard earlier progress for OUTPUT made with other settings instead of refusing")
    add_executor_options(parser)
    return parser


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """``--executor`` and the ``--ray-*`` options (none of them changes a prediction)."""
    parser.add_argument("--executor", choices=("local", "ray"), default="local",
                        help="where the rows run: this process (local, default) or an actor pool on a Ray cluster "
                        "(ray: pip install 'mmbatch[ray]'; docs/scale.md); the same output, resume and numbers")
    parser.add_argument("--ray-address", metavar="ADDRESS",
                        help="ray: the cluster to join (HOST:PORT, auto, ray://HOST:10001); default RAY_ADDRESS, "
                        "else a one-machine cluster on 127.0.0.1 for this run")
    parser.add_argument("--ray-actors", type=positive_int, default=1,
                        help="ray: backend actors, each loading the model once (default 1)")
    parser.add_argument("--ray-gpus-per-actor", type=non_negative_float, metavar="N",
                        help="ray: GPUs per actor (default: the backend's tensor_parallel_size, 1 for hf, when the "
                        "cluster has GPUs; 0 without)")
    parser.add_argument("--ray-cpus-per-actor", type=non_negative_float, default=1.0, metavar="N",
                        help="ray: CPUs per actor (default 1)")
    parser.add_argument("--ray-decode-cpus", type=non_negative_float, default=1.0, metavar="N",
                        help="ray: CPUs per task decoding a chunk's images and video frames ahead of the actors "
                        "(default 1)")


def options(args: argparse.Namespace) -> InferOptions:
    """The stage's options from the parsed arguments (``MMBATCH_BACKEND_ARGS``, then the ``--backend-arg``s, then
    the placement flags, which are backend options too)."""
    import os

    from mmbatch.backends.options import ARGS_VARIABLE
    from mmbatch.infer.settings import InferOptions

    return InferOptions(
        input=args.input, output=args.output, backend=args.backend, model=args.model, revision=args.revision,
        dtype=args.dtype, device=args.device, batch_size=args.batch_size, max_new_tokens=args.max_new_tokens,
        temperature=args.temperature, num_frames=args.num_frames, base_url=args.base_url,
        concurrency=args.concurrency, timeout_s=args.timeout, max_retries=args.max_retries, shard=args.shard,
        media_root=args.media_root, likelihood_target=args.likelihood_target, max_pixels=args.max_pixels,
        image_steps=args.image_steps, image_size=args.image_size, force=args.force,
        backend_args=(*os.environ.get(ARGS_VARIABLE, "").split(), *args.backend_arg, *placement_pairs(args)),
        system_prompt=system_prompt(args.system_prompt, args.system_prompt_file), gen_args=tuple(args.gen_arg),
        executor=args.executor, ray=ray_options(args),
    )


def ray_options(args: argparse.Namespace) -> RayOptions:
    """The ``--ray-*`` options; given without ``--executor ray`` they are refused (they would be silently ignored).

    Raises:
        BadInputError: a ``--ray-*`` option (or its ``MMBATCH_RAY_*`` variable) set with the local executor.
    """
    from mmbatch.errors import BadInputError
    from mmbatch.infer.on_ray.options import RayOptions

    chosen = RayOptions(address=args.ray_address, actors=args.ray_actors, gpus_per_actor=args.ray_gpus_per_actor,
                        cpus_per_actor=args.ray_cpus_per_actor, decode_cpus=args.ray_decode_cpus)
    if args.executor != "ray" and chosen != RayOptions():
        raise BadInputError("the --ray-* options apply to --executor ray only (check MMBATCH_RAY_* variables); add "
                            "--executor ray or drop them")
    return chosen


def placement_pairs(args: argparse.Namespace) -> list[str]:
    """The placement flags and ``--video-as`` as the ``--backend-arg`` pairs they stand for (after the others: a flag
    wins; a backend without the option refuses the pair)."""
    pairs = [f"{key}={value}" for key, value in (("device_map", args.device_map), ("max_memory", args.max_memory),
                                                 ("attn_implementation", args.attn_implementation),
                                                 ("video_as", args.video_as))
             if value is not None]
    return pairs + (["trust_remote_code=true"] if args.trust_remote_code else [])


def execute(stage_options: InferOptions, backends: BackendSource | None = None) -> int:
    """Run the stage and print its summary; exit 3 when some rows failed.

    ``backends`` hands a run plan's shared backend to the stage (None: the stage loads and closes its own).
    """
    from mmbatch.console import console
    from mmbatch.infer.stage import run_infer

    summary = run_infer(stage_options, backends=backends)
    for line in summary.lines():
        console.print(line, soft_wrap=True, markup=False, highlight=False)
    return summary.exit_status


def run(args: argparse.Namespace) -> int:
    """Run the stage and print its summary; exit 3 when some rows failed."""
    return execute(options(args))


def system_prompt(text: str | None, file: Path | None) -> str | None:
    """The system prompt from ``--system-prompt`` or ``--system-prompt-file``; None when neither is given.

    Raises:
        BadInputError: both are given (one may come from the environment), or the file cannot be read as UTF-8.
    """
    from mmbatch.errors import BadInputError
    from mmbatch.small_files import read_small_text

    if file is None:
        return text
    if text is not None:
        raise BadInputError("give --system-prompt or --system-prompt-file, not both (check MMBATCH_SYSTEM_PROMPT "
                            "and MMBATCH_SYSTEM_PROMPT_FILE)")
    _, content = read_small_text(file, "system prompt file")  # a regular file of at most 1 MiB: not /dev/zero
    # Editors end a file with a newline; it is not part of the message.
    return content.removesuffix("\n")
