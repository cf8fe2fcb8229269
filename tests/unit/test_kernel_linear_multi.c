/*
 * coreai_linear_packed_multi_f32 (sibling linears of one x in one call)
 * against its oracle, the separate coreai_linear_packed_f32 / _add_f32
 * calls run with one thread: every output must match bit for bit, with one
 * thread and with a 2-thread parallel-for (tasks in order and reversed, on
 * the caller, so the split is deterministic), and the split call must be
 * one parallel region. Shapes: odd output counts and widths (ragged last
 * panels, a linear narrower than a split unit), bias or not per linear,
 * every epilogue, residual addends, head layouts, one row, several k
 * blocks, empty products, and calls too small to split.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

#define GUARD 16
static const float k_canary = -12345.5f;

/* The test parallel-for: runs every task on the caller, in order or in
 * reverse, and counts regions and tasks. */
static int64_t regions, tasks;

static void fake_for(void *ctx, coreai_task_fn task, void *arg, int64_t count)
{
    const int reverse = ctx != NULL;
    regions++;
    tasks += count;
    for (int64_t i = 0; i < count; ++i)
        task(arg, reverse ? count - 1 - i : i);
}

static int reverse_flag = 1;

enum { SERIAL, TWO_IN_ORDER, TWO_REVERSED, MODES };

static void set_mode(int m)
{
    if (m == SERIAL)
        coreai_set_parallel_for(NULL, NULL, 1);
    else
        coreai_set_parallel_for(fake_for, m == TWO_REVERSED ? &reverse_flag : NULL, 2);
}

typedef struct lin {
    int64_t outf;
    int32_t epilogue;
    int64_t out_head_dim;
    int bias, add;
} lin;

typedef struct multi_case {
    int64_t rows, in, x_head_dim;
    int count;
    lin l[COREAI_LINEAR_MULTI_MAX];
    int64_t want_regions; /* with 2 threads: 1 split region, or 0 (too small: on the caller) */
} multi_case;

static float *filled(ref_rng *r, int64_t n)
{
    float *v = ref_alloc_f(n + GUARD);
    ref_fill(r, v, n, -1.0, 1.0);
    return v;
}

static float *canaried(int64_t n)
{
    float *v = ref_alloc_f(n + GUARD);
    for (int64_t i = 0; i < n + GUARD; ++i)
        v[i] = k_canary;
    return v;
}

