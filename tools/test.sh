#!/bin/sh
# SPDX-License-Identifier: MIT
# Quick start, step 2: build (warnings as errors) and run the whole test suite with ctest.
#   tools/test.sh             release build in build/
#   tools/test.sh --sanitize  ASan+UBSan build in build-asan/
#   tools/test.sh --valgrind  memcheck over the unit tests (build/)
#   tools/test.sh --tsan      ThreadSanitizer build in build-tsan/, unit tests and fuzz replays
set -e
cd "$(dirname "$0")/.."
sh tools/install_deps.sh
mode=${1:-}
jobs=${LT_JOBS:-$(nproc)}
case "$mode" in
--sanitize)
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLT_WERROR=ON -DLT_BUILD_BENCH=OFF \
    "-DLT_SANITIZE=address;undefined" >/dev/null
  cmake --build build-asan -j"$jobs"
  # PoCL's compiler and OpenBLAS's threads are not instrumented; leaks inside them are theirs.
  # Python runs (python_tests, example_mlp_py, dask_tests) would load the instrumented library
  # into an uninstrumented interpreter: the release stage runs them.
  # allocator_may_return_null: tests ask for impossible allocations and expect OUT_OF_MEMORY.
  # intercept_tls_get_addr=0: with PoCL's dlopened LLVM in the process, LeakSanitizer's scan of
  # the main thread's dynamic TLS met a bogus block ("DTLS 13 at 0xde6-0x800001ee8") and its
  # tracer crashed at exit (test_autograd, test_alloc_failure). Without the interception that
  # memory is simply not a root: a pointer held only there would show as a leak, never hide one.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1:intercept_tls_get_addr=0 \
  LSAN_OPTIONS=suppressions=$(pwd)/tests/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" -E 'install_consumer|python_tests|example_mlp_py|dask_tests'
  ;;
--tsan)
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DLT_WERROR=ON -DLT_BUILD_BENCH=OFF \
    -DLT_BUILD_TOOLS=ON -DLT_SANITIZE=thread >/dev/null
  cmake --build build-tsan -j"$jobs"
  # Races inside uninstrumented OpenBLAS/PoCL are theirs: tests/tsan.supp says why for each.
  # allocator_may_return_null: tests ask for absurd sizes on purpose and expect LT_ERR_OUT_OF_MEMORY.
  # The *_isa_* entries change which vector kernels run, not how threads meet: left out here.
  # test_dist* (libtensor_mpi, issue 24) run under mpirun: OpenMPI's uninstrumented progress
  # and shared-memory transport threads fill TSan with reports that are not libtensor's; the
  # release and ASan stages run them.
  TSAN_OPTIONS="suppressions=$(pwd)/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1" \
  LT_TEST_INSTRUMENTED=1 ctest --test-dir build-tsan --output-on-failure -j"$jobs" -R '^(test_|fuzz_replay_)' -E '_isa_|^test_dist'
  ;;
--valgrind)
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLT_WERROR=ON >/dev/null
  cmake --build build -j"$jobs"
  # No include(CTest) in the project, so name the checker here (ctest has no default for it).
  # test_opencl exercises PoCL's LLVM compiler, which memcheck slows past any timeout; the
  # ASan build covers it. Everything else runs on the CPU backend here. valgrind hides AVX-512
  # from the program, so the *_isa_avx2 entries would repeat the plain ones: they are left out.
  # test_dist* (issue 24) are mpirun command lines: memcheck would check mpirun, not the ranks,
  # and OpenMPI under valgrind needs its own suppressions; the ASan stage checks the ranks.
  # LT_BLOCK_CACHE=0: freed large blocks go back to the allocator at once, so memcheck sees
  # every free (a block kept for reuse would hide a use after free).
  LT_BLOCK_CACHE=0 LT_TEST_DEVICES=cpu LT_TEST_INSTRUMENTED=1 ctest --test-dir build --output-on-failure -T memcheck -R '^test_' \
    -E '^test_opencl$|_isa_avx2$|^test_dist' \
    --overwrite MemoryCheckCommand="$(command -v valgrind)" \
    --overwrite MemoryCheckCommandOptions="--leak-check=full --error-exitcode=1 --suppressions=$(pwd)/tests/valgrind.supp"
  ;;
*)
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLT_WERROR=ON >/dev/null
  cmake --build build -j"$jobs"
  ctest --test-dir build --output-on-failure -j"$jobs"
  ;;
esac
