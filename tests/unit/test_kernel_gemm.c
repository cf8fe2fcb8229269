/*
 * The runtime's GEMM behind coreai_matmul_f32 / _ws / _packed and
 * coreai_linear_f32 / _ex / _packed, against a naive double reference.
 *
 * The same object is linked several times (tests/isa/CMakeLists.txt): with
 * the runtime of the build (portable: the 4-wide path; COREAI_NATIVE: the
 * host's widest), and against runtimes compiled for the scalar fallback,
 * AVX, x86-64-v3 (AVX2 + FMA) and x86-64-v4 (AVX-512) where the compiler
 * and the CPU allow. Every test prints the path it ran
 * (coreai_gemm_f32_config()).
 *
 * Sizes cover every remainder of the register tiles (m, n, k from 1 to 70,
 * primes), the cache blocks (k past KC, n past NC, for the packed and the
 * stack-blocked paths), transposes, batch broadcasting and every epilogue.
 * Tolerance as in test_kernel_matmul.c: 1e-5 * max(1, sum over p of |a*b|
 * (+ |bias|)); after an activation, 1.2 times that (the activations' slopes
 * are below 1.2) plus 1e-6 relative; with a residual addend, plus
 * FLT_EPSILON * (|epilogue result| + |addend|) for the f32 add.
 * Outputs start as NaN (every element must be written) and are followed by
 * a guard that must stay untouched; scratch has a guard too.
 *
 * COREAI_TEST_GEMM_SMALL=1 (the valgrind runs, tests/isa, some 30 times
 * slower than native): the tests whose large shapes are there to cross the
 * cache blocks use the smallest shapes that still cross every block of the
 * ISAs valgrind runs (baseline and avx2: KC 256, NC 512; the stack-blocked
 * path: 128 x 64), with edge tiles and both sides of COREAI_GEMM_SMALL_M;
 * every tile remainder still comes up (test_edges_1_to_70 and the row
 * counts are unchanged). The native runs keep the large shapes.
 */
#include "kernel_ref.h"

#include <float.h>

#include "coreai/kernels.h"
#include "every_isa.h"

#define GUARD 64
static const float k_canary = -12345.5f;

static int small_shapes(void)
{
    const char *s = getenv("COREAI_TEST_GEMM_SMALL");
    return s != NULL && *s != '\0' && strcmp(s, "0") != 0;
}

/* ptr, count = the shape table full or small (arrays) for this run */
#define PICK_SHAPES(ptr, count, full, small)                \
    do {                                                    \
        const int small_ = small_shapes();                  \
        (ptr) = small_ ? (small) : (full);                  \
        (count) = small_ ? sizeof(small) / sizeof((small)[0]) \
                         : sizeof(full) / sizeof((full)[0]); \
    } while (0)

/* ---- reference ------------------------------------------------------------- */

static double act_ref(double v, int epilogue)
{
    switch (epilogue) {
    case COREAI_EPILOGUE_RELU: return v < 0.0 ? 0.0 : v;
    case COREAI_EPILOGUE_GELU: return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    case COREAI_EPILOGUE_GELU_TANH:
        return 0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    case COREAI_EPILOGUE_SILU: return v / (1.0 + exp(-v));
    default: return v;
    }
}

static float *alloc_guarded(int64_t n)
{
    float *p = ref_alloc_f(n + GUARD);
    for (int64_t i = 0; i < n; ++i)
        p[i] = NAN;
    for (int64_t i = 0; i < GUARD; ++i)
        p[n + i] = k_canary;
    return p;
}

static void check_guard(const float *p, int64_t n, const char *what)
{
    for (int64_t i = 0; i < GUARD; ++i) {
        if (p[n + i] != k_canary) {
            print_error("%s: wrote past the end (guard element %lld)\n", what, (long long)i);
            fail();
        }
    }
}

/*
 * got[i][j] against epilogue(sum_p A(i,p) B(p,j) + bias[j]) + addend[i*n+j]
 * (addend may be NULL) with A(i,p) = a[i*a_rs + p*a_cs], B(p,j) =
 * b[p*b_rs + j*b_cs].
 */
static void check_product_add(const float *got, int64_t m, int64_t n, int64_t k, const float *a,
                              int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs,
                              const float *bias, int epilogue, const float *addend, const char *what)
{
    /* B densely in double, then row by row: s[j] and mag[j] over p */
    double *bd = ref_alloc_d(k * n), *s = ref_alloc_d(n), *mag = ref_alloc_d(n);
    for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
            bd[p * n + j] = b[p * b_rs + j * b_cs];
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            s[j] = bias ? bias[j] : 0.0;
            mag[j] = fabs(s[j]);
        }
        for (int64_t p = 0; p < k; ++p) {
            const double av = a[i * a_rs + p * a_cs];
            const double *br = bd + p * n;
            for (int64_t j = 0; j < n; ++j) {
                const double t = av * br[j];
                s[j] += t;
                mag[j] += fabs(t);
            }
        }
        for (int64_t j = 0; j < n; ++j) {
            double tol = REF_TOL * fmax(1.0, mag[j]);
            double want = act_ref(s[j], epilogue);
            if (epilogue != COREAI_EPILOGUE_NONE)
                tol = 1.2 * tol + 1e-6 * fmax(1.0, fabs(want));
            if (addend) {
                /* one more f32 rounding, of the sum */
                const double r = addend[i * n + j];
                tol += FLT_EPSILON * (fabs(want) + fabs(r));
                want += r;
            }
            const double g = got[i * n + j];
            if (!(fabs(g - want) <= tol)) {
                print_error("%s [%s]: (%lld,%lld) of %lldx%lldx%lld: got %.9g want %.9g\n", what,
                            coreai_gemm_f32_config(), (long long)i, (long long)j, (long long)m,
                            (long long)n, (long long)k, g, want);
                fail();
            }
        }
    }
    free(bd);
    free(s);
    free(mag);
}

