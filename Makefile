# Two commands do everything on a fresh Debian machine:
#   make run    install dependencies, build, solve the shipped matrix (GPU if present, CPU otherwise)
#   make test   install dependencies, build, run the test suite
#   make test-sanitize   the test suite of the CPU-only build under AddressSanitizer,
#               LeakSanitizer and UndefinedBehaviorSanitizer (CI runs it too)
BUILD  ?= build
JOBS   ?= 2
MATRIX ?= data/cutest_kkt_CRESC100_0000.mtx.gz
ARGS   ?=
CMAKE_ARGS ?=

.PHONY: all deps build run test test-sanitize clean
all: build

deps:
	bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	cmake --build $(BUILD) -j$(JOBS)

run: build
	./$(BUILD)/tools/ildl solve $(MATRIX) --backend auto $(ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-sanitize: deps
	cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=Debug -DILDL_CUDA=OFF -DILDL_SANITIZE=ON $(CMAKE_ARGS)
	cmake --build $(BUILD)-sanitize -j$(JOBS)
	cd $(BUILD)-sanitize && ctest --output-on-failure -j$(JOBS)

clean:
	rm -rf $(BUILD)
