# Every target installs what it needs into .venv first (pinned in pyproject.toml).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
UI_PORT ?= 5000
# The families `make smoke` sweeps (conf/family/<name>.yaml), comma-separated.
SMOKE_FAMILIES ?= spot,auction,core,iaas,sow,arena
ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help install sweep test test-fast lint smoke ui bench bench-fig9 bench-auction bench-sow bench-tiny-load clean reproduce-spot reproduce-auction reproduce-core reproduce-iaas reproduce-arena reproduce-sow

help: ## List the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-15s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[test,bench]"
	touch $(BENCH_STAMP)

install: $(STAMP) ## Create .venv and install the pinned dependencies

sweep: $(STAMP) ## Run the demo multirun (spot family, local Ray, MLflow in mlflow.db); ARGS=... adds overrides
	$(PY) -m sweep -m experiment=demo $(ARGS)

test: lint ## Lint, then run the whole test suite on two workers (unit tests, smoke multirun on real Ray and MLflow)
	$(PY) -m pytest -q -n 2 --dist load $(ARGS)

test-fast: $(STAMP) ## Run the tests not marked slow (everyday work; `make test` is the full suite CI runs)
	$(PY) -m pytest -q -n 2 --dist load -m "not slow" $(ARGS)

lint: $(STAMP) ## Check the code with ruff: its rules (pyproject.toml) and its format (`ruff format .` applies it)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check --quiet .

smoke: $(STAMP) ## Sweep every family on tiny worlds: 12 cells, under a minute on 2 cores (ARGS=tracking=off: no mlflow.db; docs/ci.md)
	$(PY) -m sweep -m family=$(SMOKE_FAMILIES) seed=0,1 debug=tiny $(ARGS)

ui: $(STAMP) ## Browse mlflow.db in the MLflow UI at 127.0.0.1 (port 5000, or UI_PORT=...)
	$(VENV)/bin/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/mlflow.db --host 127.0.0.1 --port $(UI_PORT)

bench: $(BENCH_STAMP) ## Run the engine benchmarks (writes bench/results/engine.json)
	$(PY) -m bench.engine_overhead $(ARGS)

bench-fig9: $(BENCH_STAMP) ## Time the Fig. 9 sweep end to end and profile it (writes bench/results/fig9.json)
	$(PY) -m bench.fig9 $(ARGS)

bench-auction: $(BENCH_STAMP) ## Time the auction family at 200 nodes, high load, one day (writes bench/results/auction_scale_paper_like.json)
	$(PY) -m bench.auction_scale $(ARGS)

bench-sow: $(BENCH_STAMP) ## Time paper 004's reduction on 1,000 SoWs at N = 100 and its growth with R, N, support (writes bench/results/sow_speed.json)
	$(PY) -m bench.sow_speed $(ARGS)

bench-tiny-load: $(BENCH_STAMP) ## Time every experiment at debug=tiny, quiet and beside two busy processes (writes bench/results/tiny_load.json)
	$(PY) -m bench.tiny_load $(ARGS)

reproduce-spot: $(STAMP) ## Reproduce paper 000's Figs. 5-10 into reports/spot/ (long: see docs/spot/reproduction.md)
	$(PY) -m reproduction spot $(ARGS)

reproduce-auction: $(STAMP) ## Reproduce paper 001's Figs. 4-13 into reports/auction/ (long: see docs/auction/reproduction.md)
	$(PY) -m reproduction auction $(ARGS)

reproduce-core: $(STAMP) ## Reproduce paper 002's Figs. 4-6 and 11 and the real/live-curve runs into reports/core/ (docs/core/reproduction.md)
	$(PY) -m reproduction core $(ARGS)

reproduce-iaas: $(STAMP) ## Reproduce paper 003's Figs. 4-5 and Tables II-IV into reports/iaas/ (docs/iaas/reproduction.md)
	$(PY) -m reproduction iaas $(ARGS)

reproduce-arena: $(STAMP) ## Papers 000 and 003's spot mechanisms on one market: which wins where, into reports/arena/ (docs/arena.md)
	$(PY) -m reproduction arena $(ARGS)

reproduce-sow: $(STAMP) ## The experiments paper 004's theorems imply, into reports/sow/ (docs/sow/reproduction.md)
	$(PY) -m reproduction sow $(ARGS)

clean: ## Remove outputs/, multirun/ and caches (keeps .venv and mlflow.db)
	rm -rf outputs multirun .pytest_cache .hypothesis