static void check_product(const float *got, int64_t m, int64_t n, int64_t k, const float *a,
                          int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs,
                          const float *bias, int epilogue, const char *what)
{
    check_product_add(got, m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bias, epilogue, NULL, what);
}

/* ---- matmul: plain, scratch, packed B ---------------------------------------- */

enum { V_PLAIN, V_WS, V_WS_NULL, V_PACKED, V_COUNT };
static const char *const k_variant[V_COUNT] = {"matmul", "matmul_ws", "matmul_ws(NULL)", "matmul_packed"};

static void run_matmul_2d(ref_rng *rng, int64_t m, int64_t n, int64_t k, int ta, int tb, int variant)
{
    coreai_matmul_params p;
    memset(&p, 0, sizeof p);
    p.m = m;
    p.n = n;
    p.k = k;
    p.transpose_a = ta;
    p.transpose_b = tb;
    float *a = ref_alloc_f(m * k), *b = ref_alloc_f(k * n), *out = alloc_guarded(m * n);
    ref_fill(rng, a, m * k, -1, 1);
    ref_fill(rng, b, k * n, -1, 1);
    char what[128];
    snprintf(what, sizeof what, "%s ta %d tb %d", k_variant[variant], ta, tb);
    if (variant == V_PLAIN) {
        assert_int_equal(coreai_matmul_f32(&p, a, b, out), COREAI_STATUS_OK);
    } else if (variant == V_WS || variant == V_WS_NULL) {
        const size_t bytes = coreai_matmul_f32_scratch_size(&p);
        assert_int_equal(bytes, (size_t)(4 * k * ((n + 15) / 16 * 16)));
        float *scratch = alloc_guarded((int64_t)(bytes / 4));
        assert_int_equal(coreai_matmul_ws_f32(&p, a, b, out, variant == V_WS ? scratch : NULL),
                         COREAI_STATUS_OK);
        check_guard(scratch, (int64_t)(bytes / 4), "scratch");
        free(scratch);
    } else {
        const int64_t count = coreai_packed_b_count(k, n);
        float *packed = ref_alloc_f(count);
        assert_int_equal(coreai_pack_b_f32(k, n, tb, b, packed), COREAI_STATUS_OK);
        coreai_matmul_params q = p;
        q.transpose_b = 0;
        assert_int_equal(coreai_matmul_packed_f32(&q, a, packed, out), COREAI_STATUS_OK);
        free(packed);
    }
    check_guard(out, m * n, what);
    check_product(out, m, n, k, a, ta ? 1 : k, ta ? m : 1, b, tb ? 1 : n, tb ? k : 1, NULL,
                  COREAI_EPILOGUE_NONE, what);
    free(a);
    free(b);
    free(out);
}

/* m, n and k from 1 to 70 (every tile remainder of every path), one at a
 * time, all variants, transposes rotating. */
static void test_edges_1_to_70(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(61);
    int t = 0;
    for (int64_t x = 1; x <= 70; ++x) {
        for (int v = 0; v < V_COUNT; ++v, ++t) {
            run_matmul_2d(&rng, x, 37, 29, t & 1, (t >> 1) & 1, v);
            run_matmul_2d(&rng, 13, x, 19, (t >> 1) & 1, t & 1, v);
            run_matmul_2d(&rng, 9, 35, x, t & 1, t & 1, v);
        }
    }
}

/* Prime sizes against each other, all transposes. */
static void test_primes(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(62);
    static const int64_t primes[] = {1, 2, 3, 5, 7, 13, 17, 31, 37, 61, 67};
    const int np = (int)(sizeof primes / sizeof primes[0]);
    int t = 0;
    for (int im = 0; im < np; ++im)
        for (int in = 0; in < np; ++in, ++t)
            run_matmul_2d(&rng, primes[im], primes[in], (t % 3) == 0 ? 67 : 3, t & 1, (t >> 1) & 1,
                          t % V_COUNT);
}

/* Shapes past the cache blocks of every ISA (KC <= 320, NC <= 1024; the
 * stack-blocked path: 128 x 64), all transposes, all variants. */
