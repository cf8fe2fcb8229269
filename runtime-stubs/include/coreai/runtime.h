/*
 * coreai/runtime.h - types shared by generated models and the portable runtime.
 *
 * Generated code includes this header and checks COREAI_RUNTIME_ABI so that a
 * model generated for one runtime ABI never links silently against another.
 * Nothing in here allocates: the caller owns every buffer, including the
 * workspace whose size each generated model publishes as NAME_WORKSPACE_SIZE.
 */
#ifndef COREAI_RUNTIME_H
#define COREAI_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below or a kernel signature changes. */
#define COREAI_RUNTIME_ABI 3

/* Highest tensor rank the kernels' parameter structs can describe. */
#define COREAI_MAX_RANK 8

/* Every planned buffer (and the workspace base) is aligned to this. */
#define COREAI_ALIGNMENT 64

#if defined(__GNUC__) || defined(__clang__)
#define COREAI_ALIGNED(n) __attribute__((aligned(n)))
#define COREAI_CHECKRETURN __attribute__((warn_unused_result))
#else
#define COREAI_ALIGNED(n) _Alignas(n)
#define COREAI_CHECKRETURN
#endif

typedef enum coreai_status {
    COREAI_STATUS_OK = 0,
    COREAI_STATUS_INVALID_ARGUMENT = 1, /* NULL pointer, misaligned workspace, bad params */
    COREAI_STATUS_UNSUPPORTED = 2,      /* a parameter combination the kernel cannot run */
    COREAI_STATUS_BAD_WEIGHTS = 3       /* external weights of another size or SHA-256 */
} coreai_status;

typedef enum coreai_dtype {
    COREAI_DTYPE_F32 = 0,
    COREAI_DTYPE_F16 = 1,
    COREAI_DTYPE_BF16 = 2,
    COREAI_DTYPE_I64 = 3,
    COREAI_DTYPE_I32 = 4,
    COREAI_DTYPE_BOOL = 5,
    COREAI_DTYPE_I8 = 6, /* quantized activations (coreai/kernels/quant.h) */
    COREAI_DTYPE_U8 = 7
} coreai_dtype;

/* Size in bytes of one element; 0 for an unknown value. */
size_t coreai_dtype_size(coreai_dtype dtype);
/* "f32", "f16", ...; "?" for an unknown value. */
const char *coreai_dtype_name(coreai_dtype dtype);
/* Human-readable text for a status; never NULL. */
const char *coreai_status_string(coreai_status status);

/* ---- program descriptor: what a generated model publishes about itself ---- */

typedef struct coreai_tensor_desc {
    const char *name;     /* the model's IO/state name, as written in the model file */
    coreai_dtype dtype;
    int32_t rank;
    const int64_t *shape; /* rank entries; NULL when rank == 0 */
} coreai_tensor_desc;

/*
 * Type-erased call of one entrypoint, for generic drivers such as the runner.
 * inputs/states/outputs are arrays of pointers in descriptor order; states are
 * read and then overwritten with their update.
 */
typedef coreai_status (*coreai_entrypoint_fn)(void *workspace,
                                              const void *const *inputs,
                                              void *const *states,
                                              void *const *outputs);

/* The same for a model generated with --weights-format external: weights is
 * the blob the application provides (see coreai_weights_desc). */
typedef coreai_status (*coreai_entrypoint_weights_fn)(void *workspace,
                                                      const void *weights,
                                                      const void *const *inputs,
                                                      void *const *states,
                                                      void *const *outputs);

typedef struct coreai_entrypoint_desc {
    const char *name;
    int32_t n_inputs;
    const coreai_tensor_desc *inputs;
    int32_t n_states;
    const coreai_tensor_desc *states;
    int32_t n_outputs;
    const coreai_tensor_desc *outputs;
    coreai_entrypoint_fn invoke;                 /* linked weights; NULL with external ones */
    coreai_entrypoint_weights_fn invoke_weights; /* external weights; NULL with linked ones */
} coreai_entrypoint_desc;

/*
 * External weights (coreai-gen --weights-format external): the blob
 * NAME_weights.bin is not linked; the application maps or loads it and
 * passes its address to every entrypoint. The blob is described by its size,
 * the alignment its address needs and its SHA-256.
 */
typedef struct coreai_weights_desc {
    uint64_t size;
    uint64_t alignment;
    uint8_t sha256[32];
} coreai_weights_desc;

/* COREAI_STATUS_OK when `weights` (`size` bytes) are the blob desc
 * describes; COREAI_STATUS_BAD_WEIGHTS when the size or the SHA-256 differ;
 * COREAI_STATUS_INVALID_ARGUMENT for a NULL pointer or an address not
 * aligned to desc->alignment. Reads every byte: check once, before the first
 * call, not on every call. */
