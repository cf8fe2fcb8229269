/*
 * isa_dispatch.c - which ISA variant of the hot kernels runs.
 *
 * A dispatching build (CMake defines COREAI_ISA_DISPATCH; x86-64 with GCC or
 * Clang) compiles the sources that include isa_names.h once per variant,
 * their functions suffixed _baseline, _avx2, _avx512, and this file turns
 * them into one table of kernel pointers per variant (COREAI_ISA_FUNCS).
 * The first kernel call picks the table: COREAI_ISA from the environment
 * when it names a variant the CPU runs, else the best the CPU runs, from
 * cpuid and XGETBV (the OS must save the YMM / ZMM and mask registers). The
 * public names below forward through it, so the generated code and the
 * kernel API are the same whatever runs. After ONNX Runtime's MLAS
 * platform table and XNNPACK's per-ISA configs.
 *
 * Every other build has the one variant it was compiled for: no table, no
 * cpuid, and the kernels are called directly; but on AArch64 (Linux, or a
 * build for dotprod) coreai_linear_q8a_f32, whose sdot path is an optional
 * extension's, goes through one pointer picked at its first call (below).
 */
#include "coreai/kernels.h"

#include <string.h>

#include "conv_depthwise.h"
#include "gemm_internal.h"

#define ISA_CAT2(a, b) a##b
#define ISA_CAT(a, b) ISA_CAT2(a, b)

/* Text of the one-line configuration: variant, choice, variants, GEMM. */
static char isa_config_text[320];

/* Appends s to the string in buf (cap bytes), truncating; no stdio, so a
 * bare-metal image that calls coreai_runtime_config() pulls in no printf. */
static void isa_append(char *buf, size_t cap, const char *s)
{
    size_t len = strlen(buf);
    while (*s != '\0' && len + 1 < cap)
        buf[len++] = *s++;
    buf[len] = '\0';
}

#if defined(__STDC_HOSTED__) && __STDC_HOSTED__
#include <stdlib.h>
#endif

#if (defined(COREAI_ISA_DISPATCH) && defined(COREAI_ISA_HAVE_AVX512)) || defined(COREAI_Q8A_SDOT)
/* Whether environment variable NAME is "0" (COREAI_VNNI, COREAI_I8MM: a
 * switch turned off); never on a freestanding build, which has none. */
static int isa_env_off(const char *name)
{
#if defined(__STDC_HOSTED__) && __STDC_HOSTED__
    const char *e = getenv(name);
    return e != NULL && strcmp(e, "0") == 0;
#else
    (void)name;
    return 0;
#endif
}
#endif

#ifdef COREAI_ISA_DISPATCH

#if !defined(__x86_64__) || !(defined(__GNUC__) || defined(__clang__))
#error "COREAI_ISA_DISPATCH needs x86-64 and GCC or Clang"
#endif
#include <cpuid.h>

/* coreai_linear_q8a_f32, apart: the avx512 variant has two (q8s below). */
#define COREAI_ISA_Q8A(X, s)                                                                           \
    X(s, coreai_status, coreai_linear_q8a_f32,                                                         \
      (const coreai_linear_q_params *params, const float *x, const uint8_t *weight, const float *scale,  \
       const uint8_t *zero_point, const float *bias, float *out, void *scratch),                       \
      (params, x, weight, scale, zero_point, bias, out, scratch))

/*
 * Every function isa_names.h renames: X(s, ret, name, params, args) for one
 * that returns a value, V(s, name, params, args) for one that does not, s
 * being passed through (a variant's suffix; q8s for coreai_linear_q8a_f32,
 * _vnni_avx512 in the avx512 table with VNNI, else s).
 */
