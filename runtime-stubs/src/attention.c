/* coreai_sdpa_f32: tiled online-softmax attention (MHA / GQA / MQA). */
#include "coreai/kernels/attention.h"

#include <math.h>
#include <string.h>

/* Query rows that share one pass over a key tile. */
#define SDPA_QUERY_ROWS 4
#define SDPA_KEYS COREAI_SDPA_KEY_TILE
/* What the reference adds to the logit of a masked key. */
#define SDPA_MASK_PENALTY 10000.0f

static float dot_f32(const float *restrict a, const float *restrict b, int64_t n)
{
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; ++i)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

static int mask_visible(const void *mask, int32_t kind, int64_t off)
{
    if (kind == COREAI_SDPA_MASK_BOOL)
        return ((const uint8_t *)mask)[off] != 0;
    return ((const float *)mask)[off] != 0.0f; /* NaN counts as nonzero, like logical_not */
}

/* Product of n extents, or -1 on overflow. */
static int64_t mul_checked(const int64_t *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; ++i) {
        if (v[i] != 0 && p > INT64_MAX / v[i])
            return -1;
        p *= v[i];
    }
    return p;
}

static coreai_status check(const coreai_sdpa_params *p, const float *q, const float *k,
                           const float *v, const void *mask, float *out)
{
    if (p == NULL || q == NULL || k == NULL || v == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->batch < 0 || p->q_heads < 1 || p->k_heads < 1 || p->v_heads < 1 || p->q_len < 0 ||
        p->kv_len < 0 || p->head_dim < 0 || p->v_head_dim < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->q_heads % p->k_heads != 0 || p->q_heads % p->v_heads != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if ((p->k_batch != 1 && p->k_batch != p->batch) || (p->v_batch != 1 && p->v_batch != p->batch))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->mask_kind != COREAI_SDPA_MASK_NONE && p->mask_kind != COREAI_SDPA_MASK_BOOL &&
        p->mask_kind != COREAI_SDPA_MASK_FLOAT)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->mask_kind != COREAI_SDPA_MASK_NONE && mask == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t qn[4] = {p->batch, p->q_heads, p->q_len, p->head_dim};
    const int64_t kn[4] = {p->k_batch, p->k_heads, p->kv_len, p->head_dim};
    const int64_t vn[4] = {p->v_batch, p->v_heads, p->kv_len, p->v_head_dim};
    const int64_t on[4] = {p->batch, p->q_heads, p->q_len, p->v_head_dim};
    if (mul_checked(qn, 4) < 0 || mul_checked(kn, 4) < 0 || mul_checked(vn, 4) < 0 ||
        mul_checked(on, 4) < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    return COREAI_STATUS_OK;
}

/* Keys [lo, hi) that the causal / window rule lets query row i see. */
static void visible_range(const coreai_sdpa_params *p, int64_t i, int64_t *lo, int64_t *hi)
{
    const int64_t shift = p->kv_len - p->q_len; /* key j sits at position j - shift */
    const int64_t w = p->window_size;
    int64_t a = 0, b = p->kv_len;
    if (p->is_causal)
        b = i + shift + 1;
    if (w > 0) {
        a = i + shift - w + 1;
        if (!p->is_causal)
            b = i + shift + w;
    }
    if (a < 0)
        a = 0;
    if (b > p->kv_len)
        b = p->kv_len;
    *lo = a;
    *hi = b;
}

typedef struct row_state {
    int64_t lo, hi;   /* keys to visit */
    int use_mask;     /* test each key against the mask operand */
    float m;          /* running maximum logit */
    double l;         /* running sum of exp(logit - m) */
} row_state;

/* One head: query rows [0, Tq) against keys [0, Tkv). */
static void sdpa_head(const coreai_sdpa_params *p, const float *restrict qh, const float *restrict kh,
                      const float *restrict vh, const void *mask, int64_t mbase, const float *sink,
                      float *restrict oh)
{
    const int64_t tq = p->q_len, tk = p->kv_len, d = p->head_dim, dv = p->v_head_dim;
    const int has_mask = p->mask_kind != COREAI_SDPA_MASK_NONE;
    const int64_t *ms = p->mask_strides;
    for (int64_t i0 = 0; i0 < tq; i0 += SDPA_QUERY_ROWS) {
        const int rows = (int)(tq - i0 < SDPA_QUERY_ROWS ? tq - i0 : SDPA_QUERY_ROWS);
        row_state st[SDPA_QUERY_ROWS];
        int64_t klo = tk, khi = 0;
        for (int r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            row_state *s = &st[r];
            int any;
            if (has_mask) {
                s->lo = 0;
                s->hi = tk;
                any = 0;
                for (int64_t j = 0; j < tk && !any; ++j)
                    any = mask_visible(mask, p->mask_kind, mbase + i * ms[2] + j * ms[3]);
            } else {
                visible_range(p, i, &s->lo, &s->hi);
                any = s->lo < s->hi;
            }
            /* A row with no visible key: every key carries the same penalty,
             * which cancels in the softmax except against the sink. */
            s->use_mask = has_mask && any;
            if (!any) {
                s->lo = 0;
                s->hi = tk;
            }
            if (sink != NULL) {
                s->m = any ? *sink : *sink + SDPA_MASK_PENALTY;
                s->l = 1.0;
            } else {
                s->m = -INFINITY;
                s->l = 0.0;
            }
            memset(oh + i * dv, 0, (size_t)dv * sizeof(float));
            if (s->lo < klo)
                klo = s->lo;
            if (s->hi > khi)
                khi = s->hi;
        }
        for (int64_t k0 = klo; k0 < khi; k0 += SDPA_KEYS) {
            const int64_t kend = k0 + SDPA_KEYS < khi ? k0 + SDPA_KEYS : khi;
            for (int r = 0; r < rows; ++r) {
                row_state *s = &st[r];
                const int64_t a = k0 > s->lo ? k0 : s->lo, e = kend < s->hi ? kend : s->hi;
                if (a >= e)
                    continue; /* the whole tile lies outside this row's window */
                const int64_t i = i0 + r;
                const float *qi = qh + i * d;
                float logit[SDPA_KEYS];
                float tmax = -INFINITY;
                for (int64_t j = a; j < e; ++j) {
                    if (s->use_mask && !mask_visible(mask, p->mask_kind, mbase + i * ms[2] + j * ms[3])) {
                        logit[j - a] = -INFINITY;
                        continue;
                    }
                    const float x = dot_f32(qi, kh + j * d, d) * p->scale;
                    logit[j - a] = x;
                    if (x > tmax)
                        tmax = x;
                }
                if (tmax == -INFINITY)
                    continue;
                float *restrict oi = oh + i * dv;
                const float mnew = tmax > s->m ? tmax : s->m;
                if (mnew != s->m) {
                    const float alpha = s->m == -INFINITY ? 0.0f : expf(s->m - mnew);
                    for (int64_t c = 0; c < dv; ++c)
                        oi[c] *= alpha;
                    s->l *= alpha;
                    s->m = mnew;
                }
                double psum = 0.0;
                for (int64_t j = a; j < e; ++j) {
                    if (logit[j - a] == -INFINITY)
                        continue;
                    const float pj = expf(logit[j - a] - mnew);
                    psum += pj;
                    const float *restrict vj = vh + j * dv;
                    for (int64_t c = 0; c < dv; ++c)
                        oi[c] += pj * vj[c];
                }
                s->l += psum;
            }
        }
        for (int r = 0; r < rows; ++r) {
            float *oi = oh + (i0 + r) * dv;
            const float inv = st[r].l > 0.0 ? (float)(1.0 / st[r].l) : 0.0f;
            for (int64_t c = 0; c < dv; ++c)
                oi[c] *= inv;
        }
    }
}

coreai_status coreai_sdpa_f32(const coreai_sdpa_params *params, const float *query,
                              const float *key, const float *value, const void *mask,
                              const float *sinks, float *out)
{
    const coreai_status st = check(params, query, key, value, mask, out);
    if (st != COREAI_STATUS_OK)
        return st;
    const coreai_sdpa_params *p = params;
    const int64_t hq = p->q_heads, tq = p->q_len, tk = p->kv_len, d = p->head_dim, dv = p->v_head_dim;
    if (tk == 0) {
        /* softmax over no keys weighs nothing: the reference's output is zero */
        const int64_t on[4] = {p->batch, hq, tq, dv};
        const int64_t n = mul_checked(on, 4);
        if (n > 0)
            memset(out, 0, (size_t)n * sizeof(float));
        return COREAI_STATUS_OK;
    }
    const int64_t gk = hq / p->k_heads, gv = hq / p->v_heads;
    for (int64_t b = 0; b < p->batch; ++b) {
        const int64_t bk = p->k_batch == 1 ? 0 : b, bv = p->v_batch == 1 ? 0 : b;
        for (int64_t h = 0; h < hq; ++h) {
            const float *qh = query + (b * hq + h) * tq * d;
            const float *kh = key + (bk * p->k_heads + h / gk) * tk * d;
            const float *vh = value + (bv * p->v_heads + h / gv) * tk * dv;
            float *oh = out + (b * hq + h) * tq * dv;
            const int64_t mbase = b * p->mask_strides[0] + h * p->mask_strides[1];
            sdpa_head(p, qh, kh, vh, mask, mbase, sinks != NULL ? sinks + h : NULL, oh);
        }
    }
    return COREAI_STATUS_OK;
}
