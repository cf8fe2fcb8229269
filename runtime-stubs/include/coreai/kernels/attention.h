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
 * The kernel is a tiled online softmax: keys are visited in tiles of
 * COREAI_SDPA_KEY_TILE for a block of query rows, tiles outside every row's
 * causal / window range are never touched, masked keys contribute nothing,
 * and no Tq x Tkv matrix is formed. The output rows serve as the running
 * accumulators, so no workspace is needed. A row whose keys are all masked
 * gets the reference's value: every key carries the same -1e4, i.e. a plain
 * softmax over all keys (and the sink, if any, 1e4 above them).
 * Dropping a masked key in a row that has a visible one is exact as long as
 * the logits of that row span less than ~9900.
 */
#define COREAI_SDPA_KEY_TILE 64

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