#define COREAI_ISA_FUNCS(X, V, s, q8s)                                                                 \
    X(s, const char *, coreai_gemm_f32_config, (void), ())                                           \
    V(s, coreai_gemm_packed, (const coreai_gemm_args *g, const float *bp, int64_t bps), (g, bp, bps)) \
    V(s, coreai_gemm_packed_multi,                                                                     \
      (const coreai_gemm_args *g, const float *const *bp, const int64_t *bps, int count),             \
      (g, bp, bps, count))                                                                             \
    V(s, coreai_gemm_packer,                                                                           \
      (const coreai_gemm_args *g, coreai_gemm_pack_fn pack, const void *ctx, float *scratch),         \
      (g, pack, ctx, scratch))                                                                         \
    V(s, coreai_gemm_strided,                                                                          \
      (const coreai_gemm_args *g, const float *b, int64_t b_rs, int64_t b_cs, float *scratch),        \
      (g, b, b_rs, b_cs, scratch))                                                                     \
    X(s, coreai_status, coreai_linear_q_f32,                                                           \
      (const coreai_linear_q_params *params, const float *x, const uint8_t *weight, const void *scale,   \
       const uint8_t *zero_point, const void *minval, const float *bias, float *out, void *scratch),   \
      (params, x, weight, scale, zero_point, minval, bias, out, scratch))                              \
    X(s, coreai_status, coreai_linear_qp_f32,                                                          \
      (const coreai_linear_q_params *params, const float *x, const uint8_t *weight, const float *scale,  \
       const uint8_t *zero_point, const float *bias, float *out, void *scratch),                       \
      (params, x, weight, scale, zero_point, bias, out, scratch))                                      \
    COREAI_ISA_Q8A(X, q8s)                                                                             \
    X(s, coreai_status, coreai_linear_lut_f32,                                                         \
      (const coreai_linear_lut_params *params, const float *x, const uint8_t *indices, const float *lut, \
       const float *bias, float *out),                                                                 \
      (params, x, indices, lut, bias, out))                                                            \
    X(s, coreai_status, coreai_sdpa_f32,                                                               \
      (const coreai_sdpa_params *params, const float *query, const float *key, const float *value,    \
       const void *mask, const float *sinks, float *out),                                             \
      (params, query, key, value, mask, sinks, out))                                                   \
    X(s, coreai_status, coreai_rms_norm_f32,                                                           \
      (const coreai_norm_params *params, const float *x, const float *scale, float *out),             \
      (params, x, scale, out))                                                                         \
    X(s, coreai_status, coreai_layer_norm_f32,                                                         \
      (const coreai_norm_params *params, const float *x, const float *weight, const float *bias,      \
       float *out),                                                                                    \
      (params, x, weight, bias, out))                                                                  \
    X(s, coreai_status, coreai_batch_norm_f32,                                                         \
      (const coreai_channel_norm_params *params, const float *x, const float *gamma,                  \
       const float *beta, const float *mean, const float *variance, float *out),                      \
      (params, x, gamma, beta, mean, variance, out))                                                   \
    X(s, coreai_status, coreai_group_norm_f32,                                                         \
      (const coreai_channel_norm_params *params, const float *x, const float *weight,                 \
       const float *bias, float *out),                                                                 \
      (params, x, weight, bias, out))                                                                  \
    X(s, coreai_status, coreai_instance_norm_f32,                                                      \
      (const coreai_channel_norm_params *params, const float *x, const float *gamma,                  \
       const float *beta, float *out),                                                                 \
      (params, x, gamma, beta, out))                                                                   \
    X(s, coreai_status, coreai_conv2d_f32,                                                             \
      (const coreai_conv2d_params *params, const float *x, const float *weight, const float *bias,    \
       float *out),                                                                                    \
      (params, x, weight, bias, out))                                                                  \
    X(s, coreai_status, coreai_conv2d_ws_f32,                                                          \
      (const coreai_conv2d_params *params, const float *x, const float *weight, const float *bias,    \
       float *out, void *scratch),                                                                     \
      (params, x, weight, bias, out, scratch))                                                         \
    X(s, coreai_status, coreai_conv2d_winograd_f32,                                                    \
      (const coreai_conv2d_params *params, const float *x, const float *u, const float *bias,         \
       float *out, void *scratch),                                                                     \
      (params, x, u, bias, out, scratch))                                                              \
    X(s, coreai_status, coreai_conv2d_panels_f32,                                                      \
      (const coreai_conv2d_params *params, const float *x, const float *wp, const float *bias,        \
       float *out, void *scratch),                                                                     \
      (params, x, wp, bias, out, scratch))                                                             \
    X(s, coreai_status, coreai_conv2d_gemm_f32,                                                        \
      (const coreai_conv2d_params *params, const float *x, const float *weight, const float *bias,    \
       float *out, void *scratch),                                                                     \
      (params, x, weight, bias, out, scratch))                                                         \
    X(s, coreai_status, coreai_conv2d_q_f32,                                                           \
      (const coreai_conv2d_q_params *params, const float *x, const uint8_t *weight, const void *scale,  \
       const uint8_t *zero_point, const void *minval, const float *bias, float *out, void *scratch),   \
      (params, x, weight, scale, zero_point, minval, bias, out, scratch))                              \
    X(s, coreai_status, coreai_conv2d_lut_f32,                                                         \
      (const coreai_conv2d_lut_params *params, const float *x, const uint8_t *indices, const float *lut, \
       const float *bias, float *out, void *scratch),                                                  \
      (params, x, indices, lut, bias, out, scratch))                                                   \
    X(s, coreai_status, coreai_conv2d_gemm_a,                                                          \
      (const coreai_conv2d_params *params, const float *x, coreai_gemm_pack_a_fn a_pack,              \
       const void *a_ctx, const coreai_gemm_a_stream *a_stream, const float *bias, float *out,         \
       void *scratch),                                                                                 \
      (params, x, a_pack, a_ctx, a_stream, bias, out, scratch))                                        \
    X(s, int, coreai_conv2d_depthwise,                                                                 \
      (const coreai_conv2d_params *p, const float *x, const float *weight, coreai_gemm_pack_a_fn a_pack, \
       const void *a_ctx, const float *bias, float *out),                                              \
      (p, x, weight, a_pack, a_ctx, bias, out))                                                        \
    X(s, coreai_status, coreai_softmax_f32,                                                            \
      (const coreai_softmax_params *params, const float *x, float *out), (params, x, out))            \
    X(s, coreai_status, coreai_log_softmax_f32,                                                        \
      (const coreai_log_softmax_params *params, const float *x, float *out), (params, x, out))        \
    X(s, coreai_status, coreai_pool2d_f32,                                                             \
      (const coreai_pool2d_params *params, const float *x, float *out), (params, x, out))              \
    X(s, coreai_status, coreai_rope_f32,                                                               \
      (const coreai_rope_params *params, const float *x, const float *cos_in, const float *sin_in,    \
       const void *positions, const float *freqs, void *scratch, size_t scratch_bytes, float *out),   \
      (params, x, cos_in, sin_in, positions, freqs, scratch, scratch_bytes, out))                         \
    X(s, coreai_status, coreai_swiglu_f32,                                                             \
      (const coreai_swiglu_params *params, const float *gate, const float *value, float *out),        \
      (params, gate, value, out))                                                                      \
    X(s, coreai_status, coreai_unary_f32, (const coreai_unary_params *params, const float *x, float *out), \
      (params, x, out))                                                                                \
    X(s, coreai_status, coreai_clamp_f32, (const coreai_clamp_params *params, const float *x, float *out), \
      (params, x, out))                                                                                \
    X(s, coreai_status, coreai_unary_i32, (const coreai_unary_params *params, const int32_t *x, int32_t *out), \
      (params, x, out))                                                                                \
    X(s, coreai_status, coreai_unary_i64, (const coreai_unary_params *params, const int64_t *x, int64_t *out), \
      (params, x, out))

