# Set-up, demo and tests. `make demo` and `make test` are the README's first commands.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip install -q --progress-bar off
# The machine's pip.conf names a local wheel folder that may not exist; its warnings are noise.
QUIET_PIP := 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
SHELL := /bin/bash
PORT ?= 8501
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup demo demo-batch test ui bench lint clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) torch==2.13.0 $(QUIET_PIP)
	$(PIP) -e ".[dense,ui,test,scale]" $(QUIET_PIP)
	@if $(VENV)/bin/pip list 2>/dev/null | grep -qi -E '^(nvidia-|triton )'; then echo "CUDA wheels were installed; pin torch==2.13.0 (the CPU wheel)" >&2; exit 1; fi
	touch $@

setup: $(VENV)/.installed  ## create .venv and install the workbench with its extras

demo: setup  ## whole workflow on the Cranfield sample, then the UI
	$(VENV)/bin/workbench demo cranfield --ui --port $(PORT)

demo-batch: setup  ## the same workflow, non-interactive (exit 0 on success)
	$(VENV)/bin/workbench demo cranfield

ui: setup
	$(VENV)/bin/workbench ui --port $(PORT)

test: setup lint  ## lint, type-check, then run the test suite (needs Debian's chromium for the browser tests)
	@command -v chromium >/dev/null || { echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; }
	$(PY) -m pytest -q

bench: setup
	$(PIP) -e ".[bench]" $(QUIET_PIP)
	$(PY) bench/pooling/bench_pooling.py
	$(PY) bench/scoring/bench_scoring.py
	$(PY) bench/gate/bench_gate.py
	$(PY) bench/ann/bench_ann.py

PURE := workbench/scoring workbench/judging pooling/fusion.py pooling/pool.py pooling/reusability.py pooling/sample.py \
	pooling/tokenize.py workbench/ranking.py workbench/types.py workbench/errors.py workbench/rubric.py \
	workbench/config.py workbench/hashing.py workbench/metadata.py workbench/lineage.py \
	workbench/text.py workbench/jsonout.py

lint: setup  ## ruff; mypy on both packages, strict on the pure layer
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy workbench pooling
	$(VENV)/bin/mypy --strict $(PURE)

clean:
	rm -rf $(VENV) labels/*.duckdb labels/*.duckdb.*
