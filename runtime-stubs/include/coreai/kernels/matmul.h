#ifndef COREAI_KERNELS_MATMUL_H
#define COREAI_KERNELS_MATMUL_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Batched matrix product out[b] = op(A[b]) x op(B[b]), with op() an optional
 * transpose of the last two axes. A's matrices are m x k (k x m when
 * transpose_a), B's are k x n (n x k when transpose_b), all dense row-major.
 * The batch axes broadcast: batch_shape is the output's batch shape and
 * a/b_batch_strides are element strides between consecutive matrices along
 * each batch axis (0 where that operand is broadcast). out is dense.
 * Here and in every product below, out must not overlap an input: inputs
 * are read while out is written.
 */
typedef struct coreai_matmul_params {
    int32_t batch_rank;
    int64_t batch_shape[COREAI_MAX_RANK];
    int64_t a_batch_strides[COREAI_MAX_RANK];
    int64_t b_batch_strides[COREAI_MAX_RANK];
    int64_t m;
    int64_t n;
    int64_t k;
    int32_t transpose_a;
    int32_t transpose_b;
} coreai_matmul_params;

coreai_status coreai_matmul_f32(const coreai_matmul_params *params, const float *a,
                                const float *b, float *out);

/*
 * Fully connected layer over the last axis: out[r][o] = sum_i x[r][i] * W[o][i]
 * (+ bias[o]). W is out_features x in_features, or in_features x out_features
 * when weight_transposed is set. bias may be NULL.
 */
typedef struct coreai_linear_params {
    int64_t rows;
    int64_t in_features;
    int64_t out_features;
    int32_t weight_transposed;
} coreai_linear_params;

coreai_status coreai_linear_f32(const coreai_linear_params *params, const float *x,
                                const float *weight, const float *bias, float *out);

/*
 * ---- Fast paths: packed operands, scratch, fused epilogues ----------------
 *
 * All f32 products run on one packed, register-blocked GEMM (src/gemm_*.c).
 * Its register tile follows the build's ISA (coreai_gemm_f32_config() names
 * it); the packed weight layout below does not, so generated code and its
 * weights stay portable.
 *
 * Packed B layout (COREAI_PACK_NR == 16): a k x n matrix B is stored as
 * ceil(n / 16) column panels of k rows by 16 floats each, panel after panel:
 *
 *     packed[(j / 16) * (k * 16) + p * 16 + j % 16] = B(p, j)
 *
 * and the columns of the last panel past n are 0. That is
 * coreai_packed_b_count(k, n) == k * ceil(n / 16) * 16 floats. A panel row
 * is one AVX-512 vector, two AVX2 vectors or four SSE / NEON vectors, so
 * every ISA reads it with whole-vector loads and no gathers.
 * coreai-gen writes constant weights in this layout (NAME_weights.c);
 * coreai_pack_b_f32() produces the same bytes at run time.
 */
#define COREAI_PACK_NR 16

/* What is applied to each output element after the bias (exactly the
 * expressions of coreai_unary_f32 for RELU, GELU, GELU_TANH and SILU). */
typedef enum coreai_epilogue {
    COREAI_EPILOGUE_NONE = 0,
    COREAI_EPILOGUE_RELU = 1,
    COREAI_EPILOGUE_GELU = 2,      /* 0.5 x (1 + erf(x / sqrt 2)) */
    COREAI_EPILOGUE_GELU_TANH = 3, /* the tanh approximation */
    COREAI_EPILOGUE_SILU = 4
} coreai_epilogue;

/* Floats of the packed form of a k x n matrix: k * ceil(n / 16) * 16; -1 when
 * k or n is negative or the count overflows. */
int64_t coreai_packed_b_count(int64_t k, int64_t n);

/* The same count, inline: the one definition behind coreai_packed_b_count,
 * the GEMM scratch sizes (coreai_matmul_f32_scratch_size,
 * coreai_linear_ex_f32_scratch_size: this many floats when nothing is empty)
 * and coreai-gen, which plans that scratch without linking the runtime. */
static inline int64_t coreai_packed_b_floats(int64_t k, int64_t n)
{
    if (k < 0 || n < 0 || n > INT64_MAX - (COREAI_PACK_NR - 1))
        return -1;
    const int64_t n_panels = (n + COREAI_PACK_NR - 1) / COREAI_PACK_NR * COREAI_PACK_NR;
    if (n_panels > 0 && k > INT64_MAX / n_panels)
        return -1;
    return k * n_panels;
}

/*
 * Packs the k x n matrix B into the layout above. b is dense row-major k x n,
 * or n x k when transposed (then B is its transpose: a PyTorch [out][in]
 * weight is packed with transposed = 1, k = in, n = out).
 */
coreai_status coreai_pack_b_f32(int64_t k, int64_t n, int32_t transposed, const float *b,
                                float *packed);