static void check_case(const multi_case *c)
{
    ref_rng r = ref_rng_make(0x51b1u + (uint64_t)(c->rows * 977 + c->in * 31 + c->count));
    const int64_t xn = c->rows * c->in;
    float *x = filled(&r, xn);
    coreai_linear_packed_multi_params mp = {c->count, {{0}}};
    coreai_linear_packed_operands ops[COREAI_LINEAR_MULTI_MAX];
    float *want[COREAI_LINEAR_MULTI_MAX], *w[COREAI_LINEAR_MULTI_MAX];
    for (int l = 0; l < c->count; ++l) {
        const lin *li = &c->l[l];
        const int64_t on = c->rows * li->outf;
        mp.linear[l] = (coreai_linear_packed_params){c->rows, c->in, li->outf, li->epilogue, c->x_head_dim,
                                                     li->out_head_dim};
        w[l] = filled(&r, li->outf * c->in);
        float *packed = ref_alloc_f(coreai_packed_b_count(c->in, li->outf) + 1);
        assert_int_equal(coreai_pack_b_f32(c->in, li->outf, 1, w[l], packed), COREAI_STATUS_OK);
        ops[l] = (coreai_linear_packed_operands){packed, li->bias ? filled(&r, li->outf) : NULL,
                                                 li->add ? filled(&r, on) : NULL, canaried(on)};
        want[l] = canaried(on);
    }
    /* the oracle: the separate calls, one thread */
    set_mode(SERIAL);
    for (int l = 0; l < c->count; ++l) {
        const coreai_linear_packed_operands *o = &ops[l];
        const coreai_status st =
            o->addend != NULL
                ? coreai_linear_packed_add_f32(&mp.linear[l], x, o->packed_weight, o->bias, o->addend, want[l])
                : coreai_linear_packed_f32(&mp.linear[l], x, o->packed_weight, o->bias, want[l]);
        assert_int_equal(st, COREAI_STATUS_OK);
    }
    for (int m = SERIAL; m < MODES; ++m) {
        for (int l = 0; l < c->count; ++l)
            for (int64_t i = 0; i < c->rows * c->l[l].outf + GUARD; ++i)
                ops[l].out[i] = k_canary;
        set_mode(m);
        regions = tasks = 0;
        assert_int_equal(coreai_linear_packed_multi_f32(&mp, x, ops), COREAI_STATUS_OK);
        const int64_t got_regions = regions, got_tasks = tasks;
        set_mode(SERIAL);
        if (m != SERIAL && (got_regions != c->want_regions || (got_regions > 0 && got_tasks < 2)))
            fail_msg("%lld rows x %lld in, %d linears: %lld regions, %lld tasks, want %lld regions",
                     (long long)c->rows, (long long)c->in, c->count, (long long)got_regions,
                     (long long)got_tasks, (long long)c->want_regions);
        for (int l = 0; l < c->count; ++l) {
            const int64_t on = c->rows * c->l[l].outf;
            for (int64_t i = 0; i < on + GUARD; ++i) {
                uint32_t a, b;
                memcpy(&a, &ops[l].out[i], sizeof a);
                memcpy(&b, &want[l][i], sizeof b);
                if (a != b)
                    fail_msg("%lld rows x %lld in, mode %d, linear %d of %d (%lld out): element %lld is %a, "
                             "the separate call's %a",
                             (long long)c->rows, (long long)c->in, m, l, c->count, (long long)c->l[l].outf,
                             (long long)i, (double)ops[l].out[i], (double)want[l][i]);
            }
        }
    }
    free(x);
    for (int l = 0; l < c->count; ++l) {
        free(w[l]);
        free((void *)ops[l].packed_weight);
        free((void *)ops[l].bias);
        free((void *)ops[l].addend);
        free(ops[l].out);
        free(want[l]);
    }
}

static void test_attention_projections(void **state)
{
    (void)state;
    /* a Llama block's q, k, v (grouped kv heads) and gate, up */
    const multi_case qkv = {64, 256, 0, 3, {{256, 0, 0, 0, 0}, {128, 0, 0, 0, 0}, {128, 0, 0, 0, 0}}, 1};
    check_case(&qkv);
    const multi_case gate_up = {64, 256, 0, 2, {{688, 0, 0, 0, 0}, {688, 0, 0, 0, 0}}, 1};
    check_case(&gate_up);
    /* the same, several k blocks and large enough for several tasks per thread */
    const multi_case big = {64, 1024, 0, 3, {{1024, 0, 0, 1, 0}, {256, 0, 0, 1, 0}, {256, 0, 0, 1, 0}}, 1};
    check_case(&big);
}

static void test_ragged_epilogues_residuals(void **state)
{
    (void)state;
    /* odd widths (a linear of 1 and of 17 columns: inside one split unit),
     * every epilogue, bias and addend on some */
    const multi_case odd = {37,
                            300,
                            0,
                            5,
                            {{515, COREAI_EPILOGUE_GELU, 0, 1, 1},
                             {17, COREAI_EPILOGUE_RELU, 0, 0, 0},
                             {1, COREAI_EPILOGUE_SILU, 0, 1, 1},
                             {40, COREAI_EPILOGUE_GELU_TANH, 0, 1, 0},
                             {129, COREAI_EPILOGUE_NONE, 0, 0, 1}},
                            1};
    check_case(&odd);
    /* one row (decode); long k */
    const multi_case decode = {
        1, 1024, 0, 3, {{1536, COREAI_EPILOGUE_SILU, 0, 0, 0}, {1536, 0, 0, 1, 0}, {97, 0, 0, 0, 1}}, 1};
    check_case(&decode);
    const multi_case long_k = {5, 2000, 0, 3, {{40, 0, 0, 1, 1}, {48, COREAI_EPILOGUE_RELU, 0, 0, 0}, {8, 0, 0, 1, 0}},
                               1};
    check_case(&long_k);
}

