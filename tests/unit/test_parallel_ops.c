/*
 * Threads beyond the GEMM, attention and conv (test_parallel.c has those):
 * rms / layer norm, group / instance / batch norm, RoPE (both modes, with
 * broadcast cos / sin), softmax (rows and strided columns), max and
 * average pooling (split by planes), SwiGLU,
 * element-wise binary (flat, and broadcast rows) and unary ops, and
 * batched matmul split over its batches (unpacked, packed, a shared B
 * packed once, broadcast batch axes), and a palettized linear's decode
 * (its output channels split). Each gives bitwise the output of one
 * thread with 2 and 3 pthreads and with 3 tasks run in reverse order, really
 * split (parallel_modes.h), and matches a naive double reference.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"
#include "parallel_modes.h"

/* |got - want| within rel * max(1, |want|), element by element. */
static void expect_near(const char *what, const float *got, const double *want, int64_t n, double rel)
{
    for (int64_t i = 0; i < n; ++i) {
        const double tol = rel * (fabs(want[i]) > 1.0 ? fabs(want[i]) : 1.0);
        if (!(fabs((double)got[i] - want[i]) <= tol))
            fail_msg("%s: element %lld is %.9g, the double reference %.9g", what, (long long)i, (double)got[i],
                     want[i]);
    }
}

static double *doubles(int64_t n)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    assert_non_null(v);
    return v;
}

/* ---- rms / layer norm over the last axis ---- */

typedef struct norm_case {
    coreai_norm_params p;
    const float *x, *w, *b;
    int center;
} norm_case;

static void norm_run_case(const void *cv, float *out)
{
    const norm_case *c = cv;
    const coreai_status st = c->center ? coreai_layer_norm_f32(&c->p, c->x, c->w, c->b, out)
                                       : coreai_rms_norm_f32(&c->p, c->x, c->w, out);
    assert_int_equal(st, COREAI_STATUS_OK);
}

static void check_norm(int64_t rows, int64_t n, int center)
{
    ref_rng r = ref_rng_make(0x7700ull + (uint64_t)(rows * 3 + n + center));
    float *x = random_floats(&r, rows * n), *w = random_floats(&r, n), *b = random_floats(&r, n);
    norm_case c = {{2, {rows, n}, 1, 2, 1e-5f, {0, 1}, {0, 1}}, x, w, center ? b : NULL, center};
    float *out = malloc((size_t)(rows * n) * sizeof(float));
    double *want = doubles(rows * n);
    assert_non_null(out);
    check_modes(center ? "layer_norm" : "rms_norm", norm_run_case, &c, rows * n, out);
    for (int64_t i = 0; i < rows; ++i) {
        double mean = 0.0, sq = 0.0;
        for (int64_t j = 0; j < n; ++j)
            mean += x[i * n + j];
        mean = center ? mean / (double)n : 0.0;
        for (int64_t j = 0; j < n; ++j)
            sq += (x[i * n + j] - mean) * (x[i * n + j] - mean);
        const double rstd = 1.0 / sqrt(sq / (double)n + 1e-5);
        for (int64_t j = 0; j < n; ++j)
            want[i * n + j] = (x[i * n + j] - mean) * rstd * w[j] + (center ? b[j] : 0.0);
    }
    expect_near(center ? "layer_norm" : "rms_norm", out, want, rows * n, 1e-5);
    free(x);
    free(w);
    free(b);
    free(out);
    free(want);
}

static void test_norms(void **state)
{
    (void)state;
    check_norm(64, 256, 0);  /* a Llama block's rms_norm */
    check_norm(37, 1000, 1); /* ragged row count */
}

/* ---- group / instance / batch norm: [N, C, spatial] ---- */

typedef enum chan_kind { CHAN_GROUP, CHAN_INSTANCE, CHAN_BATCH } chan_kind;

typedef struct chan_case {
    coreai_channel_norm_params p;
    chan_kind kind;
    const float *x, *w, *b, *mean, *var;
} chan_case;

static void chan_run(const void *cv, float *out)
{
    const chan_case *c = cv;
    coreai_status st;
    if (c->kind == CHAN_GROUP)
        st = coreai_group_norm_f32(&c->p, c->x, c->w, c->b, out);
    else if (c->kind == CHAN_INSTANCE)
        st = coreai_instance_norm_f32(&c->p, c->x, c->w, c->b, out);
    else
        st = coreai_batch_norm_f32(&c->p, c->x, c->w, c->b, c->mean, c->var, out);
    assert_int_equal(st, COREAI_STATUS_OK);
}