static void test_blocks(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(63);
    static const int64_t full[][3] = {
        {37, 530, 300}, {129, 67, 513}, {15, 1100, 40}, {70, 40, 650}, {4, 1043, 257}, {3, 300, 700},
    };
    static const int64_t small[][3] = {
        {7, 530, 260}, {9, 67, 513}, {6, 1100, 40}, {7, 40, 650}, {4, 520, 260}, {3, 100, 700},
    };
    const int64_t(*shapes)[3];
    size_t count;
    PICK_SHAPES(shapes, count, full, small);
    for (size_t s = 0; s < count; ++s)
        for (int t = 0; t < 4; ++t)
            for (int v = 0; v < V_COUNT; ++v)
                run_matmul_2d(&rng, shapes[s][0], shapes[s][1], shapes[s][2], t & 1, t >> 1, v);
}

/* Batch broadcasting for the scratch and packed-B forms (B broadcast over
 * the batch is packed once by matmul_ws; packed strides count packed floats). */
static void run_batched(ref_rng *rng, int variant, unsigned a_bc, unsigned b_bc, int64_t m, int64_t n,
                        int64_t k, int ta, int tb)
{
    const int rank = 2;
    const int64_t batch[2] = {2, 3};
    coreai_matmul_params p;
    memset(&p, 0, sizeof p);
    p.batch_rank = rank;
    p.batch_shape[0] = batch[0];
    p.batch_shape[1] = batch[1];
    p.m = m;
    p.n = n;
    p.k = k;
    p.transpose_a = ta;
    p.transpose_b = tb;
    int64_t sa = m * k, sb = k * n, pb = coreai_packed_b_count(k, n), spb = pb;
    int64_t packed_strides[2];
    for (int d = rank - 1; d >= 0; --d) {
        const int ab = (a_bc >> d) & 1, bb = (b_bc >> d) & 1;
        p.a_batch_strides[d] = ab ? 0 : sa;
        p.b_batch_strides[d] = bb ? 0 : sb;
        packed_strides[d] = bb ? 0 : spb;
        sa *= ab ? 1 : batch[d];
        sb *= bb ? 1 : batch[d];
        spb *= bb ? 1 : batch[d];
    }
    const int64_t nout = batch[0] * batch[1] * m * n;
    float *a = ref_alloc_f(sa), *b = ref_alloc_f(sb), *out = alloc_guarded(nout);
    ref_fill(rng, a, sa, -1, 1);
    ref_fill(rng, b, sb, -1, 1);
    if (variant == V_PACKED) {
        float *packed = ref_alloc_f(spb);
        for (int64_t q = 0; q < sb / (k * n); ++q)
            assert_int_equal(coreai_pack_b_f32(k, n, tb, b + q * k * n, packed + q * pb), COREAI_STATUS_OK);
        coreai_matmul_params q = p;
        q.transpose_b = 0;
        q.b_batch_strides[0] = packed_strides[0];
        q.b_batch_strides[1] = packed_strides[1];
        assert_int_equal(coreai_matmul_packed_f32(&q, a, packed, out), COREAI_STATUS_OK);
        free(packed);
    } else {
        const size_t bytes = coreai_matmul_f32_scratch_size(&p);
        float *scratch = alloc_guarded((int64_t)(bytes / 4));
        assert_int_equal(coreai_matmul_ws_f32(&p, a, b, out, scratch), COREAI_STATUS_OK);
        check_guard(scratch, (int64_t)(bytes / 4), "scratch");
        free(scratch);
    }
    check_guard(out, nout, "batched out");
    for (int64_t t = 0; t < batch[0] * batch[1]; ++t) {
        const int64_t i0 = t / batch[1], i1 = t % batch[1];
        const float *am = a + i0 * p.a_batch_strides[0] + i1 * p.a_batch_strides[1];
        const float *bm = b + i0 * p.b_batch_strides[0] + i1 * p.b_batch_strides[1];
        char what[96];
        snprintf(what, sizeof what, "%s batch %lld abc %x bbc %x", k_variant[variant], (long long)t, a_bc, b_bc);
        check_product(out + t * m * n, m, n, k, am, ta ? 1 : k, ta ? m : 1, bm, tb ? 1 : n, tb ? k : 1,
                      NULL, COREAI_EPILOGUE_NONE, what);
    }
    free(a);
    free(b);
    free(out);
}

static void test_batch_broadcast(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(64);
    for (unsigned ab = 0; ab < 4; ++ab)
        for (unsigned bb = 0; bb < 4; ++bb)
            for (int t = 0; t < 4; ++t) {
                run_batched(&rng, V_WS, ab, bb, 5 + t, 19, 7 + 3 * t, t & 1, t >> 1);
                run_batched(&rng, V_PACKED, ab, bb, 6, 17 + t, 9, t & 1, t >> 1);
            }
}

/* ---- linear: plain, scratch, packed weight; epilogues --------------------- */

enum { L_PLAIN, L_EX, L_EX_NULL, L_PACKED, L_COUNT };
static const char *const k_lvariant[L_COUNT] = {"linear", "linear_ex", "linear_ex(NULL)", "linear_packed"};

/* Runs one linear form into out (guarded); w is [out][in], or [in][out]
 * when wt. */
