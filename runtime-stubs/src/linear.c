/* coreai_linear_f32 and its fused / packed forms: a fully connected layer on
 * the runtime's GEMM, bias and activation applied in the GEMM's epilogue. */
#include "coreai/kernels/matmul.h"

#include "gemm_internal.h"

static int shape_ok(int64_t rows, int64_t in, int64_t outf)
{
    if (rows < 0 || in < 0 || outf < 0)
        return 0;
    if ((rows > 0 && in > INT64_MAX / rows) || (rows > 0 && outf > INT64_MAX / rows) ||
        (outf > 0 && in > INT64_MAX / outf))
        return 0;
    return coreai_gemm_packed_count(in, outf) >= 0;
}

/* 0 (plain rows), or a block length dividing the features. */
static int head_dim_ok(int64_t head_dim, int64_t features)
{
    return head_dim == 0 || (head_dim > 0 && features % head_dim == 0);
}

coreai_status coreai_linear_f32(const coreai_linear_params *params, const float *x,
                                const float *weight, const float *bias, float *out)
{
    if (params == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_linear_ex_params ex = {params->rows, params->in_features, params->out_features,
                                        params->weight_transposed, COREAI_EPILOGUE_NONE};
    return coreai_linear_ex_f32(&ex, x, weight, bias, out, NULL);
}

size_t coreai_linear_ex_f32_scratch_size(const coreai_linear_ex_params *params)
{
    if (params == NULL || !shape_ok(params->rows, params->in_features, params->out_features) ||
        params->rows == 0 || params->in_features == 0 || params->out_features == 0)
        return 0;
    const int64_t count = coreai_gemm_packed_count(params->in_features, params->out_features);
    if ((uint64_t)count > SIZE_MAX / sizeof(float))
        return 0;
    return (size_t)count * sizeof(float);
}

coreai_status coreai_linear_ex_f32(const coreai_linear_ex_params *params, const float *x,
                                   const float *weight, const float *bias, float *out,
                                   void *scratch)
{
    if (params == NULL || x == NULL || weight == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if ((params->weight_transposed != 0 && params->weight_transposed != 1) ||
        !coreai_gemm_epilogue_ok(params->epilogue) ||
        !shape_ok(params->rows, params->in_features, params->out_features) ||
        ((uintptr_t)scratch % sizeof(float)) != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, in = params->in_features, outf = params->out_features;
    const coreai_gemm_args g = coreai_gemm_linear_args(rows, in, outf, x, bias, out, params->epilogue);
    /* W stored [out][in] (the PyTorch layout) is B transposed; [in][out] is B. */
    const int64_t b_rs = params->weight_transposed ? outf : 1;
    const int64_t b_cs = params->weight_transposed ? 1 : in;
    coreai_gemm_strided(&g, weight, b_rs, b_cs, (float *)scratch);
    return COREAI_STATUS_OK;
}

/* The GEMM of one packed linear; 0 when its parameters are invalid. */
static int packed_args(const coreai_linear_packed_params *params, const float *x, const float *packed_weight,
                       const float *bias, const float *add, float *out, coreai_gemm_args *g)
{
    if (params == NULL || x == NULL || packed_weight == NULL || out == NULL)
        return 0;
    if (!coreai_gemm_epilogue_ok(params->epilogue) ||
        !shape_ok(params->rows, params->in_features, params->out_features) ||
        !head_dim_ok(params->x_head_dim, params->in_features) ||
        !head_dim_ok(params->out_head_dim, params->out_features))
        return 0;
    *g = coreai_gemm_linear_args(params->rows, params->in_features, params->out_features, x, bias, out,
                                 params->epilogue);
    if (params->x_head_dim > 0) {
        g->a_rs = params->x_head_dim;
        g->a_cb = params->x_head_dim;
        g->a_cbs = params->rows * params->x_head_dim;
    }
    if (params->out_head_dim > 0) {
        g->ldc = params->out_head_dim;
        g->c_cb = params->out_head_dim;
        g->c_cbs = params->rows * params->out_head_dim;
    }
    g->add = add;
    return 1;
}

static coreai_status linear_packed(const coreai_linear_packed_params *params, const float *x,
                                   const float *packed_weight, const float *bias, const float *add, float *out)
{
    coreai_gemm_args g;
    if (!packed_args(params, x, packed_weight, bias, add, out, &g))
        return COREAI_STATUS_INVALID_ARGUMENT;
    coreai_gemm_packed(&g, packed_weight, params->in_features * 16);
    return COREAI_STATUS_OK;
}

coreai_status coreai_linear_packed_f32(const coreai_linear_packed_params *params, const float *x,
                                       const float *packed_weight, const float *bias, float *out)
{
    return linear_packed(params, x, packed_weight, bias, NULL, out);
}

coreai_status coreai_linear_packed_add_f32(const coreai_linear_packed_params *params, const float *x,
                                           const float *packed_weight, const float *bias, const float *addend,
                                           float *out)
{
    if (addend == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    return linear_packed(params, x, packed_weight, bias, addend, out);
}

coreai_status coreai_linear_packed_multi_f32(const coreai_linear_packed_multi_params *params, const float *x,
                                             const coreai_linear_packed_operands *operands)
{
    if (params == NULL || operands == NULL || params->count < 1 || params->count > COREAI_LINEAR_MULTI_MAX)
        return COREAI_STATUS_INVALID_ARGUMENT;
    coreai_gemm_args g[COREAI_LINEAR_MULTI_MAX];
    const float *bp[COREAI_LINEAR_MULTI_MAX];
    int64_t bps[COREAI_LINEAR_MULTI_MAX];
    const coreai_linear_packed_params *first = &params->linear[0];
    for (int32_t l = 0; l < params->count; ++l) {
        const coreai_linear_packed_params *p = &params->linear[l];
        const coreai_linear_packed_operands *o = &operands[l];
        /* one A for all: the products differ in their columns only */
        if (p->rows != first->rows || p->in_features != first->in_features || p->x_head_dim != first->x_head_dim ||
            !packed_args(p, x, o->packed_weight, o->bias, o->addend, o->out, &g[l]))
            return COREAI_STATUS_INVALID_ARGUMENT;
        bp[l] = o->packed_weight;
        bps[l] = p->in_features * 16;
    }
    coreai_gemm_packed_multi(g, bp, bps, params->count);
    return COREAI_STATUS_OK;
}
