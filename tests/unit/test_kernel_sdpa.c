/*
 * coreai_sdpa_f32 against a naive double reference that follows the
 * reference implementation literally: the full logit matrix per head, -1e4
 * added to every masked logit (never skipped), the sink appended as one
 * more softmax column, K/V heads repeated by repeat_interleave.
 *
 * Tolerance (sdpa_tolerance): a forward error bound of the f32 kernel for
 * the case's own data, not a measured error. With u = 2^-24 and
 * g(n) = n u / (1 - n u):
 *   - a logit scale * <q, k> summed over D products (scale folded into q,
 *     one more rounding) is off by at most g(D + 1) * A, A the largest
 *     scale * sum_c |q_c k_c| of the case;
 *   - a weight exp(s - m) then has relative error <= 2 g(D + 1) A (s and m
 *     both perturbed) + u (the subtraction, times (m - s) e^(s - m) <= 1)
 *     + 2 u (vm_exp, <= 2 ulp) + u (the online rescale);
 *   - weights with relative errors <= e move a weighted mean of values by
 *     at most 2 e max|v|;
 *   - numerator and denominator are sums of <= Tkv + Tkv / 64 + 2 terms
 *     (keys, tile partial sums, sink), each off by g(n) of the sum of
 *     |terms|, and the final 1 / l * acc adds 2 u.
 * The values here are in [-1, 1], so max|v| = 1; ref_check's tolerance is
 * relative to max(1, |want|) and |want| <= 1, i.e. absolute.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

typedef struct sdpa_case {
    int64_t b, hq, hk, hv, tq, tk, d, dv, kb, vb;
    int causal;
    int64_t window;
    int mask;              /* 0 none, 1 bool, 2 float */
    int mask_rank;         /* 2: [Tq, Tkv], 3: [1, Tq, Tkv], 4: [B, Hq|1, Tq, Tkv] */
    int mask_heads;        /* rank 4: mask has Hq heads (else 1) */
    double mask_density;   /* probability that a key is visible */
    int mask_band;         /* nonzero: the mask is the band mask_band_visible draws, not random */
    int sinks;
    int has_scale;
    float scale;
} sdpa_case;

/* Visible under the causal / window rule (reference formula, lower-right). */
static int rule_visible(const sdpa_case *c, int64_t i, int64_t j)
{
    const int64_t q = i, k = j, ql = c->tq, kl = c->tk, w = c->window;
    if (w <= 0)
        return !c->causal || q >= k - (kl - ql);
    const int left_out = q >= k - (kl - ql - w);
    if (c->causal) {
        const int causal = q >= k - (kl - ql);
        return causal != left_out; /* logical_xor */
    }
    const int right_out = q <= k - (kl - ql + w);
    return !(left_out || right_out);
}

/* Structured masks, as models build them (plane: the mask's batch x head
 * index): 1 causal, 2 a sliding window of 5, 3 padding (the last keys
 * hidden, more in later planes), 4 causal with one hidden key inside the
 * band, 5 causal with every fourth row hidden whole. */
static int mask_band_visible(const sdpa_case *c, int64_t plane, int64_t i, int64_t j)
{
    const int64_t diag = i + c->tk - c->tq;
    switch (c->mask_band) {
    case 1: return j <= diag;
    case 2: return j <= diag && j > diag - 5;
    case 3: return j < c->tk - 3 * (plane + 1);
    case 4: return j <= diag && (diag < 2 || j != diag / 2);
    default: return j <= diag && i % 4 != 1;
    }
}

static double sdpa_gamma(double n)
{
    const double u = 0x1p-24;
    return n * u / (1.0 - n * u);
}

