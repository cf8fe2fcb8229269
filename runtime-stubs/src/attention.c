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
 * is a vector FMA; the only transpose is Q's into qt (once per block, in
 * registers where the compiler has __builtin_shufflevector), and ot is
 * already in the output's layout (1 / sum folded into the copy-out).
 * Tiles outside every row's causal / window range are never visited; inside
 * one, keys no lane can see are skipped, and a P.V row group skips the keys
 * none of its rows sees (the causal diagonal). A tile every lane sees whole
 * needs no masking pass; the first visited tile stores P.V instead of
 * rescaling and adding to zeros. With AVX-512 the QK^T step takes 16 keys
 * for a head_dim of 32, 64, 80, 96 or 128 (compiled per value, see
 * qk_step16_d*), and the weights use sdpa_exp, vm_exp less its overflow
 * handling.
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/attention.h"

#include <math.h>
#include <string.h>

#include "parallel.h"
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
/* Value columns per P.V micro step: the vector accumulators it keeps in
 * registers. */
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

/* e^x for the weights, x = logit - row max <= 0 (or -inf: a masked key,
 * or NaN). With AVX-512: vm_exp's reduction and polynomial, so the same
 * values, less its handling of x > 88.7 (impossible here) and with the
 * lanes below -87.3 zeroed by the masked vscalefps itself (vm_exp spends
 * three more instructions on the range, a fifth of its count). */
static inline vm_f sdpa_exp(vm_f x)
{
#if VM_VL == 16 && defined(__AVX512F__)
    const __mmask16 keep = _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(-87.33654785156250f), _CMP_NLT_UQ);
    const vm_f fn = (vm_f)_mm512_roundscale_ps((__m512)(x * vm_bcast(1.44269504088896341f)),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vm_f r = VM_FMA(fn, vm_bcast(-0.693359375f), x);
    r = VM_FMA(fn, vm_bcast(2.12194440e-4f), r);
    vm_f p = vm_bcast(1.9875691500e-4f);
    p = VM_FMA(p, r, vm_bcast(1.3981999507e-3f));
    p = VM_FMA(p, r, vm_bcast(8.3334519073e-3f));
    p = VM_FMA(p, r, vm_bcast(4.1665795894e-2f));
    p = VM_FMA(p, r, vm_bcast(1.6666665459e-1f));
    p = VM_FMA(p, r, vm_bcast(5.0000001201e-1f));
    p = VM_FMA(p, r * r, r + vm_bcast(1.0f));
    return (vm_f)_mm512_maskz_scalef_ps(keep, (__m512)p, (__m512)fn);
#else
    return vm_exp(x);
#endif
}

/* In-register transposes where the compiler has __builtin_shufflevector
 * (GCC 12+, Clang): element by element, GCC extracts every lane of a
 * loaded vector and stores it alone, which cost more than 10% of a causal
 * T = 128 call. zip_lo / zip_hi interleave the low / high halves of two
 * vectors; log2(VM_VL) rounds of out[2i] = zip_lo(t[i], t[i + VL/2]),
 * out[2i + 1] = zip_hi(...) swap the lane and vector indices. */
#if VM_VL > 1 && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#if VM_VL == 16
#define SDPA_ZIP_LO(a, b) __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23)
#define SDPA_ZIP_HI(a, b)                                                                          \
    __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)
#elif VM_VL == 8
#define SDPA_ZIP_LO(a, b) __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11)
#define SDPA_ZIP_HI(a, b) __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15)
#elif VM_VL == 4
#define SDPA_ZIP_LO(a, b) __builtin_shufflevector(a, b, 0, 4, 1, 5)
#define SDPA_ZIP_HI(a, b) __builtin_shufflevector(a, b, 2, 6, 3, 7)
#endif
#endif
#endif

/* qt[c][r] = scale * q[r][c0 + c] for c < dc, r < SDPA_ROWS: the query rows
 * q (d floats apart; lanes from nr on repeat row nr - 1) as vector lanes. */