/* One variant's kernels: a field per function, named as the function. */
typedef struct isa_table {
    const char *name;
#define ISA_FIELD(s, ret, name, params, args) ret(*name) params;
#define ISA_FIELD_V(s, name, params, args) void(*name) params;
    COREAI_ISA_FUNCS(ISA_FIELD, ISA_FIELD_V, _, _)
#undef ISA_FIELD
#undef ISA_FIELD_V
} isa_table;

#define ISA_PROTO(s, ret, name, params, args) ret ISA_CAT(name, s) params;
#define ISA_PROTO_V(s, name, params, args) void ISA_CAT(name, s) params;
#define ISA_ENTRY(s, ret, name, params, args) .name = ISA_CAT(name, s),
#define ISA_ENTRY_V(s, name, params, args) .name = ISA_CAT(name, s),

COREAI_ISA_FUNCS(ISA_PROTO, ISA_PROTO_V, _baseline, _baseline)
#ifdef COREAI_ISA_HAVE_AVX2
COREAI_ISA_FUNCS(ISA_PROTO, ISA_PROTO_V, _avx2, _avx2)
#endif
#ifdef COREAI_ISA_HAVE_AVX512
COREAI_ISA_FUNCS(ISA_PROTO, ISA_PROTO_V, _avx512, _avx512)
COREAI_ISA_Q8A(ISA_PROTO, _vnni_avx512)
#endif

