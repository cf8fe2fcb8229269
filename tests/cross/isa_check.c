/*
 * isa_check [EXPECTED_PREFIX]: prints which ISA paths the runtime was built
 * with and fails when coreai_gemm_f32_config() does not start with
 * EXPECTED_PREFIX (empty or absent: print only).
 *
 * Compiled with the runtime's flags (it includes the private vmath.h), so it
 * also stops the build when an AArch64 compiler would give vmath.h, and with
 * it every exp / tanh / erf user and norm.c's fused f32 path (whose condition
 * is repeated below), anything but the 4-wide NEON vectors with vfmaq_f32.
 */
#include <stdio.h>
#include <string.h>

#include "coreai/kernels/matmul.h"
#include "vmath.h"

#if defined(__aarch64__)
#if !defined(__ARM_NEON)
#error "AArch64 without __ARM_NEON: the runtime would take its portable paths"
#endif
#if VM_VL != 4
#error "vmath.h is not 4-wide on AArch64"
#endif
#if !(VM_VL == 4 && defined(__ARM_NEON) && defined(__aarch64__))
#error "norm.c's NORM_EXACT_FMA condition does not hold"
#endif
#endif

int main(int argc, char **argv)
{
    const char *config = coreai_gemm_f32_config();
    const char *expect = argc > 1 ? argv[1] : "";
    printf("gemm: %s\n", config);
    printf("vmath: VM_VL %d, VM_FMA %s\n", VM_VL,
#if defined(__ARM_NEON) && defined(__aarch64__) && VM_VL == 4
           "vfmaq_f32"
#elif VM_VL > 1 && (defined(__FMA__) || defined(__AVX512F__))
           "x86 fma"
#else
           "a * b + c"
#endif
    );
    printf("target:%s%s%s\n",
#if defined(__aarch64__)
           " aarch64",
#elif defined(__arm__)
           " arm",
#elif defined(__x86_64__)
           " x86_64",
#else
           " other",
#endif
#if defined(__ARM_NEON)
           " __ARM_NEON",
#else
           "",
#endif
#if defined(__ARM_FEATURE_FMA)
           " __ARM_FEATURE_FMA"
#else
           ""
#endif
    );
    if (strncmp(config, expect, strlen(expect)) != 0) {
        fprintf(stderr, "isa_check: expected the GEMM config to start with \"%s\"\n", expect);
        return 1;
    }
    return 0;
}