static double sdpa_tolerance(const sdpa_case *c, const float *q, const float *k, float scale)
{
    /* A: the largest scale * sum_c |q_c k_c|, bounded over all pairs of
     * query and key rows of the case (a superset of the pairs a head uses). */
    const int64_t nq = c->b * c->hq * c->tq, nk = c->kb * c->hk * c->tk;
    double amax = 0.0;
    for (int64_t i = 0; i < nq; ++i)
        for (int64_t j = 0; j < nk; ++j) {
            double a = 0.0;
            for (int64_t t = 0; t < c->d; ++t)
                a += fabs((double)q[i * c->d + t] * (double)k[j * c->d + t]);
            amax = fmax(amax, a);
        }
    amax *= fabs((double)scale);
    const double u = 0x1p-24;
    const double weight = 2.0 * sdpa_gamma((double)c->d + 1.0) * amax + 4.0 * u;
    const double terms = (double)c->tk + (double)c->tk / 64.0 + 2.0;
    return 2.0 * weight + 2.0 * sdpa_gamma(terms) + 2.0 * u;
}

static void run(ref_rng *rng, const sdpa_case *c)
{
    const int64_t qn = c->b * c->hq * c->tq * c->d, kn = c->kb * c->hk * c->tk * c->d;
    const int64_t vn = c->vb * c->hv * c->tk * c->dv, on = c->b * c->hq * c->tq * c->dv;
    float *q = ref_alloc_f(qn), *k = ref_alloc_f(kn), *v = ref_alloc_f(vn), *out = ref_alloc_f(on);
    float *sinks = ref_alloc_f(c->hq);
    double *want = ref_alloc_d(on);
    ref_fill(rng, q, qn, -1.5, 1.5);
    ref_fill(rng, k, kn, -1.5, 1.5);
    ref_fill(rng, v, vn, -1, 1);
    ref_fill(rng, sinks, c->hq, -1, 2);

    coreai_sdpa_params p;
    memset(&p, 0, sizeof p);
    p.batch = c->b;
    p.q_heads = c->hq;
    p.k_heads = c->hk;
    p.v_heads = c->hv;
    p.q_len = c->tq;
    p.kv_len = c->tk;
    p.head_dim = c->d;
    p.v_head_dim = c->dv;
    p.k_batch = c->kb;
    p.v_batch = c->vb;
    p.scale = c->has_scale ? c->scale : (float)pow((double)c->d, -0.5);
    p.is_causal = c->causal;
    p.window_size = c->window;
    p.mask_kind = c->mask;

    /* mask operand, dense over its own shape */
    int64_t mshape[4] = {1, 1, c->tq, c->tk};
    if (c->mask_rank == 4) {
        mshape[0] = c->b;
        mshape[1] = c->mask_heads ? c->hq : 1;
    }
    const int64_t mn = mshape[0] * mshape[1] * c->tq * c->tk;
    uint8_t *mb = (uint8_t *)ref_alloc((size_t)mn);
    float *mf = ref_alloc_f(mn);
    for (int64_t i = 0; i < mn; ++i) {
        const int vis = c->mask_band ? mask_band_visible(c, i / (c->tq * c->tk), i / c->tk % c->tq, i % c->tk)
                                     : ref_unit(rng) < c->mask_density;
        mb[i] = (uint8_t)vis;
        /* float masks: nonzero attends, whatever the sign or size */
        mf[i] = vis ? (ref_unit(rng) < 0.5 ? -INFINITY : ref_float(rng, 0.5, 3)) : 0.0f;
    }
    if (c->mask) {
        p.mask_strides[0] = mshape[0] == 1 ? 0 : mshape[1] * c->tq * c->tk;
        p.mask_strides[1] = mshape[1] == 1 ? 0 : c->tq * c->tk;
        p.mask_strides[2] = c->tk;
        p.mask_strides[3] = 1;
    }

    double *logit = ref_alloc_d(c->tk + 1);
    for (int64_t b = 0; b < c->b; ++b)
        for (int64_t h = 0; h < c->hq; ++h) {
            const int64_t hk = h / (c->hq / c->hk), hv = h / (c->hq / c->hv);
            const int64_t bk = c->kb == 1 ? 0 : b, bv = c->vb == 1 ? 0 : b;
            for (int64_t i = 0; i < c->tq; ++i) {
                double mx = -INFINITY;
                for (int64_t j = 0; j < c->tk; ++j) {
                    double s = 0.0;
                    for (int64_t t = 0; t < c->d; ++t)
                        s += (double)q[((b * c->hq + h) * c->tq + i) * c->d + t] *
                             (double)k[((bk * c->hk + hk) * c->tk + j) * c->d + t];
                    s *= (double)p.scale;
                    int vis;
                    if (c->mask) {
                        const int64_t mo = (mshape[0] == 1 ? 0 : b) * mshape[1] * c->tq * c->tk +
                                           (mshape[1] == 1 ? 0 : h) * c->tq * c->tk + i * c->tk + j;
                        vis = c->mask == 1 ? mb[mo] != 0 : mf[mo] != 0.0f;
                    } else {
                        vis = rule_visible(c, i, j);
                    }
                    logit[j] = s - (vis ? 0.0 : 1e4);
                    mx = fmax(mx, logit[j]);
                }
                int64_t n = c->tk;
                if (c->sinks) {
                    logit[n++] = sinks[h];
                    mx = fmax(mx, sinks[h]);
                }
                double den = 0.0;
                for (int64_t j = 0; j < n; ++j)
                    den += exp(logit[j] - mx);
                for (int64_t e = 0; e < c->dv; ++e) {
                    double acc = 0.0;
                    for (int64_t j = 0; j < c->tk; ++j)
                        acc += exp(logit[j] - mx) / den * (double)v[((bv * c->hv + hv) * c->tk + j) * c->dv + e];
                    want[((b * c->hq + h) * c->tq + i) * c->dv + e] = acc;
                }
            }
        }
    const void *mask = c->mask == 1 ? (const void *)mb : c->mask == 2 ? (const void *)mf : NULL;
    assert_int_equal(coreai_sdpa_f32(&p, q, k, v, mask, c->sinks ? sinks : NULL, out), COREAI_STATUS_OK);
    char what[256];
    snprintf(what, sizeof what,
             "sdpa B%lld Hq%lld Hk%lld Hv%lld Tq%lld Tkv%lld D%lld Dv%lld kb%lld vb%lld causal%d win%lld mask%d/r%d/h%d/%.2f/band%d sinks%d",
             (long long)c->b, (long long)c->hq, (long long)c->hk, (long long)c->hv, (long long)c->tq,
             (long long)c->tk, (long long)c->d, (long long)c->dv, (long long)c->kb, (long long)c->vb, c->causal,
             (long long)c->window, c->mask, c->mask_rank, c->mask_heads, c->mask_density, c->mask_band, c->sinks);
    ref_check(out, want, on, sdpa_tolerance(c, q, k, p.scale), what);
    free(q);
    free(k);
    free(v);
    free(out);
    free(sinks);
    free(want);
    free(mb);
    free(mf);
    free(logit);
}