static void linear_call(int variant, int64_t rows, int64_t in, int64_t outf, int wt, int epilogue,
                        const float *x, const float *w, const float *bias, float *out)
{
    if (variant == L_PLAIN) {
        assert_int_equal(epilogue, COREAI_EPILOGUE_NONE);
        const coreai_linear_params p = {rows, in, outf, wt};
        assert_int_equal(coreai_linear_f32(&p, x, w, bias, out), COREAI_STATUS_OK);
    } else if (variant == L_EX || variant == L_EX_NULL) {
        const coreai_linear_ex_params p = {rows, in, outf, wt, epilogue};
        const size_t bytes = coreai_linear_ex_f32_scratch_size(&p);
        assert_int_equal(bytes, rows && in && outf ? (size_t)(4 * in * ((outf + 15) / 16 * 16)) : 0);
        float *scratch = alloc_guarded((int64_t)(bytes / 4));
        assert_int_equal(coreai_linear_ex_f32(&p, x, w, bias, out, variant == L_EX ? scratch : NULL),
                         COREAI_STATUS_OK);
        check_guard(scratch, (int64_t)(bytes / 4), "linear scratch");
        free(scratch);
    } else {
        float *packed = ref_alloc_f(coreai_packed_b_count(in, outf));
        assert_int_equal(coreai_pack_b_f32(in, outf, !wt, w, packed), COREAI_STATUS_OK);
        const coreai_linear_packed_params p = {rows, in, outf, epilogue, 0, 0};
        assert_int_equal(coreai_linear_packed_f32(&p, x, packed, bias, out), COREAI_STATUS_OK);
        free(packed);
    }
}

static void run_linear(ref_rng *rng, int variant, int64_t rows, int64_t in, int64_t outf, int wt,
                       int with_bias, int epilogue)
{
    if (variant == L_PLAIN)
        epilogue = COREAI_EPILOGUE_NONE;
    float *x = ref_alloc_f(rows * in), *w = ref_alloc_f(in * outf), *bias = ref_alloc_f(outf);
    float *out = alloc_guarded(rows * outf);
    ref_fill(rng, x, rows * in, -1, 1);
    ref_fill(rng, w, in * outf, -1, 1);
    ref_fill(rng, bias, outf, -1, 1);
    linear_call(variant, rows, in, outf, wt, epilogue, x, w, with_bias ? bias : NULL, out);
    char what[128];
    snprintf(what, sizeof what, "%s wt %d bias %d epilogue %d", k_lvariant[variant], wt, with_bias, epilogue);
    check_guard(out, rows * outf, what);
    /* B(p = i, j = o) = W[o][i], or W[i][o] when transposed */
    check_product(out, rows, outf, in, x, in, 1, w, wt ? outf : 1, wt ? 1 : in, with_bias ? bias : NULL,
                  epilogue, what);
    free(x);
    free(w);
    free(bias);
    free(out);
}

/* [rows][heads * d] <-> [heads][rows][d]; d == 0: a plain copy. */
static void to_heads(float *dst, const float *src, int64_t rows, int64_t feat, int64_t d, int back)
{
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t f = 0; f < feat; ++f) {
            const int64_t h = d > 0 ? (f / d) * rows * d + r * d + f % d : r * feat + f;
            if (back)
                dst[r * feat + f] = src[h];
            else
                dst[h] = src[r * feat + f];
        }
}

/* A packed linear's shape and head layouts (0: plain rows). */
typedef struct linear_shape {
    int64_t rows, in, outf, x_hd, out_hd;
} linear_shape;

/* linear_packed reading x and / or writing out in head layouts (the folded
 * attention transposes): heads of one vector, of part of a tile, of several
 * tiles, across the k and n cache blocks, and k == 0. */
