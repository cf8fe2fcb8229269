/*
 * gemm_ukernel.h - template of one GEMM micro-kernel; included by
 * gemm_uk_rows.h once per tile shape, with
 *
 *     UK_NAME  the function's name
 *     UK_MR    rows of the tile (1..GEMM_MR)
 *     UK_NV    vectors across the tile (1..GEMM_NV): UK_NV * GEMM_VL columns
 *              (left defined: the includer sets it once for all row counts)
 *
 * and the vector helpers of gemm_kernel.c in scope. It computes the
 * UK_MR x UK_NV*GEMM_VL tile
 *
 *     c[i][j] = clamp?(relu?((beta ? c[i][j] : 0) + sum_p A[i][p] B[p][j] + bias[j] + rbias[i]))
 *               (+ add[i][j], add with c's row stride)
 *
 * A: UK_MR rows, row i at ap + i * lda: the packed A panel (lda GEMM_KC)
 *    or, with GEMM_A_STRIDED, A where it lies (its row stride), each a
 *    broadcast's address; without it lda is GEMM_KC, a constant, so each
 *    row is an immediate displacement off one pointer.
 * B: the panel layout, column j of the tile at b + (j / 16) * bps + j % 16,
 *    row p 16 floats further per step.
 * The accumulators are UK_MR * UK_NV vector registers; the loops over them
 * have constant trip counts and are unrolled completely, so the only loop
 * left is the one over p: UK_NV loads of B, UK_MR broadcasts of A and
 * UK_MR * UK_NV fused multiply-adds per step.
 */
static void UK_NAME(int64_t kc, const float *restrict ap, int64_t lda, const float *restrict b, int64_t bps,
                    float *restrict c, int64_t ldc, const gemm_tile_epi *ep)
{
#if !GEMM_A_STRIDED
    (void)lda;
#endif
    gemm_vf acc[UK_MR][UK_NV];
    const float *bq[UK_NV];
    GEMM_UNROLL
    for (int i = 0; i < UK_MR; ++i) {
        GEMM_UNROLL
        for (int v = 0; v < UK_NV; ++v)
            acc[i][v] = gemm_vzero();
    }
    GEMM_UNROLL
    for (int v = 0; v < UK_NV; ++v)
        bq[v] = b + (v * GEMM_VL / 16) * bps + (v * GEMM_VL) % 16;
#if GEMM_PF_C
    GEMM_UNROLL
    for (int i = 0; i < UK_MR; ++i)
        GEMM_PREFETCH_W(c + i * ldc);
#endif
    /* ep->pf's lines, one per step: kc steps cover MR <= 16 rows of kc floats */
    coreai_pf pf = ep->pf;
    GEMM_K_UNROLL
    for (int64_t p = 0; p < kc; ++p) {
        gemm_vf bv[UK_NV];
        if (pf.p != 0)
            coreai_pf_next(&pf);
#if GEMM_PF_B
        /* one 64-byte line of B per panel, GEMM_PF_B rows ahead */
        GEMM_UNROLL
        for (int v = 0; v < UK_NV; v += 16 / GEMM_VL)
            GEMM_PREFETCH((uintptr_t)bq[v] + (uintptr_t)(16 * (p + GEMM_PF_B)) * sizeof(float));
#endif
        GEMM_UNROLL
        for (int v = 0; v < UK_NV; ++v)
            bv[v] = gemm_vload(bq[v] + 16 * p);
        GEMM_UNROLL
        for (int i = 0; i < UK_MR; ++i) {
#if GEMM_A_STRIDED
            const gemm_vf av = gemm_vbcast(ap[i * lda + p]);
#else
            const gemm_vf av = gemm_vbcast(ap[i * GEMM_KC + p]);
#endif
            GEMM_UNROLL
            for (int v = 0; v < UK_NV; ++v)
                acc[i][v] = GEMM_FMA(acc[i][v], av, bv[v]);
        }
    }
    if (ep->beta) {
        GEMM_UNROLL
        for (int i = 0; i < UK_MR; ++i) {
            GEMM_UNROLL
            for (int v = 0; v < UK_NV; ++v)
                acc[i][v] = acc[i][v] + gemm_vload(c + i * ldc + v * GEMM_VL);
        }
    }
    if (ep->bias != NULL) {
        gemm_vf bb[UK_NV];
        GEMM_UNROLL
        for (int v = 0; v < UK_NV; ++v)
            bb[v] = gemm_vload(ep->bias + v * GEMM_VL);
        GEMM_UNROLL
        for (int i = 0; i < UK_MR; ++i) {
            GEMM_UNROLL
            for (int v = 0; v < UK_NV; ++v)
                acc[i][v] = acc[i][v] + bb[v];
        }
    }
    if (ep->rbias != NULL) {
        GEMM_UNROLL
        for (int i = 0; i < UK_MR; ++i) {
            const gemm_vf rb = gemm_vbcast(ep->rbias[i]);
            GEMM_UNROLL
            for (int v = 0; v < UK_NV; ++v)
                acc[i][v] = acc[i][v] + rb;
        }
    }
    if (ep->relu) {
        GEMM_UNROLL
        for (int i = 0; i < UK_MR; ++i) {
            GEMM_UNROLL
            for (int v = 0; v < UK_NV; ++v)
                acc[i][v] = gemm_vrelu(acc[i][v]);
        }
    }
    if (ep->clamp) {
        const gemm_vf lo = gemm_vbcast(ep->lo), hi = gemm_vbcast(ep->hi);
        GEMM_UNROLL
        for (int i = 0; i < UK_MR; ++i) {
            GEMM_UNROLL
            for (int v = 0; v < UK_NV; ++v)
                acc[i][v] = gemm_vclamp(acc[i][v], lo, hi);
        }
    }
    if (ep->add != NULL) {
        GEMM_UNROLL
        for (int i = 0; i < UK_MR; ++i) {
            GEMM_UNROLL
            for (int v = 0; v < UK_NV; ++v)
                acc[i][v] = acc[i][v] + gemm_vload(ep->add + i * ldc + v * GEMM_VL);
        }
    }
    GEMM_UNROLL
    for (int i = 0; i < UK_MR; ++i) {
        GEMM_UNROLL
        for (int v = 0; v < UK_NV; ++v)
            gemm_vstore(c + i * ldc + v * GEMM_VL, acc[i][v]);
    }
}

#undef UK_NAME
#undef UK_MR