/* What the CPU must have for each variant: the features its compiler flags
 * (runtime-stubs/CMakeLists.txt) let the compiler use anywhere in it. */
enum isa_need { ISA_NEED_NONE, ISA_NEED_V3, ISA_NEED_V4 };

typedef struct isa_variant {
    isa_table table;
    enum isa_need need;
} isa_variant;

/* Lowest first. */
static const isa_variant isa_variants[] = {
    {{.name = "baseline", COREAI_ISA_FUNCS(ISA_ENTRY, ISA_ENTRY_V, _baseline, _baseline)}, ISA_NEED_NONE},
#ifdef COREAI_ISA_HAVE_AVX2
    {{.name = "avx2", COREAI_ISA_FUNCS(ISA_ENTRY, ISA_ENTRY_V, _avx2, _avx2)}, ISA_NEED_V3},
#endif
#ifdef COREAI_ISA_HAVE_AVX512
    {{.name = "avx512", COREAI_ISA_FUNCS(ISA_ENTRY, ISA_ENTRY_V, _avx512, _avx512)}, ISA_NEED_V4},
#endif
};
#define ISA_N ((int32_t)(sizeof isa_variants / sizeof isa_variants[0]))

#ifdef COREAI_ISA_HAVE_AVX512
/* The avx512 variant with coreai_linear_q8a_f32 on AVX512_VNNI, which
 * x86-64-v4 does not include (Cascade Lake and later, Zen 4): the table
 * isa_install puts in its place on a CPU that has it, unless COREAI_VNNI=0
 * or coreai_runtime_set_vnni(0) keeps the AVX2 code (so a test can run
 * both on one machine). */
static const isa_table isa_avx512_vnni = {.name = "avx512",
                                          COREAI_ISA_FUNCS(ISA_ENTRY, ISA_ENTRY_V, _avx512, _vnni_avx512)};
#endif

/* XCR0: which register states the OS saves on a context switch. */
static uint64_t isa_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* The highest isa_need this CPU and OS meet. x86-64-v3: AVX, AVX2, FMA,
 * F16C, BMI1, BMI2, LZCNT, MOVBE and the YMM state; x86-64-v4: AVX-512 F,
 * CD, BW, DQ, VL and the opmask / ZMM states. */
static enum isa_need isa_cpu_level(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return ISA_NEED_NONE;
    const int fma = (c >> 12) & 1, movbe = (c >> 22) & 1, osxsave = (c >> 27) & 1;
    const int avx = (c >> 28) & 1, f16c = (c >> 29) & 1;
    if (!osxsave || !avx || (isa_xcr0() & 0x6) != 0x6)
        return ISA_NEED_NONE;
    unsigned max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 7)
        return ISA_NEED_NONE;
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned b7 = b;
    const int avx2 = (b7 >> 5) & 1, bmi1 = (b7 >> 3) & 1, bmi2 = (b7 >> 8) & 1;
    int lzcnt = 0;
    if (__get_cpuid(0x80000001u, &a, &b, &c, &d))
        lzcnt = (c >> 5) & 1;
    if (!(avx2 && fma && f16c && bmi1 && bmi2 && lzcnt && movbe))
        return ISA_NEED_NONE;
    const unsigned v4_bits = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31); /* F DQ CD BW VL */
    if ((b7 & v4_bits) == v4_bits && (isa_xcr0() & 0xe6) == 0xe6)
        return ISA_NEED_V4;
    return ISA_NEED_V3;
}

static int isa_runs(int32_t i) { return isa_variants[i].need <= isa_cpu_level(); }

/* AVX512_VNNI (cpuid 7.0 ECX bit 11) on a CPU that runs avx512. */
static int isa_cpu_vnni(void)
{
    unsigned a, b, c, d;
    if (isa_cpu_level() != ISA_NEED_V4)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    (void)a, (void)b, (void)d;
    return (c >> 11) & 1;
}