static void check_chan(chan_kind kind, int64_t batch, int64_t ch, int64_t sp, int64_t groups)
{
    static const char *const names[] = {"group_norm", "instance_norm", "batch_norm"};
    ref_rng r = ref_rng_make(0x3300ull + (uint64_t)(kind * 1000 + batch + ch + sp));
    const int64_t total = batch * ch * sp;
    float *x = random_floats(&r, total), *w = random_floats(&r, ch), *b = random_floats(&r, ch);
    float *mean = random_floats(&r, ch), *var = random_floats(&r, ch);
    for (int64_t c = 0; c < ch; ++c)
        var[c] = var[c] * var[c] + 0.25f;
    const int64_t g = kind == CHAN_INSTANCE ? ch : kind == CHAN_GROUP ? groups : 1;
    chan_case c = {{batch, ch, sp, g, 1e-5f, COREAI_EPILOGUE_NONE}, kind, x, w, b, mean, var};
    float *out = malloc((size_t)total * sizeof(float));
    double *want = doubles(total);
    assert_non_null(out);
    check_modes(names[kind], chan_run, &c, total, out);
    const int64_t cpg = ch / g;
    for (int64_t n = 0; n < batch; ++n)
        for (int64_t gi = 0; gi < g; ++gi) {
            const float *xg = x + (n * ch + gi * cpg) * sp;
            double m = 0.0, q = 0.0;
            for (int64_t i = 0; i < cpg * sp; ++i)
                m += xg[i];
            m /= (double)(cpg * sp);
            for (int64_t i = 0; i < cpg * sp; ++i)
                q += (xg[i] - m) * (xg[i] - m);
            double rstd = 1.0 / sqrt(q / (double)(cpg * sp) + 1e-5);
            for (int64_t ci = gi * cpg; ci < (gi + 1) * cpg; ++ci) {
                double mc = m, rc = rstd;
                if (kind == CHAN_BATCH) {
                    mc = mean[ci];
                    rc = 1.0 / sqrt((double)var[ci] + 1e-5);
                }
                for (int64_t s = 0; s < sp; ++s) {
                    const int64_t o = (n * ch + ci) * sp + s;
                    want[o] = (x[o] - mc) * rc * w[ci] + b[ci];
                }
            }
        }
    expect_near(names[kind], out, want, total, 1e-5);
    free(x);
    free(w);
    free(b);
    free(mean);
    free(var);
    free(out);
    free(want);
}

static void test_channel_norms(void **state)
{
    (void)state;
    check_chan(CHAN_GROUP, 2, 32, 600, 8);
    check_chan(CHAN_INSTANCE, 1, 16, 1024, 0);
    check_chan(CHAN_BATCH, 2, 12, 900, 0);
}

/* ---- RoPE: x [B, H, T, D] ---- */

typedef struct rope_case {
    coreai_rope_params p;
    const float *x, *cos, *sin;
} rope_case;

static void rope_run(const void *cv, float *out)
{
    const rope_case *c = cv;
    const size_t bytes = coreai_rope_scratch_size(&c->p);
    void *scratch = bytes > 0 ? malloc(bytes) : NULL;
    assert_int_equal(coreai_rope_f32(&c->p, c->x, c->cos, c->sin, NULL, NULL, scratch, bytes, out),
                     COREAI_STATUS_OK);
    free(scratch);
}

/* positions: angle (offset + t) * freq_i in f32; else cos / sin tables
 * [T, rot / 2] broadcast over B and H, interleaved pairs. */