static void test_linear_head_layouts(void **state)
{
    (void)state;
    static const linear_shape full[] = {
        {64, 256, 256, 32, 0},  {64, 256, 256, 0, 32},   {64, 256, 256, 32, 32}, {13, 128, 192, 64, 64},
        {7, 40, 48, 8, 16},     {5, 12, 48, 3, 12},      {9, 30, 36, 1, 3},      {30, 600, 1100, 40, 100},
        {3, 600, 40, 200, 20},  {17, 264, 520, 24, 520}, {1, 16, 16, 16, 16},    {4, 0, 24, 0, 8},
    };
    static const linear_shape small[] = {
        {13, 64, 64, 32, 0},   {13, 64, 64, 0, 32},     {13, 64, 64, 32, 32}, {13, 128, 192, 64, 64},
        {7, 40, 48, 8, 16},    {5, 12, 48, 3, 12},      {9, 30, 36, 1, 3},    {5, 600, 530, 40, 106},
        {3, 600, 40, 200, 20}, {5, 264, 520, 24, 520},  {1, 16, 16, 16, 16},  {4, 0, 24, 0, 8},
    };
    const linear_shape *cases;
    size_t count;
    PICK_SHAPES(cases, count, full, small);
    ref_rng rng = ref_rng_make(77);
    for (size_t c = 0; c < count; ++c) {
        const int64_t rows = cases[c].rows, in = cases[c].in, outf = cases[c].outf;
        const int epilogue = (int)(c % 5), with_bias = c % 3 != 1;
        float *x = ref_alloc_f(rows * in + 1), *xh = ref_alloc_f(rows * in + 1);
        float *w = ref_alloc_f(in * outf + 1), *bias = ref_alloc_f(outf);
        float *outh = alloc_guarded(rows * outf), *out = ref_alloc_f(rows * outf + 1);
        float *packed = ref_alloc_f(coreai_packed_b_count(in, outf) + 1);
        ref_fill(&rng, x, rows * in, -1, 1);
        ref_fill(&rng, w, in * outf, -1, 1);
        ref_fill(&rng, bias, outf, -1, 1);
        to_heads(xh, x, rows, in, cases[c].x_hd, 0);
        assert_int_equal(coreai_pack_b_f32(in, outf, 1, w, packed), COREAI_STATUS_OK);
        const coreai_linear_packed_params p = {rows, in, outf, epilogue, cases[c].x_hd, cases[c].out_hd};
        assert_int_equal(coreai_linear_packed_f32(&p, xh, packed, with_bias ? bias : NULL, outh),
                         COREAI_STATUS_OK);
        char what[128];
        snprintf(what, sizeof what, "linear_packed heads x %lld out %lld epilogue %d bias %d",
                 (long long)cases[c].x_hd, (long long)cases[c].out_hd, epilogue, with_bias);
        check_guard(outh, rows * outf, what);
        to_heads(out, outh, rows, outf, cases[c].out_hd, 1);
        check_product(out, rows, outf, in, x, in, 1, w, 1, in, with_bias ? bias : NULL, epilogue, what);
        free(x);
        free(xh);
        free(w);
        free(bias);
        free(outh);
        free(out);
        free(packed);
    }
}

/* linear_packed_add: the residual added after the epilogue, against the
 * double reference (epilogue(x W^T + bias) + addend), and bit for bit what
 * linear_packed followed by an f32 add gives (so folding the add changes no
 * output): every epilogue (in registers and after the store), k past KC
 * (the addend must not meet the partial sums), n past NC, edge tiles, head
 * layouts, k == 0. */
static void test_linear_residual(void **state)
{
    (void)state;
    static const linear_shape full[] = {
        {64, 256, 256, 0, 0}, {64, 688, 256, 0, 0}, {13, 600, 1100, 0, 0}, {5, 24, 37, 0, 0},
        {3, 300, 20, 0, 0},   {64, 256, 256, 32, 0}, {9, 40, 48, 8, 16},   {4, 0, 24, 0, 0},
        {1, 16, 16, 0, 0},    {30, 600, 520, 0, 0},
    };
    static const linear_shape small[] = {
        {13, 64, 64, 0, 0}, {7, 600, 40, 0, 0},  {4, 520, 1040, 0, 0}, {5, 24, 37, 0, 0},
        {3, 300, 20, 0, 0}, {13, 64, 64, 32, 0}, {9, 40, 48, 8, 16},   {4, 0, 24, 0, 0},
        {1, 16, 16, 0, 0},  {7, 300, 530, 0, 0},
    };
    const linear_shape *cases;
    size_t count;
    PICK_SHAPES(cases, count, full, small);
    ref_rng rng = ref_rng_make(78);
    for (size_t c = 0; c < count; ++c) {
        for (int epilogue = COREAI_EPILOGUE_NONE; epilogue <= COREAI_EPILOGUE_SILU; ++epilogue) {
            const int64_t rows = cases[c].rows, in = cases[c].in, outf = cases[c].outf;
            const int with_bias = (c + (size_t)epilogue) % 2 == 0;
            float *x = ref_alloc_f(rows * in + 1), *w = ref_alloc_f(in * outf + 1), *bias = ref_alloc_f(outf);
            float *r = ref_alloc_f(rows * outf), *want = ref_alloc_f(rows * outf), *got = alloc_guarded(rows * outf);
            float *packed = ref_alloc_f(coreai_packed_b_count(in, outf) + 1);
            ref_fill(&rng, x, rows * in, -1, 1);
            ref_fill(&rng, w, in * outf, -1, 1);
            ref_fill(&rng, bias, outf, -1, 1);
            ref_fill(&rng, r, rows * outf, -4, 4);
            assert_int_equal(coreai_pack_b_f32(in, outf, 1, w, packed), COREAI_STATUS_OK);
            const coreai_linear_packed_params p = {rows, in, outf, epilogue, cases[c].x_hd, cases[c].out_hd};
            const float *b = with_bias ? bias : NULL;
            assert_int_equal(coreai_linear_packed_f32(&p, x, packed, b, want), COREAI_STATUS_OK);
            for (int64_t i = 0; i < rows * outf; ++i)
                want[i] = want[i] + r[i];
            assert_int_equal(coreai_linear_packed_add_f32(&p, x, packed, b, r, got), COREAI_STATUS_OK);
            check_guard(got, rows * outf, "linear_packed_add");
            char what[128];
            snprintf(what, sizeof what, "linear_packed_add heads x %lld out %lld epilogue %d bias %d",
                     (long long)cases[c].x_hd, (long long)cases[c].out_hd, epilogue, with_bias);
            {
                /* the reference reads x and the result in the plain layout */
                float *xp = ref_alloc_f(rows * in + 1), *gp = ref_alloc_f(rows * outf + 1);
                float *rp = ref_alloc_f(rows * outf + 1);
                to_heads(xp, x, rows, in, cases[c].x_hd, 1);
                to_heads(gp, got, rows, outf, cases[c].out_hd, 1);
                to_heads(rp, r, rows, outf, cases[c].out_hd, 1);
                check_product_add(gp, rows, outf, in, xp, in, 1, w, 1, in, b, epilogue, rp, what);
                free(xp);
                free(gp);
                free(rp);
            }
            for (int64_t i = 0; i < rows * outf; ++i) {
                if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
                    print_error("linear_packed_add %lldx%lldx%lld heads %lld/%lld epilogue %d bias %d [%s]: "
                                "element %lld got %.9g want %.9g\n",
                                (long long)rows, (long long)in, (long long)outf, (long long)cases[c].x_hd,
                                (long long)cases[c].out_hd, epilogue, with_bias, coreai_gemm_f32_config(),
                                (long long)i, got[i], want[i]);
                    fail();
                }
            }
            free(x);
            free(w);
            free(bias);
            free(r);
            free(want);
            free(got);
            free(packed);
        }
    }
    const coreai_linear_packed_params p = {1, 1, 1, COREAI_EPILOGUE_NONE, 0, 0};
    float one = 1.0f, out = 0.0f;
    assert_int_equal(coreai_linear_packed_add_f32(&p, &one, &one, NULL, NULL, &out), COREAI_STATUS_INVALID_ARGUMENT);
}

