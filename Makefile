# mmbatch: two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
TORCH_VERSION ?= 2.13.0
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export PYTHONDONTWRITEBYTECODE ?= 1

.PHONY: install install-light test lint typecheck schemas demo bench docker clean

## install: everything (torch $(TORCH_VERSION) first, then mmbatch with the infer and dev extras)
install: .cache/installed

.cache/installed: pyproject.toml
	@mkdir -p .cache
	$(PIP) install --disable-pip-version-check -q "torch==$(TORCH_VERSION)"
	$(PIP) install --disable-pip-version-check -q -e ".[infer,dev]"
	@touch $@

## install-light: the base install only (prepare, extract, score, report)
install-light:
	$(PIP) install --disable-pip-version-check -q -e .

## test: lint, schema drift check and the whole suite (offline, CPU)
test: install
	$(PYTHON) -m ruff check mmbatch tests bench examples
	$(PYTHON) -m pytest -q

lint: install
	$(PYTHON) -m ruff check mmbatch tests bench examples
	$(PYTHON) -m ruff format --check mmbatch tests bench examples || true
	hadolint Dockerfile

typecheck: install
	$(PYTHON) -m mypy mmbatch

## schemas: regenerate schemas/*.json from mmbatch/schema/columns.py
schemas:
	$(PYTHON) -m mmbatch.schema.export schemas

## demo: every stage end to end on the bundled examples, into out/demo
demo: install
	bash examples/demo.sh out/demo

## bench: the benchmark scripts; figures are printed and recorded in docs/benchmarks.md
bench: install
	@for script in bench/bench_*.py; do echo "== $$script"; $(PYTHON) $$script || exit 1; done

## docker: build the `full` and `light` images (needs a Docker engine)
docker:
	docker build --target light -t mmbatch:light .
	docker build --target full -t mmbatch:full .

clean:
	rm -rf out .cache .pytest_cache .ruff_cache .mypy_cache
