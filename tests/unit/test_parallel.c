/*
 * Threads (coreai_set_parallel_for): the GEMM (packed, strided with and
 * without scratch, few rows read in place, split by columns and by rows),
 * conv2d (implicit GEMM with and without scratch, direct) and attention give
 * bitwise the same outputs with 1, 2 and 3 pthreads (coreai_runner_pool) and
 * with a parallel-for that runs the tasks in reverse order on one thread; the
 * calls are really split (the tasks are counted), and one of each kind is
 * checked against a naive double reference too. Runs every ISA variant
 * (every_isa.h). Scratch buffers are allocated to the size the kernels
 * document, so a task writing past its slice shows under ASan / valgrind.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"
#include "parallel_modes.h"
#include "winograd_ref.h"

/* ---- linear: packed weights (GEMM packed path) ---- */

typedef struct linear_case {
    coreai_linear_packed_params p;
    const float *x, *w, *packed, *bias, *add;
} linear_case;

static void linear_run(const void *cv, float *out)
{
    const linear_case *c = cv;
    coreai_status st = c->add != NULL ? coreai_linear_packed_add_f32(&c->p, c->x, c->packed, c->bias, c->add, out)
                                      : coreai_linear_packed_f32(&c->p, c->x, c->packed, c->bias, out);
    assert_int_equal(st, COREAI_STATUS_OK);
}

static void check_linear(int64_t rows, int64_t in, int64_t outf, int32_t epilogue, int with_add, int64_t head)
{
    ref_rng r = ref_rng_make(0x9e3779b97f4a7c15ull ^ (uint64_t)(rows * 131 + in * 7 + outf));
    linear_case c = {{rows, in, outf, epilogue, head, head}, NULL, NULL, NULL, NULL, NULL};
    float *x = random_floats(&r, rows * in), *w = random_floats(&r, outf * in), *bias = random_floats(&r, outf);
    float *add = with_add ? random_floats(&r, rows * outf) : NULL;
    float *packed = malloc((size_t)coreai_packed_b_count(in, outf) * sizeof(float));
    assert_non_null(packed);
    assert_int_equal(coreai_pack_b_f32(in, outf, 1, w, packed), COREAI_STATUS_OK);
    c.x = x;
    c.w = w;
    c.packed = packed;
    c.bias = bias;
    c.add = add;
    float *out = malloc((size_t)(rows * outf) * sizeof(float));
    assert_non_null(out);
    char what[128];
    snprintf(what, sizeof what, "linear_packed %lldx%lldx%lld epilogue %d add %d head %lld", (long long)rows,
             (long long)in, (long long)outf, epilogue, with_add, (long long)head);
    check_modes(what, linear_run, &c, rows * outf, out);
    if (epilogue == COREAI_EPILOGUE_NONE && head == 0) {
        /* the oracle: sums in double */
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < outf; ++j) {
                double s = bias[j];
                for (int64_t p = 0; p < in; ++p)
                    s += (double)x[i * in + p] * w[j * in + p];
                if (add != NULL)
                    s += add[i * outf + j];
                assert_true(fabs(s - out[i * outf + j]) <= 1e-5 * (double)in);
            }
    }
    free(x);
    free(w);
    free(bias);
    free(add);
    free(packed);
    free(out);
}

static void test_linear_packed(void **state)
{
    (void)state;
    check_linear(64, 256, 1000, COREAI_EPILOGUE_NONE, 0, 0); /* columns */
    check_linear(37, 300, 515, COREAI_EPILOGUE_GELU, 1, 0);  /* ragged edges, epilogue after the store */
    check_linear(50, 128, 384, COREAI_EPILOGUE_RELU, 1, 64); /* head layouts */
    check_linear(1, 1024, 1536, COREAI_EPILOGUE_SILU, 0, 0); /* decode: one row */
    check_linear(200, 700, 16, COREAI_EPILOGUE_NONE, 0, 0);  /* one panel wide: split by rows */
    check_linear(5, 2000, 40, COREAI_EPILOGUE_NONE, 1, 0);   /* long k (several k blocks) */
    /* 67 M multiply-adds: several tasks per thread (parallel.h), 6 with the
     * 3 reversed ones, the last part ragged */
    const int64_t before = reversed_tasks;
    check_linear(64, 1024, 1000, COREAI_EPILOGUE_RELU, 0, 0);
    assert_true(reversed_tasks - before >= 6);
}