/* Whether VNNI may be used: COREAI_VNNI=0 in the environment, read at the
 * first call, or coreai_runtime_set_vnni(0) says no; -1: not read yet. */
static int isa_vnni_allowed = -1;

#ifdef COREAI_ISA_HAVE_AVX512
static int isa_vnni_on(void)
{
    if (isa_vnni_allowed < 0)
        isa_vnni_allowed = !isa_env_off("COREAI_VNNI");
    return isa_vnni_allowed && isa_cpu_vnni();
}
#endif

/* Variant i's table: avx512's with VNNI when that is on. */
static const isa_table *isa_table_of(int32_t i)
{
#ifdef COREAI_ISA_HAVE_AVX512
    if (isa_variants[i].need == ISA_NEED_V4 && isa_vnni_on())
        return &isa_avx512_vnni;
#endif
    return &isa_variants[i].table;
}

static const isa_table *isa_active_table;
/* How the running variant was chosen, for coreai_runtime_config(). */
static char isa_choice[96];

static int32_t isa_find(const char *name)
{
    for (int32_t i = 0; i < ISA_N; ++i)
        if (strcmp(isa_variants[i].table.name, name) == 0)
            return i;
    return -1;
}

static int32_t isa_best(void)
{
    int32_t best = 0;
    for (int32_t i = 0; i < ISA_N; ++i)
        if (isa_runs(i))
            best = i;
    return best;
}

static void isa_install(int32_t i) { __atomic_store_n(&isa_active_table, isa_table_of(i), __ATOMIC_RELEASE); }

/* The first call: COREAI_ISA, else the best. Two threads racing here store
 * the same table. */
static const isa_table *isa_first(void)
{
    const char *want = getenv("COREAI_ISA");
    int32_t i = isa_best();
    isa_choice[0] = '\0';
    isa_append(isa_choice, sizeof isa_choice, "auto");
    if (want != NULL && *want != '\0' && strcmp(want, "best") != 0) {
        const int32_t w = isa_find(want);
        isa_choice[0] = '\0';
        if (w >= 0 && isa_runs(w)) {
            i = w;
            isa_append(isa_choice, sizeof isa_choice, "COREAI_ISA");
        } else {
            char name[25] = "";
            isa_append(name, sizeof name, want);
            isa_append(isa_choice, sizeof isa_choice, "auto; COREAI_ISA=");
            isa_append(isa_choice, sizeof isa_choice, name);
            isa_append(isa_choice, sizeof isa_choice,
                       w < 0 ? " ignored: no such variant" : " ignored: not supported by this CPU");
        }
    }
    isa_install(i);
    return isa_table_of(i);
}

static inline const isa_table *isa_active(void)
{
    const isa_table *t = __atomic_load_n(&isa_active_table, __ATOMIC_ACQUIRE);
    return t != NULL ? t : isa_first();
}

/* The public names: a call through the active table. */
#define ISA_WRAP(s, ret, name, params, args)                                                       \
    ret name params { return isa_active()->name args; }
#define ISA_WRAP_V(s, name, params, args)                                                          \
    void name params { isa_active()->name args; }
COREAI_ISA_FUNCS(ISA_WRAP, ISA_WRAP_V, _, _)

int32_t coreai_runtime_isa_count(void) { return ISA_N; }

const char *coreai_runtime_isa_name(int32_t i)
{
    return i >= 0 && i < ISA_N ? isa_variants[i].table.name : NULL;
}

int coreai_runtime_isa_supported(int32_t i) { return i >= 0 && i < ISA_N && isa_runs(i); }

const char *coreai_runtime_isa(void) { return isa_active()->name; }