coreai_status coreai_weights_check(const coreai_weights_desc *desc, const void *weights, size_t size);
/* The SHA-256 (FIPS 180-4) of size bytes at data. */
void coreai_sha256(const void *data, size_t size, uint8_t digest[32]);

typedef struct coreai_program {
    const char *name;              /* the C prefix the model was generated with */
    const char *generator_version; /* coreai-gen version that wrote the code */
    size_t workspace_size;         /* bytes; the same as NAME_WORKSPACE_SIZE */
    size_t workspace_alignment;    /* required alignment of the workspace base */
    size_t weights_size;           /* bytes of constant data in .rodata */
    int32_t n_entrypoints;
    const coreai_entrypoint_desc *entrypoints;
    int32_t n_composite_ops;       /* distinct composite op names in the program */
    const char *const *composite_ops;
    /* Writes the initial value of the state named name (as the model file
     * records it) into data, which holds that state's bytes; INVALID_ARGUMENT
     * for an unknown name. NULL when the model does not record an initial
     * value for every state (then the caller must know them). */
    coreai_status (*init_state)(const char *name, void *data);
    /* NULL when the weights are linked into the program; else the blob every
     * entrypoint takes (invoke_weights) */
    const coreai_weights_desc *external_weights;
} coreai_program;

/* ---- symbolic shapes (model format 2) ----
 * A model with symbols publishes, besides NAME_program(), a
 * NAME_program_symbols() descriptor (the header then defines the macro
 * NAME_program_symbols). Each entrypoint that has symbols takes their
 * values as int64_t parameters after the workspace, in the order listed
 * here, each checked against [min, max] (COREAI_STATUS_INVALID_ARGUMENT
 * outside, nothing written). An extent of an input or output is then
 * constant + sum of coefs[i] * value of symbol i; the plain descriptor's
 * shape holds the largest value, which buffers must be sized for, and its
 * invoke runs every symbol at its max. Tensors are dense at their actual
 * extents. States always have fixed shapes. */
typedef struct coreai_symbol_desc {
    const char *name;
    int64_t min, max; /* inclusive */
} coreai_symbol_desc;

typedef struct coreai_dim_desc {
    int64_t constant;
    const int64_t *coefs; /* n_symbols entries; NULL: the fixed extent `constant` */
} coreai_dim_desc;

/* As coreai_entrypoint_fn, with the symbols' values (n_symbols of them). */
typedef coreai_status (*coreai_entrypoint_symbols_fn)(void *workspace,
                                                      const int64_t *symbols,
                                                      const void *const *inputs,
                                                      void *const *states,
                                                      void *const *outputs);
/* As coreai_entrypoint_weights_fn, with the symbols' values. */
typedef coreai_status (*coreai_entrypoint_symbols_weights_fn)(void *workspace,
                                                              const void *weights,
                                                              const int64_t *symbols,
                                                              const void *const *inputs,
                                                              void *const *states,
                                                              void *const *outputs);

typedef struct coreai_entrypoint_symbols {
    const char *name;                      /* the entrypoint's */
    int32_t n_symbols;                     /* 0: every shape fixed (the rest NULL) */
    const coreai_symbol_desc *symbols;
    const coreai_dim_desc *const *inputs;  /* per input: rank extents */
    const coreai_dim_desc *const *outputs; /* per output: rank extents */
    coreai_entrypoint_symbols_fn invoke;  /* linked weights; NULL with external ones */
    /* external weights (added last: older descriptors end before it); NULL
     * with linked ones, as coreai_entrypoint_desc's invoke_weights */
    coreai_entrypoint_symbols_weights_fn invoke_weights;
} coreai_entrypoint_symbols;

typedef struct coreai_program_symbols {
    int32_t n_entrypoints; /* the program's, in the same order */
    const coreai_entrypoint_symbols *entrypoints;
} coreai_program_symbols;

/* NULL when the program has no entrypoint of that name. */
const coreai_entrypoint_desc *coreai_program_find_entrypoint(const coreai_program *program,
                                                             const char *name);
/* Number of elements of a tensor (1 for rank 0); -1 for a NULL or malformed
 * descriptor (rank outside 0..COREAI_MAX_RANK, negative extent, overflow). */
int64_t coreai_tensor_desc_numel(const coreai_tensor_desc *desc);
/* An extent at the symbols' values (n of them); -1 on overflow or a
 * negative result, or for a NULL d (values may be NULL when d is fixed). */
int64_t coreai_dim_desc_eval(const coreai_dim_desc *d, int32_t n, const int64_t *values);

