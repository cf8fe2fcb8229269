# coreai_isa_runs(<out> <variant> <flags>...): TRUE when this compiler
# accepts the flags and this CPU runs a probe of <variant> (avx2, avx512)
# compiled with them: an unsupported CPU stops it with SIGILL. FALSE when
# cross-compiling or with another compiler. Cached as <out>
# (check_c_source_runs), so the runtime's COREAI_RUNTIME_ISA_VARIANTS=host
# and the tests (tests/isa, valgrind) ask the CPU once.
include_guard(GLOBAL)
include(CheckCSourceRuns)

set(_coreai_isa_probe_avx2 "
#include <immintrin.h>
int main(void) {
  volatile float x = 1.5f;
  __m256 a = _mm256_set1_ps(x);
  a = _mm256_fmadd_ps(a, a, a);
  float t[8]; _mm256_storeu_ps(t, a);
  return t[3] == 3.75f ? 0 : 1;
}")
set(_coreai_isa_probe_avx512 "
#include <immintrin.h>
int main(void) {
  volatile float x = 1.5f;
  __m512 a = _mm512_set1_ps(x);
  a = _mm512_fmadd_ps(a, a, a);
  return _mm512_reduce_add_ps(a) == 60.0f ? 0 : 1;
}")

function(coreai_isa_runs out variant)
  if(CMAKE_CROSSCOMPILING OR NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    set(${out} FALSE PARENT_SCOPE)
    return()
  endif()
  list(JOIN ARGN " " CMAKE_REQUIRED_FLAGS)
  set(CMAKE_REQUIRED_QUIET TRUE)
  check_c_source_runs("${_coreai_isa_probe_${variant}}" ${out})
  set(${out} ${${out}} PARENT_SCOPE)
endfunction()