static void sdpa_transpose_q(const float *restrict q, int64_t d, int nr, int64_t c0, int64_t dc, float scale,
                             float *restrict qt)
{
    int64_t c = 0;
#ifdef SDPA_ZIP_LO
    const vm_f sv = vm_bcast(scale);
    for (; c + VM_VL <= dc; c += VM_VL) {
        /* one pointer stepped row by row: an array of 16 row pointers is
         * spilled next to the 32 vectors in flight */
        vm_f t[VM_VL], z[VM_VL];
        const float *qr = q + c0 + c;
        SDPA_UNROLL
        for (int r = 0; r < VM_VL; ++r) {
            t[r] = vm_load(qr) * sv;
            qr += r + 1 < nr ? d : 0;
        }
        SDPA_UNROLL
        for (int s = 1; s < VM_VL; s *= 2) {
            SDPA_UNROLL
            for (int i = 0; i < VM_VL / 2; ++i) {
                z[2 * i] = SDPA_ZIP_LO(t[i], t[i + VM_VL / 2]);
                z[2 * i + 1] = SDPA_ZIP_HI(t[i], t[i + VM_VL / 2]);
            }
            SDPA_UNROLL
            for (int i = 0; i < VM_VL; ++i)
                t[i] = z[i];
        }
        SDPA_UNROLL
        for (int j = 0; j < VM_VL; ++j)
            vm_store(qt + (c + j) * SDPA_ROWS, t[j]);
    }
#endif
    for (int r = 0; r < SDPA_ROWS; ++r) {
        const float *qr = q + (r < nr ? r : nr - 1) * d + c0;
        for (int64_t cc = c; cc < dc; ++cc)
            qt[cc * SDPA_ROWS + r] = qr[cc] * scale;
    }
}

/* st[u] (+)= sum_c qt[c] * k[u * d + c] for u < KU, c < dc (the body of
 * the QK^T micro steps, over the variables of that name in scope). */
#define SDPA_QK_BODY(KU)                                                                           \
    vm_f acc[KU];                                                                                  \
    SDPA_UNROLL                                                                                    \
    for (int u = 0; u < (KU); ++u)                                                                 \
        acc[u] = accumulate ? vm_load(st + u * SDPA_ROWS) : vm_bcast(0.0f);                        \
    for (int64_t c = 0; c < dc; ++c) {                                                             \
        const vm_f q = vm_load(qt + c * SDPA_ROWS);                                                \
        SDPA_UNROLL                                                                                \
        for (int u = 0; u < (KU); ++u)                                                             \
            acc[u] = VM_FMA(q, sdpa_bcast(k[u * d + c]), acc[u]);                                  \
    }                                                                                              \
    SDPA_UNROLL                                                                                    \
    for (int u = 0; u < (KU); ++u)                                                                 \
        vm_store(st + u * SDPA_ROWS, acc[u]);

#define SDPA_DEF_QK(NAME, KU)                                                                      \
    static void NAME(const float *restrict qt, int64_t dc, const float *restrict k, int64_t d,     \
                     float *restrict st, int accumulate)                                           \
    {                                                                                              \
        SDPA_QK_BODY(KU)                                                                           \
    }
SDPA_DEF_QK(qk_step8, 8)
SDPA_DEF_QK(qk_step4, 4)
SDPA_DEF_QK(qk_step1, 1)

/* With AVX-512's 32 registers, 16 keys per step: 16 independent FMA chains
 * cover the FMA latency on both ports, where 8 leave them half idle. Only
 * for a head_dim known at compile time: the 16 key rows are then constant
 * offsets from one pointer, while with a run-time d the compiler keeps 16
 * row pointers and spills them (slower than 8 keys). */
#if VM_VL >= 16
#define SDPA_QK_FIXED_DIMS(X) X(32) X(64) X(80) X(96) X(128)
#define SDPA_DEF_QK_FIXED(D)                                                                       \
    static void qk_step16_d##D(const float *restrict qt, const float *restrict k, float *restrict st) \
    {                                                                                              \
        const int64_t d = (D), dc = (D);                                                           \
        const int accumulate = 0;                                                                  \
        SDPA_QK_BODY(16)                                                                           \
    }
SDPA_QK_FIXED_DIMS(SDPA_DEF_QK_FIXED)
#undef SDPA_DEF_QK_FIXED
#endif

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

/* Row-major accumulators: o[r][j] (+)= sum_u pt[u][r] * v[u * dv + j] for
 * rows r < rg, cv vectors of columns j and keys u in [u0, u1) (pt: the
 * rows' lanes of the transposed weights, o: ldo floats per row). */