/* Every causal / window combination on MHA, GQA and MQA, Tq < = > Tkv. */
static void test_rules(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(501);
    static const int64_t heads[][3] = {{4, 4, 4}, {4, 2, 2}, {4, 1, 1}, {6, 3, 2}, {8, 2, 4}};
    static const int64_t lens[][2] = {{5, 7}, {7, 7}, {1, 9}, {3, 70}, {70, 70}, {9, 130}, {1, 1}};
    static const int64_t windows[] = {0, 1, 2, 11, 100};
    for (size_t hi = 0; hi < sizeof heads / sizeof heads[0]; ++hi)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; ++li)
            for (int causal = 0; causal <= 1; ++causal)
                for (size_t wi = 0; wi < sizeof windows / sizeof windows[0]; ++wi) {
                    sdpa_case c = {0};
                    c.b = 1 + (int64_t)(hi % 2);
                    c.hq = heads[hi][0];
                    c.hk = heads[hi][1];
                    c.hv = heads[hi][2];
                    c.tq = lens[li][0];
                    c.tk = lens[li][1];
                    c.d = (hi % 3 == 0) ? 11 : (hi % 3 == 1) ? 16 : 3;
                    c.dv = (li % 2) ? 13 : 8;
                    c.kb = c.vb = c.b;
                    c.causal = causal;
                    c.window = windows[wi];
                    c.sinks = (int)((hi + li + wi) % 2);
                    c.has_scale = (li % 3) == 0;
                    c.scale = 1.5f;
                    run(&rng, &c);
                }
}