/* Shapes x forms, epilogue / bias / layout rotating so every combination
 * comes up; odd out_features (not multiples of 16) included. */
static void test_linear_shapes(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(65);
    static const int64_t full_rows[] = {1, 2, 3, 4, 5, 8, 13, 14, 15, 29, 64};
    static const int64_t small_rows[] = {1, 2, 3, 4, 5, 8, 13, 14, 15};
    static const int64_t full_ins[] = {1, 7, 16, 33, 300};
    static const int64_t small_ins[] = {1, 7, 16, 33, 130};
    static const int64_t outs[] = {1, 5, 16, 17, 31, 32, 33, 48, 70, 100};
    const int64_t *rows, *ins;
    size_t nrows, nins;
    PICK_SHAPES(rows, nrows, full_rows, small_rows);
    PICK_SHAPES(ins, nins, full_ins, small_ins);
    int t = 0;
    for (size_t r = 0; r < nrows; ++r)
        for (size_t i = 0; i < nins; ++i)
            for (size_t o = 0; o < sizeof outs / sizeof outs[0]; ++o)
                for (int v = 0; v < L_COUNT; ++v, ++t)
                    run_linear(&rng, v, rows[r], ins[i], outs[o], (t / 5) & 1, (t / 10) & 1, t % 5);
}

/* Every row count up to a few panels of the widest tile (AVX-512: 14 rows),
 * so each balanced split of m into panels, and each micro-kernel height,
 * runs against the reference. */
static void test_linear_every_row_count(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(67);
    int t = 0;
    for (int64_t m = 1; m <= 61; ++m, ++t)
        run_linear(&rng, L_PACKED, m, 37, 70, t & 1, (t >> 1) & 1, t % 5);
    for (int64_t m = 120; m <= 130; ++m, ++t)
        run_linear(&rng, t & 1 ? L_PACKED : L_EX, m, 19, 33, t & 1, 1, t % 5);
}

/* Every epilogue x bias x layout x form on shapes with edges everywhere,
 * one past the cache blocks. */
static void test_linear_epilogues(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(66);
    static const int64_t full[][3] = {{23, 45, 37}, {2, 19, 70}, {9, 530, 290}};
    static const int64_t small[][3] = {{23, 45, 37}, {2, 19, 70}, {7, 290, 40}, {5, 19, 530}};
    const int64_t(*shapes)[3];
    size_t count;
    PICK_SHAPES(shapes, count, full, small);
    for (size_t s = 0; s < count; ++s)
        for (int e = 0; e <= COREAI_EPILOGUE_SILU; ++e)
            for (int bi = 0; bi < 2; ++bi)
                for (int wt = 0; wt < 2; ++wt)
                    for (int v = L_EX; v < L_COUNT; ++v)
                        run_linear(&rng, v, shapes[s][0], shapes[s][1], shapes[s][2], wt, bi, e);
}

/* in_features == 0: the output is the epilogue of the bias (or of 0). */
static void test_linear_empty_k(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(67);
    for (int e = 0; e <= COREAI_EPILOGUE_SILU; ++e)
        for (int v = 0; v < L_COUNT; ++v)
            for (int bi = 0; bi < 2; ++bi)
                run_linear(&rng, v, 3, 0, 21, 0, bi, e);
}

