#ifndef COREAI_KERNELS_ATTENTION_H
#define COREAI_KERNELS_ATTENTION_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * scaled_dot_product_attention composite (docs/composite-ops.md).
 *
 *   query [B, Hq, Tq, D], key [Bk, Hk, Tkv, D], value [Bv, Hv, Tkv, Dv],
 *   output [B, Hq, Tq, Dv], all dense; Bk and Bv are B or 1 (broadcast).
 *
 * Query head h reads key head h / (Hq / Hk) and value head h / (Hq / Hv)
 * (grouped / multi-query attention by index mapping: nothing is repeated).
 *
 * The logit of query i and key j is scale * <q_i, k_j>, minus 10000 when the
 * key is masked out, exactly as the reference adds -1e4 rather than -inf:
 *   - with a mask operand (mask_kind != NONE), is_causal and window_size are
 *     ignored; a key is visible where the mask (broadcast through
 *     mask_strides over [B, Hq, Tq, Tkv]) is true, or, for a float mask,
 *     where it is nonzero (the reference takes logical_not of the mask);
 *   - otherwise, with p = j - (Tkv - Tq) the key's position counted from
 *     the query's end (lower-right alignment): is_causal keeps p <= i;
 *     window_size w > 0 keeps i - w < p < i + w, or i - w < p <= i when
 *     is_causal too.
 * sinks (NULL or [Hq]) add one extra logit per head to the softmax, with no
 * value row: out = sum_j softmax([logits, sink])_j v_j.
 *
 * The kernel is a tiled online softmax. Query rows go in blocks of one row
 * per vector lane (VM_VL of runtime-stubs/src/vmath.h: 16 with AVX-512, 8
 * with AVX, 4 with SSE2 / NEON, 1 in plain C), the query block transposed
 * once with the scale folded in; keys are visited in tiles of
 * COREAI_SDPA_KEY_TILE, and per tile the logits (a vector FMA per key and
 * head_dim element, K read in place; 16 keys per step with AVX-512 for a
 * head_dim of 32, 64, 80, 96 or 128), the masking, the row maxima, the
 * weights (vector exp) and P.V (V read in place) are all vector operations
 * over the block's rows; the running sums are rescaled only when a row's
 * maximum grows. Tiles outside every row's causal / window range are never
 * touched, and inside a tile only the keys some row sees; masked keys
 * contribute nothing, and no Tq x Tkv matrix is formed.
 * A row whose keys are all masked gets the reference's value: every key
 * carries the same -1e4, i.e. a plain softmax over all keys (and the sink,
 * if any, 1e4 above them).
 * Dropping a masked key in a row that has a visible one is exact as long as
 * the logits of that row span less than ~9900; weights below e^-87.3
 * (relative to the row's largest, which is 1; vm_exp's range) are flushed
 * to 0.
 *
 * No allocation and no workspace: a query block's state is on the stack, in
 * buffers of 4 * VM_VL * (COREAI_SDPA_QK_CHUNK + COREAI_SDPA_V_CHUNK + 2 *
 * COREAI_SDPA_KEY_TILE + VM_VL + 10) bytes: 33.6 KiB with AVX-512,
 * 16.6 KiB with AVX, 8.2 KiB with SSE2 / NEON. A head_dim above
 * COREAI_SDPA_QK_CHUNK is processed in chunks (the query chunk re-transposed
 * per key tile); a v_head_dim above COREAI_SDPA_V_CHUNK in passes of that
 * many output columns, each recomputing the logits.
 */
#define COREAI_SDPA_KEY_TILE 64
#define COREAI_SDPA_QK_CHUNK 128
#define COREAI_SDPA_V_CHUNK 256

typedef enum coreai_sdpa_mask_kind {
    COREAI_SDPA_MASK_NONE = 0,
    COREAI_SDPA_MASK_BOOL = 1,  /* uint8_t, nonzero = attend */
    COREAI_SDPA_MASK_FLOAT = 2  /* float, nonzero = attend (not an additive bias) */
} coreai_sdpa_mask_kind;

typedef struct coreai_sdpa_params {
    int64_t batch;       /* B */
    int64_t q_heads;     /* Hq */
    int64_t k_heads;     /* Hk, divides Hq */
    int64_t v_heads;     /* Hv, divides Hq */
    int64_t q_len;       /* Tq */
    int64_t kv_len;      /* Tkv */
    int64_t head_dim;    /* D of query and key */
    int64_t v_head_dim;  /* Dv */
    int64_t k_batch;     /* Bk: B or 1 */
    int64_t v_batch;     /* Bv: B or 1 */
    float scale;
    int32_t is_causal;
    int64_t window_size; /* <= 0: no window */
    int32_t mask_kind;   /* coreai_sdpa_mask_kind */
    int64_t mask_strides[4]; /* element strides over [B, Hq, Tq, Tkv], 0 = broadcast */
} coreai_sdpa_params;

/* mask may be NULL when mask_kind is NONE; sinks may be NULL. */
coreai_status coreai_sdpa_f32(const coreai_sdpa_params *params, const float *query,
                              const float *key, const float *value, const void *mask,
                              const float *sinks, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_ATTENTION_H */