/* ---- sibling linears of one x in one call ---- */

typedef struct multi_case {
    coreai_linear_packed_multi_params p;
    const float *x;
    coreai_linear_packed_operands ops[3];
    int64_t offset[3]; /* of each linear's output in the case's out */
} multi_case;

static void multi_run(const void *cv, float *out)
{
    const multi_case *c = cv;
    coreai_linear_packed_operands ops[3];
    for (int l = 0; l < c->p.count; ++l) {
        ops[l] = c->ops[l];
        ops[l].out = out + c->offset[l];
    }
    assert_int_equal(coreai_linear_packed_multi_f32(&c->p, c->x, ops), COREAI_STATUS_OK);
}

/* q, k, v of a Llama block with real threads: the bits of one thread, and
 * those the separate calls give (run with one thread). */
static void test_linear_multi(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(0x7a11u);
    const int64_t rows = 64, in = 256, outf[3] = {256, 128, 120};
    multi_case c = {{3, {{0}}}, NULL, {{0}}, {0}};
    float *x = random_floats(&r, rows * in), *w[3];
    int64_t total = 0;
    for (int l = 0; l < 3; ++l) {
        c.p.linear[l] = (coreai_linear_packed_params){rows, in, outf[l], l == 2 ? COREAI_EPILOGUE_SILU : 0, 0, 0};
        w[l] = random_floats(&r, outf[l] * in);
        float *packed = malloc((size_t)coreai_packed_b_count(in, outf[l]) * sizeof(float));
        assert_non_null(packed);
        assert_int_equal(coreai_pack_b_f32(in, outf[l], 1, w[l], packed), COREAI_STATUS_OK);
        c.ops[l] = (coreai_linear_packed_operands){packed, l == 1 ? random_floats(&r, outf[l]) : NULL,
                                                   l == 0 ? random_floats(&r, rows * outf[l]) : NULL, NULL};
        c.offset[l] = total;
        total += rows * outf[l];
    }
    c.x = x;
    float *out = malloc((size_t)total * sizeof(float)), *sep = malloc((size_t)total * sizeof(float));
    assert_non_null(out);
    assert_non_null(sep);
    check_modes("linear_packed_multi q k v", multi_run, &c, total, out);
    set_mode(MODE_SERIAL);
    for (int l = 0; l < 3; ++l) {
        const coreai_linear_packed_operands *o = &c.ops[l];
        coreai_status st = o->addend != NULL ? coreai_linear_packed_add_f32(&c.p.linear[l], x, o->packed_weight, o->bias,
                                                                            o->addend, sep + c.offset[l])
                                             : coreai_linear_packed_f32(&c.p.linear[l], x, o->packed_weight, o->bias,
                                                                        sep + c.offset[l]);
        assert_int_equal(st, COREAI_STATUS_OK);
    }
    assert_memory_equal(out, sep, (size_t)total * sizeof(float));
    free(x);
    for (int l = 0; l < 3; ++l) {
        free(w[l]);
        free((void *)c.ops[l].packed_weight);
        free((void *)c.ops[l].bias);
        free((void *)c.ops[l].addend);
    }
    free(out);
    free(sep);
}

/* ---- linear with an unpacked weight (GEMM strided path) ---- */

typedef struct linear_ex_case {
    coreai_linear_ex_params p;
    const float *x, *w, *bias;
    int use_scratch;
} linear_ex_case;

static void linear_ex_run(const void *cv, float *out)
{
    const linear_ex_case *c = cv;
    const size_t bytes = coreai_linear_ex_f32_scratch_size(&c->p);
    float *scratch = c->use_scratch && bytes > 0 ? malloc(bytes) : NULL;
    assert_int_equal(coreai_linear_ex_f32(&c->p, c->x, c->w, c->bias, out, scratch), COREAI_STATUS_OK);
    free(scratch);
}

