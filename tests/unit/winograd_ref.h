/*
 * winograd_ref.h - the transformed weight U that coreai_conv2d_winograd_f32
 * reads, made by the tests on their own: G g G^T summed in double from
 * Lavin and Gray's G for F(2x2, 3x3) (points 0, 1, -1, infinity) and
 * F(4x4, 3x3) (0, 1, -1, 2, -2, infinity), rounded once to f32, at the
 * positions coreai_conv2d_winograd_u_pos gives. The padding after each
 * patch position's out x in block is NaN, so a kernel reading it fails.
 */
#ifndef COREAI_TEST_WINOGRAD_REF_H
#define COREAI_TEST_WINOGRAD_REF_H

#include <math.h>

#include "coreai/kernels/conv.h"
#include "kernel_ref.h"

/* U for weight w [out][in][3][3] of layer p (coreai_conv2d_winograd(p) != 0);
 * free() it. */
static inline float *ref_winograd_u(const coreai_conv2d_params *p, const float *w)
{
    static const double g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    static const double g4[6][3] = {{1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    const int m = coreai_conv2d_winograd(p), a = m + 2;
    const int64_t n = (int64_t)coreai_conv2d_winograd_u_floats(p);
    float *u = ref_alloc_f(n);
    for (int64_t i = 0; i < n; ++i)
        u[i] = NAN;
    for (int64_t o = 0; o < p->out_channels; ++o)
        for (int64_t c = 0; c < p->in_channels; ++c) {
            const float *g = w + (o * p->in_channels + c) * 9;
            for (int r = 0; r < a; ++r)
                for (int s = 0; s < a; ++s) {
                    double sum = 0.0;
                    for (int k = 0; k < 3; ++k)
                        for (int l = 0; l < 3; ++l) {
                            const double gr = m == 4 ? g4[r][k] : g2[r][k], gs = m == 4 ? g4[s][l] : g2[s][l];
                            sum += gr * (double)g[3 * k + l] * gs;
                        }
                    u[coreai_conv2d_winograd_u_pos(p, r * a + s, o, c)] = (float)sum;
                }
        }
    return u;
}

#endif /* COREAI_TEST_WINOGRAD_REF_H */
