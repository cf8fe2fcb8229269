/*
 * gemm_uk_rows.h - instantiates gemm_ukernel.h for every row count
 * 1..GEMM_MR at UK_NV vectors (defined by the includer, undefined here):
 * the kernels gemm_uk_<rows>_<UK_NV>, named by GEMM_UK(rows, nv).
 */
#ifndef GEMM_UK
#define GEMM_UK_CAT(r, v) gemm_uk_##r##_##v
#define GEMM_UK(r, v) GEMM_UK_CAT(r, v)
#endif

#define UK_NAME GEMM_UK(1, UK_NV)
#define UK_MR 1
#include "gemm_ukernel.h"
#if GEMM_MR >= 2
#define UK_NAME GEMM_UK(2, UK_NV)
#define UK_MR 2
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 3
#define UK_NAME GEMM_UK(3, UK_NV)
#define UK_MR 3
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 4
#define UK_NAME GEMM_UK(4, UK_NV)
#define UK_MR 4
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 5
#define UK_NAME GEMM_UK(5, UK_NV)
#define UK_MR 5
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 6
#define UK_NAME GEMM_UK(6, UK_NV)
#define UK_MR 6
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 7
#define UK_NAME GEMM_UK(7, UK_NV)
#define UK_MR 7
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 8
#define UK_NAME GEMM_UK(8, UK_NV)
#define UK_MR 8
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 9
#define UK_NAME GEMM_UK(9, UK_NV)
#define UK_MR 9
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 10
#define UK_NAME GEMM_UK(10, UK_NV)
#define UK_MR 10
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 11
#define UK_NAME GEMM_UK(11, UK_NV)
#define UK_MR 11
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 12
#define UK_NAME GEMM_UK(12, UK_NV)
#define UK_MR 12
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 13
#define UK_NAME GEMM_UK(13, UK_NV)
#define UK_MR 13
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 14
#define UK_NAME GEMM_UK(14, UK_NV)
#define UK_MR 14
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 15
#define UK_NAME GEMM_UK(15, UK_NV)
#define UK_MR 15
#include "gemm_ukernel.h"
#endif
#if GEMM_MR >= 16
#define UK_NAME GEMM_UK(16, UK_NV)
#define UK_MR 16
#include "gemm_ukernel.h"
#endif

#undef UK_NV
