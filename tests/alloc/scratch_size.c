/*
 * scratch_size: the workspace scratch a runtime kernel asks for, from the
 * runtime's own size functions (not from anything coreai-gen computes), for
 * tests/alloc/liveness_bound.py. One request per line on stdin, one byte
 * count per line on stdout:
 *
 *   matmul BATCH M N K TRANSPOSE_A TRANSPOSE_B   coreai_matmul_f32_scratch_size
 *   linear ROWS IN OUT WEIGHT_TRANSPOSED         coreai_linear_ex_f32_scratch_size
 *   conv2d <the 16 fields of coreai_conv2d_params, in order>
 *                                                coreai_conv2d_f32_scratch_size
 *   conv2d_u <the same>                          the same on a weight given
 *                                                prepared: transformed where Winograd
 *                                                runs (coreai_conv2d_winograd_scratch_size),
 *                                                packed where coreai_conv2d_panels does
 *                                                (coreai_conv2d_panels_scratch_size)
 *   rope RANK SHAPE... ROTARY POS_DTYPE ADD_SEQ POS_STRIDES...
 *                                                coreai_rope_scratch_size in
 *                                                COREAI_ROPE_POSITIONS mode
 *
 * POS_DTYPE is i32, i64, f32 or none. A malformed line is an error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreai/kernels/conv.h"
#include "coreai/kernels/matmul.h"
#include "coreai/kernels/rope.h"

static int line_no;

static void fail(const char *what)
{
    fprintf(stderr, "scratch_size: <stdin>:%d: error: %s\n", line_no, what);
    exit(1);
}

/* The next integer of the line (strtok state), or a clear error. */
static int64_t next_int(void)
{
    const char *t = strtok(NULL, " \t\n");
    char *end = NULL;
    if (t == NULL)
        fail("too few numbers");
    long long v = strtoll(t, &end, 10);
    if (*end != '\0')
        fail("not an integer");
    return (int64_t)v;
}

static int32_t next_rank(void)
{
    int64_t r = next_int();
    if (r < 0 || r > COREAI_MAX_RANK)
        fail("rank out of range");
    return (int32_t)r;
}

static size_t matmul(void)
{
    coreai_matmul_params p = {.batch_rank = 1};
    p.batch_shape[0] = next_int();
    p.m = next_int();
    p.n = next_int();
    p.k = next_int();
    p.transpose_a = (int32_t)next_int();
    p.transpose_b = (int32_t)next_int();
    return coreai_matmul_f32_scratch_size(&p);
}

static size_t linear(void)
{
    coreai_linear_ex_params p = {0};
    p.rows = next_int();
    p.in_features = next_int();
    p.out_features = next_int();
    p.weight_transposed = (int32_t)next_int();
    return coreai_linear_ex_f32_scratch_size(&p);
}

static coreai_conv2d_params conv2d_params(void)
{
    int64_t f[16];
    for (int i = 0; i < 16; i++)
        f[i] = next_int();
    const coreai_conv2d_params p = {f[0], f[1], f[2],  f[3],  f[4],  f[5],  f[6],  f[7],
                                    f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15], 0, 0.0f, 0.0f};
    return p;
}

static size_t conv2d(void)
{
    const coreai_conv2d_params p = conv2d_params();
    return coreai_conv2d_f32_scratch_size(&p);
}

static size_t conv2d_u(void)
{
    const coreai_conv2d_params p = conv2d_params();
    if (coreai_conv2d_winograd(&p))
        return coreai_conv2d_winograd_scratch_size(&p);
    return coreai_conv2d_panels(&p) ? coreai_conv2d_panels_scratch_size(&p) : coreai_conv2d_f32_scratch_size(&p);
}

static size_t rope(void)
{
    coreai_rope_params p = {.mode = COREAI_ROPE_POSITIONS, .scale = 1.0f, .base = 10000.0f};
    p.rank = next_rank();
    for (int a = 0; a < p.rank; a++)
        p.shape[a] = next_int();
    p.rotary_dims = next_int();
    const char *dt = strtok(NULL, " \t\n");
    if (dt == NULL)
        fail("no positions dtype");
    if (strcmp(dt, "i32") == 0)
        p.pos_dtype = COREAI_DTYPE_I32;
    else if (strcmp(dt, "i64") == 0)
        p.pos_dtype = COREAI_DTYPE_I64;
    else if (strcmp(dt, "f32") == 0)
        p.pos_dtype = COREAI_DTYPE_F32;
    else if (strcmp(dt, "none") == 0)
        p.pos_dtype = -1;
    else
        fail("positions dtype is none of i32, i64, f32, none");
    p.add_seq_index = (int32_t)next_int();
    for (int a = 0; a < p.rank; a++)
        p.pos_strides[a] = next_int();
    const size_t n = coreai_rope_scratch_size(&p);
    if (n == (size_t)-1)
        fail("coreai_rope_scratch_size rejects the params");
    return n;
}

int main(void)
{
    static const struct {
        const char *name;
        size_t (*size)(void);
    } kinds[] = {{"matmul", matmul}, {"linear", linear}, {"conv2d", conv2d}, {"conv2d_u", conv2d_u}, {"rope", rope}};
    char line[4096];
    while (fgets(line, sizeof line, stdin) != NULL) {
        line_no++;
        if (strchr(line, '\n') == NULL && !feof(stdin))
            fail("line too long");
        const char *kind = strtok(line, " \t\n");
        if (kind == NULL)
            fail("empty line");
        size_t k = 0;
        while (k < sizeof kinds / sizeof kinds[0] && strcmp(kind, kinds[k].name) != 0)
            k++;
        if (k == sizeof kinds / sizeof kinds[0])
            fail("unknown kernel (matmul, linear, conv2d, conv2d_u, rope)");
        const size_t n = kinds[k].size();
        if (strtok(NULL, " \t\n") != NULL)
            fail("too many numbers");
        printf("%zu\n", n);
    }
    return ferror(stdin) ? 1 : 0;
}