/* ---- ISA variants ----
 * A portable x86-64 build (GCC / Clang, no COREAI_NATIVE) compiles the hot
 * kernels for several ISAs, "baseline" (x86-64, SSE2), "avx2" (x86-64-v3:
 * AVX2, FMA, BMI2, F16C ...) and "avx512" (x86-64-v4), and runs the best one
 * this CPU and OS support (cpuid, XGETBV), chosen once at the first kernel
 * call unless the environment variable COREAI_ISA names another one. Any
 * other build (AArch64: NEON, bare metal, COREAI_NATIVE) has exactly one
 * variant, chosen when it was compiled. Variants differ in rounding (FMA
 * contraction, vector widths) within the kernels' documented tolerances;
 * each is deterministic. Variant i in 0 .. count - 1, lowest first. */
int32_t coreai_runtime_isa_count(void);
/* The name of variant i; NULL outside 0 .. count - 1. */
const char *coreai_runtime_isa_name(int32_t i);
/* Nonzero when this CPU and OS run variant i. */
int coreai_runtime_isa_supported(int32_t i);
/* The name of the variant the kernels run. */
const char *coreai_runtime_isa(void);
/* Runs the variant named (NULL or "best": the best one supported) from the
 * next kernel call on: COREAI_STATUS_INVALID_ARGUMENT for a name this build
 * has not, COREAI_STATUS_UNSUPPORTED when this CPU cannot run it (nothing
 * changes then). Not to be called while a kernel runs. */
coreai_status coreai_runtime_set_isa(const char *name);
/* Whether coreai_linear_q8a_f32 (int8 activations) runs on the CPU's
 * int8 dot-product instruction, an extension its ISA baseline lacks, so
 * chosen at run time ("VNNI" names both for short):
 *  - x86: AVX512_VNNI (vpdpbusd), not part of x86-64-v4: the dispatching
 *    build uses it with the avx512 variant on a CPU that has it; a
 *    single-ISA build when it was compiled for VNNI;
 *  - AArch64: sdot (FEAT_DotProd, optional in Armv8.2): a build that
 *    targets it always (unless forbidden); on Linux when getauxval's
 *    HWCAP_ASIMDDP says the CPU has it; never on bare metal or other
 *    OSes (no probing), which keep the plain NEON path. With it, smmla
 *    (FEAT_I8MM) for two rows or more, likewise where the build targets
 *    it or HWCAP2_I8MM says so, unless COREAI_I8MM is 0 at that choice.
 * Unless the environment variable COREAI_VNNI is 0 when the choice is made
 * (the first kernel call on x86, the first call of coreai_linear_q8a_f32,
 * coreai_runtime_vnni or coreai_runtime_config on AArch64) or
 * coreai_runtime_set_vnni(0) was called. Both paths compute the same
 * exact int32 dot products per run of 32; only the f32 summation order
 * differs (smmla's are sdot's bit for bit). coreai_runtime_config() says
 * which runs ("q8a vnni", "q8a i8mm", "q8a sdot: no i8mm",
 * "q8a sdot: i8mm off", "q8a neon: sdot off", "q8a neon: no sdot"). */
int coreai_runtime_vnni(void);
/* Allows (on != 0) or forbids the int8 dot-product instruction from the
 * next call on: COREAI_STATUS_UNSUPPORTED when this CPU (or a single-ISA
 * x86 build) cannot do as asked (nothing changes then); a test can so run
 * both paths on one machine. Not to be called while a kernel runs. */
coreai_status coreai_runtime_set_vnni(int on);
/* One line about the kernels that run: the variant and how it was chosen,
 * the variants built and supported, the GEMM's register tile and blocks,
 * the threads. Never NULL. */
const char *coreai_runtime_config(void);

/* ---- threads ----
 * The runtime never creates a thread. An application that wants the kernels
 * to use several installs a parallel-for: fn(ctx, task, arg, count) must
 * call task(arg, i) exactly once for every i in 0 .. count - 1, on up to
 * `threads` threads at once (the calling one included), and return when
 * all calls have returned. The GEMM (linear, matmul, conv), attention,
 * norms, RoPE, softmax and element-wise ops then split a large call into
 * tasks of fixed extent (up to four per thread, so that a thread that
 * starts late takes fewer; a parallel-for should hand tasks out as threads
 * ask for them); no element's arithmetic depends on the split, so
 * the results are bitwise the same for any thread count and any order the
 * tasks run in. fn NULL or threads <= 1: everything runs on the caller.
 * Install it before running a model, not while a kernel runs; a task never
 * calls fn again. The runner's coreai_runner_pool (coreai_runner.h) is a
 * pthread implementation. */
typedef void (*coreai_task_fn)(void *arg, int64_t index);
typedef void (*coreai_parallel_for_fn)(void *ctx, coreai_task_fn task, void *arg, int64_t count);
void coreai_set_parallel_for(coreai_parallel_for_fn fn, void *ctx, int32_t threads);
/* The threads of the installed parallel-for (1 without one). */
int32_t coreai_parallel_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_RUNTIME_H */