/*
 * Matrix product with scratch: the same parameters and result as
 * coreai_matmul_f32; scratch (float-aligned; may be NULL, then the kernel
 * falls back to small stack blocks) receives B packed, block by block (a B
 * shared by every batch: whole, once).
 * coreai_matmul_f32_scratch_size() is exactly
 *     4 * k * ceil(n / 16) * 16 bytes
 * and 0 when m, n, k or the batch is empty, independent of the ISA, so a
 * generator can reserve it ahead of time.
 */
size_t coreai_matmul_f32_scratch_size(const coreai_matmul_params *params);
coreai_status coreai_matmul_ws_f32(const coreai_matmul_params *params, const float *a,
                                   const float *b, float *out, void *scratch);

/*
 * Matrix product with a pre-packed B: packed_b holds one packed k x n matrix
 * per B batch matrix, and b_batch_strides count packed floats (a multiple of
 * coreai_packed_b_count(k, n), 0 on broadcast axes). transpose_b must be 0:
 * the packing has applied it.
 */
coreai_status coreai_matmul_packed_f32(const coreai_matmul_params *params, const float *a,
                                       const float *packed_b, float *out);

/* coreai_linear_f32 with a fused epilogue (coreai_epilogue) and scratch for
 * packing the weight: coreai_linear_ex_f32_scratch_size() is exactly
 * 4 * in_features * ceil(out_features / 16) * 16 bytes, 0 when rows,
 * in_features or out_features is 0. scratch may be NULL (stack blocks). */
typedef struct coreai_linear_ex_params {
    int64_t rows;
    int64_t in_features;
    int64_t out_features;
    int32_t weight_transposed;
    int32_t epilogue;
} coreai_linear_ex_params;

size_t coreai_linear_ex_f32_scratch_size(const coreai_linear_ex_params *params);
coreai_status coreai_linear_ex_f32(const coreai_linear_ex_params *params, const float *x,
                                   const float *weight, const float *bias, float *out,
                                   void *scratch);

/*
 * Fully connected layer with a pre-packed weight: out[r][o] =
 * epilogue(sum_i x[r][i] * W[o][i] + bias[o]), packed_weight being W^T
 * (in_features x out_features) in the packed layout, i.e.
 * coreai_pack_b_f32(in, out, 1, W, packed) for a [out][in] W. bias may be
 * NULL. No allocation, no scratch (activations are packed in a stack panel).
 *
 * Head layouts: with x_head_dim = d > 0 (dividing in_features), x is read
 * as [in_features / d][rows][d], x[r][i] being x[(i / d) * rows * d + r * d
 * + i % d]; with out_head_dim likewise for out. That is the [1, H, T, d]
 * side of an attention's transpose to or from [1, T, H * d], which the
 * generator folds into the product instead of copying (0: plain rows).
 * out must not overlap x.
 */
typedef struct coreai_linear_packed_params {
    int64_t rows;
    int64_t in_features;
    int64_t out_features;
    int32_t epilogue;
    int64_t x_head_dim;
    int64_t out_head_dim;
} coreai_linear_packed_params;

coreai_status coreai_linear_packed_f32(const coreai_linear_packed_params *params,
                                       const float *x, const float *packed_weight,
                                       const float *bias, float *out);

/* The same plus a residual: out = epilogue(x W^T + bias) + addend, each
 * output rounded as the two ops apart would round it. addend (not NULL)
 * is laid out like out (rows x out_features, or out's head layout) and
 * must not overlap out or x. */
coreai_status coreai_linear_packed_add_f32(const coreai_linear_packed_params *params,
                                           const float *x, const float *packed_weight,
                                           const float *bias, const float *addend, float *out);

/*
 * Sibling linears: up to COREAI_LINEAR_MULTI_MAX packed linears of one x
 * (an attention's q, k and v projections, an MLP's gate and up), run as
 * one call. Each output gets exactly the bits coreai_linear_packed_f32 (or
 * _add_f32 when its addend is not NULL) gives it; the difference is that
 * the calls share one parallel region, its tasks splitting the union of
 * the outputs' columns, so a call with several threads waits once for the
 * slowest one instead of once per linear. No allocation, no scratch.
 *
 * linear[0 .. count) are the linears' parameters; rows, in_features and
 * x_head_dim must be the same in all. operands[l] are linear l's packed
 * weight, bias (or NULL), addend (or NULL) and out. No out may overlap x,
 * another out, or any addend.
 */
#define COREAI_LINEAR_MULTI_MAX 8

typedef struct coreai_linear_packed_multi_params {
    int32_t count;
    coreai_linear_packed_params linear[COREAI_LINEAR_MULTI_MAX];
} coreai_linear_packed_multi_params;

typedef struct coreai_linear_packed_operands {
    const float *packed_weight;
    const float *bias;
    const float *addend;
    float *out;
} coreai_linear_packed_operands;

coreai_status coreai_linear_packed_multi_f32(const coreai_linear_packed_multi_params *params, const float *x,
                                             const coreai_linear_packed_operands *operands);

/* The GEMM this build runs, e.g. "avx512 mr14 nr2x16 kc256 nc512"
 * (MR rows by NR = vectors x lanes columns) (static text). */
const char *coreai_gemm_f32_config(void);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_MATMUL_H */
