#ifndef COREAI_KERNELS_GATED_DELTA_H
#define COREAI_KERNELS_GATED_DELTA_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * gated_delta_update composite (docs/composite-ops.md): the gated delta rule
 * recurrence of Gated DeltaNet layers.
 *
 *   query, key [B, Hk, T, Dk]; value [B, Hv, T, Dv]; g, beta [B, Hv, T];
 *   initial_state [B, Hv, Dk, Dv]; output [B, T, Hv, Dv];
 *   final_state [B, Hv, Dk, Dv]. Hk divides Hv; value head h reads
 *   query / key head h / (Hv / Hk).
 *
 * Per head and timestep, with q, k optionally L2-normalised
 * (x / sqrt(sum x^2 + 1e-6)) and q then multiplied by q_scale:
 *   S     = exp(g_t) * S
 *   delta = (v_t - S^T k) * beta_t
 *   S     = S + k delta^T
 *   y_t   = S^T q
 * The state is kept in final_state (f32 between steps, like the reference);
 * final_state may be the same buffer as initial_state. Columns of the state
 * are processed in blocks whose sums live on the stack in double: no
 * workspace is needed.
 */
typedef struct coreai_gated_delta_params {
    int64_t batch;
    int64_t seq_len;
    int64_t kq_heads; /* Hk */
    int64_t v_heads;  /* Hv */
    int64_t k_dim;    /* Dk */
    int64_t v_dim;    /* Dv */
    int32_t use_qk_l2_norm;
    float q_scale;    /* Dk^-0.5 for the composite */
} coreai_gated_delta_params;

coreai_status coreai_gated_delta_update_f32(const coreai_gated_delta_params *params,
                                            const float *query, const float *key,
                                            const float *value, const float *g,
                                            const float *beta, const float *initial_state,
                                            float *output, float *final_state);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_GATED_DELTA_H */
