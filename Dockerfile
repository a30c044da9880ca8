# mmbatch images. Two targets from one file:
#
#   docker build --target light -t mmbatch:light .   # prepare, extract, score, report, validate (no torch, small)
#   docker build --target full  -t mmbatch:full  .   # adds torch, transformers, decord, diffusers and Ray on a CUDA
#                                                     # runtime: infer --backend hf/diffusers, --executor ray (the
#                                                     # head and workers of a Ray cluster), extract --clip-model
# vLLM is in neither image: its own pins on torch and transformers differ (docs/models.md); run a vLLM server and
# --backend openai from the light image, or install vllm over the full one.
#
# `make docker` builds both and tags them with the mmbatch version too (mmbatch:0.1.0-light, mmbatch:0.1.0-full).
# Every Python package is installed at the version in constraints.txt (the versions the test suite passed with),
# so rebuilding an image cannot change a score.
#
# Both run as a non-root user in /data (mount your files there) and keep the Hugging Face cache in the /hf-cache
# volume. Nothing secret is baked in: pass OPENAI_API_KEY / MMBATCH_JUDGE_API_KEY / HF_TOKEN with `docker run -e`.
# HF_HUB_OFFLINE is deliberately not set here, so `-e HF_HUB_OFFLINE=1` (with a filled /hf-cache) runs offline and
# leaving it out lets the model download once into the cache volume.
#
#   docker run --rm -v "$PWD:/data" mmbatch:light prepare --benchmark mmbench --input MMBench_DEV_EN.tsv \
#       --output prepared.parquet
#   docker run --rm --gpus all -v "$PWD:/data" -v hf-cache:/hf-cache mmbatch:full infer \
#       --input prepared.parquet --output predictions.parquet --backend hf --model llava-hf/llava-1.5-7b-hf

# Pinned by exact tag; bump them together with a rebuild and `make test`.
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-runtime-ubuntu24.04
ARG UV_IMAGE=ghcr.io/astral-sh/uv:0.9.5

FROM ${UV_IMAGE} AS uv

# ---------------------------------------------------------------------------------------------------------------
# wheel: builds the mmbatch wheel once; both targets install it, so neither carries the source tree or build tools.
FROM ${PYTHON_IMAGE} AS wheel
COPY --from=uv /uv /usr/local/bin/uv
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY mmbatch ./mmbatch
# The requirement lines name the wheel by its path (its file name carries the version) for the two targets.
RUN uv build --wheel --out-dir /wheels . \
    && cp constraints.txt /wheels/constraints.txt \
    && printf 'mmbatch @ file://%s\n' /wheels/mmbatch-*.whl > /wheels/light.txt \
    && printf 'mmbatch[infer,diffusers,ray] @ file://%s\n' /wheels/mmbatch-*.whl > /wheels/full.txt

# ---------------------------------------------------------------------------------------------------------------
# light: the stages that need no model. The base install has no torch (style.md rule 4), so this stays small.
FROM ${PYTHON_IMAGE} AS light
ARG MMBATCH_VERSION=0.1.0
LABEL org.opencontainers.image.title="mmbatch light" org.opencontainers.image.version="${MMBATCH_VERSION}"
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HOME=/hf-cache \
    VIRTUAL_ENV=/opt/mmbatch \
    PATH=/opt/mmbatch/bin:$PATH
COPY --from=uv /uv /usr/local/bin/uv
COPY --from=wheel /wheels /tmp/wheels
RUN uv venv --python /usr/local/bin/python3 /opt/mmbatch \
    && uv pip install --no-cache -c /tmp/wheels/constraints.txt -r /tmp/wheels/light.txt \
    && rm -rf /tmp/wheels /usr/local/bin/uv \
    && useradd --create-home --uid 1000 --shell /usr/sbin/nologin mmbatch \
    && mkdir -p /data /hf-cache \
    && chown mmbatch:mmbatch /data /hf-cache
USER 1000:1000
WORKDIR /data
VOLUME ["/data", "/hf-cache"]
ENTRYPOINT ["mmbatch"]
CMD ["--help"]

# ---------------------------------------------------------------------------------------------------------------
# full: everything but vLLM, for infer on a GPU (and the nodes of a Ray cluster) and for CLIP extraction. The CUDA
# image has no Python, so uv installs a standalone CPython into the image (no apt packages to pin); torch's wheels
# bring their own CUDA libraries, the base brings the driver glue.
# Ubuntu's own `ubuntu` user (uid 1000) is replaced so both images write files as the same uid 1000 `mmbatch`.
FROM ${CUDA_IMAGE} AS full
ARG MMBATCH_VERSION=0.1.0
ARG PYTHON_VERSION=3.11.13
ARG TORCH_VERSION=2.13.0
LABEL org.opencontainers.image.title="mmbatch full" org.opencontainers.image.version="${MMBATCH_VERSION}"
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HOME=/hf-cache \
    UV_PYTHON_INSTALL_DIR=/opt/python \
    VIRTUAL_ENV=/opt/mmbatch \
    PATH=/opt/mmbatch/bin:$PATH
COPY --from=uv /uv /usr/local/bin/uv
COPY --from=wheel /wheels /tmp/wheels
RUN uv python install "${PYTHON_VERSION}" \
    && uv venv --python "${PYTHON_VERSION}" /opt/mmbatch \
    && uv pip install --no-cache -c /tmp/wheels/constraints.txt "torch==${TORCH_VERSION}" -r /tmp/wheels/full.txt \
    && rm -rf /tmp/wheels /usr/local/bin/uv \
    && userdel --remove ubuntu \
    && useradd --create-home --uid 1000 --shell /usr/sbin/nologin mmbatch \
    && mkdir -p /data /hf-cache \
    && chown mmbatch:mmbatch /data /hf-cache
USER 1000:1000
WORKDIR /data
VOLUME ["/data", "/hf-cache"]
ENTRYPOINT ["mmbatch"]
CMD ["--help"]