static void check_rope(int64_t b, int64_t h, int64_t t, int64_t d, int64_t rot, int positions)
{
    ref_rng r = ref_rng_make(0x4400ull + (uint64_t)(b + h * 3 + t * 5 + d + positions));
    const int64_t n = b * h * t * d, half = rot / 2;
    float *x = random_floats(&r, n), *cs = random_floats(&r, t * half), *sn = random_floats(&r, t * half);
    rope_case c;
    memset(&c, 0, sizeof c);
    c.p.rank = 4;
    c.p.shape[0] = b;
    c.p.shape[1] = h;
    c.p.shape[2] = t;
    c.p.shape[3] = d;
    c.p.rotary_dims = rot;
    c.p.interleaved = !positions;
    c.p.mode = positions ? COREAI_ROPE_POSITIONS : COREAI_ROPE_COS_SIN;
    c.p.cos_strides[2] = c.p.sin_strides[2] = half;
    c.p.cos_strides[3] = c.p.sin_strides[3] = 1;
    c.p.pos_dtype = -1;
    c.p.add_seq_index = 1;
    c.p.offset = 3;
    c.p.scale = 1.0f;
    c.p.base = 10000.0f;
    c.x = x;
    c.cos = cs;
    c.sin = sn;
    float *out = malloc((size_t)n * sizeof(float));
    double *want = doubles(n);
    assert_non_null(out);
    check_modes(positions ? "rope positions" : "rope cos/sin interleaved", rope_run, &c, n, out);
    for (int64_t row = 0; row < b * h * t; ++row) {
        const int64_t ti = row % t;
        const float *xr = x + row * d;
        for (int64_t i = 0; i < half; ++i) {
            double ci, si;
            if (positions) {
                const float f = 1.0f / (float)pow(10000.0, (double)((float)i / (float)half));
                const float angle = (float)(3 + ti) * f;
                ci = cos((double)angle);
                si = sin((double)angle);
            } else {
                ci = cs[ti * half + i];
                si = sn[ti * half + i];
            }
            const int64_t i1 = positions ? i : 2 * i, i2 = positions ? i + half : 2 * i + 1;
            want[row * d + i1] = ci * xr[i1] - si * xr[i2];
            want[row * d + i2] = si * xr[i1] + ci * xr[i2];
        }
        for (int64_t i = rot; i < d; ++i)
            want[row * d + i] = xr[i];
    }
    expect_near("rope", out, want, n, 1e-5);
    free(x);
    free(cs);
    free(sn);
    free(out);
    free(want);
}

static void test_rope(void **state)
{
    (void)state;
    check_rope(1, 8, 64, 32, 32, 1); /* a Llama block's q */
    check_rope(2, 3, 50, 80, 64, 0); /* partial rotation, broadcast tables */
}

/* ---- softmax ---- */

typedef struct softmax_case {
    coreai_softmax_params p;
    const float *x;
} softmax_case;

static void softmax_run(const void *cv, float *out)
{
    const softmax_case *c = cv;
    assert_int_equal(coreai_softmax_f32(&c->p, c->x, out), COREAI_STATUS_OK);
}

static void check_softmax(int64_t outer, int64_t len, int64_t inner)
{
    ref_rng r = ref_rng_make(0x5500ull + (uint64_t)(outer + len * 7 + inner));
    const int64_t n = outer * len * inner;
    float *x = random_floats(&r, n);
    for (int64_t i = 0; i < n; ++i)
        x[i] *= 8.0f;
    softmax_case c = {{outer, len, inner}, x};
    float *out = malloc((size_t)n * sizeof(float));
    double *want = doubles(n);
    assert_non_null(out);
    check_modes(inner == 1 ? "softmax rows" : "softmax columns", softmax_run, &c, n, out);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
            const float *xs = x + o * len * inner + j;
            double mx = xs[0], s = 0.0;
            for (int64_t i = 1; i < len; ++i)
                mx = xs[i * inner] > mx ? xs[i * inner] : mx;
            for (int64_t i = 0; i < len; ++i)
                s += exp(xs[i * inner] - mx);
            for (int64_t i = 0; i < len; ++i)
                want[o * len * inner + i * inner + j] = exp(xs[i * inner] - mx) / s;
        }
    expect_near("softmax", out, want, n, 1e-6);
    free(x);
    free(out);
    free(want);
}

static void test_softmax(void **state)
{
    (void)state;
    check_softmax(96, 500, 1);  /* attention rows */
    check_softmax(3, 100, 300); /* strided axis: two column blocks per outer index */
}

/* ---- 2-D pooling, split by planes ---- */

typedef struct pool_case {
    coreai_pool2d_params p;
    const float *x;
} pool_case;

static void pool_run(const void *cv, float *out)
{
    const pool_case *c = cv;
    assert_int_equal(coreai_pool2d_f32(&c->p, c->x, out), COREAI_STATUS_OK);
}

/* planes x hw^2, a 3 x 3 window, stride s, padding 1 (max: no padding
 * wins; avg: the padding counted) */
