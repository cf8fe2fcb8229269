/*
 * linear_q8a_pack.c - coreai_linear_q8a_pack: the row-major weight and
 * scales into coreai_linear_q8a_f32's panels, for a caller without the
 * generator (coreai-gen writes the same bytes at generation time through
 * the same position helpers of linear_q.h). Compiled once, not per ISA.
 */
#include <string.h>

#include "coreai/kernels/linear_q.h"

coreai_status coreai_linear_q8a_pack(const coreai_linear_q_params *params, const uint8_t *weight, const float *scale,
                                     uint8_t *packed_weight, float *packed_scale)
{
    if (params == NULL || weight == NULL || scale == NULL || packed_weight == NULL || packed_scale == NULL ||
        !coreai_linear_q8a_ok(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t in = params->in_features, outf = params->out_features, blocks = in / params->block;
    memset(packed_weight, 0, (size_t)coreai_linear_q8a_weight_bytes(params));
    memset(packed_scale, 0, sizeof(float) * (size_t)coreai_linear_q8a_scale_count(params));
    const int is4 = params->format != COREAI_INT_I8;
    for (int64_t o = 0; o < outf; ++o) {
        for (int64_t i = 0; i < in; ++i) {
            int shift;
            const int64_t e = o * in + i, at = coreai_linear_q8a_weight_pos(params, o, i, &shift);
            const unsigned v = is4 ? (weight[e >> 1] >> ((e & 1) * 4)) & 15u : weight[e];
            packed_weight[at] |= (uint8_t)(v << shift);
        }
        for (int64_t b = 0; b < blocks; ++b)
            packed_scale[coreai_linear_q8a_scale_pos(params, o, b)] = scale[o * blocks + b];
    }
    return COREAI_STATUS_OK;
}