coreai_status coreai_runtime_set_isa(const char *name)
{
    if (name == NULL || strcmp(name, "best") == 0) {
        isa_install(isa_best());
        isa_choice[0] = '\0';
        isa_append(isa_choice, sizeof isa_choice, "auto");
        return COREAI_STATUS_OK;
    }
    const int32_t i = isa_find(name);
    if (i < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (!isa_runs(i))
        return COREAI_STATUS_UNSUPPORTED;
    isa_install(i);
    isa_choice[0] = '\0';
    isa_append(isa_choice, sizeof isa_choice, "set");
    return COREAI_STATUS_OK;
}

int coreai_runtime_vnni(void)
{
#ifdef COREAI_ISA_HAVE_AVX512
    return isa_active() == &isa_avx512_vnni;
#else
    return 0;
#endif
}

coreai_status coreai_runtime_set_vnni(int on)
{
    if (on && !isa_cpu_vnni())
        return COREAI_STATUS_UNSUPPORTED;
    const int32_t i = isa_find(isa_active()->name); /* after the first call's choice */
    isa_vnni_allowed = on != 0;
    isa_install(i);
    return COREAI_STATUS_OK;
}

/* For coreai_runtime_config(): VNNI's use when the CPU has it. */
static const char *isa_vnni_text(void)
{
    if (!isa_cpu_vnni() || strcmp(isa_active()->name, "avx512") != 0)
        return "";
    return coreai_runtime_vnni() ? "; q8a vnni" : "; q8a vnni off";
}

#else /* one variant, fixed when compiled */

/* The name of the paths the compiler's ISA macros select (gemm_kernel.c,
 * vmath.h). */
#if defined(COREAI_GEMM_FORCE_SCALAR) || !(defined(__GNUC__) || defined(__clang__))
#define ISA_FIXED "scalar"
#elif defined(__AVX512F__)
#define ISA_FIXED "avx512"
#elif defined(__AVX2__) && defined(__FMA__)
#define ISA_FIXED "avx2"
#elif defined(__AVX__)
#define ISA_FIXED "avx"
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define ISA_FIXED "neon"
#elif defined(__SSE2__)
#define ISA_FIXED "baseline"
#elif defined(__ARM_NEON)
#define ISA_FIXED "neon32"
#elif defined(__wasm_simd128__)
#define ISA_FIXED "wasm-simd128"
#else
#define ISA_FIXED "scalar"
#endif

static const char isa_choice[] = "fixed at compile time";

#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && !defined(COREAI_GEMM_FORCE_SCALAR) && \
    (defined(__GNUC__) || defined(__clang__))
#define ISA_FIXED_VNNI 1 /* gemm_q.c's coreai_linear_q8a_f32 runs its VNNI path */
#else
#define ISA_FIXED_VNNI 0
#endif
#ifdef COREAI_Q8A_SDOT
/*
 * AArch64: coreai_linear_q8a_f32 on smmla (FEAT_I8MM, rows >= 2, else
 * sdot), on sdot (FEAT_DotProd) or plain NEON,
 * one pointer filled at the first call, as the x86 tables are; the "vnni"
 * switch (COREAI_VNNI=0, coreai_runtime_set_vnni) stands for the int8
 * dot-product instruction on both ISAs. Whether the CPU has sdot: certain
 * when the build targets it, else Linux's HWCAP_ASIMDDP (the kernel reads
 * the ID registers, which user code cannot); gemm_internal.h defines
 * COREAI_Q8A_SDOT only where one of the two holds, so nothing is probed on
 * bare metal.
 */
#if defined(__linux__) && (!defined(__ARM_FEATURE_DOTPROD) || !defined(__ARM_FEATURE_MATMUL_INT8))
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20) /* Linux's arch/arm64 uapi hwcap.h */
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1UL << 13)
#endif
#endif

typedef coreai_status (*isa_q8a_fn)(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                    const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                    void *scratch);

static int isa_cpu_sdot(void)
{
#if defined(__ARM_FEATURE_DOTPROD)
    return 1;
#else
    return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
}

/* smmla (FEAT_I8MM, Armv8.6; optional from 8.2): the build targets it, or
 * Linux's HWCAP2_I8MM; never without sdot (no CPU has one alone) */
