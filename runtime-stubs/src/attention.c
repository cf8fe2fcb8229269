/* coreai_sdpa_f32: tiled online-softmax attention (MHA / GQA / MQA). */
#include "coreai/kernels/attention.h"

#include <math.h>
#include <string.h>

/* Query rows that share one pass over a key tile. */
#define SDPA_QUERY_ROWS 4
#define SDPA_KEYS COREAI_SDPA_KEY_TILE
/* What the reference adds to the logit of a masked key. */
#define SDPA_MASK_PENALTY 10000.0f

/* Dot products of SDPA_QUERY_ROWS query rows with one key row. The key is
 * loaded once for all rows, and each row keeps SDPA_LANES independent
 * partial sums, which compilers turn into vector accumulators. */
#define SDPA_LANES 4
_Static_assert(SDPA_QUERY_ROWS == 4, "dot_rows handles four query rows");
static void dot_rows(const float *const *q, const float *restrict k, int64_t n, float *out)
{
    float acc[SDPA_QUERY_ROWS][SDPA_LANES] = {{0.0f}};
    const float *restrict q0 = q[0], *restrict q1 = q[1], *restrict q2 = q[2], *restrict q3 = q[3];
    int64_t i = 0;
    for (; i + SDPA_LANES <= n; i += SDPA_LANES) {
        for (int l = 0; l < SDPA_LANES; ++l) {
            const float kv = k[i + l];
            acc[0][l] += q0[i + l] * kv;
            acc[1][l] += q1[i + l] * kv;
            acc[2][l] += q2[i + l] * kv;
            acc[3][l] += q3[i + l] * kv;
        }
    }
    for (int l = 0; i < n; ++i, ++l) {
        const float kv = k[i];
        acc[0][l] += q0[i] * kv;
        acc[1][l] += q1[i] * kv;
        acc[2][l] += q2[i] * kv;
        acc[3][l] += q3[i] * kv;
    }
    for (int r = 0; r < SDPA_QUERY_ROWS; ++r) {
        const float *a = acc[r];
        out[r] = (a[0] + a[2]) + (a[1] + a[3]);
    }
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
        const float *qr[SDPA_QUERY_ROWS];
        for (int r = 0; r < SDPA_QUERY_ROWS; ++r)
            qr[r] = qh + (i0 + (r < rows ? r : 0)) * d;
        for (int64_t k0 = klo; k0 < khi; k0 += SDPA_KEYS) {
            const int64_t kend = k0 + SDPA_KEYS < khi ? k0 + SDPA_KEYS : khi;
            /* keys of this tile that some row of the block sees */
            int64_t ta = kend, te = k0;
            for (int r = 0; r < rows; ++r) {
                const int64_t a = k0 > st[r].lo ? k0 : st[r].lo, e = kend < st[r].hi ? kend : st[r].hi;
                if (a < e) {
                    ta = a < ta ? a : ta;
                    te = e > te ? e : te;
                }
            }
            if (ta >= te)
                continue; /* the whole tile lies outside every row's window */
            /* logits of all rows at once: each key row is read once per block */
            float logit[SDPA_QUERY_ROWS][SDPA_KEYS];
            for (int64_t j = ta; j < te; ++j) {
                float acc[SDPA_QUERY_ROWS];
                dot_rows(qr, kh + j * d, d, acc);
                for (int r = 0; r < SDPA_QUERY_ROWS; ++r)
                    logit[r][j - ta] = acc[r] * p->scale;
            }
            for (int r = 0; r < rows; ++r) {
                row_state *s = &st[r];
                const int64_t a = ta > s->lo ? ta : s->lo, e = te < s->hi ? te : s->hi;
                if (a >= e)
                    continue;
                const int64_t i = i0 + r;
                float *lg = logit[r] - ta; /* indexed by key */
                float tmax = -INFINITY;
                for (int64_t j = a; j < e; ++j) {
                    if (s->use_mask && !mask_visible(mask, p->mask_kind, mbase + i * ms[2] + j * ms[3]))
                        lg[j] = -INFINITY;
                    else if (lg[j] > tmax)
                        tmax = lg[j];
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
                /* weights of the visible keys, then the value rows four at a
                 * time so the accumulator row is loaded and stored less */
                double psum = 0.0;
                float pw[SDPA_KEYS];
                const float *vr[SDPA_KEYS];
                int nk = 0;
                for (int64_t j = a; j < e; ++j) {
                    if (lg[j] == -INFINITY)
                        continue;
                    pw[nk] = expf(lg[j] - mnew);
                    psum += pw[nk];
                    vr[nk++] = vh + j * dv;
                }
                int t = 0;
                for (; t + 4 <= nk; t += 4) {
                    const float p0 = pw[t], p1 = pw[t + 1], p2 = pw[t + 2], p3 = pw[t + 3];
                    const float *restrict v0 = vr[t], *restrict v1 = vr[t + 1];
                    const float *restrict v2 = vr[t + 2], *restrict v3 = vr[t + 3];
                    for (int64_t c = 0; c < dv; ++c)
                        oi[c] += ((p0 * v0[c] + p1 * v1[c]) + (p2 * v2[c] + p3 * v3[c]));
                }
                for (; t < nk; ++t) {
                    const float pj = pw[t];
                    const float *restrict vj = vr[t];
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