static void test_heads_counts_and_small(void **state)
{
    (void)state;
    /* x in head layout; outputs in head layout or plain rows */
    const multi_case heads = {
        50, 128, 64, 3, {{384, COREAI_EPILOGUE_RELU, 64, 1, 1}, {128, 0, 0, 0, 0}, {96, 0, 32, 1, 0}}, 1};
    check_case(&heads);
    /* one linear; the most */
    const multi_case one = {64, 256, 0, 1, {{515, COREAI_EPILOGUE_GELU, 0, 1, 1}}, 1};
    check_case(&one);
    multi_case most = {24, 200, 0, COREAI_LINEAR_MULTI_MAX, {{0}}, 1};
    for (int l = 0; l < COREAI_LINEAR_MULTI_MAX; ++l)
        most.l[l] = (lin){16 * l + 3 + l % 2, l % 5, 0, l % 2, l % 3 == 0};
    check_case(&most);
    /* below the split threshold: on the caller, no region */
    const multi_case tiny = {2, 8, 0, 3, {{3, 0, 0, 1, 0}, {5, COREAI_EPILOGUE_RELU, 0, 0, 1}, {16, 0, 0, 0, 0}}, 0};
    check_case(&tiny);
    /* fewer column units than threads: apart (each may split by rows) */
    const multi_case narrow = {200, 700, 0, 1, {{16, 0, 0, 1, 0}}, 1};
    check_case(&narrow);
    /* empty products: no columns, and k == 0 (the epilogue of the bias) */
    const multi_case empty_n = {64, 256, 0, 3, {{256, 0, 0, 1, 0}, {0, 0, 0, 0, 0}, {256, 0, 0, 0, 1}}, 1};
    check_case(&empty_n);
    const multi_case empty_k = {3, 0, 0, 2, {{7, COREAI_EPILOGUE_GELU, 0, 1, 1}, {5, 0, 0, 0, 0}}, 0};
    check_case(&empty_k);
}

static void test_invalid(void **state)
{
    (void)state;
    float x[64] = {0}, w[16 * 4] = {0}, out[2][64];
    coreai_linear_packed_multi_params mp = {2, {{4, 4, 4, 0, 0, 0}, {4, 4, 4, 0, 0, 0}}};
    coreai_linear_packed_operands ops[2] = {{w, NULL, NULL, out[0]}, {w, NULL, NULL, out[1]}};
    assert_int_equal(coreai_linear_packed_multi_f32(&mp, x, ops), COREAI_STATUS_OK);
    assert_int_equal(coreai_linear_packed_multi_f32(NULL, x, ops), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_packed_multi_f32(&mp, NULL, ops), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_packed_multi_f32(&mp, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    static const int32_t bad_counts[] = {0, -1, COREAI_LINEAR_MULTI_MAX + 1};
    for (size_t i = 0; i < sizeof bad_counts / sizeof bad_counts[0]; ++i) {
        coreai_linear_packed_multi_params b = mp;
        b.count = bad_counts[i];
        assert_int_equal(coreai_linear_packed_multi_f32(&b, x, ops), COREAI_STATUS_INVALID_ARGUMENT);
    }
    /* the second linear reads another x shape */
    for (int f = 0; f < 4; ++f) {
        coreai_linear_packed_multi_params b = mp;
        if (f == 0)
            b.linear[1].rows = 3;
        else if (f == 1)
            b.linear[1].in_features = 2;
        else if (f == 2)
            b.linear[1].x_head_dim = 2;
        else
            b.linear[1].epilogue = 99;
        assert_int_equal(coreai_linear_packed_multi_f32(&b, x, ops), COREAI_STATUS_INVALID_ARGUMENT);
    }
    coreai_linear_packed_operands nulls[2] = {{w, NULL, NULL, out[0]}, {w, NULL, NULL, NULL}};
    assert_int_equal(coreai_linear_packed_multi_f32(&mp, x, nulls), COREAI_STATUS_INVALID_ARGUMENT);
    nulls[1] = (coreai_linear_packed_operands){NULL, NULL, NULL, out[1]};
    assert_int_equal(coreai_linear_packed_multi_f32(&mp, x, nulls), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_projections),
        cmocka_unit_test(test_ragged_epilogues_residuals),
        cmocka_unit_test(test_heads_counts_and_small),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