/* More queries than keys: lower-right causal rows with no visible key. */
static void test_fully_masked_rows(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(502);
    for (int sinks = 0; sinks <= 1; ++sinks)
        for (int64_t w = 0; w <= 3; ++w) {
            sdpa_case c = {.b = 2, .hq = 2, .hk = 1, .hv = 2, .tq = 9, .tk = 4, .d = 5, .dv = 6, .kb = 2, .vb = 1,
                           .causal = 1, .window = w, .sinks = sinks};
            run(&rng, &c);
            c.causal = 0;
            run(&rng, &c);
        }
}

/* Explicit masks: bool and float, broadcast over batch / heads, dense and
 * sparse (including rows with every key masked); is_causal is ignored. */
static void test_masks(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(503);
    static const double densities[] = {1.0, 0.7, 0.1, 0.0};
    for (int kind = 1; kind <= 2; ++kind)
        for (int rank = 2; rank <= 4; ++rank)
            for (int mh = 0; mh <= (rank == 4); ++mh)
                for (size_t di = 0; di < sizeof densities / sizeof densities[0]; ++di)
                    for (int sinks = 0; sinks <= 1; ++sinks) {
                        sdpa_case c = {.b = 2, .hq = 4, .hk = 2, .hv = 1, .tq = 5, .tk = 70, .d = 7, .dv = 9,
                                       .kb = 2, .vb = 2, .causal = (int)(di % 2), .window = (int64_t)di,
                                       .mask = kind, .mask_rank = rank, .mask_heads = mh,
                                       .mask_density = densities[di], .sinks = sinks};
                        run(&rng, &c);
                    }
}

/* Band masks (what a causal, sliding-window or padding mask looks like),
 * which the kernel runs by key range, and bands with holes, which it must
 * not: across key tiles, query blocks and broadcast planes. */
static void test_mask_bands(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(507);
    static const int64_t lens[][2] = {{70, 70}, {33, 100}, {1, 9}, {5, 130}, {17, 17}};
    for (int kind = 1; kind <= 2; ++kind)
        for (int band = 1; band <= 5; ++band)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; ++li) {
                sdpa_case c = {.b = 2, .hq = 4, .hk = 2, .hv = 2, .tq = lens[li][0], .tk = lens[li][1],
                               .d = li % 2 ? 32 : 13, .dv = li % 2 ? 32 : 19, .kb = 2, .vb = 2,
                               .mask = kind, .mask_rank = li % 3 == 2 ? 2 : 4, .mask_heads = (int)(li % 2),
                               .mask_band = band, .sinks = (int)((band + li) % 2)};
                run(&rng, &c);
            }
}

/* A causal mask gives the bits of is_causal (both run by key range). */
static void test_causal_mask_bits(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(508);
    const int64_t hq = 4, tq = 40, tk = 90, d = 32, n = hq * tq * d, kn = tk * d;
    float *q = ref_alloc_f(n), *k = ref_alloc_f(kn), *v = ref_alloc_f(kn);
    float *a = ref_alloc_f(n), *b = ref_alloc_f(n);
    uint8_t *m = (uint8_t *)ref_alloc((size_t)(tq * tk));
    ref_fill(&rng, q, n, -1.5, 1.5);
    ref_fill(&rng, k, kn, -1.5, 1.5);
    ref_fill(&rng, v, kn, -1, 1);
    for (int64_t i = 0; i < tq; ++i)
        for (int64_t j = 0; j < tk; ++j)
            m[i * tk + j] = (uint8_t)(j <= i + tk - tq);
    coreai_sdpa_params p;
    memset(&p, 0, sizeof p);
    p.batch = 1;
    p.q_heads = hq;
    p.k_heads = p.v_heads = 1;
    p.q_len = tq;
    p.kv_len = tk;
    p.head_dim = p.v_head_dim = d;
    p.k_batch = p.v_batch = 1;
    p.scale = 0.25f;
    p.is_causal = 1;
    assert_int_equal(coreai_sdpa_f32(&p, q, k, v, NULL, NULL, a), COREAI_STATUS_OK);
    p.is_causal = 0;
    p.mask_kind = COREAI_SDPA_MASK_BOOL;
    p.mask_strides[2] = tk;
    p.mask_strides[3] = 1;
    assert_int_equal(coreai_sdpa_f32(&p, q, k, v, m, NULL, b), COREAI_STATUS_OK);
    assert_memory_equal(a, b, (size_t)n * sizeof(float));
    free(q);
    free(k);
    free(v);
    free(a);
    free(b);
    free(m);
}

