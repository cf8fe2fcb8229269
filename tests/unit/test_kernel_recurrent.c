/*
 * coreai_rnn_f32 / coreai_gru_f32 / coreai_lstm_f32 against a double
 * reference written the textbook way: whole gate vectors per step (W x + b,
 * W h + b), then the cell update; the reverse direction walks time
 * backwards. Forward and bidirectional, odd sizes, S = 0 and 1, aliasing of
 * the final states with the initial ones.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

enum { RNN, GRU, LSTM };

typedef struct rcase {
    int kind;
    int64_t s, b, in, h;
    int bidir, relu, no_bias, alias;
} rcase;

static double sig(double v) { return 1.0 / (1.0 + exp(-v)); }

/* One direction of the reference; h / c are [B, H] in double, updated in place. */
static void ref_dir(const rcase *c, const float *x, const float *wih, const float *whh, const float *b1,
                    const float *b2, int reverse, double *h, double *cell, double *out /* [S, B, D*H] */)
{
    const int64_t g = c->kind == RNN ? 1 : c->kind == GRU ? 3 : 4, hd = c->h, dh = (c->bidir ? 2 : 1) * hd;
    double *gi = ref_alloc_d(g * hd), *gh = ref_alloc_d(g * hd);
    for (int64_t step = 0; step < c->s; ++step) {
        const int64_t t = reverse ? c->s - 1 - step : step;
        for (int64_t bb = 0; bb < c->b; ++bb) {
            double *hb = h + bb * hd;
            for (int64_t r = 0; r < g * hd; ++r) {
                double a = b1 ? b1[r] : 0.0, e = b2 ? b2[r] : 0.0;
                for (int64_t i = 0; i < c->in; ++i)
                    a += (double)wih[r * c->in + i] * x[(t * c->b + bb) * c->in + i];
                for (int64_t i = 0; i < hd; ++i)
                    e += (double)whh[r * hd + i] * hb[i];
                gi[r] = a;
                gh[r] = e;
            }
            for (int64_t j = 0; j < hd; ++j) {
                double hn;
                if (c->kind == RNN) {
                    const double a = gi[j] + gh[j];
                    hn = c->relu ? (a > 0 ? a : 0) : tanh(a);
                } else if (c->kind == GRU) {
                    const double r = sig(gi[j] + gh[j]), z = sig(gi[hd + j] + gh[hd + j]);
                    const double n = tanh(gi[2 * hd + j] + r * gh[2 * hd + j]);
                    hn = (1 - z) * n + z * hb[j];
                } else {
                    const double i = sig(gi[j] + gh[j]), f = sig(gi[hd + j] + gh[hd + j]);
                    const double o = sig(gi[2 * hd + j] + gh[2 * hd + j]), gg = tanh(gi[3 * hd + j] + gh[3 * hd + j]);
                    cell[bb * hd + j] = f * cell[bb * hd + j] + i * gg;
                    hn = o * tanh(cell[bb * hd + j]);
                }
                out[(t * c->b + bb) * dh + (reverse ? hd : 0) + j] = hn;
            }
            /* every unit of the step saw the old h; now commit */
            for (int64_t j = 0; j < hd; ++j)
                hb[j] = out[(t * c->b + bb) * dh + (reverse ? hd : 0) + j];
        }
    }
    free(gi);
    free(gh);
}

