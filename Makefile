# rlprep: two commands do all the setup.
#   make lab   - create .venv if missing, install, build the warm starts, open JupyterLab on notebooks/00_start_here.ipynb
#   make test  - the same setup, then the whole test suite (what CI runs)

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.rlprep-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help venv sandbox postgres node lab test release bench book classroom hub gpu-check e2e clean

help:
	@echo "make lab        open the course in JupyterLab (installs on first use)"
	@echo "make test       install, then run the whole test suite (CI runs this)"
	@echo "make release    regenerate labs/ from solutions/ with nbgrader"
	@echo "make bench      CPU benchmarks -> docs/benchmarks.md"
	@echo "make classroom  40 simulated students x 8 labs through nbgrader into a PostgreSQL gradebook (long)"
	@echo "make hub        as root: a JupyterHub for a class on this machine (accounts, exchange, formgrader)"
	@echo "make gpu-check  every lab in the gpu profile plus the GPU benchmarks (< 8 min)"
	@echo "make book       the course as a static website in build/book/ (RLPREP_PROFILE=smoke: quick)"
	@echo "make e2e        drive JupyterLab and the website in headless Chromium, screenshots in build/e2e/"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "rlprep needs Python >= 3.11; set PYTHON=python3.11")'
	@echo "first run: installing rlprep and its dependencies into $(VENV) (about 3 minutes, ~3 GB; pip is quiet)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[course]"
	@touch $(STAMP)

venv: $(STAMP)

# $(call apt_install,PACKAGE,PURPOSE,WITHOUT): install a Debian package when we can (root with apt-get), else say
# what runs without it. PACKAGE's check comes before the call (`check || $(call ...)`).
define apt_install
{ \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's $(1) ($(2))"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null) \
	      || echo "could not install $(1): $(3)"; \
	  else \
	    echo "note: $(1) is not installed, so $(3);" \
	         "install it with your package manager (e.g. sudo apt-get install $(1))"; \
	  fi; }
endef

# Grading runs the learner's kernel under bubblewrap (docs/grading.md); without it grading says
# "sandbox: none: <why>" and the attack tests that need it are skipped (not in CI).
sandbox:
	@command -v bwrap >/dev/null 2>&1 || $(call apt_install,bubblewrap,the grading sandbox,grading runs without a sandbox)

# A class's gradebook on PostgreSQL (tests/test_classroom_postgres.py, make classroom) needs the server binaries.
postgres:
	@test -n "$$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null)" || command -v initdb >/dev/null 2>&1 || \
	  $(call apt_install,postgresql,a class's gradebook server,the PostgreSQL gradebook tests are skipped)

# The website (make book) runs Jupyter Book 2, a Node.js program: node >= 18 and npm.
node:
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || \
	  $(call apt_install,nodejs npm,the course website,make book cannot build the site)

# Before JupyterLab starts, build what the notebooks load on first use (the SFT warm starts, GRPO's start, the reward
# model) for the active profile, with a progress bar: the first run of a lab or walkthrough then loads them in seconds
# (issue 38). Later runs find them cached and verify them in seconds.
lab: $(STAMP) sandbox
	$(PY) -m rlprep models build --task all
	$(PY) -m rlprep lab

# The suite runs in TEST_WORKERS processes (pytest-xdist; a test file stays in one process, so its module fixtures
# are built once), each with one torch thread: on 2 cores two single-threaded workers take 500 s where one process
# with two threads took 840 s, and two-thread workers on a busy machine spin (a 5 s test took 230 s there).
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(max(1, min(4, len(os.sched_getaffinity(0)))))')

test: $(STAMP) sandbox postgres
	@# Lint first (seconds; the rules and why are in pyproject.toml's [tool.ruff]): a finding fails the target.
	$(VENV)/bin/ruff check src tests
	@# Build the smoke warm starts once, up front, so no notebook cell waits on an SFT build.
	RLPREP_PROFILE=smoke $(PY) -m rlprep models build --profile smoke --task all
	@mkdir -p build; start=$$(date +%s); \
	OMP_NUM_THREADS=1 RLPREP_PROFILE=smoke $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile \
	  -m "not e2e and not slow and not gpu" tests; rc=$$?; \
	echo $$(( $$(date +%s) - start )) > build/make-test-seconds; exit $$rc

release: $(STAMP)
	$(PY) -m rlprep release

bench: $(STAMP)
	$(PY) -m rlprep bench

# The course as a static website in build/book/ (issue #22): the walkthrough notebooks executed in the active
# profile (cached per notebook by content hash in build/book-cache/), a page per question, the released labs and the
# interviewer's sheets. The first build also builds the vendored book theme (book/theme/) with npm into build/.
book: $(STAMP) node
	$(PY) -m rlprep book

# A simulated class of 40 through nbgrader's whole cycle (fetch, submit, collect, autograde, feedback, export)
# into a throwaway PostgreSQL server; prints students x labs graded, submissions/minute and the server version.
# Not in `make test` (measured: about 5 CPU-seconds a submission, setup included; docs/grading.md);
# tests/test_classroom*.py run a small class.
CLASSROOM_STUDENTS ?= 40
CLASSROOM_JOBS ?= 2
CLASSROOM_LABS ?= lab01_gae,lab02_reward_model,lab03_ppo_rlhf,lab04_dpo,lab05_grpo,lab06_importance_sampling,lab07_infonce,lab08_image_diff
classroom: $(STAMP) sandbox postgres
	RLPREP_PROFILE=smoke $(PY) -m rlprep classroom simulate --students $(CLASSROOM_STUDENTS) \
	  --labs $(CLASSROOM_LABS) --jobs $(CLASSROOM_JOBS) --temp-postgres --out build/classroom-$$(date +%Y%m%d-%H%M%S)

# A JupyterHub for a class on this machine, as root (README, "Instructors"): jupyterhub from PyPI (the `hub` extra),
# configurable-http-proxy from npm (hub/package-lock.json) into build/hub-npm, then `rlprep classroom hub`: unix
# accounts (passwords in build/hub/state/credentials.txt), nbgrader's exchange, lab 1 released, formgrader as a hub
# service; JupyterHub runs in the foreground on http://127.0.0.1:8000. HUB_ARGS adds options (--help lists them);
# `rlprep classroom hub --remove-accounts` deletes the accounts again.
HUB_STAMP := $(VENV)/.rlprep-hub-installed
CHP := build/hub-npm/node_modules/.bin/configurable-http-proxy
HUB_ARGS ?=

$(HUB_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e ".[course,hub]"
	@touch $(HUB_STAMP)

$(CHP): hub/package.json hub/package-lock.json | node
	@mkdir -p build/hub-npm
	cp hub/package.json hub/package-lock.json build/hub-npm/
	cd build/hub-npm && npm ci --no-audit --no-fund --loglevel=error
	@touch $(CHP)

hub: $(HUB_STAMP) sandbox node $(CHP)
	$(PY) -m rlprep classroom hub $(HUB_ARGS)

# No install step: a GPU image is often offline, with torch and transformers already there. Uses .venv when it
# exists, else $(PYTHON); writes docs/benchmarks-gpu.md, .json and -labs.png (into $$OUT when that is set).
gpu-check:
	@if [ -x $(PY) ]; then py=$(PY); else py=$(PYTHON); fi; \
	PYTHONPATH=src$${PYTHONPATH:+:$$PYTHONPATH} $$py -m rlprep bench --gpu

e2e: $(STAMP) $(HUB_STAMP) $(CHP) sandbox postgres
	$(PY) -m pytest -q -m e2e tests/e2e

clean:
	rm -rf build .pytest_cache