/* Key / value batch broadcast, odd and tiny head sizes, tile boundaries. */
static void test_shapes(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(504);
    static const int64_t tks[] = {63, 64, 65, 128, 129, 200};
    for (size_t i = 0; i < sizeof tks / sizeof tks[0]; ++i) {
        sdpa_case c = {.b = 3, .hq = 3, .hk = 1, .hv = 3, .tq = 6, .tk = tks[i], .d = 1 + (int64_t)i * 7,
                       .dv = 1 + (int64_t)i * 5, .kb = 1, .vb = i % 2 ? 1 : 3, .causal = (int)(i % 2),
                       .window = i % 3 == 2 ? 40 : 0, .sinks = (int)(i % 2)};
        run(&rng, &c);
        c.tq = c.tk; /* square: every query block crosses the diagonal */
        run(&rng, &c);
    }
}

/* The blocking of the kernel: query blocks of one row per vector lane (1 to
 * 16 rows), key tiles of 64, 8 (or 16) keys per QK^T step, value columns in vectors
 * with a tail of fewer than a vector, head_dim chunks of 128 and v_head_dim
 * chunks of 256. Sizes on both sides of each of those edges. */
static void test_blocking(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(505);
    static const int64_t dims[][2] = {{1, 1}, {3, 5}, {17, 17}, {33, 33}, {64, 64}, {80, 80},
                                      {128, 128}, {32, 40}, {129, 7}, {200, 260}, {5, 257}};
    static const int64_t lens[][2] = {{1, 1}, {5, 37}, {17, 17}, {16, 16}, {33, 100}, {64, 64},
                                      {65, 65}, {100, 130}, {8, 200}, {30, 9}};
    int n = 0;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; ++di)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; ++li) {
            const int big = dims[di][0] * dims[di][1] > 128 * 128 / 2;
            if (big && lens[li][0] * lens[li][1] > 4000)
                continue; /* the double reference is O(Tq Tkv^2 Dv) */
            const int gqa = (int)((di + li) % 3);
            sdpa_case c = {.b = 1 + (int64_t)(li % 2), .hq = 2, .hk = gqa == 0 ? 2 : 1, .hv = gqa == 2 ? 1 : 2,
                           .tq = lens[li][0], .tk = lens[li][1], .d = dims[di][0], .dv = dims[di][1],
                           .causal = (int)((di + li) % 2), .window = (di + li) % 5 == 3 ? 21 : 0,
                           .sinks = (int)((di * 3 + li) % 2), .has_scale = (int)(li % 4 == 1), .scale = 0.3f};
            c.kb = c.b;
            c.vb = li % 3 == 0 ? 1 : c.b;
            run(&rng, &c);
            ++n;
        }
    assert_true(n > 80);
}

/* The AVX-512 QK^T step of 16 keys for a head_dim known at compile time
 * (32, 64, 80, 96, 128; a head_dim chunk of 128 with a longer one), key
 * counts on both sides of 16 with 8 / 4 / 1-key steps after it; and the
 * P.V row groups (4, 8 or 16 rows for 4, 2 or 1 vectors of value columns)
 * that skip keys beyond the causal diagonal or before a window's edge. */
static void test_key_steps(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(507);
    static const int64_t dims[] = {32, 64, 80, 96, 128, 31, 160};
    static const int64_t tks[] = {15, 16, 17, 29, 45, 64, 83};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; ++di)
        for (size_t ti = 0; ti < sizeof tks / sizeof tks[0]; ++ti) {
            const int64_t d = dims[di], tk = tks[ti];
            const int64_t tq = ti % 3 == 0 ? tk : 7 + (int64_t)ti * 5;
            const int64_t dv = ti % 3 == 1 ? d : 16 * (1 + (int64_t)(ti % 4)) + (int64_t)(di % 2) * 3;
            sdpa_case c = {.b = 1, .hq = 2, .hk = 1 + (int64_t)(ti % 2), .hv = 2, .tq = tq, .tk = tk, .d = d,
                           .dv = dv, .kb = 1, .vb = 1, .causal = (int)((di + ti) % 2),
                           .window = (di + ti) % 3 == 1 ? 9 : 0, .sinks = (int)(ti % 2)};
            run(&rng, &c);
        }
}

