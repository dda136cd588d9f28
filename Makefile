# webgpu-ar: two commands on a fresh machine
#   make demo   system packages, .venv, models, sample media, then ar-demo headless selfie
#               segmentation on the sample clip -> out/demo.mp4 + a summary table
#   make test   the same set-up, then ruff (lint + format check) and pytest: what CI runs
#   make docs   the documentation site (mkdocs, API reference from the docstrings) -> site/
# Every target is idempotent: a second run only re-checks (stamps, checksums, frame counts).

PYTHON ?= python3
VENV   ?= .venv
EXTRAS ?= test
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.stamp-install
DOCS_STAMP := $(VENV)/.stamp-docs
PYTEST_ARGS ?= -q
# pytest-xdist: one worker per core, a test file per worker at a time (a file's module
# fixtures build its models once). A cold Mesa shader cache makes the run compile-bound on
# one thread per process; two workers keep both of CI's cores busy. XDIST= runs in-process.
XDIST ?= -n auto --dist loadfile

.PHONY: all setup venv models assets demo demo-still test test-fast test-all lint format docs clean distclean help

all: demo

help:
	@echo "make demo       set everything up, ar-demo headless segmentation of assets/sample.mp4 -> out/demo.mp4"
	@echo "make demo-still face detection (numpy reference) on assets/astronaut.png -> out/demo.png"
	@echo "make test       set everything up, then ruff check, ruff format --check, pytest (CI's set)"
	@echo "make test-fast  pytest without the slow and gl tiers (while editing)"
	@echo "make test-all   make test plus the slow tier (whole clips, fuzz runs, soak)"
	@echo "make setup      system packages (mesa-vulkan-drivers, xvfb) via scripts/setup_system.sh"
	@echo "make venv       $(VENV) with the project installed editable, extras [$(EXTRAS)]"
	@echo "make models     fetch + checksum the .tflite files (engine-fetch models)"
	@echo "make assets     make assets/astronaut.png, sample.mp4, people.mp4 (engine-fetch samples)"
	@echo "make lint       ruff check + ruff format --check + import-linter layer contracts"
	@echo "make format     ruff format + ruff check --fix"
	@echo "make docs       the documentation site with its API reference -> site/ (mkdocs --strict)"
	@echo "make clean      remove out/ and caches;  make distclean: also $(VENV), models, media"

setup:
	@PYTHON=$(PYTHON) bash scripts/setup_system.sh

# The venv is rebuilt only when pyproject.toml changes (stamp file inside the venv).
venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	@touch $@
	@echo "$(VENV): installed webgpu-ar[$(EXTRAS)]"

# Same name as the folder, so `make .venv` works too.
$(VENV): $(STAMP)

models: $(STAMP)
	$(VENV)/bin/engine-fetch models

assets: $(STAMP)
	$(VENV)/bin/engine-fetch samples

demo: setup $(STAMP) models assets
	$(PY) -m app.cli --model models/selfie_segmentation.tflite --input assets/sample.mp4 \
		--headless --output out/demo.mp4 --stats out/demo.json

# The foundation demo: face detection with the numpy reference on the still.
demo-still: setup $(STAMP) models assets
	$(PY) -m app.demo_still --model models/face_detection_short_range.tflite \
		--image assets/astronaut.png --output out/demo.png

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Tiers (docs/setup.md "Test tiers"): markers gpu (one adapter), gl (the OpenGL backend),
# slow (minutes each on lavapipe: the people clip's whole-clip fidelity, the sample clip's
# whole clip, the 1,400-mutant fuzz, soak runs, the NAS-Bench space count). `make test` is
# what CI runs: every tier but slow (9.5 min on 2 cores at load 3.5 with warm caches;
# docs/setup.md has the cold-cache figure). `make test-all` adds the slow tier (40+ min).
# --durations: the 20 dearest tests end the output, to watch the 25-minute budget in CI.
test: setup $(STAMP) models assets lint
	$(PY) -m pytest $(PYTEST_ARGS) $(XDIST) -m "not slow" --durations=20

# Everything, the slow tier included: before a release, after a change to the solutions.
test-all: setup $(STAMP) models assets lint
	$(PY) -m pytest $(PYTEST_ARGS) $(XDIST)

# While editing: no slow tier, no OpenGL backend.
test-fast: $(STAMP) models assets
	$(PY) -m pytest -q $(XDIST) -m "not slow and not gl"

# The docs extra on top of the project's venv (stamp: re-installed when the venv is), then
# the site; --strict turns every warning (a broken link, a page outside the nav, a docstring
# reference that does not resolve) into an error.
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[$(EXTRAS),docs]'
	@touch $@

docs: $(DOCS_STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf out build site .pytest_cache .ruff_cache .hypothesis *.egg-info
	find . -name __pycache__ -type d -not -path './$(VENV)/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) models/.cache assets/.cache
	rm -f models/*.tflite assets/astronaut.png assets/sample.mp4 assets/people.mp4