static const coreai_unary_op k_unary_of[] = {COREAI_UNARY_OP_RELU, COREAI_UNARY_OP_RELU,
                                             COREAI_UNARY_OP_GELU, COREAI_UNARY_OP_GELU_TANH,
                                             COREAI_UNARY_OP_SILU};

/* A fused epilogue gives the bits of the separate op: linear with
 * epilogue E == coreai_unary_f32(E) after linear without, including NaN,
 * infinities and the sign of zero. */
static void test_epilogue_bitwise(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(68);
    const int64_t rows = 19, in = 37, outf = 53;
    float *x = ref_alloc_f(rows * in), *w = ref_alloc_f(in * outf), *bias = ref_alloc_f(outf);
    ref_fill(&rng, x, rows * in, -3, 3);
    ref_fill(&rng, w, in * outf, -1, 1);
    ref_fill(&rng, bias, outf, -2, 2);
    x[2 * in + 5] = NAN;       /* a NaN row */
    x[5 * in + 1] = INFINITY;  /* +-inf across a row */
    x[7 * in + 0] = 80.0f;     /* large values: silu / gelu tails */
    x[8 * in + 3] = -90.0f;
    for (int64_t i = 0; i < in; ++i)
        x[11 * in + i] = 0.0f; /* a row equal to the bias */
    bias[4] = -0.0f;
    float *plain = alloc_guarded(rows * outf), *fused = alloc_guarded(rows * outf);
    for (int e = COREAI_EPILOGUE_RELU; e <= COREAI_EPILOGUE_SILU; ++e) {
        for (int v = L_EX; v < L_COUNT; ++v) {
            for (int bi = 0; bi < 2; ++bi) {
                linear_call(v, rows, in, outf, 0, COREAI_EPILOGUE_NONE, x, w, bi ? bias : NULL, plain);
                const coreai_unary_params up = {k_unary_of[e], rows * outf};
                assert_int_equal(coreai_unary_f32(&up, plain, plain), COREAI_STATUS_OK);
                linear_call(v, rows, in, outf, 0, e, x, w, bi ? bias : NULL, fused);
                if (memcmp(plain, fused, (size_t)(rows * outf) * sizeof(float)) != 0) {
                    for (int64_t i = 0; i < rows * outf; ++i) {
                        if (memcmp(&plain[i], &fused[i], sizeof(float)) != 0) {
                            print_error("%s epilogue %d bias %d: element %lld: fused %.9g separate %.9g\n",
                                        k_lvariant[v], e, bi, (long long)i, fused[i], plain[i]);
                            break;
                        }
                    }
                    fail();
                }
            }
        }
    }
    free(x);
    free(w);
    free(bias);
    free(plain);
    free(fused);
}

/* ---- packing and arguments ------------------------------------------------ */