static void check_pool(coreai_pool_op op, int64_t planes, int64_t hw, int64_t s)
{
    ref_rng r = ref_rng_make(0x7900ull + (uint64_t)(planes + hw + s + op));
    const int64_t o = (hw + 2 - 3) / s + 1;
    float *x = random_floats(&r, planes * hw * hw), *out = malloc((size_t)(planes * o * o) * sizeof(float));
    double *want = doubles(planes * o * o);
    assert_non_null(out);
    pool_case c = {{op, planes, hw, hw, o, o, 3, 3, s, s, 1, 1, 1, 1, 1, 1, 1}, x};
    check_modes(op == COREAI_POOL_OP_MAX ? "max_pool2d" : "avg_pool2d", pool_run, &c, planes * o * o, out);
    for (int64_t c0 = 0; c0 < planes; ++c0)
        for (int64_t i = 0; i < o; ++i)
            for (int64_t j = 0; j < o; ++j) {
                double m = -INFINITY, sum = 0.0;
                for (int64_t a = 0; a < 3; ++a)
                    for (int64_t b = 0; b < 3; ++b) {
                        const int64_t y = i * s - 1 + a, z = j * s - 1 + b;
                        if (y < 0 || y >= hw || z < 0 || z >= hw)
                            continue;
                        const double v = x[(c0 * hw + y) * hw + z];
                        m = v > m ? v : m;
                        sum += v;
                    }
                want[(c0 * o + i) * o + j] = op == COREAI_POOL_OP_MAX ? m : sum / 9.0;
            }
    expect_near(op == COREAI_POOL_OP_MAX ? "max_pool2d" : "avg_pool2d", out, want, planes * o * o,
                op == COREAI_POOL_OP_MAX ? 0.0 : 1e-6);
    free(x);
    free(out);
    free(want);
}

static void test_pool(void **state)
{
    (void)state;
    check_pool(COREAI_POOL_OP_MAX, 64, 112, 2); /* resnet18's stem */
    check_pool(COREAI_POOL_OP_AVG, 17, 30, 1);
}

/* ---- SwiGLU, element-wise binary and unary ---- */

typedef struct elem_case {
    int kind; /* 0 swiglu, 1 swiglu fused [gate | value], 2 binary, 3 unary */
    coreai_swiglu_params sp;
    coreai_binary_params bp;
    coreai_unary_params up;
    const float *a, *b;
} elem_case;

static void elem_run(const void *cv, float *out)
{
    const elem_case *c = cv;
    coreai_status st;
    if (c->kind <= 1)
        st = coreai_swiglu_f32(&c->sp, c->a, c->kind == 0 ? c->b : NULL, out);
    else if (c->kind == 2)
        st = coreai_binary_f32(&c->bp, c->a, c->b, out);
    else
        st = coreai_unary_f32(&c->up, c->a, out);
    assert_int_equal(st, COREAI_STATUS_OK);
}

static double silu_d(double v) { return v / (1.0 + exp(-v)); }

static void test_swiglu(void **state)
{
    (void)state;
    for (int fused = 0; fused <= 1; ++fused) {
        const int64_t rows = fused ? 33 : 64, dim = fused ? 1000 : 688;
        ref_rng r = ref_rng_make(0x6600ull + (uint64_t)fused);
        float *g = random_floats(&r, rows * dim * 2), *v = random_floats(&r, rows * dim);
        elem_case c;
        memset(&c, 0, sizeof c);
        c.kind = fused;
        c.sp.rows = rows;
        c.sp.dim = dim;
        c.a = g;
        c.b = v;
        float *out = malloc((size_t)(rows * dim) * sizeof(float));
        double *want = doubles(rows * dim);
        assert_non_null(out);
        check_modes(fused ? "swiglu fused" : "swiglu", elem_run, &c, rows * dim, out);
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < dim; ++j) {
                const double gate = fused ? g[i * 2 * dim + j] : g[i * dim + j];
                const double val = fused ? g[i * 2 * dim + dim + j] : v[i * dim + j];
                want[i * dim + j] = silu_d(gate) * val;
            }
        expect_near("swiglu", out, want, rows * dim, 1e-6);
        free(g);
        free(v);
        free(out);
        free(want);
    }
}

/* a op b with b broadcast: flat ([n] and [n]) or rows ([rows, 3, 512] and
 * [1, 3, 512]). */
