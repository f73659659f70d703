# Two commands do everything on a fresh Debian machine:
#   make run    install dependencies, build, solve the shipped matrix (GPU if present, CPU otherwise)
#   make test   install dependencies, build, run the test suite
#   make test-sanitize   the test suite of the CPU-only build under AddressSanitizer,
#               LeakSanitizer and UndefinedBehaviorSanitizer (CI runs it too; without the PETSc
#               preconditioner, whose MPI runtime the leak checker would report)
#   make fuzz   the libFuzzer harnesses (clang, CPU only, build-fuzz/): the committed corpus as
#               regression inputs, then FUZZ_SECONDS (60) of fuzzing per harness (docs/reliability.md)
BUILD  ?= build
JOBS   ?= 2
MATRIX ?= data/cutest_kkt_CRESC100_0000.mtx.gz
ARGS   ?=
CMAKE_ARGS ?=

FUZZ_SECONDS ?= 60
FUZZ_BUILD ?= build-fuzz

.PHONY: all deps build run test test-sanitize fuzz clean
all: build

deps:
	bash scripts/install-deps.sh $(DEPS_FOR)

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	cmake --build $(BUILD) -j$(JOBS)

run: build
	./$(BUILD)/tools/ildl solve $(MATRIX) --backend auto $(ARGS)

# the tests' own dependencies too (PETSc and MPI: the PETSc preconditioner's tests)
test: DEPS_FOR = test
test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-sanitize: deps
	cmake -S . -B $(BUILD)-sanitize -DCMAKE_BUILD_TYPE=Debug -DILDL_CUDA=OFF -DILDL_SANITIZE=ON -DILDL_PETSC=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD)-sanitize -j$(JOBS)
	cd $(BUILD)-sanitize && ctest --output-on-failure -j$(JOBS)

# The fuzzers use GCC's OpenMP runtime (libgomp, as the library's own builds do): LLVM's libomp
# 14 aborts at random in dynamic-schedule loops (llvm/llvm-project#54422, "Assertion failure at
# kmp_dispatch.cpp(1456)"), which a fuzzing campaign of many processes hit (docs/reliability.md).
GOMP_LIB = $(shell gcc -print-file-name=libgomp.so 2>/dev/null)
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DILDL_CUDA=OFF -DILDL_FUZZ=ON \
	  -DILDL_BUILD_TESTS=OFF -DILDL_BUILD_TOOLS=OFF -DILDL_PETSC=OFF -DOpenMP_C_FLAGS=-fopenmp=libgomp -DOpenMP_C_LIB_NAMES=gomp \
	  -DOpenMP_gomp_LIBRARY=$(GOMP_LIB) $(CMAKE_ARGS)
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzzers
	status=0; (cd $(FUZZ_BUILD) && ctest --output-on-failure -j$(JOBS) -L fuzz) || status=1; \
	bash tests/fuzz/run_fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) || status=1; exit $$status

clean:
	rm -rf $(BUILD)