static void run(ref_rng *rng, const rcase *c)
{
    const int64_t g = c->kind == RNN ? 1 : c->kind == GRU ? 3 : 4, hd = c->h, dirs = c->bidir ? 2 : 1;
    const int64_t dh = dirs * hd, xn = c->s * c->b * c->in, on = c->s * c->b * dh, sn = c->b * dh;
    float *x = ref_alloc_f(xn), *out = ref_alloc_f(on), *h0 = ref_alloc_f(sn), *c0 = ref_alloc_f(sn);
    float *hn = ref_alloc_f(sn), *cn = ref_alloc_f(sn);
    float *w[2][4];
    const int64_t wn[4] = {g * hd * c->in, g * hd * hd, g * hd, g * hd};
    for (int d = 0; d < 2; ++d)
        for (int i = 0; i < 4; ++i) {
            w[d][i] = ref_alloc_f(wn[i]);
            ref_fill(rng, w[d][i], wn[i], -0.6, 0.6);
        }
    ref_fill(rng, x, xn, -1.5, 1.5);
    ref_fill(rng, h0, sn, -1, 1);
    ref_fill(rng, c0, sn, -1, 1);
    double *want = ref_alloc_d(on + 1), *wh = ref_alloc_d(sn + 1), *wc = ref_alloc_d(sn + 1);
    double *hs = ref_alloc_d(c->b * hd + 1), *cs = ref_alloc_d(c->b * hd + 1);
    for (int d = 0; d < dirs; ++d) {
        for (int64_t bb = 0; bb < c->b; ++bb)
            for (int64_t j = 0; j < hd; ++j) {
                hs[bb * hd + j] = h0[bb * dh + d * hd + j];
                cs[bb * hd + j] = c0[bb * dh + d * hd + j];
            }
        const float *b1 = c->no_bias ? NULL : w[d][2], *b2 = (c->no_bias || c->kind != GRU) ? NULL : w[d][3];
        ref_dir(c, x, w[d][0], w[d][1], b1, b2, d == 1, hs, cs, want);
        for (int64_t bb = 0; bb < c->b; ++bb)
            for (int64_t j = 0; j < hd; ++j) {
                wh[bb * dh + d * hd + j] = hs[bb * hd + j];
                wc[bb * dh + d * hd + j] = cs[bb * hd + j];
            }
    }
    coreai_recurrent_params p = {.seq_len = c->s, .batch = c->b, .input_size = c->in, .hidden_size = hd,
                                 .bidirectional = c->bidir, .activation = c->relu ? COREAI_RNN_RELU : COREAI_RNN_TANH};
    float *hdst = c->alias ? h0 : hn, *cdst = c->alias ? c0 : cn;
    const float *nb = NULL;
    const float *b0 = c->no_bias ? nb : w[0][2], *b1 = c->no_bias ? nb : w[1][2];
    const float *bb0 = c->no_bias ? nb : w[0][3], *bb1 = c->no_bias ? nb : w[1][3];
    const int bd = c->bidir;
    coreai_status st;
    if (c->kind == RNN)
        st = coreai_rnn_f32(&p, x, h0, w[0][0], w[0][1], b0, bd ? w[1][0] : NULL, bd ? w[1][1] : NULL,
                            bd ? b1 : NULL, out, hdst);
    else if (c->kind == GRU)
        st = coreai_gru_f32(&p, x, h0, w[0][0], w[0][1], b0, bb0, bd ? w[1][0] : NULL, bd ? w[1][1] : NULL,
                            bd ? b1 : NULL, bd ? bb1 : NULL, out, hdst);
    else
        st = coreai_lstm_f32(&p, x, h0, c0, w[0][0], w[0][1], b0, bd ? w[1][0] : NULL, bd ? w[1][1] : NULL,
                             bd ? b1 : NULL, out, hdst, cdst);
    assert_int_equal(st, COREAI_STATUS_OK);
    char what[160];
    snprintf(what, sizeof what, "%s S%lld B%lld I%lld H%lld bidir %d relu %d nobias %d alias %d",
             c->kind == RNN ? "rnn" : c->kind == GRU ? "gru" : "lstm", (long long)c->s, (long long)c->b,
             (long long)c->in, (long long)hd, c->bidir, c->relu, c->no_bias, c->alias);
    ref_check(out, want, on, REF_TOL, what);
    ref_check(hdst, wh, sn, REF_TOL, what);
    if (c->kind == LSTM)
        ref_check(cdst, wc, sn, REF_TOL, what);
    for (int d = 0; d < 2; ++d)
        for (int i = 0; i < 4; ++i)
            free(w[d][i]);
    free(x);
    free(out);
    free(h0);
    free(c0);
    free(hn);
    free(cn);
    free(want);
    free(wh);
    free(wc);
    free(hs);
    free(cs);
}

static void test_cells(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(801);
    static const int64_t dims[][4] = {{5, 1, 4, 3}, {1, 3, 1, 1}, {7, 2, 7, 8}, {0, 2, 3, 4}, {4, 3, 5, 17}};
    for (int kind = RNN; kind <= LSTM; ++kind)
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; ++i)
            for (int bidir = 0; bidir <= 1; ++bidir)
                for (int variant = 0; variant < 4; ++variant) {
                    rcase c = {.kind = kind, .s = dims[i][0], .b = dims[i][1], .in = dims[i][2], .h = dims[i][3],
                               .bidir = bidir, .relu = kind == RNN && (variant & 1), .no_bias = variant == 2,
                               .alias = variant == 3};
                    run(&rng, &c);
                }
}

static void test_invalid(void **state)
{
    (void)state;
    float buf[64] = {0};
    coreai_recurrent_params p = {.seq_len = 1, .batch = 1, .input_size = 2, .hidden_size = 2, .activation = 7};
    assert_int_equal(coreai_rnn_f32(&p, buf, buf, buf, buf, NULL, NULL, NULL, NULL, buf, buf),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p.activation = COREAI_RNN_TANH;
    p.bidirectional = 1; /* without backward weights */
    assert_int_equal(coreai_gru_f32(&p, buf, buf, buf, buf, NULL, NULL, NULL, NULL, NULL, NULL, buf, buf),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p.bidirectional = 0;
    assert_int_equal(coreai_lstm_f32(&p, buf, buf, NULL, buf, buf, NULL, NULL, NULL, NULL, buf, buf, buf),
                     COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cells),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
