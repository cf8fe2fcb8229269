/*
 * coreai_gated_delta_update_f32 against a double reference of the recurrence
 * as the reference implementation states it step by step: decay the whole
 * state, read kv_mem = S^T k, delta, rank-1 update, read out y = S^T q.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

typedef struct gcase {
    int64_t b, hk, hv, t, dk, dv;
    int l2, alias;
} gcase;

static void run(ref_rng *rng, const gcase *c)
{
    const int64_t qn = c->b * c->hk * c->t * c->dk, vn = c->b * c->hv * c->t * c->dv;
    const int64_t gn = c->b * c->hv * c->t, sn = c->b * c->hv * c->dk * c->dv, on = c->b * c->t * c->hv * c->dv;
    float *q = ref_alloc_f(qn), *k = ref_alloc_f(qn), *v = ref_alloc_f(vn), *g = ref_alloc_f(gn);
    float *beta = ref_alloc_f(gn), *s0 = ref_alloc_f(sn), *out = ref_alloc_f(on), *fs = ref_alloc_f(sn);
    /* without the L2 norm, keep q.k small so the state stays bounded */
    const double amp = c->l2 ? 1.5 : 0.6 / sqrt((double)c->dk);
    ref_fill(rng, q, qn, -amp, amp);
    ref_fill(rng, k, qn, -amp, amp);
    ref_fill(rng, v, vn, -1, 1);
    ref_fill(rng, g, gn, -2.5, -0.05);
    ref_fill(rng, beta, gn, 0, 1);
    ref_fill(rng, s0, sn, -0.5, 0.5);
    double *want = ref_alloc_d(on), *wstate = ref_alloc_d(sn);
    double *qq = ref_alloc_d(c->dk), *kk = ref_alloc_d(c->dk), *kv = ref_alloc_d(c->dv);
    const double scale = 1.0 / sqrt((double)c->dk);
    for (int64_t i = 0; i < sn; ++i)
        wstate[i] = s0[i];
    for (int64_t b = 0; b < c->b; ++b)
        for (int64_t h = 0; h < c->hv; ++h) {
            const int64_t hk = h * c->hk / c->hv; /* repeat_interleave of the q/k heads */
            double *S = wstate + (b * c->hv + h) * c->dk * c->dv;
            for (int64_t t = 0; t < c->t; ++t) {
                double nq = 0, nk = 0;
                for (int64_t i = 0; i < c->dk; ++i) {
                    qq[i] = q[((b * c->hk + hk) * c->t + t) * c->dk + i];
                    kk[i] = k[((b * c->hk + hk) * c->t + t) * c->dk + i];
                    nq += qq[i] * qq[i];
                    nk += kk[i] * kk[i];
                }
                for (int64_t i = 0; i < c->dk; ++i) {
                    if (c->l2) {
                        qq[i] /= sqrt(nq + 1e-6);
                        kk[i] /= sqrt(nk + 1e-6);
                    }
                    qq[i] *= scale;
                }
                const double decay = exp((double)g[(b * c->hv + h) * c->t + t]);
                const double bt = beta[(b * c->hv + h) * c->t + t];
                for (int64_t i = 0; i < c->dk * c->dv; ++i)
                    S[i] *= decay;
                for (int64_t j = 0; j < c->dv; ++j) {
                    double m = 0;
                    for (int64_t i = 0; i < c->dk; ++i)
                        m += S[i * c->dv + j] * kk[i];
                    kv[j] = (v[((b * c->hv + h) * c->t + t) * c->dv + j] - m) * bt;
                }
                for (int64_t i = 0; i < c->dk; ++i)
                    for (int64_t j = 0; j < c->dv; ++j)
                        S[i * c->dv + j] += kk[i] * kv[j];
                for (int64_t j = 0; j < c->dv; ++j) {
                    double y = 0;
                    for (int64_t i = 0; i < c->dk; ++i)
                        y += S[i * c->dv + j] * qq[i];
                    want[((b * c->t + t) * c->hv + h) * c->dv + j] = y;
                }
            }
        }
    coreai_gated_delta_params p = {.batch = c->b, .seq_len = c->t, .kq_heads = c->hk, .v_heads = c->hv,
                                   .k_dim = c->dk, .v_dim = c->dv, .use_qk_l2_norm = c->l2,
                                   .q_scale = (float)scale};
    float *dst = c->alias ? s0 : fs;
    assert_int_equal(coreai_gated_delta_update_f32(&p, q, k, v, g, beta, s0, out, dst), COREAI_STATUS_OK);
    char what[160];
    snprintf(what, sizeof what, "gated_delta B%lld Hk%lld Hv%lld T%lld Dk%lld Dv%lld l2 %d alias %d", (long long)c->b,
             (long long)c->hk, (long long)c->hv, (long long)c->t, (long long)c->dk, (long long)c->dv, c->l2, c->alias);
    ref_check(out, want, on, REF_TOL, what);
    ref_check(dst, wstate, sn, REF_TOL, what);
    free(q);
    free(k);
    free(v);
    free(g);
    free(beta);
    free(s0);
    free(out);
    free(fs);
    free(want);
    free(wstate);
    free(qq);
    free(kk);
    free(kv);
}

static void test_shapes(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1001);
    static const int64_t dims[][6] = {{1, 2, 2, 3, 8, 8},  {2, 4, 4, 5, 16, 16}, {1, 1, 4, 8, 3, 5},
                                      {2, 2, 4, 1, 1, 1},  {1, 1, 2, 4, 7, 65},  {1, 2, 2, 3, 70, 130},
                                      {3, 1, 1, 6, 9, 64}, {1, 1, 1, 0, 4, 4}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; ++i)
        for (int l2 = 0; l2 <= 1; ++l2)
            for (int alias = 0; alias <= 1; ++alias) {
                gcase c = {dims[i][0], dims[i][1], dims[i][2], dims[i][3], dims[i][4], dims[i][5], l2, alias};
                run(&rng, &c);
            }
}

static void test_invalid(void **state)
{
    (void)state;
    float buf[16] = {0};
    coreai_gated_delta_params p = {.batch = 1, .seq_len = 1, .kq_heads = 3, .v_heads = 4, .k_dim = 1, .v_dim = 1};
    assert_int_equal(coreai_gated_delta_update_f32(&p, buf, buf, buf, buf, buf, buf, buf, buf),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p.kq_heads = 2;
    assert_int_equal(coreai_gated_delta_update_f32(&p, buf, buf, buf, NULL, buf, buf, buf, buf),
                     COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