/* Logits far apart (scale 30): weights below e^-87.3 flush to 0 and the
 * running max grows by a lot between key tiles. */
static void test_wide_logits(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(508);
    for (int causal = 0; causal <= 1; ++causal)
        for (int sinks = 0; sinks <= 1; ++sinks) {
            sdpa_case c = {.b = 1, .hq = 2, .hk = 2, .hv = 2, .tq = 40, .tk = 150, .d = 32, .dv = 21, .kb = 1,
                           .vb = 1, .causal = causal, .sinks = sinks, .has_scale = 1, .scale = 30.0f};
            run(&rng, &c);
        }
}

/* Masks and fully masked rows inside wide query blocks, with value tails. */
static void test_blocking_masks(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(506);
    static const double densities[] = {0.9, 0.3, 0.02, 0.0};
    for (int kind = 1; kind <= 2; ++kind)
        for (size_t di = 0; di < sizeof densities / sizeof densities[0]; ++di) {
            sdpa_case c = {.b = 1, .hq = 2, .hk = 1, .hv = 2, .tq = 33, .tk = 100, .d = 33, .dv = 40,
                           .kb = 1, .vb = 1, .causal = 1, .mask = kind, .mask_rank = 4,
                           .mask_heads = (int)(di % 2), .mask_density = densities[di], .sinks = (int)(di % 2)};
            run(&rng, &c);
        }
    /* Tq > Tkv, lower-right causal: the first Tq - Tkv rows see no key and
     * share blocks with rows that do. */
    for (int sinks = 0; sinks <= 1; ++sinks)
        for (int64_t w = 0; w <= 5; w += 5) {
            sdpa_case c = {.b = 1, .hq = 3, .hk = 3, .hv = 1, .tq = 40, .tk = 21, .d = 19, .dv = 20,
                           .kb = 1, .vb = 1, .causal = 1, .window = w, .sinks = sinks};
            run(&rng, &c);
        }
}

/* Zero keys (the reference's output is 0), zero queries, bad params. */
static void test_edges(void **state)
{
    (void)state;
    float q[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    coreai_sdpa_params p = {.batch = 1, .q_heads = 2, .k_heads = 1, .v_heads = 1, .q_len = 2, .kv_len = 0,
                            .head_dim = 2, .v_head_dim = 2, .k_batch = 1, .v_batch = 1, .scale = 1.0f};
    for (int i = 0; i < 8; ++i)
        out[i] = 42.0f;
    assert_int_equal(coreai_sdpa_f32(&p, q, q, q, NULL, NULL, out), COREAI_STATUS_OK);
    for (int i = 0; i < 8; ++i)
        assert_true(out[i] == 0.0f);
    p.kv_len = 1;
    p.k_heads = 3; /* does not divide 2 */
    assert_int_equal(coreai_sdpa_f32(&p, q, q, q, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.k_heads = 1;
    p.mask_kind = COREAI_SDPA_MASK_BOOL; /* but no mask */
    assert_int_equal(coreai_sdpa_f32(&p, q, q, q, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.mask_kind = COREAI_SDPA_MASK_NONE;
    p.k_batch = 2;
    assert_int_equal(coreai_sdpa_f32(&p, q, q, q, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.k_batch = 1;
    assert_int_equal(coreai_sdpa_f32(NULL, q, q, q, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.q_len = 0;
    assert_int_equal(coreai_sdpa_f32(&p, q, q, q, NULL, NULL, out), COREAI_STATUS_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_fully_masked_rows),
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_mask_bands),
        cmocka_unit_test(test_causal_mask_bits),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_blocking),
        cmocka_unit_test(test_blocking_masks),
        cmocka_unit_test(test_key_steps),
        cmocka_unit_test(test_wide_logits),
        cmocka_unit_test(test_edges),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
