# SPDX-License-Identifier: Apache-2.0
# Thin wrapper over CMake so that a fresh clone needs only `make bench` / `make test`
# (`./make.sh bench` / `./make.sh test` where make itself may be missing).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure test bench peers examples install clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@bash scripts/deps.sh

# A configure that failed or was interrupted leaves a CMakeCache.txt but no stamp: start
# that build folder's configuration afresh rather than fail on its leftovers.
STAMP = $(BUILD)/.llmk-configured
configure: deps
	@if [ ! -f $(STAMP) ]; then \
	  rm -rf $(BUILD)/CMakeCache.txt $(BUILD)/CMakeFiles; \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) && touch $(STAMP); \
	fi

test: all
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The main job: `llmk bench --quick` once (every op, each case checked against its
# reference and timed beside a copy of the same bytes), then the examples.
bench: all
	bash scripts/bench.sh $(BUILD)

# llmk against the PyTorch implementations a vLLM CPU user runs today (needs python3-torch)
peers: all
	LLMK_LIBRARY=$(BUILD)/libllmk.so /usr/bin/python3 bench/peers/peer_bench.py

examples: all
	bash scripts/examples.sh $(BUILD)

# A/B timing, one process: libllmk.so of git revision REV against the working tree's
# (or REV_B's); AB_ARGS go to the tool (tools/ab/llmk_ab.c), e.g. AB_ARGS='--case conv1d'
.PHONY: ab
ab:
	@test -n "$(REV)" || { echo "usage: make ab REV=<git revision> [REV_B=<revision>] [AB_ARGS='--case TEXT --threads N --min-pairs N']" >&2; exit 2; }
	bash scripts/ab.sh $(REV) $(REV_B) $(AB_ARGS)

install: all
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

clean:
	rm -rf $(BUILD)
