/* coreai_sdpa_f32: tiled online-softmax attention (MHA / GQA / MQA).
 *
 * Layout of the work: one vector lane per query row. A block of SDPA_ROWS
 * (= VM_VL) query rows is transposed once, scale folded in, into
 * qt[c][row] on the stack; then, for each tile of up to SDPA_KEYS keys,
 *
 *   st[u][row] = sum_c qt[c][row] * k[u][c]      one vector per key, the key's
 *                                                 elements broadcast (K is read
 *                                                 in place, row by row)
 *   masked keys -> -inf, tile max, online rescale (only when a lane's max grew)
 *   st[u][row] = exp(st[u][row] - m[row])         vm_exp, a vector per key
 *   ot[row][c] += sum_u st[u][row] * v[u][c]      V rows read in place as
 *                                                 vectors, weights broadcast
 *                                                 (the last v_head_dim % VM_VL
 *                                                 columns: transposed, in ott)
 *
 * so the running max / sum of every row are plain vectors and every product
 * is a vector FMA; the only transpose is Q's into qt (once per block), and
 * ot is already in the output's layout (1 / sum folded into the copy-out).
 * Tiles outside every row's causal / window range are never visited; inside
 * one, keys no lane can see are skipped.
 */
#include "coreai/kernels/attention.h"

#include <math.h>
#include <string.h>

#include "vmath.h"

/* Query rows per block: one per lane. */
#define SDPA_ROWS VM_VL
#define SDPA_KEYS COREAI_SDPA_KEY_TILE
/* head_dim elements of the transposed query block kept at once (a longer
 * head_dim is processed in chunks, re-transposed per key tile). */
#define SDPA_DQ COREAI_SDPA_QK_CHUNK
/* v_head_dim columns accumulated at once (a wider value head makes one pass
 * over the keys per chunk). */
#define SDPA_DV COREAI_SDPA_V_CHUNK
/* Keys per QK^T micro step and value columns per P.V micro step: the vector
 * accumulators those steps keep in registers. */
#define SDPA_KU 8
#if VM_VL >= 16
#define SDPA_PV_ACC 16
#else
#define SDPA_PV_ACC 8
#endif
/* rows per P.V micro step of cv column vectors: SDPA_PV_ACC accumulators */
#define SDPA_PV_RG(cv) (SDPA_PV_ACC / (cv) < SDPA_ROWS ? SDPA_PV_ACC / (cv) : SDPA_ROWS)
#define SDPA_TAIL_MAX (VM_VL > 4 ? 4 : 1)
/* What the reference adds to the logit of a masked key. */
#define SDPA_MASK_PENALTY 10000.0f

_Static_assert(SDPA_KEYS <= 1 << 20, "key offsets within a tile fit int32");

/* The micro steps' loops over their accumulators have constant trip counts
 * and are unrolled completely, so the accumulators live in registers. */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define SDPA_UNROLL _Pragma("GCC unroll 32")
#else
#define SDPA_UNROLL
#endif

/* Lane masks: all bits set (vectors) / nonzero (VM_VL == 1) where true. */
#if VM_VL > 1
typedef vm_i sdpa_mask;
#define SDPA_SEL(m, a, b) vm_select((m), (a), (b))
static inline sdpa_mask sdpa_ibcast(int32_t x) { return (sdpa_mask){0} + x; }
/* x in every lane; x - 0 is x for every x (-0 included), so unlike 0 + x it
 * folds to a bare broadcast (a memory operand of the FMA). */