static void check_linear_ex(int64_t rows, int64_t in, int64_t outf, int32_t transposed, int use_scratch)
{
    ref_rng r = ref_rng_make(0x1234567ull + (uint64_t)(rows * 17 + in * 3 + outf + transposed));
    float *x = random_floats(&r, rows * in), *w = random_floats(&r, outf * in), *bias = random_floats(&r, outf);
    linear_ex_case c = {{rows, in, outf, transposed, COREAI_EPILOGUE_GELU_TANH}, x, w, bias, use_scratch};
    float *out = malloc((size_t)(rows * outf) * sizeof(float));
    assert_non_null(out);
    char what[128];
    snprintf(what, sizeof what, "linear_ex %lldx%lldx%lld transposed %d scratch %d", (long long)rows, (long long)in,
             (long long)outf, transposed, use_scratch);
    check_modes(what, linear_ex_run, &c, rows * outf, out);
    free(x);
    free(w);
    free(bias);
    free(out);
}

static void test_linear_strided(void **state)
{
    (void)state;
    check_linear_ex(40, 600, 700, 0, 1); /* [out][in] weight, packed block by block into scratch slices */
    check_linear_ex(40, 600, 700, 1, 0); /* [in][out], stack blocks */
    check_linear_ex(33, 70, 1100, 1, 1);
    check_linear_ex(2, 900, 500, 0, 1);  /* few rows: dot products in place */
    check_linear_ex(3, 900, 500, 1, 0);  /* few rows: row updates in place */
}

/* ---- conv2d ---- */

typedef struct conv_case {
    coreai_conv2d_params p;
    const float *x, *w, *bias;
    int use_scratch;
} conv_case;

static void conv_run(const void *cv, float *out)
{
    const conv_case *c = cv;
    const size_t bytes = c->use_scratch == 3 ? coreai_conv2d_panels_scratch_size(&c->p)
                                             : coreai_conv2d_f32_scratch_size(&c->p);
    float *scratch = c->use_scratch && bytes > 0 ? malloc(bytes) : NULL;
    if (c->use_scratch == 3) {
        /* on the weight packed (coreai-gen's weights), pixels as rows */
        const int64_t k = c->p.in_channels * c->p.kernel_h * c->p.kernel_w;
        float *wp = malloc(coreai_conv2d_panels_w_floats(&c->p) * sizeof(float));
        assert_non_null(wp);
        assert_int_equal(coreai_pack_b_f32(k, c->p.out_channels, 1, c->w, wp), COREAI_STATUS_OK);
        assert_int_equal(coreai_conv2d_panels_f32(&c->p, c->x, wp, c->bias, out, scratch), COREAI_STATUS_OK);
        free(wp);
    } else if (c->use_scratch == 2) {
        /* on U given (coreai-gen's weights), V and M in the scratch */
        float *u = ref_winograd_u(&c->p, c->w);
        assert_int_equal(coreai_conv2d_winograd_f32(&c->p, c->x, u, c->bias, out, scratch), COREAI_STATUS_OK);
        free(u);
    } else {
        assert_int_equal(coreai_conv2d_ws_f32(&c->p, c->x, c->w, c->bias, out, scratch), COREAI_STATUS_OK);
    }
    free(scratch);
}

static void check_conv(int64_t batch, int64_t cin, int64_t hw, int64_t cout, int64_t k, int64_t stride,
                       int64_t groups, int use_scratch)
{
    ref_rng r = ref_rng_make(0xabcdefull + (uint64_t)(cin * 7 + cout * 11 + hw + groups + use_scratch));
    const int64_t pad = k / 2, oh = (hw + 2 * pad - k) / stride + 1;
    conv_case c = {{batch, cin, hw, hw, cout, k, k, oh, oh, stride, stride, pad, pad, 1, 1, groups, 0, 0.0f, 0.0f},
                   NULL, NULL, NULL, use_scratch};
    float *x = random_floats(&r, batch * cin * hw * hw), *w = random_floats(&r, cout * (cin / groups) * k * k);
    float *bias = random_floats(&r, cout);
    c.x = x;
    c.w = w;
    c.bias = bias;
    const int64_t n = batch * cout * oh * oh;
    float *out = malloc((size_t)n * sizeof(float));
    assert_non_null(out);
    char what[160];
    snprintf(what, sizeof what, "conv2d %lldx%lldx%lld^2 -> %lld k%lld s%lld g%lld scratch %d", (long long)batch,
             (long long)cin, (long long)hw, (long long)cout, (long long)k, (long long)stride, (long long)groups,
             use_scratch);
    check_modes(what, conv_run, &c, n, out);
    /* the oracle for one output channel of the first sample */
    const int64_t cg = cin / groups, og = cout / groups;
    for (int64_t o = 0; o < cout; o += cout - 1 > 0 ? cout - 1 : 1) {
        const int64_t g = o / og;
        for (int64_t y = 0; y < oh; ++y)
            for (int64_t xx = 0; xx < oh; ++xx) {
                double s = bias[o];
                for (int64_t ci = 0; ci < cg; ++ci)
                    for (int64_t ky = 0; ky < k; ++ky)
                        for (int64_t kx = 0; kx < k; ++kx) {
                            const int64_t iy = y * stride - pad + ky, ix = xx * stride - pad + kx;
                            if (iy < 0 || iy >= hw || ix < 0 || ix >= hw)
                                continue;
                            s += (double)x[((g * cg + ci) * hw + iy) * hw + ix] * w[((o * cg + ci) * k + ky) * k + kx];
                        }
                assert_true(fabs(s - out[(o * oh + y) * oh + xx]) <= 1e-5 * (double)(cg * k * k));
            }
    }
    free(x);
    free(w);
    free(bias);
    free(out);
}