static int isa_cpu_i8mm(void)
{
#if defined(__ARM_FEATURE_MATMUL_INT8)
    return isa_cpu_sdot();
#elif defined(__linux__)
    return isa_cpu_sdot() && (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
#else
    return 0;
#endif
}

/* As isa_vnni_allowed: COREAI_VNNI=0 at the first call, or set_vnni;
 * smmla besides unless COREAI_I8MM=0 then. */
static int isa_sdot_allowed = -1, isa_i8mm_allowed = -1;
static isa_q8a_fn isa_q8a;

static isa_q8a_fn isa_q8a_pick(void)
{
    if (isa_sdot_allowed < 0)
        isa_sdot_allowed = !isa_env_off("COREAI_VNNI");
    if (isa_i8mm_allowed < 0)
        isa_i8mm_allowed = !isa_env_off("COREAI_I8MM");
    if (!isa_sdot_allowed || !isa_cpu_sdot())
        return coreai_linear_q8a_f32_neon;
    return isa_i8mm_allowed && isa_cpu_i8mm() ? coreai_linear_q8a_f32_i8mm : coreai_linear_q8a_f32_sdot;
}

/* Two threads racing at the first call store the same pointer. */
static isa_q8a_fn isa_q8a_active(void)
{
    isa_q8a_fn f = __atomic_load_n(&isa_q8a, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = isa_q8a_pick();
        __atomic_store_n(&isa_q8a, f, __ATOMIC_RELEASE);
    }
    return f;
}

coreai_status coreai_linear_q8a_f32(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                    const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                    void *scratch)
{
    return isa_q8a_active()(params, x, weight, scale, zero_point, bias, out, scratch);
}

int coreai_runtime_vnni(void) { return isa_q8a_active() != coreai_linear_q8a_f32_neon; }

coreai_status coreai_runtime_set_vnni(int on)
{
    if (on && !isa_cpu_sdot())
        return COREAI_STATUS_UNSUPPORTED;
    isa_sdot_allowed = on != 0;
    __atomic_store_n(&isa_q8a, isa_q8a_pick(), __ATOMIC_RELEASE);
    return COREAI_STATUS_OK;
}

static const char *isa_vnni_text(void)
{
    if (!isa_cpu_sdot())
        return "; q8a neon: no sdot";
    const isa_q8a_fn f = isa_q8a_active();
    if (f == coreai_linear_q8a_f32_i8mm)
        return "; q8a i8mm";
    if (f == coreai_linear_q8a_f32_sdot)
        return !isa_cpu_i8mm() ? "; q8a sdot: no i8mm" : "; q8a sdot: i8mm off";
    return "; q8a neon: sdot off";
}
#else
int coreai_runtime_vnni(void) { return ISA_FIXED_VNNI; }
coreai_status coreai_runtime_set_vnni(int on) { return (on != 0) == ISA_FIXED_VNNI ? COREAI_STATUS_OK : COREAI_STATUS_UNSUPPORTED; }
static const char *isa_vnni_text(void) { return ISA_FIXED_VNNI ? "; q8a vnni" : ""; }
#endif

int32_t coreai_runtime_isa_count(void) { return 1; }
const char *coreai_runtime_isa_name(int32_t i) { return i == 0 ? ISA_FIXED : NULL; }
/* compiled for this target: it runs (or the program would not have started) */
int coreai_runtime_isa_supported(int32_t i) { return i == 0; }
const char *coreai_runtime_isa(void) { return ISA_FIXED; }

coreai_status coreai_runtime_set_isa(const char *name)
{
    if (name == NULL || strcmp(name, "best") == 0 || strcmp(name, ISA_FIXED) == 0)
        return COREAI_STATUS_OK;
    return COREAI_STATUS_INVALID_ARGUMENT;
}
#endif

const char *coreai_runtime_config(void)
{
    const char *isa = coreai_runtime_isa(); /* selects first: isa_choice is set */
    char *t = isa_config_text;
    const size_t cap = sizeof isa_config_text;
    t[0] = '\0';
    isa_append(t, cap, "isa ");
    isa_append(t, cap, isa);
    isa_append(t, cap, " (");
    isa_append(t, cap, isa_choice);
    isa_append(t, cap, "; built:");
    for (int32_t i = 0; i < coreai_runtime_isa_count(); ++i) {
        isa_append(t, cap, " ");
        isa_append(t, cap, coreai_runtime_isa_name(i));
        if (!coreai_runtime_isa_supported(i))
            isa_append(t, cap, "(no cpu)");
    }
    isa_append(t, cap, isa_vnni_text());
    isa_append(t, cap, ") gemm ");
    isa_append(t, cap, coreai_gemm_f32_config());
    return t;
}
