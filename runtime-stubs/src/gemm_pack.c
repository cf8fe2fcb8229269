/* Packing B into the COREAI_PACK_NR panel layout (coreai/kernels/matmul.h),
 * at run time; coreai-gen writes the same layout for constant weights. */
#include "gemm_internal.h"

#include <string.h>

int64_t coreai_gemm_packed_count(int64_t k, int64_t n)
{
    return coreai_packed_b_floats(k, n);
}

void coreai_gemm_pack_b(int64_t k, int64_t n, const float *b, int64_t b_rs, int64_t b_cs,
                        float *dst, int64_t ps)
{
    if (b_cs == 1) {
        /* rows of B are contiguous: each row is read once, front to back
         * (the hardware prefetcher follows), and split over the panels */
        const int64_t full = n / 16 * 16;
        for (int64_t p = 0; p < k; ++p) {
            const float *restrict src = b + p * b_rs;
            for (int64_t j0 = 0; j0 < full; j0 += 16)
                memcpy(dst + (j0 / 16) * ps + p * 16, src + j0, 16 * sizeof(float));
            if (full < n) {
                float *restrict d = dst + (full / 16) * ps + p * 16;
                memcpy(d, src + full, (size_t)(n - full) * sizeof(float));
                for (int64_t c = n - full; c < 16; ++c)
                    d[c] = 0.0f;
            }
        }
        return;
    }
    for (int64_t j0 = 0; j0 < n; j0 += 16) {
        float *restrict d = dst + (j0 / 16) * ps;
        const int64_t w = n - j0 < 16 ? n - j0 : 16;
        /* columns of B are the contiguous runs (a transposed B): a 16 x 64
         * block at a time, so the panel rows written stay in L1 */
        for (int64_t p0 = 0; p0 < k; p0 += 64) {
            const int64_t p1 = k - p0 < 64 ? k : p0 + 64;
            for (int64_t c = 0; c < w; ++c) {
                const float *restrict src = b + (j0 + c) * b_cs;
                for (int64_t p = p0; p < p1; ++p)
                    d[p * 16 + c] = src[p * b_rs];
            }
            for (int64_t c = w; c < 16; ++c) {
                for (int64_t p = p0; p < p1; ++p)
                    d[p * 16 + c] = 0.0f;
            }
        }
    }
}

int64_t coreai_packed_b_count(int64_t k, int64_t n)
{
    return coreai_gemm_packed_count(k, n);
}

coreai_status coreai_pack_b_f32(int64_t k, int64_t n, int32_t transposed, const float *b,
                                float *packed)
{
    if (b == NULL || packed == NULL || (transposed != 0 && transposed != 1) ||
        coreai_gemm_packed_count(k, n) < 0 || (n > 0 && k > INT64_MAX / n))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (transposed)
        coreai_gemm_pack_b(k, n, b, 1, k, packed, k * 16);
    else
        coreai_gemm_pack_b(k, n, b, n, 1, packed, k * 16);
    return COREAI_STATUS_OK;
}
