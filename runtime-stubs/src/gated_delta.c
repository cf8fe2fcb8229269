/* coreai_gated_delta_update_f32: the gated delta rule, one timestep at a time. */
#include "coreai/kernels/gated_delta.h"

#include <math.h>
#include <string.h>

/* State columns whose sums are kept on the stack together. */
#define GDU_COLS 64

static double inv_l2(const float *x, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i)
        s += (double)x[i] * x[i];
    return 1.0 / sqrt(s + 1e-6);
}

static int64_t prod(const int64_t *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; ++i) {
        if (v[i] < 0 || (v[i] != 0 && p > INT64_MAX / v[i]))
            return -1;
        p *= v[i];
    }
    return p;
}

/* One timestep of one head on state s (Dk x Dv). */
static void step(const coreai_gated_delta_params *p, float *restrict s, const float *restrict q,
                 const float *restrict k, const float *restrict v, double decay, double b,
                 float *restrict y)
{
    const int64_t dk = p->k_dim, dv = p->v_dim;
    const double kn = p->use_qk_l2_norm ? inv_l2(k, dk) : 1.0;
    const double qn = (p->use_qk_l2_norm ? inv_l2(q, dk) : 1.0) * (double)p->q_scale;
    double kq = 0.0;
    for (int64_t i = 0; i < dk; ++i)
        kq += ((double)k[i] * kn) * ((double)q[i] * qn);
    for (int64_t j0 = 0; j0 < dv; j0 += GDU_COLS) {
        const int64_t cols = dv - j0 < GDU_COLS ? dv - j0 : GDU_COLS;
        double kv[GDU_COLS], sq[GDU_COLS];
        for (int64_t c = 0; c < cols; ++c) {
            kv[c] = 0.0;
            sq[c] = 0.0;
        }
        for (int64_t i = 0; i < dk; ++i) {
            const double ki = (double)k[i] * kn, qi = (double)q[i] * qn;
            const float *row = s + i * dv + j0;
            for (int64_t c = 0; c < cols; ++c) {
                kv[c] += row[c] * ki;
                sq[c] += row[c] * qi;
            }
        }
        /* decayed S^T k = decay * kv; y = (S')^T q = decay * sq + delta * (k . q) */
        for (int64_t c = 0; c < cols; ++c) {
            const double delta = ((double)v[j0 + c] - decay * kv[c]) * b;
            y[j0 + c] = (float)(decay * sq[c] + delta * kq);
            kv[c] = delta;
        }
        for (int64_t i = 0; i < dk; ++i) {
            const double ki = (double)k[i] * kn;
            float *row = s + i * dv + j0;
            for (int64_t c = 0; c < cols; ++c)
                row[c] = (float)(decay * row[c] + ki * kv[c]);
        }
    }
}

coreai_status coreai_gated_delta_update_f32(const coreai_gated_delta_params *params,
                                            const float *query, const float *key,
                                            const float *value, const float *g,
                                            const float *beta, const float *initial_state,
                                            float *output, float *final_state)
{
    const coreai_gated_delta_params *p = params;
    if (p == NULL || query == NULL || key == NULL || value == NULL || g == NULL || beta == NULL ||
        initial_state == NULL || output == NULL || final_state == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->kq_heads < 1 || p->v_heads < 1 || p->v_heads % p->kq_heads != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t qn[4] = {p->batch, p->kq_heads, p->seq_len, p->k_dim};
    const int64_t vn[4] = {p->batch, p->v_heads, p->seq_len, p->v_dim};
    const int64_t sn[4] = {p->batch, p->v_heads, p->k_dim, p->v_dim};
    const int64_t states = prod(sn, 4);
    if (prod(qn, 4) < 0 || prod(vn, 4) < 0 || states < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (final_state != initial_state && states > 0)
        memmove(final_state, initial_state, (size_t)states * sizeof(float));
    const int64_t t_len = p->seq_len, hv = p->v_heads, group = p->v_heads / p->kq_heads;
    const int64_t dk = p->k_dim, dv = p->v_dim;
    for (int64_t b = 0; b < p->batch; ++b) {
        for (int64_t h = 0; h < hv; ++h) {
            float *s = final_state + (b * hv + h) * dk * dv;
            const int64_t hk = h / group;
            for (int64_t t = 0; t < t_len; ++t) {
                const float *q = query + ((b * p->kq_heads + hk) * t_len + t) * dk;
                const float *k = key + ((b * p->kq_heads + hk) * t_len + t) * dk;
                const float *v = value + ((b * hv + h) * t_len + t) * dv;
                const int64_t gi = (b * hv + h) * t_len + t;
                float *y = output + ((b * t_len + t) * hv + h) * dv;
                step(p, s, q, k, v, exp((double)g[gi]), (double)beta[gi], y);
            }
        }
    }
    return COREAI_STATUS_OK;
}