#define SDPA_DEF_PV(NAME, CV)                                                                      \
    static void NAME(const float *restrict pt, int64_t u0, int64_t u1, const float *restrict v,    \
                     int64_t dv, float *restrict o, int64_t ldo, int accumulate)                   \
    {                                                                                              \
        enum { RG = SDPA_PV_RG(CV) };                                                              \
        vm_f acc[RG * (CV)];                                                                       \
        SDPA_UNROLL                                                                                \
        for (int r = 0; r < RG; ++r) {                                                             \
            SDPA_UNROLL                                                                            \
            for (int x = 0; x < (CV); ++x)                                                         \
                acc[r * (CV) + x] = accumulate ? vm_load(o + r * ldo + x * VM_VL) : vm_bcast(0.0f); \
        }                                                                                          \
        for (int64_t u = u0; u < u1; ++u) {                                                        \
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

/* Keys [*u0, *u1) of st (tile keys ta + u) that rows [r, r + n) weigh,
 * row i those in [a[i], e[i]): a row group off the causal diagonal (or a
 * window's edge) skips the keys only other rows see, whose weights are 0
 * in every row of the group. */
static void pv_rows_range(const int32_t *a, const int32_t *e, int64_t ta, int64_t r, int64_t n, int64_t *u0,
                          int64_t *u1)
{
    int32_t lo = INT32_MAX, hi = 0;
    for (int64_t i = r; i < r + n; ++i)
        if (a[i] < e[i]) {
            lo = a[i] < lo ? a[i] : lo;
            hi = e[i] > hi ? e[i] : hi;
        }
    *u0 = lo < hi ? lo - ta : 0;
    *u1 = lo < hi ? hi - ta : 0;
}

/* All SDPA_ROWS rows of o (ldo floats per row) (+)= P.V over the ncm
 * columns (a multiple of VM_VL) of the value rows v (tile keys ta + u);
 * row r weighs tile keys [a[r], e[r]) only. accumulate == 0: o = P.V. */
#define SDPA_PV_COLS(cv)                                                                           \
    for (int64_t r = 0; r < SDPA_ROWS; r += SDPA_PV_RG(cv)) {                                      \
        int64_t u0, u1;                                                                            \
        pv_rows_range(a, e, ta, r, SDPA_PV_RG(cv), &u0, &u1);                                      \
        pv_step##cv(pt + r, u0, u1, v + c, dv, o + r * ldo + c, ldo, accumulate);                  \
    }
static void pv_tile(const float *restrict pt, const int32_t *a, const int32_t *e, int64_t ta,
                    const float *restrict v, int64_t dv, int64_t ncm, float *restrict o, int64_t ldo,
                    int accumulate)
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
#if VM_VL >= 16
    if (dc == d) {
        switch (d) {
#define SDPA_QK_CASE(D)                                                                            \
    case (D):                                                                                      \
        for (; u + 16 <= nk; u += 16)                                                              \
            qk_step16_d##D(qt, k + u * d, st + u * SDPA_ROWS);                                     \
        break;
            SDPA_QK_FIXED_DIMS(SDPA_QK_CASE)
#undef SDPA_QK_CASE
        default:
            break;
        }
    }
#endif
    for (; u + 8 <= nk; u += 8)
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

/* Row `off` of the mask (keys a stride `ks` apart): 0 if it shows no key;
 * else the first and one past the last key it shows in [lo, hi), and 1 if
 * it shows every key in between (a causal, sliding-window or padding mask:
 * the row then runs as a causal one, the keys outside never visited and
 * no mask read per tile), -1 if not. A key the mask hides weighs exactly
 * 0 (e^-inf), so leaving it out adds nothing the sums would have had. */
static int mask_row_range(const void *mask, int32_t kind, int64_t off, int64_t ks, int64_t tk,
                          int64_t *lo, int64_t *hi)
{
    int64_t f = 0, l = tk;
    while (f < tk && !mask_visible(mask, kind, off + f * ks))
        ++f;
    if (f == tk) {
        *lo = 0;
        *hi = tk;
        return 0;
    }
    while (!mask_visible(mask, kind, off + (l - 1) * ks))
        --l;
    *lo = f;
    *hi = l;
    for (int64_t j = f + 1; j < l - 1; ++j)
        if (!mask_visible(mask, kind, off + j * ks))
            return -1;
    return 1;
}

/* The max over the tile's nu logit vectors st[u], in four independent
 * chains (one chain of compare-and-select was a latency-bound loop). */
static vm_f sdpa_max(const float *restrict st, int64_t nu)
{
    const vm_f ninf = vm_bcast(-INFINITY);
    vm_f m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
    int64_t u = 0;
    for (; u + 4 <= nu; u += 4) {
        m0 = vm_max(m0, vm_load(st + u * SDPA_ROWS));
        m1 = vm_max(m1, vm_load(st + (u + 1) * SDPA_ROWS));
        m2 = vm_max(m2, vm_load(st + (u + 2) * SDPA_ROWS));
        m3 = vm_max(m3, vm_load(st + (u + 3) * SDPA_ROWS));
    }
    for (; u < nu; ++u)
        m0 = vm_max(m0, vm_load(st + u * SDPA_ROWS));
    return vm_max(vm_max(m0, m1), vm_max(m2, m3));
}

/* sdpa_max after setting to -inf the logits of st[u] (tile key ta + u)
 * outside lane r's [a[r], e[r]) or, when vis is not NULL, where
 * vis[u][r] is 0. */
static vm_f sdpa_mask_max(float *restrict st, int64_t nu, int64_t ta, const int32_t *a, const int32_t *e,
                          const int32_t *restrict vis)
{
    const sdpa_mask av = sdpa_iload(a), ev = sdpa_iload(e);
    const vm_f ninf = vm_bcast(-INFINITY);
    for (int64_t u = 0; u < nu; ++u) {
        const sdpa_mask uv = sdpa_ibcast((int32_t)(ta + u));
        sdpa_mask ok = (uv >= av) & (uv < ev);
        if (vis != NULL)
            ok &= sdpa_iload(vis + u * SDPA_ROWS);
        vm_store(st + u * SDPA_ROWS, SDPA_SEL(ok, vm_load(st + u * SDPA_ROWS), ninf));
    }
    return sdpa_max(st, nu);
}

/* st[u] = e^(st[u] - msub) for u < nu; returns their sum (two chains). */
static vm_f sdpa_exp_sum(float *restrict st, int64_t nu, vm_f msub)
{
    vm_f s0 = vm_bcast(0.0f), s1 = s0;
    int64_t u = 0;
    for (; u + 2 <= nu; u += 2) {
        const vm_f p0 = sdpa_exp(vm_load(st + u * SDPA_ROWS) - msub);
        const vm_f p1 = sdpa_exp(vm_load(st + (u + 1) * SDPA_ROWS) - msub);
        vm_store(st + u * SDPA_ROWS, p0);
        vm_store(st + (u + 1) * SDPA_ROWS, p1);
        s0 = s0 + p0;
        s1 = s1 + p1;
    }
    if (u < nu) {
        const vm_f p0 = sdpa_exp(vm_load(st + u * SDPA_ROWS) - msub);
        vm_store(st + u * SDPA_ROWS, p0);
        s0 = s0 + p0;
    }
    return s0 + s1;
}

/* The accumulated rows times alpha (lane r: row r): ot[r][c] for c < ncm,
 * ott[c][r] for c < nt. */
static void sdpa_rescale(float *restrict ot, int64_t ncm, float *restrict ott, int64_t nt, vm_f alpha)
{
    float al[SDPA_ROWS];
    vm_store(al, alpha);
    for (int r = 0; r < SDPA_ROWS; ++r) {
        const vm_f ar = sdpa_bcast(al[r]);
        for (int64_t c = 0; c < ncm; c += VM_VL)
            vm_store(ot + r * ncm + c, vm_load(ot + r * ncm + c) * ar);
    }
    for (int64_t c = 0; c < nt; ++c)
        vm_store(ott + c * SDPA_ROWS, vm_load(ott + c * SDPA_ROWS) * alpha);
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
    if (nr < 1)
        return;
    int64_t klo = tk, khi = 0, lo_max = 0, hi_min = tk;
    int any_mask = 0;
    for (int r = 0; r < nr; ++r) {
        const int64_t i = i0 + r;
        int any;
        if (has_mask) {
            any = mask_row_range(h->mask, p->mask_kind, h->mbase + i * ms[2], ms[3], tk, &lo[r], &hi[r]);
        } else {
            visible_range(p, i, &lo[r], &hi[r]);
            any = lo[r] < hi[r];
        }
        /* A row with no visible key: every key carries the same penalty,
         * which cancels in the softmax except against the sink. */
        use_mask[r] = any < 0;
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
        lo_max = lo[r] > lo_max ? lo[r] : lo_max;
        hi_min = hi[r] < hi_min ? hi[r] : hi_min;
    }
    for (int r = nr; r < SDPA_ROWS; ++r) {
        lo[r] = lo[r - 1];
        hi[r] = hi[r - 1];
        use_mask[r] = use_mask[r - 1];
        m0[r] = m0[r - 1];
        l0[r] = l0[r - 1];
    }

    /* qt[c][r] = scale * q[i0 + r][c] */
    const float scale = p->scale;
    const int whole_q = d <= SDPA_DQ;
    if (whole_q)
        sdpa_transpose_q(h->q + i0 * d, d, nr, 0, d, scale, qt);

    /* columns [0, ncm) accumulate row-major in ot, the last nt transposed in ott */
    const int64_t ncm = nc / VM_VL * VM_VL, nt = nc - ncm;
    memset(ott, 0, (size_t)nt * SDPA_ROWS * sizeof(float)); /* ot: the first P.V stores */
    vm_f m = vm_load(m0), l = vm_load(l0);
    const vm_f ninf = vm_bcast(-INFINITY);
    int first = 1;

    for (int64_t k0 = klo; k0 < khi; k0 += SDPA_KEYS) {
        const int64_t nk = khi - k0 < SDPA_KEYS ? khi - k0 : SDPA_KEYS;
        /* lane r sees tile keys [a_r, e_r) (and, with the mask, only some) */
        int32_t a[SDPA_ROWS], e[SDPA_ROWS];
        int64_t ta = nk, te = 0, amax = 0, emin = nk;
        if (k0 >= lo_max && k0 + nk <= hi_min) { /* inside every lane's range */
            for (int r = 0; r < SDPA_ROWS; ++r) {
                a[r] = 0;
                e[r] = (int32_t)nk;
            }
            ta = amax = 0;
            te = emin = nk;
        } else {
            /* branch-free loops, which compilers vectorize */
            for (int r = 0; r < SDPA_ROWS; ++r) {
                a[r] = (int32_t)clamp64(lo[r] - k0, 0, nk);
                e[r] = (int32_t)clamp64(hi[r] - k0, 0, nk);
            }
            int32_t ta32 = (int32_t)nk, te32 = 0, amax32 = 0, emin32 = (int32_t)nk;
            for (int r = 0; r < SDPA_ROWS; ++r) {
                const int32_t ua = a[r] < e[r] ? a[r] : (int32_t)nk, ue = a[r] < e[r] ? e[r] : 0;
                ta32 = ua < ta32 ? ua : ta32;
                te32 = ue > te32 ? ue : te32;
                amax32 = a[r] > amax32 ? a[r] : amax32;
                emin32 = e[r] < emin32 ? e[r] : emin32;
            }
            ta = ta32;
            te = te32;
            amax = amax32;
            emin = emin32;
        }
        /* every lane sees all of [ta, te) (an empty lane has a >= e) */
        const int full = amax <= ta && emin >= te;
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
                sdpa_transpose_q(h->q + i0 * d, d, nr, cq, dc, scale, qt);
                qk_tile(qt, dc, kt + cq, d, nu, st, cq > 0);
            }
        }
        /* masked keys -> -inf (unless every lane sees every key); the
         * tile's max per lane */
        const vm_f mx = full && !any_mask ? sdpa_max(st, nu)
                                          : sdpa_mask_max(st, nu, ta, a, e, any_mask ? vis + ta * SDPA_ROWS : NULL);
        /* online softmax: rescale what was summed so far where the max grew
         * (before the first tile, ot and ott are zero: only the sink's
         * share in l needs it) */
        const vm_f mnew = vm_max(m, mx);
        const sdpa_mask grew = mnew > m;
        if (sdpa_any(grew)) {
            const vm_f alpha = SDPA_SEL(grew, sdpa_exp(m - mnew), vm_bcast(1.0f));
            if (!first)
                sdpa_rescale(ot, ncm, ott, nt, alpha);
            l = l * alpha;
            m = mnew;
        }
        /* a lane that has seen nothing yet keeps -inf logits: exp gives 0 */
        l = l + sdpa_exp_sum(st, nu, SDPA_SEL(m == ninf, vm_bcast(0.0f), m));
        const float *vt = h->v + (k0 + ta) * dv + c0;
        pv_tile(st, a, e, ta, vt, dv, ncm, ot, ncm, !first);
        first = 0;
        if (nt > 0)
            pv_tail(st, nu, vt + ncm, dv, nt, ott);
    }

    if (first) /* no tile visited */
        memset(ot, 0, (size_t)ncm * SDPA_ROWS * sizeof(float));
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

/* One call's blocks (batch, head, query-row block, value chunk) and how
 * many tasks share them. */
typedef struct sdpa_job {
    const coreai_sdpa_params *p;
    const float *query, *key, *value;
    const void *mask;
    const float *sinks;
    float *out;
    int64_t blocks, chunks, items, parts;
} sdpa_job;

/* Below this many multiply-adds (rows x keys x (head_dim + v_head_dim)) a
 * call runs on the caller. */
#define SDPA_SPLIT_MIN 131072.0

/* Task t: items t, t + parts, t + 2 parts, ..., item i being value chunk
 * i % chunks of row block r = i / chunks % blocks of head i / (chunks *
 * blocks); odd heads take their row blocks last to first (r -> blocks - 1
 * - r). Dealt out in order, a causal head's row blocks, whose cost grows
 * with the row, gave one task the cheap ones of every head: 4 blocks a
 * head on 2 tasks are 1 + 3 against 2 + 4 (the Llama d256 block's
 * attention waited 9.6 of its 30 us for the second thread). */
static void sdpa_task(void *arg, int64_t t)
{
    const sdpa_job *j = arg;
    const coreai_sdpa_params *p = j->p;
    const int64_t hq = p->q_heads, tq = p->q_len, tk = p->kv_len, d = p->head_dim, dv = p->v_head_dim;
    const int64_t gk = hq / p->k_heads, gv = hq / p->v_heads;
    for (int64_t it = t; it < j->items; it += j->parts) {
        const int64_t c = it % j->chunks, r = it / j->chunks % j->blocks, bh = it / j->chunks / j->blocks;
        const int64_t blk = bh % 2 != 0 ? j->blocks - 1 - r : r;
        const int64_t b = bh / hq, hd = bh % hq;
        const int64_t bk = p->k_batch == 1 ? 0 : b, bv = p->v_batch == 1 ? 0 : b;
        const sdpa_head h = {
            .p = p,
            .q = j->query + (b * hq + hd) * tq * d,
            .k = j->key + (bk * p->k_heads + hd / gk) * tk * d,
            .v = j->value + (bv * p->v_heads + hd / gv) * tk * dv,
            .mask = p->mask_kind != COREAI_SDPA_MASK_NONE ? j->mask : NULL,
            .mbase = b * p->mask_strides[0] + hd * p->mask_strides[1],
            .sink = j->sinks != NULL ? j->sinks + hd : NULL,
            .out = j->out + (b * hq + hd) * tq * dv,
        };
        const int64_t i0 = blk * SDPA_ROWS, c0 = c * SDPA_DV;
        const int nr = (int)(tq - i0 < SDPA_ROWS ? tq - i0 : SDPA_ROWS);
        sdpa_block(&h, i0, nr, c0, dv - c0 < SDPA_DV ? dv - c0 : SDPA_DV);
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
    sdpa_job job = {p, query, key, value, mask, sinks, out, 0, 0, 0, 1};
    job.blocks = (tq + SDPA_ROWS - 1) / SDPA_ROWS;
    job.chunks = (dv + SDPA_DV - 1) / SDPA_DV;
    job.items = p->batch * hq * job.blocks * job.chunks;
    /* split when there is work for several threads: query-row blocks
     * (x heads, value chunks) dealt out round robin (sdpa_task), so causal
     * rows, whose cost grows with the row, spread evenly; each output
     * element is computed whole by one block, so the split changes no bit */
    const double work = (double)p->batch * (double)hq * (double)tq * (double)tk * (double)(d + dv);
    job.parts = coreai_par_split(coreai_par_threads(), job.items, work, SDPA_SPLIT_MIN);
    if (job.parts > 1)
        coreai_par_run(sdpa_task, &job, job.parts);
    else
        sdpa_task(&job, 0);
    return COREAI_STATUS_OK;
}