static void check_binary(coreai_binary_op op, int flat)
{
    ref_rng r = ref_rng_make(0x8800ull + (uint64_t)(op * 2 + flat));
    elem_case c;
    memset(&c, 0, sizeof c);
    c.kind = 2;
    c.bp.op = op;
    int64_t n, bn;
    if (flat) {
        n = bn = 70001;
        c.bp.rank = 1;
        c.bp.out_shape[0] = n;
        c.bp.a_strides[0] = c.bp.b_strides[0] = 1;
    } else {
        c.bp.rank = 3;
        c.bp.out_shape[0] = 45;
        c.bp.out_shape[1] = 3;
        c.bp.out_shape[2] = 512;
        n = 45 * 3 * 512;
        bn = 3 * 512;
        c.bp.a_strides[0] = 3 * 512;
        c.bp.a_strides[1] = 512;
        c.bp.a_strides[2] = 1;
        c.bp.b_strides[1] = 512;
        c.bp.b_strides[2] = 1;
    }
    float *a = random_floats(&r, n), *b = random_floats(&r, bn);
    c.a = a;
    c.b = b;
    float *out = malloc((size_t)n * sizeof(float));
    double *want = doubles(n);
    assert_non_null(out);
    check_modes(flat ? "binary flat" : "binary broadcast rows", elem_run, &c, n, out);
    for (int64_t i = 0; i < n; ++i) {
        const double x = a[i], y = b[flat ? i : i % bn];
        want[i] = op == COREAI_BINARY_OP_MUL ? x * y : x - y;
    }
    expect_near("binary", out, want, n, 1e-7);
    free(a);
    free(b);
    free(out);
    free(want);
}

static void test_elementwise(void **state)
{
    (void)state;
    check_binary(COREAI_BINARY_OP_SUB, 1);
    check_binary(COREAI_BINARY_OP_MUL, 0);
    ref_rng r = ref_rng_make(0x9900ull);
    const int64_t n = 50003;
    float *x = random_floats(&r, n);
    elem_case c;
    memset(&c, 0, sizeof c);
    c.kind = 3;
    c.up.op = COREAI_UNARY_OP_SILU;
    c.up.count = n;
    c.a = x;
    float *out = malloc((size_t)n * sizeof(float));
    double *want = doubles(n);
    assert_non_null(out);
    check_modes("unary silu", elem_run, &c, n, out);
    for (int64_t i = 0; i < n; ++i)
        want[i] = silu_d(x[i]);
    expect_near("unary silu", out, want, n, 1e-6);
    free(x);
    free(out);
    free(want);
}

/* ---- batched matmul: split over the batches ---- */

typedef enum mm_form { MM_PLAIN, MM_SCRATCH, MM_PACKED } mm_form;

typedef struct mm_case {
    coreai_matmul_params p;
    mm_form form;
    const float *a, *b, *packed;
} mm_case;

static void mm_run(const void *cv, float *out)
{
    const mm_case *c = cv;
    coreai_status st;
    if (c->form == MM_PACKED) {
        st = coreai_matmul_packed_f32(&c->p, c->a, c->packed, out);
    } else if (c->form == MM_SCRATCH) {
        const size_t bytes = coreai_matmul_f32_scratch_size(&c->p);
        void *scratch = malloc(bytes > 0 ? bytes : 1);
        assert_non_null(scratch);
        st = coreai_matmul_ws_f32(&c->p, c->a, c->b, out, scratch);
        free(scratch);
    } else {
        st = coreai_matmul_f32(&c->p, c->a, c->b, out);
    }
    assert_int_equal(st, COREAI_STATUS_OK);
}

/* A [2, 3, m, k] times B [3, k, n] (shared_b: B [k, n]) broadcast over the
 * first batch axis. */
