# glassbox — the two commands of the README's Quick start, and a few more.
#   make demo    install what is missing, build (Release) only what the demo runs, run the flagship sample traced
#                into runs/train_mlp.db, report it, open the viewer (no display: screenshots into runs/)
#   make test    install, build, run every test through CTest
#   make test-options    the options the default leaves off, in build-options: no probes, no CUDA, Clang with
#                        ASan + UBSan, the fuzzers (tests of trace contents excluded)
#   make test-tsan       ThreadSanitizer over the threaded parts' tests, in build-tsan: the probes' rings, the
#                        collector and sessions, the DataLoader's workers, the viewer's worker threads
#   make bench   build and run the benchmarks (make bench BENCH=bench_matmul runs one), each against libtorch 1.13 and,
#                when installed (tools/install-deps.sh torch2), against libtorch 2.x: bench_<name>_torch2
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
CTEST_FLAGS ?=

# What the demo builds: the flagship sample, the glassbox command and the viewer (and the libraries under them).
DEMO_TARGETS = train_mlp glassbox glassbox-viewer

.PHONY: all deps configure build demo test test-options test-tsan bench clean

all: build

# The packages: `make demo` installs only what it builds and runs (DEPS=demo), the rest everything.
DEPS ?=
demo: DEPS = demo
deps:
	@tools/install-deps.sh $(DEPS)

# The first configure writes the build folder; later ones re-run CMake in it (under a second: packages installed
# since, e.g. libtorch after a demo, are found and their tests built).
configure: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then \
	  cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 \
	    || { cat $(BUILD).configure.log; exit 1; }; \
	else \
	  cmake -S . -B $(BUILD) $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || { cat $(BUILD).configure.log; exit 1; }; \
	fi

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: configure
	@echo "glassbox: building $(DEMO_TARGETS) in $(BUILD) (make test builds the rest)"
	@cmake --build $(BUILD) -j $(JOBS) --target $(DEMO_TARGETS)
	@tools/demo.sh $(BUILD)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

# The build options the default leaves off, in one more build folder: every probe compiled out, no CUDA sources
# (the default build compiles them wherever nvcc is), no oneDNN (convolutions on im2col + GEMM alone), no MPI (the
# build without a distributed backend, whose errors its tests check; Open MPI's own allocations would also fail
# LeakSanitizer at exit), Clang with AddressSanitizer + UndefinedBehaviorSanitizer at -O1
# (the level ASan recommends; a third less build time than -O3), and the fuzzers (fuzz/, 20 s each under CTest). The tests labelled `trace` read back what the probes write, so they
# are left out, and so are the lessons (the default build runs them); everything else must pass. CMAKE_FLAGS adds to these (CI: -DGLASSBOX_WERROR=ON).
test-options: deps
	@$(MAKE) --no-print-directory BUILD=build-options CTEST_FLAGS="-LE trace" \
	  CMAKE_FLAGS="-DCMAKE_CXX_COMPILER=clang++ '-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG' -DGLASSBOX_PROBES=OFF \
	               -DGLASSBOX_CUDA=OFF -DGLASSBOX_ONEDNN=OFF -DGLASSBOX_MPI=OFF -DGLASSBOX_SANITIZE=ON -DGLASSBOX_FUZZ=ON \
	               -DGLASSBOX_BUILD_BENCH=OFF -DGLASSBOX_BUILD_LESSONS=OFF $(CMAKE_FLAGS)" test

# ThreadSanitizer, in its own folder (it cannot share one with AddressSanitizer), building only the tests of the
# code that runs threads (their folders' test executables; CTest runs the threaded files' tests), at -O1 with line
# tables only (-g1: file:line in the reports, the cheapest debug info). OpenBLAS's own threads are not instrumented:
# one BLAS thread, so every thread is seen.
TSAN_TESTS = test_engine_core test_engine_optim test_engine_distributed test_engine_data test_instrument test_viewer
test-tsan: deps
	@$(MAKE) --no-print-directory BUILD=build-tsan configure \
	  CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Debug '-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1' -DGLASSBOX_TSAN=ON -DGLASSBOX_CUDA=OFF \
	               -DGLASSBOX_BUILD_BENCH=OFF -DGLASSBOX_BUILD_SAMPLES=OFF $(CMAKE_FLAGS)"
	@cmake --build build-tsan -j $(JOBS) --target $(TSAN_TESTS) glassbox_trace_child glassbox
	OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir build-tsan \
	  --output-on-failure -j $(JOBS) -R '^(engine\.core\.parallel|engine\.optim\.adam_update|engine\.distributed\.work|instrument\.(clock|collector|probe|session)|engine\.data\.(dataloader|worker_pool)|viewer\.(async_cache|worker|trace_model|timeline_model|span_search|memory_model|gradients_model|graph_model|compare))$$'

bench: build
	@echo "glassbox: the peers found (bench/CMakeLists.txt):"; sed 's/^/  /' $(BUILD)/bench/peers.txt
	@if [ "$(BENCH)" = bench_distributed ]; then mpirun --allow-run-as-root --oversubscribe -np 2 ./$(BUILD)/bench/$(BENCH); \
	elif [ -n "$(BENCH)" ]; then for b in ./$(BUILD)/bench/$(BENCH) ./$(BUILD)/bench/$(BENCH)_torch2; do \
	    if [ -x "$$b" ]; then "$$b" || exit 1; fi; done; else \
	  for b in $(BUILD)/bench/bench_*; do [ -x "$$b" ] || continue; \
	    case "$$b" in *bench_distributed) mpirun --allow-run-as-root --oversubscribe -np 2 "$$b";; *) "$$b";; esac; \
	  done; fi

clean:
	rm -rf $(BUILD) $(BUILD).configure.log
