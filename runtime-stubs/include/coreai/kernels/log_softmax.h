#ifndef COREAI_KERNELS_LOG_SOFTMAX_H
#define COREAI_KERNELS_LOG_SOFTMAX_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * log_softmax composite along one axis of a dense tensor viewed as
 * outer x axis_len x inner: out = x - max - log(sum exp(x - max)). exp(x - max)
 * is evaluated in f32 by the runtime's vector exp (max 1.25 ulp), the sum,
 * the logarithm and the final subtraction in double, rounded once: the
 * log-sum-exp is off by at most about 2^-23 (absolute). out may equal x.
 */
typedef struct coreai_log_softmax_params {
    int64_t outer;
    int64_t axis_len;
    int64_t inner;
} coreai_log_softmax_params;

coreai_status coreai_log_softmax_f32(const coreai_log_softmax_params *params, const float *x,
                                     float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_LOG_SOFTMAX_H */