static void check_matmul(mm_form form, int64_t m, int64_t k, int64_t n, int shared_b)
{
    ref_rng r = ref_rng_make(0xaa00ull + (uint64_t)(form * 10 + m + k + n + shared_b));
    const int64_t nb = 6, bb = shared_b ? 1 : 3, pc = coreai_packed_b_count(k, n);
    float *a = random_floats(&r, nb * m * k), *b = random_floats(&r, bb * k * n);
    float *packed = malloc((size_t)(bb * pc) * sizeof(float));
    assert_non_null(packed);
    for (int64_t i = 0; i < bb; ++i)
        assert_int_equal(coreai_pack_b_f32(k, n, 0, b + i * k * n, packed + i * pc), COREAI_STATUS_OK);
    mm_case c;
    memset(&c, 0, sizeof c);
    c.p.batch_rank = 2;
    c.p.batch_shape[0] = 2;
    c.p.batch_shape[1] = 3;
    c.p.a_batch_strides[0] = 3 * m * k;
    c.p.a_batch_strides[1] = m * k;
    c.p.b_batch_strides[1] = shared_b ? 0 : (form == MM_PACKED ? pc : k * n);
    c.p.m = m;
    c.p.n = n;
    c.p.k = k;
    c.form = form;
    c.a = a;
    c.b = b;
    c.packed = packed;
    float *out = malloc((size_t)(nb * m * n) * sizeof(float));
    double *want = doubles(nb * m * n);
    assert_non_null(out);
    char what[96];
    snprintf(what, sizeof what, "matmul form %d %lldx%lldx%lld shared B %d", (int)form, (long long)m, (long long)k,
             (long long)n, shared_b);
    check_modes(what, mm_run, &c, nb * m * n, out);
    for (int64_t t = 0; t < nb; ++t) {
        const float *at = a + t * m * k, *bt = b + (shared_b ? 0 : t % 3) * k * n;
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double s = 0.0;
                for (int64_t p = 0; p < k; ++p)
                    s += (double)at[i * k + p] * bt[p * n + j];
                want[(t * m + i) * n + j] = s;
            }
    }
    expect_near(what, out, want, nb * m * n, 1e-5 * (double)k);
    free(a);
    free(b);
    free(packed);
    free(out);
    free(want);
}

/* ---- palettized linear, decode rows (outputs split) ---- */

typedef struct lut_case {
    coreai_linear_lut_params p;
    const float *x, *lut, *bias;
    const uint8_t *idx;
} lut_case;

static void lut_run_case(const void *cv, float *out)
{
    const lut_case *c = cv;
    assert_int_equal(coreai_linear_lut_f32(&c->p, c->x, c->idx, c->lut, c->bias, out), COREAI_STATUS_OK);
}

static void test_linear_lut(void **state)
{
    (void)state;
    const int64_t rows = 2, in = 512, outf = 200, groups = 4;
    ref_rng r = ref_rng_make(0x9900ull);
    float *x = random_floats(&r, rows * in), *lut = random_floats(&r, groups * 16), *bias = random_floats(&r, outf);
    uint8_t *idx = malloc((size_t)(outf * in / 2));
    assert_non_null(idx);
    for (int64_t i = 0; i < outf * in / 2; ++i)
        idx[i] = (uint8_t)ref_next(&r);
    const lut_case c = {{rows, in, outf, 4, outf / groups, COREAI_EPILOGUE_RELU}, x, lut, bias, idx};
    float *out = malloc((size_t)(rows * outf) * sizeof(float));
    double *want = doubles(rows * outf);
    assert_non_null(out);
    check_modes("linear_lut", lut_run_case, &c, rows * outf, out);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t o = 0; o < outf; ++o) {
            double s = bias[o];
            for (int64_t k = 0; k < in; ++k) {
                const int64_t e = o * in + k;
                s += (double)x[i * in + k] * lut[o / (outf / groups) * 16 + ((idx[e / 2] >> (4 * (e % 2))) & 15)];
            }
            want[i * outf + o] = s > 0.0 ? s : 0.0;
        }
    expect_near("linear_lut", out, want, rows * outf, 1e-5);
    free(x);
    free(lut);
    free(bias);
    free(idx);
    free(out);
    free(want);
}

static void test_matmul_batches(void **state)
{
    (void)state;
    check_matmul(MM_PLAIN, 40, 64, 48, 0);   /* batches dealt out, stack blocks */
    check_matmul(MM_PACKED, 33, 70, 50, 0);  /* pre-packed B per batch */
    check_matmul(MM_SCRATCH, 40, 64, 48, 1); /* one B packed once into scratch, then batches */
    check_matmul(MM_SCRATCH, 64, 64, 64, 0); /* B packed per batch into scratch: split inside the GEMM */
    check_matmul(MM_PLAIN, 2, 300, 100, 0);  /* few rows: B read in place */
}

/* ---- int8-activation linear on 4-bit weights (coreai_linear_q8a_f32) ---- */