static inline vm_f sdpa_bcast(float x) { return x - (vm_f){0}; }
#else
typedef int32_t sdpa_mask;
#define SDPA_SEL(m, a, b) ((m) ? (a) : (b))
static inline sdpa_mask sdpa_ibcast(int32_t x) { return x; }
static inline vm_f sdpa_bcast(float x) { return x; }
#endif
static inline sdpa_mask sdpa_iload(const int32_t *p)
{
    sdpa_mask v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline int sdpa_any(sdpa_mask m)
{
    int32_t t[SDPA_ROWS];
    memcpy(t, &m, sizeof t);
    int any = 0;
    for (int l = 0; l < SDPA_ROWS; ++l)
        any |= t[l] != 0;
    return any;
}

/* e^x for the weights: 0 below -87 (e^-87 = 1.6e-38, already far below
 * what a sum that contains 1 can register) instead of vm_exp's subnormal
 * intermediates, which cost a microcode assist per lane on x86 (masked keys
 * arrive here as -inf). */
static inline vm_f sdpa_exp(vm_f x)
{
    const vm_f lo = vm_bcast(-87.0f);
    return SDPA_SEL(x > lo, vm_exp(vm_max(x, lo)), vm_bcast(0.0f));
}

/* st[u] (+)= sum_c qt[c] * k[u * d + c] for u < KU, c < dc. */
#define SDPA_DEF_QK(NAME, KU)                                                                      \
    static void NAME(const float *restrict qt, int64_t dc, const float *restrict k, int64_t d,     \
                     float *restrict st, int accumulate)                                           \
    {                                                                                              \
        vm_f acc[KU];                                                                              \
        SDPA_UNROLL                                                                                \
        for (int u = 0; u < (KU); ++u)                                                             \
            acc[u] = accumulate ? vm_load(st + u * SDPA_ROWS) : vm_bcast(0.0f);                    \
        for (int64_t c = 0; c < dc; ++c) {                                                         \
            const vm_f q = vm_load(qt + c * SDPA_ROWS);                                            \
            SDPA_UNROLL                                                                            \
            for (int u = 0; u < (KU); ++u)                                                         \
                acc[u] = VM_FMA(q, sdpa_bcast(k[u * d + c]), acc[u]);                              \
        }                                                                                          \
        SDPA_UNROLL                                                                                \
        for (int u = 0; u < (KU); ++u)                                                             \
            vm_store(st + u * SDPA_ROWS, acc[u]);                                                  \
    }
SDPA_DEF_QK(qk_step8, 8)
SDPA_DEF_QK(qk_step4, 4)
SDPA_DEF_QK(qk_step1, 1)

/* Tail columns, transposed: ott[w][row] += sum_u pt[u][row] * v[u * dv + w]
 * for w < w_n, u < nu (one vector per column, V broadcast). */
#define SDPA_DEF_PV_T(NAME, W)                                                                     \
    static void NAME(const float *restrict pt, int64_t nu, const float *restrict v, int64_t dv,    \
                     float *restrict ott)                                                          \
    {                                                                                              \
        vm_f acc[W];                                                                               \
        SDPA_UNROLL                                                                                \
        for (int w = 0; w < (W); ++w)                                                              \
            acc[w] = vm_load(ott + w * SDPA_ROWS);                                                 \
        for (int64_t u = 0; u < nu; ++u) {                                                         \
            const vm_f p = vm_load(pt + u * SDPA_ROWS);                                            \
            const float *restrict vr = v + u * dv;                                                 \
            SDPA_UNROLL                                                                            \
            for (int w = 0; w < (W); ++w)                                                          \
                acc[w] = VM_FMA(p, sdpa_bcast(vr[w]), acc[w]);                                     \
        }                                                                                          \
        SDPA_UNROLL                                                                                \
        for (int w = 0; w < (W); ++w)                                                              \
            vm_store(ott + w * SDPA_ROWS, acc[w]);                                                 \
    }
#if VM_VL >= 8
SDPA_DEF_PV_T(pv_step_t4, 4)
#endif
#if VM_VL > 1
SDPA_DEF_PV_T(pv_step_t1, 1)
#endif

/* Row-major accumulators: o[r][j] += sum_u pt[u][r] * v[u * dv + j] for
 * rows r < rg and cv vectors of columns j (pt: the rows' lanes of the
 * transposed weights, o: ldo floats per row). */
#define SDPA_DEF_PV(NAME, CV)                                                                      \
    static void NAME(const float *restrict pt, int64_t nu, const float *restrict v, int64_t dv,    \
                     float *restrict o, int64_t ldo)                                               \
    {                                                                                              \
        enum { RG = SDPA_PV_RG(CV) };                                                              \
        vm_f acc[RG * (CV)];                                                                       \
        SDPA_UNROLL                                                                                \
        for (int r = 0; r < RG; ++r) {                                                             \
            SDPA_UNROLL                                                                            \
            for (int x = 0; x < (CV); ++x)                                                         \
                acc[r * (CV) + x] = vm_load(o + r * ldo + x * VM_VL);                              \
        }                                                                                          \
        for (int64_t u = 0; u < nu; ++u) {                                                         \
            vm_f vv[CV];                                                                           \
            SDPA_UNROLL                                                                            \
            for (int x = 0; x < (CV); ++x)                                                         \
                vv[x] = vm_load(v + u * dv + x * VM_VL);                                           \
            SDPA_UNROLL                                                                            \
            for (int r = 0; r < RG; ++r) {                                                         \
                const vm_f pb = sdpa_bcast(pt[u * SDPA_ROWS + r]);                                 \
                SDPA_UNROLL                                                                        \
                for (int x = 0; x < (CV); ++x)                                                     \
                    acc[r * (CV) + x] = VM_FMA(pb, vv[x], acc[r * (CV) + x]);                      \
            }                                                                                      \
        }                                                                                          \
        SDPA_UNROLL                                                                                \
        for (int r = 0; r < RG; ++r) {                                                             \
            SDPA_UNROLL                                                                            \
            for (int x = 0; x < (CV); ++x)                                                         \
                vm_store(o + r * ldo + x * VM_VL, acc[r * (CV) + x]);                              \
        }                                                                                          \
    }
#if VM_VL >= 16
SDPA_DEF_PV(pv_step4, 4)
#endif
SDPA_DEF_PV(pv_step2, 2)
SDPA_DEF_PV(pv_step1, 1)

/* All SDPA_ROWS rows of o (ldo floats per row) += P.V over the ncm columns
 * (a multiple of VM_VL) of the value rows v. */
#define SDPA_PV_COLS(cv)                                                                           \
    for (int64_t r = 0; r < SDPA_ROWS; r += SDPA_PV_RG(cv))                                        \
        pv_step##cv(pt + r, nu, v + c, dv, o + r * ldo + c, ldo)
static void pv_tile(const float *restrict pt, int64_t nu, const float *restrict v, int64_t dv, int64_t ncm,
                    float *restrict o, int64_t ldo)
{
    int64_t c = 0;
#if VM_VL >= 16
    for (; c + 4 * VM_VL <= ncm; c += 4 * VM_VL)
        SDPA_PV_COLS(4);
#endif
    for (; c + 2 * VM_VL <= ncm; c += 2 * VM_VL)
        SDPA_PV_COLS(2);
    for (; c < ncm; c += VM_VL)
        SDPA_PV_COLS(1);
}
#undef SDPA_PV_COLS

/* The last nt < VM_VL columns, transposed into ott. */
static void pv_tail(const float *restrict pt, int64_t nu, const float *restrict v, int64_t dv, int64_t nt,
                    float *restrict ott)
{
#if VM_VL > 1
    int64_t w = 0;
#if VM_VL >= 8
    for (; w + 4 <= nt; w += 4)
        pv_step_t4(pt, nu, v + w, dv, ott + w * SDPA_ROWS);
#endif
    for (; w < nt; ++w)
        pv_step_t1(pt, nu, v + w, dv, ott + w * SDPA_ROWS);
#else
    (void)pt, (void)nu, (void)v, (void)dv, (void)nt, (void)ott; /* VM_VL == 1: no tail */
#endif
}

/* Logits of keys [0, nk) of the tile at k (rows of d floats) for the
 * transposed query chunk qt (dc elements). */
static void qk_tile(const float *restrict qt, int64_t dc, const float *restrict k, int64_t d, int64_t nk,
                    float *restrict st, int accumulate)
{
    int64_t u = 0;
    for (; u + SDPA_KU <= nk; u += SDPA_KU)
        qk_step8(qt, dc, k + u * d, d, st + u * SDPA_ROWS, accumulate);
    for (; u + 4 <= nk; u += 4)
        qk_step4(qt, dc, k + u * d, d, st + u * SDPA_ROWS, accumulate);
    for (; u < nk; ++u)
        qk_step1(qt, dc, k + u * d, d, st + u * SDPA_ROWS, accumulate);
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

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

/* What one head's call needs, shared by its blocks. */
typedef struct sdpa_head {
    const coreai_sdpa_params *p;
    const float *q, *k, *v; /* this head's [Tq, D], [Tkv, D], [Tkv, Dv] */
    const void *mask;       /* NULL: no mask operand */
    int64_t mbase;          /* mask offset of this (batch, head) */
    const float *sink;      /* NULL: none */
    float *out;             /* [Tq, Dv] */
} sdpa_head;

/* Query rows [i0, i0 + nr) (nr <= SDPA_ROWS), output columns [c0, c0 + nc)
 * (nc <= SDPA_DV). */
static void sdpa_block(const sdpa_head *h, int64_t i0, int nr, int64_t c0, int64_t nc)
{
    const coreai_sdpa_params *p = h->p;
    const int64_t tk = p->kv_len, d = p->head_dim, dv = p->v_head_dim;
    const int has_mask = h->mask != NULL;
    const int64_t *ms = p->mask_strides;

    _Alignas(64) float qt[SDPA_DQ * SDPA_ROWS];
    _Alignas(64) float ot[SDPA_ROWS * SDPA_DV];                /* [row][column] */
    _Alignas(64) float ott[(VM_VL > 1 ? VM_VL - 1 : 1) * SDPA_ROWS]; /* tail: [column][row] */
    _Alignas(64) float st[SDPA_KEYS * SDPA_ROWS];
    _Alignas(64) int32_t vis[SDPA_KEYS * SDPA_ROWS]; /* mask operand of a tile */
    int64_t lo[SDPA_ROWS], hi[SDPA_ROWS];
    int use_mask[SDPA_ROWS];
    float m0[SDPA_ROWS], l0[SDPA_ROWS];

    /* Per lane: its key range, whether the mask operand applies, the start
     * of its running max / sum. Lanes past nr repeat the last row. */
    int64_t klo = tk, khi = 0;
    int any_mask = 0;
    for (int r = 0; r < SDPA_ROWS; ++r) {
        if (r >= nr) {
            lo[r] = lo[nr - 1];
            hi[r] = hi[nr - 1];
            use_mask[r] = use_mask[nr - 1];
            m0[r] = m0[nr - 1];
            l0[r] = l0[nr - 1];
            continue;
        }
        const int64_t i = i0 + r;
        int any;
        if (has_mask) {
            lo[r] = 0;
            hi[r] = tk;
            any = 0;
            for (int64_t j = 0; j < tk && !any; ++j)
                any = mask_visible(h->mask, p->mask_kind, h->mbase + i * ms[2] + j * ms[3]);
        } else {
            visible_range(p, i, &lo[r], &hi[r]);
            any = lo[r] < hi[r];
        }
        /* A row with no visible key: every key carries the same penalty,
         * which cancels in the softmax except against the sink. */
        use_mask[r] = has_mask && any;
        any_mask |= use_mask[r];
        if (!any) {
            lo[r] = 0;
            hi[r] = tk;
        }
        if (h->sink != NULL) {
            m0[r] = any ? *h->sink : *h->sink + SDPA_MASK_PENALTY;
            l0[r] = 1.0f;
        } else {
            m0[r] = -INFINITY;
            l0[r] = 0.0f;
        }
        klo = lo[r] < klo ? lo[r] : klo;
        khi = hi[r] > khi ? hi[r] : khi;
    }

    /* qt[c][r] = scale * q[i0 + r][c] */
    const float scale = p->scale;
    const int whole_q = d <= SDPA_DQ;
#define SDPA_TRANSPOSE_Q(cq, dc)                                                                   \
    for (int r = 0; r < SDPA_ROWS; ++r) {                                                          \
        const float *qr = h->q + (i0 + (r < nr ? r : nr - 1)) * d + (cq);                          \
        for (int64_t c = 0; c < (dc); ++c)                                                         \
            qt[c * SDPA_ROWS + r] = qr[c] * scale;                                                 \
    }
    if (whole_q)
        SDPA_TRANSPOSE_Q(0, d)

    /* columns [0, ncm) accumulate row-major in ot, the last nt transposed in ott */
    const int64_t ncm = nc / VM_VL * VM_VL, nt = nc - ncm;
    memset(ot, 0, (size_t)ncm * SDPA_ROWS * sizeof(float));
    memset(ott, 0, (size_t)nt * SDPA_ROWS * sizeof(float));
    vm_f m = vm_load(m0), l = vm_load(l0);
    const vm_f ninf = vm_bcast(-INFINITY);

    for (int64_t k0 = klo; k0 < khi; k0 += SDPA_KEYS) {
        const int64_t nk = khi - k0 < SDPA_KEYS ? khi - k0 : SDPA_KEYS;
        /* lane r sees tile keys [a_r, e_r) (and, with the mask, only some) */
        int32_t a[SDPA_ROWS], e[SDPA_ROWS];
        int64_t ta = nk, te = 0;
        for (int r = 0; r < SDPA_ROWS; ++r) {
            a[r] = (int32_t)clamp64(lo[r] - k0, 0, nk);
            e[r] = (int32_t)clamp64(hi[r] - k0, 0, nk);
            if (a[r] < e[r]) {
                ta = a[r] < ta ? a[r] : ta;
                te = e[r] > te ? e[r] : te;
            }
        }
        if (any_mask) {
            int any = 0;
            for (int64_t u = ta; u < te; ++u)
                for (int r = 0; r < SDPA_ROWS; ++r) {
                    int32_t bit = 1;
                    if (use_mask[r])
                        bit = mask_visible(h->mask, p->mask_kind,
                                           h->mbase + (i0 + (r < nr ? r : nr - 1)) * ms[2] + (k0 + u) * ms[3]);
                    vis[u * SDPA_ROWS + r] = -bit;
                    any |= bit && u >= a[r] && u < e[r];
                }
            if (!any)
                continue;
        }
        if (ta >= te)
            continue;
        /* logits of the keys [ta, te) some lane sees: st[u - ta] */
        const int64_t nu = te - ta;
        const float *kt = h->k + (k0 + ta) * d;
        if (whole_q) {
            qk_tile(qt, d, kt, d, nu, st, 0);
        } else {
            for (int64_t cq = 0; cq < d; cq += SDPA_DQ) {
                const int64_t dc = d - cq < SDPA_DQ ? d - cq : SDPA_DQ;
                SDPA_TRANSPOSE_Q(cq, dc)
                qk_tile(qt, dc, kt + cq, d, nu, st, cq > 0);
            }
        }
        /* masked keys -> -inf; the tile's max per lane */
        const sdpa_mask av = sdpa_iload(a), ev = sdpa_iload(e);
        vm_f mx = ninf;
        for (int64_t u = 0; u < nu; ++u) {
            const sdpa_mask uv = sdpa_ibcast((int32_t)(ta + u));
            sdpa_mask ok = (uv >= av) & (uv < ev);
            if (any_mask)
                ok &= sdpa_iload(vis + (ta + u) * SDPA_ROWS);
            const vm_f s = SDPA_SEL(ok, vm_load(st + u * SDPA_ROWS), ninf);
            vm_store(st + u * SDPA_ROWS, s);
            mx = vm_max(mx, s);
        }
        /* online softmax: rescale what was summed so far where the max grew */
        const vm_f mnew = vm_max(m, mx);
        const sdpa_mask grew = mnew > m;
        if (sdpa_any(grew)) {
            const vm_f alpha = SDPA_SEL(grew, sdpa_exp(m - mnew), vm_bcast(1.0f));
            float al[SDPA_ROWS];
            vm_store(al, alpha);
            for (int r = 0; r < SDPA_ROWS; ++r) {
                const vm_f ar = sdpa_bcast(al[r]);
                for (int64_t c = 0; c < ncm; c += VM_VL)
                    vm_store(ot + r * ncm + c, vm_load(ot + r * ncm + c) * ar);
            }
            for (int64_t c = 0; c < nt; ++c)
                vm_store(ott + c * SDPA_ROWS, vm_load(ott + c * SDPA_ROWS) * alpha);
            l = l * alpha;
            m = mnew;
        }
        /* a lane that has seen nothing yet keeps -inf logits: exp gives 0 */
        const vm_f msub = SDPA_SEL(m == ninf, vm_bcast(0.0f), m);
        vm_f psum = vm_bcast(0.0f);
        for (int64_t u = 0; u < nu; ++u) {
            const vm_f pr = sdpa_exp(vm_load(st + u * SDPA_ROWS) - msub);
            vm_store(st + u * SDPA_ROWS, pr);
            psum = psum + pr;
        }
        l = l + psum;
        const float *vt = h->v + (k0 + ta) * dv + c0;
        pv_tile(st, nu, vt, dv, ncm, ot, ncm);
        if (nt > 0)
            pv_tail(st, nu, vt + ncm, dv, nt, ott);
    }
#undef SDPA_TRANSPOSE_Q

    /* out[i0 + r][c0 + c] = ot[r][c] / l[r] (ott[c - ncm][r] / l[r]) */
    float inv[SDPA_ROWS];
    vm_store(inv, l);
    for (int r = 0; r < nr; ++r) {
        const float ir = inv[r] > 0.0f ? 1.0f / inv[r] : 0.0f;
        const vm_f iv = sdpa_bcast(ir);
        float *o = h->out + (i0 + r) * dv + c0;
        for (int64_t c = 0; c < ncm; c += VM_VL)
            vm_store(o + c, vm_load(ot + r * ncm + c) * iv);
        for (int64_t c = 0; c < nt; ++c)
            o[ncm + c] = ott[c * SDPA_ROWS + r] * ir;
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
        for (int64_t hd = 0; hd < hq; ++hd) {
            const sdpa_head h = {
                .p = p,
                .q = query + (b * hq + hd) * tq * d,
                .k = key + (bk * p->k_heads + hd / gk) * tk * d,
                .v = value + (bv * p->v_heads + hd / gv) * tk * dv,
                .mask = p->mask_kind != COREAI_SDPA_MASK_NONE ? mask : NULL,
                .mbase = b * p->mask_strides[0] + hd * p->mask_strides[1],
                .sink = sinks != NULL ? sinks + hd : NULL,
                .out = out + (b * hq + hd) * tq * dv,
            };
            for (int64_t i0 = 0; i0 < tq; i0 += SDPA_ROWS) {
                const int nr = (int)(tq - i0 < SDPA_ROWS ? tq - i0 : SDPA_ROWS);
                for (int64_t c0 = 0; c0 < dv; c0 += SDPA_DV)
                    sdpa_block(&h, i0, nr, c0, dv - c0 < SDPA_DV ? dv - c0 : SDPA_DV);
            }
        }
    }
    return COREAI_STATUS_OK;
}