static void test_conv2d(void **state)
{
    (void)state;
    check_conv(1, 8, 32, 32, 3, 1, 1, 1);   /* implicit GEMM, scratch slices */
    /* Winograd (3 x 3 stride 1, 16 to 256 channels, with scratch): the
     * weight, input and output transforms split by rows, the 16 or 36 GEMMs
     * one task each; F(4x4) on 32 x 32 and on 56 x 56 at 64 channels
     * (batch 2: 4 blocks of tile rows), F(2x2) on 14 x 14 */
    check_conv(1, 16, 32, 32, 3, 1, 1, 1);
    check_conv(2, 64, 56, 64, 3, 1, 1, 1);
    check_conv(1, 64, 14, 64, 3, 1, 1, 1);
    check_conv(2, 64, 56, 64, 3, 1, 1, 2); /* the same on U given */
    check_conv(1, 64, 14, 64, 3, 1, 1, 2);
    check_conv(1, 16, 32, 32, 3, 1, 1, 0);  /* no scratch: the implicit GEMM */
    check_conv(2, 16, 30, 24, 3, 2, 1, 0);  /* implicit GEMM, stack blocks, stride 2 */
    check_conv(1, 48, 20, 48, 3, 1, 48, 1); /* depthwise: direct */
    check_conv(1, 8, 40, 6, 5, 1, 2, 1);    /* small groups: direct */
    /* few columns (7 x 7 maps: 2 units of 32) and many output channels:
     * split by rows, every part packing B on its own stack; with scratch
     * (k blocks of 256: k = 288 spans two) and without (128) */
    check_conv(1, 32, 7, 300, 3, 1, 1, 1); /* 300 outputs: past Winograd's 256 */
    check_conv(1, 24, 13, 200, 3, 2, 1, 0);
    /* the same maps on the packed weight (coreai_conv2d_panels_f32): the
     * output channels split by columns, each part packing its own pixel
     * panels; 7 x 7 at stride 2 in batch 2, and 16 x 16 pixels */
    check_conv(1, 32, 7, 300, 3, 1, 1, 3);
    check_conv(2, 64, 14, 128, 3, 2, 1, 3);
    check_conv(1, 8, 16, 64, 3, 1, 1, 3);
    /* pointwise layers read in place (conv_pointwise.h): 32 x 32 pixels
     * split by columns, batch 2; 14 x 14 (7 tiles) and 96 outputs split by
     * rows (on AVX2, whose path stops at 24 outputs, the implicit GEMM) */
    check_conv(2, 40, 32, 20, 1, 1, 1, 0);
    check_conv(1, 64, 14, 96, 1, 1, 1, 1);
    /* 7 x 7 (AVX-512: a 48-pixel tile and a dot-product column) split by
     * columns, the column a part of its own */
    check_conv(1, 160, 7, 20, 1, 1, 1, 0);
}

/* ---- attention ---- */

typedef struct sdpa_case {
    coreai_sdpa_params p;
    const float *q, *k, *v;
    const uint8_t *mask;
} sdpa_case;

static void sdpa_run(const void *cv, float *out)
{
    const sdpa_case *c = cv;
    assert_int_equal(coreai_sdpa_f32(&c->p, c->q, c->k, c->v, c->mask, NULL, out), COREAI_STATUS_OK);
}

