# pmux-widget: the two commands of the README, plus the long-running suites.
#   make demo    JupyterLab with the widget over a demo fleet of Claude sessions
#                (DEMO_ARGS="--no-lab | --real | --port N | --duration S | --history MIN | --no-prerun",
#                 see pmux_widget/demo/launcher.py)
#   make test    ruff, mypy --strict, vitest, pytest (unit, integration, real CLI, browser:
#                the real agent CLIs' suites beside the rest, side by side; PYTEST_ARGS=--serial
#                for one plain pytest);
#                it ends with one line per part it could not have (the CLIs, Chromium, ...) and
#                the command that fixes it (CI=1: such a part fails the run)
#   make clis    the pinned Claude Code CLIs (.cache/claude-code/) and Codex CLI (.cache/codex/)
#                for the real-CLI suites
#   make bench   the performance budgets (benchmarks/; BENCH_ARGS=--quick for a smoke run)
#   make stress  the long reliability runs
#   make dist    the sdist and the wheel into dist/ (python -m build), checked by twine

VENV    ?= .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip
STAMP   := $(VENV)/.installed
PYTEST_ARGS ?=
DEMO_ARGS ?=
BENCH_ARGS ?=

.PHONY: demo test lint typecheck js bench stress clean install clis dist

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e ".[test,demo]"
	touch $(STAMP)

# Without npm nothing of the front-end builds: one line that says so and how to get it.
NEED_NPM := command -v npm >/dev/null 2>&1 || { echo "make: npm is missing (Node.js and npm build \
	the front-end and install the pinned Claude Code CLIs) -> fix: sudo apt-get install nodejs npm"; exit 1; }

node_modules/.package-lock.json: package.json package-lock.json
	@$(NEED_NPM)
	npm ci --no-audit --no-fund

# The labextension's own node_modules (@jupyterlab/*, the builder), from its own lock.
js/lab/node_modules/.package-lock.json: js/lab/package.json js/lab/package-lock.json
	@$(NEED_NPM)
	npm ci --prefix js/lab --no-audit --no-fund --loglevel=error

install: $(STAMP) node_modules/.package-lock.json js/lab/node_modules/.package-lock.json

# Both front-ends (the anywidget ESM, the prebuilt labextension). An editable install has no
# copy of the wheel's shared-data that follows rebuilds: the venv's labextension is a link to
# this checkout's build, and the server extension's conf.d snippet is put in place (what
# `pip install` of the wheel does).
LABEXT_DIR  := $(VENV)/share/jupyter/labextensions
SERVER_CONF := $(VENV)/etc/jupyter/jupyter_server_config.d

js: node_modules/.package-lock.json js/lab/node_modules/.package-lock.json
	npm run --silent build
	mkdir -p $(LABEXT_DIR) $(SERVER_CONF)
	rm -rf $(LABEXT_DIR)/pmux-widget
	ln -s $(CURDIR)/pmux_widget/labextension $(LABEXT_DIR)/pmux-widget
	cp jupyter-config/server-config/pmux_widget.json $(SERVER_CONF)/pmux_widget.json

# The pinned Claude Code CLIs, installed before pytest starts (once: a version already there
# answers at once), with retries and npm's error shown; without CI a failure is reported
# and the run goes on (its tests are listed at the end of pytest's run with the same fix).
clis: $(STAMP)
	$(PY) -m devtools.install_clis

lint: $(STAMP)
	$(VENV)/bin/ruff check pmux_widget tests benchmarks devtools
	$(VENV)/bin/ruff format --check pmux_widget tests benchmarks devtools
	$(VENV)/bin/lint-imports

typecheck: $(STAMP)
	$(VENV)/bin/mypy

test: install js clis lint typecheck
	npm run --silent typecheck
	npm test --silent
	$(PY) -m devtools.test_shards $(PYTEST_ARGS)

demo: install js
	$(PY) -m pmux_widget.demo $(DEMO_ARGS)

bench: install js
	$(PY) -m benchmarks $(BENCH_ARGS)

stress: install js
	PMUX_STRESS=1 PMUX_SETTINGS_EXAMPLES=3000 $(VENV)/bin/pytest tests/test_reliability.py \
		tests/test_hooks_install.py tests/test_server.py tests/test_transcript.py tests/test_http_fuzz.py \
		tests/test_notify_once_stress.py tests/test_notify_once_hubs.py \
		$(PYTEST_ARGS)

# The release files: the sdist carries the built front-ends, so the wheel built from it (what
# `python -m build` does) needs no npm.
dist: install js
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

clean:
	rm -rf $(VENV) node_modules js/lab/node_modules js/lab/lib pmux_widget/static pmux_widget/labextension \
		.demo .pytest_cache .ruff_cache dist