typedef struct q8a_case {
    coreai_linear_q_params p;
    const float *x, *s, *bias;
    const uint8_t *q, *z;
    void *scratch;
} q8a_case;

static void q8a_run(const void *cv, float *out)
{
    const q8a_case *c = cv;
    assert_int_equal(coreai_linear_q8a_f32(&c->p, c->x, c->q, c->s, c->z, c->bias, out, c->scratch), COREAI_STATUS_OK);
}

/* Outputs split between tasks in parts of whole strips, each output
 * computed alone: the same bits for any split, a part starting past the
 * first strip included (200 outputs: 3 parts). The oracle: the layer in
 * double on f32 x, within what rounding each input to a step of its
 * run's max|x| / 127 can cost (half a step times |w| per input). */
static void check_q8a(int64_t rows)
{
    const int64_t in = 256, outf = 200, block = 64, nb = in / block;
    ref_rng r = ref_rng_make(0x9900ull + (uint64_t)rows);
    q8a_case c;
    memset(&c, 0, sizeof c);
    c.p = (coreai_linear_q_params){rows, in, outf, block, COREAI_INT_I4, COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32};
    uint8_t *q = malloc((size_t)(outf * in / 2)), *z = malloc((size_t)(outf * nb / 2));
    float *x = random_floats(&r, rows * in), *sc = random_floats(&r, outf * nb), *bias = random_floats(&r, outf);
    float *out = malloc((size_t)(rows * outf) * sizeof(float));
    c.scratch = malloc(coreai_linear_q8a_f32_scratch_size(&c.p));
    assert_true(q && z && out && c.scratch);
    for (int64_t i = 0; i < outf * in / 2; ++i)
        q[i] = (uint8_t)ref_next(&r);
    for (int64_t i = 0; i < outf * nb / 2; ++i)
        z[i] = (uint8_t)ref_next(&r);
    /* the kernel's panels; the reference below reads q and sc as stored */
    uint8_t *pq = malloc((size_t)coreai_linear_q8a_weight_bytes(&c.p));
    float *ps = malloc(sizeof(float) * (size_t)coreai_linear_q8a_scale_count(&c.p));
    assert_true(pq && ps);
    assert_int_equal(coreai_linear_q8a_pack(&c.p, q, sc, pq, ps), COREAI_STATUS_OK);
    c.x = x;
    c.s = ps;
    c.bias = bias;
    c.q = pq;
    c.z = z;
    check_modes("linear_q8a", q8a_run, &c, rows * outf, out);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t o = 0; o < outf; ++o) {
            double sum = bias[o], tol = 1e-5 * (1.0 + fabs((double)bias[o]));
            for (int64_t k = 0; k < in; ++k) {
                const int64_t e = o * in + k, b = o * nb + k / block;
                /* q + 8 and z + 8 (i4 nibbles with the sign bit flipped) */
            const int qv = ((q[e / 2] >> (4 * (e % 2))) & 15) ^ 8, zv = ((z[b / 2] >> (4 * (b % 2))) & 15) ^ 8;
                const double w = (double)(qv - zv) * sc[b];
                double amax = 0.0;
                for (int64_t t = k / 32 * 32; t < k / 32 * 32 + 32; ++t)
                    amax = fabs((double)x[i * in + t]) > amax ? fabs((double)x[i * in + t]) : amax;
                sum += w * x[i * in + k];
                tol += 1.01 * fabs(w) * amax / 254.0 + 1e-5 * fabs(w * x[i * in + k]);
            }
            const double ref = sum > 0.0 ? sum : 0.0, got = out[i * outf + o];
            if (!(fabs(got - ref) <= tol))
                fail_msg("linear_q8a rows %lld: out[%lld][%lld] = %.9g, reference %.9g (tolerance %.3g)",
                         (long long)rows, (long long)i, (long long)o, got, ref, tol);
        }
    free(pq);
    free(ps);
    free(q);
    free(z);
    free(x);
    free(sc);
    free(bias);
    free(out);
    free(c.scratch);
}

static void test_linear_q8a(void **state)
{
    (void)state;
    check_q8a(1);  /* decode */
    check_q8a(67); /* prefill: a pass of 64 rows and a tail */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_norms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_channel_norms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rope, setup, teardown),
        cmocka_unit_test_setup_teardown(test_softmax, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swiglu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elementwise, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_linear_lut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_linear_q8a, setup, teardown),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