static void check_sdpa(int64_t batch, int64_t hq, int64_t hk, int64_t tq, int64_t tk, int64_t d, int causal,
                       int with_mask)
{
    ref_rng r = ref_rng_make(0x5151ull + (uint64_t)(hq * 3 + tq * 5 + tk + d + causal * 7 + with_mask));
    sdpa_case c;
    memset(&c, 0, sizeof c);
    c.p.batch = batch;
    c.p.q_heads = hq;
    c.p.k_heads = hk;
    c.p.v_heads = hk;
    c.p.q_len = tq;
    c.p.kv_len = tk;
    c.p.head_dim = d;
    c.p.v_head_dim = d;
    c.p.k_batch = batch;
    c.p.v_batch = batch;
    c.p.scale = 1.0f / sqrtf((float)d);
    c.p.is_causal = causal;
    float *q = random_floats(&r, batch * hq * tq * d), *k = random_floats(&r, batch * hk * tk * d);
    float *v = random_floats(&r, batch * hk * tk * d);
    uint8_t *mask = NULL;
    if (with_mask) {
        c.p.mask_kind = COREAI_SDPA_MASK_BOOL;
        c.p.mask_strides[2] = tk;
        c.p.mask_strides[3] = 1;
        mask = malloc((size_t)(tq * tk));
        assert_non_null(mask);
        for (int64_t i = 0; i < tq * tk; ++i)
            mask[i] = (uint8_t)(ref_next(&r) % 4 != 0);
    }
    c.q = q;
    c.k = k;
    c.v = v;
    c.mask = mask;
    const int64_t n = batch * hq * tq * d;
    float *out = malloc((size_t)n * sizeof(float));
    assert_non_null(out);
    char what[128];
    snprintf(what, sizeof what, "sdpa B%lld Hq%lld Hk%lld Tq%lld Tk%lld D%lld causal %d mask %d", (long long)batch,
             (long long)hq, (long long)hk, (long long)tq, (long long)tk, (long long)d, causal, with_mask);
    check_modes(what, sdpa_run, &c, n, out);
    if (!causal && !with_mask) {
        /* the oracle for head 0, every row */
        for (int64_t i = 0; i < tq; ++i) {
            double mx = -INFINITY, sum = 0.0, logit[512];
            assert_true(tk <= 512);
            for (int64_t j = 0; j < tk; ++j) {
                double s = 0.0;
                for (int64_t e = 0; e < d; ++e)
                    s += (double)q[i * d + e] * k[j * d + e];
                logit[j] = s * c.p.scale;
                mx = logit[j] > mx ? logit[j] : mx;
            }
            for (int64_t j = 0; j < tk; ++j)
                sum += exp(logit[j] - mx);
            for (int64_t e = 0; e < d; ++e) {
                double o = 0.0;
                for (int64_t j = 0; j < tk; ++j)
                    o += exp(logit[j] - mx) / sum * v[j * d + e];
                assert_true(fabs(o - out[i * d + e]) <= 1e-5);
            }
        }
    }
    free(q);
    free(k);
    free(v);
    free(mask);
    free(out);
}

static void test_sdpa(void **state)
{
    (void)state;
    check_sdpa(1, 4, 2, 100, 100, 64, 1, 0); /* GQA, causal */
    check_sdpa(2, 3, 3, 37, 70, 32, 0, 0);   /* odd heads, cross lengths */
    check_sdpa(1, 2, 1, 64, 64, 80, 0, 1);   /* MQA with a mask */
    check_sdpa(1, 1, 1, 300, 300, 64, 1, 0); /* one head: split by query blocks */
}

static void test_threads_reported(void **state)
{
    (void)state;
    set_mode(MODE_POOL3);
    assert_int_equal(coreai_parallel_threads(), 3);
    set_mode(MODE_SERIAL);
    assert_int_equal(coreai_parallel_threads(), 1);
    /* a hook with one thread is no hook */
    coreai_set_parallel_for(reversed_for, NULL, 1);
    assert_int_equal(coreai_parallel_threads(), 1);
    const int64_t before = reversed_tasks;
    check_linear(64, 256, 1000, COREAI_EPILOGUE_NONE, 0, 0);
    assert_true(reversed_tasks - before >= 2); /* check_linear's own reversed mode */
    set_mode(MODE_SERIAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_linear_packed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_linear_multi, setup, teardown),
        cmocka_unit_test_setup_teardown(test_linear_strided, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conv2d, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sdpa, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_reported, setup, teardown),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