static void test_pack_layout(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(69);
    for (int tb = 0; tb < 2; ++tb) {
        const int64_t k = 3, n = 37;
        float b[3 * 37];
        ref_fill(&rng, b, k * n, -1, 1);
        const int64_t count = coreai_packed_b_count(k, n);
        assert_int_equal(count, 3 * 48);
        float *packed = alloc_guarded(count);
        assert_int_equal(coreai_pack_b_f32(k, n, tb, b, packed), COREAI_STATUS_OK);
        check_guard(packed, count, "pack");
        for (int64_t p = 0; p < k; ++p) {
            for (int64_t j = 0; j < 48; ++j) {
                const float want = j < n ? (tb ? b[j * k + p] : b[p * n + j]) : 0.0f;
                const float got = packed[(j / 16) * (k * 16) + p * 16 + j % 16];
                if (memcmp(&got, &want, sizeof got) != 0) {
                    print_error("pack tb %d: B(%lld,%lld) got %g want %g\n", tb, (long long)p,
                                (long long)j, got, want);
                    fail();
                }
            }
        }
        free(packed);
    }
    assert_int_equal(coreai_packed_b_count(0, 5), 0);
    assert_int_equal(coreai_packed_b_count(5, 0), 0);
    assert_int_equal(coreai_packed_b_count(2, 16), 32);
    assert_int_equal(coreai_packed_b_count(2, 17), 64);
    assert_int_equal(coreai_packed_b_count(-1, 5), -1);
    assert_int_equal(coreai_packed_b_count(INT64_MAX / 2, 64), -1);
    float one = 1.0f, dst[16];
    assert_int_equal(coreai_pack_b_f32(1, 1, 2, &one, dst), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_pack_b_f32(1, 1, 0, NULL, dst), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_pack_b_f32(1, 1, 0, &one, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_pack_b_f32(-1, 1, 0, &one, dst), COREAI_STATUS_INVALID_ARGUMENT);
}

static void test_invalid_and_empty(void **state)
{
    (void)state;
    float a[64] = {0}, b[64] = {0}, out[64] = {0};
    _Alignas(16) float scratch[64];
    coreai_matmul_params p;
    memset(&p, 0, sizeof p);
    p.m = p.n = p.k = 2;
    assert_int_equal(coreai_matmul_ws_f32(&p, a, b, out, scratch), COREAI_STATUS_OK);
    assert_int_equal(coreai_matmul_ws_f32(NULL, a, b, out, scratch), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_matmul_ws_f32(&p, NULL, b, out, scratch), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_matmul_ws_f32(&p, a, b, out, (char *)scratch + 1), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_matmul_packed_f32(&p, a, b, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_matmul_packed_f32(&p, a, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_matmul_params q = p;
    q.transpose_b = 1;
    assert_int_equal(coreai_matmul_packed_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.k = -1;
    assert_int_equal(coreai_matmul_ws_f32(&q, a, b, out, scratch), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_matmul_f32_scratch_size(&q), 0);
    assert_int_equal(coreai_matmul_f32_scratch_size(NULL), 0);
    q = p;
    q.k = 3;
    q.n = 17;
    assert_int_equal(coreai_matmul_f32_scratch_size(&q), 3 * 32 * 4);
    q.m = 0;
    assert_int_equal(coreai_matmul_f32_scratch_size(&q), 0);
    q = p;
    q.batch_rank = 1;
    q.batch_shape[0] = 0;
    assert_int_equal(coreai_matmul_f32_scratch_size(&q), 0);
    /* empty batch or m: nothing written */
    out[0] = 42.0f;
    assert_int_equal(coreai_matmul_ws_f32(&q, a, b, out, scratch), COREAI_STATUS_OK);
    assert_int_equal(coreai_matmul_packed_f32(&q, a, b, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
    /* k == 0: zeros */
    q = p;
    q.k = 0;
    out[0] = 42.0f;
    assert_int_equal(coreai_matmul_packed_f32(&q, a, b, out), COREAI_STATUS_OK);
    assert_true(out[0] == 0.0f && out[3] == 0.0f);

    coreai_linear_ex_params lp = {2, 2, 2, 0, COREAI_EPILOGUE_RELU};
    assert_int_equal(coreai_linear_ex_f32(&lp, a, b, NULL, out, NULL), COREAI_STATUS_OK);
    assert_int_equal(coreai_linear_ex_f32(NULL, a, b, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_ex_f32(&lp, a, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_ex_f32(&lp, a, b, NULL, out, (char *)scratch + 2),
                     COREAI_STATUS_INVALID_ARGUMENT);
    coreai_linear_ex_params lq = lp;
    lq.epilogue = 5;
    assert_int_equal(coreai_linear_ex_f32(&lq, a, b, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    lq.epilogue = -1;
    assert_int_equal(coreai_linear_ex_f32(&lq, a, b, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    lq = lp;
    lq.weight_transposed = 2;
    assert_int_equal(coreai_linear_ex_f32(&lq, a, b, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    lq = lp;
    lq.rows = -1;
    assert_int_equal(coreai_linear_ex_f32(&lq, a, b, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_ex_f32_scratch_size(&lq), 0);
    assert_int_equal(coreai_linear_ex_f32_scratch_size(NULL), 0);
    assert_int_equal(coreai_linear_ex_f32_scratch_size(&lp), 2 * 16 * 4);

    coreai_linear_packed_params pp = {2, 2, 2, COREAI_EPILOGUE_SILU, 0, 0};
    assert_int_equal(coreai_linear_packed_f32(&pp, a, b, NULL, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_linear_packed_f32(NULL, a, b, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_packed_f32(&pp, a, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_packed_f32(&pp, a, b, NULL, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_linear_packed_params pq = pp;
    pq.epilogue = 9;
    assert_int_equal(coreai_linear_packed_f32(&pq, a, b, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    pq = pp;
    pq.out_features = -3;
    assert_int_equal(coreai_linear_packed_f32(&pq, a, b, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* head dims must divide the features */
    pq = pp;
    pq.x_head_dim = 3;
    assert_int_equal(coreai_linear_packed_f32(&pq, a, b, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    pq.x_head_dim = -1;
    assert_int_equal(coreai_linear_packed_f32(&pq, a, b, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    pq = pp;
    pq.out_head_dim = 4;
    assert_int_equal(coreai_linear_packed_f32(&pq, a, b, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    pq.out_head_dim = 1;
    assert_int_equal(coreai_linear_packed_f32(&pq, a, b, NULL, out), COREAI_STATUS_OK);
    /* no rows: nothing written */
    pq = pp;
    pq.rows = 0;
    out[0] = 42.0f;
    assert_int_equal(coreai_linear_packed_f32(&pq, a, b, b, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

static void test_config(void **state)
{
    (void)state;
    const char *cfg = coreai_gemm_f32_config();
    assert_non_null(cfg);
    assert_true(strlen(cfg) > 0);
    print_message("gemm path: %s\n", cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_pack_layout),
        cmocka_unit_test(test_edges_1_to_70),
        cmocka_unit_test(test_primes),
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_batch_broadcast),
        cmocka_unit_test(test_linear_shapes),
        cmocka_unit_test(test_linear_every_row_count),
        cmocka_unit_test(test_linear_epilogues),
        cmocka_unit_test(test_linear_head_layouts),
        cmocka_unit_test(test_linear_residual),
        cmocka_unit_test(test_linear_empty_k),
        cmocka_unit_test(test_epilogue_bitwise),
        cmocka_unit_test(test_invalid_and_empty),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
