# rlprep: two commands do all the setup.
#   make lab   - create .venv if missing, install, open JupyterLab on notebooks/00_start_here.ipynb
#   make test  - the same setup, then the whole test suite (what CI runs)

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.rlprep-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help venv sandbox lab test test-fast release bench gpu-check e2e clean

help:
	@echo "make lab        open the course in JupyterLab (installs on first use)"
	@echo "make test       install, then run the whole test suite (CI runs this)"
	@echo "make release    regenerate labs/ from solutions/ with nbgrader"
	@echo "make bench      CPU benchmarks -> docs/benchmarks.md"
	@echo "make gpu-check  every lab in the gpu profile plus the GPU benchmarks (< 8 min)"
	@echo "make e2e        drive JupyterLab in headless Chromium, screenshots in build/e2e/"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "rlprep needs Python >= 3.11; set PYTHON=python3.11")'
	@echo "first run: installing rlprep and its dependencies into $(VENV) (about 3 minutes, ~3 GB; pip is quiet)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[course]"
	@touch $(STAMP)

venv: $(STAMP)

# Grading runs the learner's kernel under bubblewrap (docs/grading.md). Installed here when we can (root with
# apt-get); otherwise grading says "sandbox: none: <why>" and the attack tests that need it are skipped (not in CI).
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's bubblewrap (the grading sandbox)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) \
	      || echo "could not install bubblewrap: grading will run without a sandbox"; \
	  else \
	    echo "note: bubblewrap (bwrap) is not installed, so grading runs without a sandbox;" \
	         "install it with your package manager (e.g. sudo apt-get install bubblewrap)"; \
	  fi; }

lab: $(STAMP) sandbox
	$(PY) -m rlprep lab

test: $(STAMP) sandbox
	@# Build the smoke warm starts once, up front, so no notebook cell waits on an SFT build.
	RLPREP_PROFILE=smoke $(PY) -m rlprep models build --profile smoke --task all
	@mkdir -p build; start=$$(date +%s); \
	RLPREP_PROFILE=smoke $(PY) -m pytest -q -m "not e2e and not slow and not gpu" tests; rc=$$?; \
	echo $$(( $$(date +%s) - start )) > build/make-test-seconds; exit $$rc

release: $(STAMP)
	$(PY) -m rlprep release

bench: $(STAMP)
	$(PY) -m rlprep bench

# No install step: a GPU image is often offline, with torch and transformers already there. Uses .venv when it
# exists, else $(PYTHON); writes docs/benchmarks-gpu.md, .json and -labs.png (into $$OUT when that is set).
gpu-check:
	@if [ -x $(PY) ]; then py=$(PY); else py=$(PYTHON); fi; \
	PYTHONPATH=src$${PYTHONPATH:+:$$PYTHONPATH} $$py -m rlprep bench --gpu

e2e: $(STAMP)
	$(PY) -m pytest -q -m e2e tests/e2e

clean:
	rm -rf build .pytest_cache
