/*
 * isa_names.h - first include of every source the runtime compiles once per
 * ISA variant (the hot kernels: GEMM, vector math and its users, attention,
 * norms, conv; runtime-stubs/CMakeLists.txt lists them). When the build
 * defines COREAI_ISA_SUFFIX (e.g. _avx2), every external function those
 * sources define is renamed with it, declarations included, so the copies of
 * one source for baseline, AVX2 and AVX-512 link side by side and call their
 * own variant of each other directly (conv2d_avx2 -> the AVX2 GEMM).
 * isa_dispatch.c then defines the unsuffixed names as calls through one
 * table of kernel pointers chosen once from cpuid.
 *
 * Without COREAI_ISA_SUFFIX (a single-ISA build: AArch64, bare metal,
 * COREAI_NATIVE, other compilers) the names stay as they are.
 *
 * A name missing here is a duplicate symbol at link time; every name here
 * must also be in isa_dispatch.c's COREAI_ISA_FUNCS (but
 * coreai_linear_q8a_f32_vnni, which only the avx512 variant defines, for
 * its table with VNNI).
 */
#ifndef COREAI_SRC_ISA_NAMES_H
#define COREAI_SRC_ISA_NAMES_H

#ifdef COREAI_ISA_SUFFIX
#define COREAI_ISA_CAT2(a, b) a##b
#define COREAI_ISA_CAT(a, b) COREAI_ISA_CAT2(a, b)
#define COREAI_ISA_NAME(f) COREAI_ISA_CAT(f, COREAI_ISA_SUFFIX)

/* gemm_kernel.c */
#define coreai_gemm_f32_config COREAI_ISA_NAME(coreai_gemm_f32_config)
#define coreai_gemm_packed COREAI_ISA_NAME(coreai_gemm_packed)
#define coreai_gemm_packed_multi COREAI_ISA_NAME(coreai_gemm_packed_multi)
#define coreai_gemm_packer COREAI_ISA_NAME(coreai_gemm_packer)
#define coreai_gemm_strided COREAI_ISA_NAME(coreai_gemm_strided)
#define coreai_gemm_strips COREAI_ISA_NAME(coreai_gemm_strips)
/* gemm_q.c, gemm_q8a.c, gemm_qp.c */
#define coreai_linear_q_f32 COREAI_ISA_NAME(coreai_linear_q_f32)
#define coreai_linear_qp_f32 COREAI_ISA_NAME(coreai_linear_qp_f32)
#define coreai_linear_q8a_f32 COREAI_ISA_NAME(coreai_linear_q8a_f32)
#define coreai_linear_q8a_f32_vnni COREAI_ISA_NAME(coreai_linear_q8a_f32_vnni) /* avx512 only */
#define coreai_conv2d_q_f32 COREAI_ISA_NAME(coreai_conv2d_q_f32)
/* gemm_lut.c */
#define coreai_linear_lut_f32 COREAI_ISA_NAME(coreai_linear_lut_f32)
#define coreai_conv2d_lut_f32 COREAI_ISA_NAME(coreai_conv2d_lut_f32)
/* attention.c */
#define coreai_sdpa_f32 COREAI_ISA_NAME(coreai_sdpa_f32)
/* norm.c */
#define coreai_rms_norm_f32 COREAI_ISA_NAME(coreai_rms_norm_f32)
#define coreai_layer_norm_f32 COREAI_ISA_NAME(coreai_layer_norm_f32)
#define coreai_batch_norm_f32 COREAI_ISA_NAME(coreai_batch_norm_f32)
#define coreai_group_norm_f32 COREAI_ISA_NAME(coreai_group_norm_f32)
#define coreai_instance_norm_f32 COREAI_ISA_NAME(coreai_instance_norm_f32)
/* conv2d.c */
#define coreai_conv2d_f32 COREAI_ISA_NAME(coreai_conv2d_f32)
#define coreai_conv2d_ws_f32 COREAI_ISA_NAME(coreai_conv2d_ws_f32)
#define coreai_conv2d_winograd_f32 COREAI_ISA_NAME(coreai_conv2d_winograd_f32)
#define coreai_conv2d_panels_f32 COREAI_ISA_NAME(coreai_conv2d_panels_f32)
#define coreai_conv2d_gemm_f32 COREAI_ISA_NAME(coreai_conv2d_gemm_f32)
#define coreai_conv2d_gemm_a COREAI_ISA_NAME(coreai_conv2d_gemm_a)
/* conv_depthwise.c */
#define coreai_conv2d_depthwise COREAI_ISA_NAME(coreai_conv2d_depthwise)
/* softmax.c, log_softmax.c */
#define coreai_softmax_f32 COREAI_ISA_NAME(coreai_softmax_f32)
#define coreai_log_softmax_f32 COREAI_ISA_NAME(coreai_log_softmax_f32)
/* pool2d.c */
#define coreai_pool2d_f32 COREAI_ISA_NAME(coreai_pool2d_f32)
/* rope.c */
#define coreai_rope_f32 COREAI_ISA_NAME(coreai_rope_f32)
/* swiglu.c */
#define coreai_swiglu_f32 COREAI_ISA_NAME(coreai_swiglu_f32)
/* elementwise_unary.c */
#define coreai_unary_f32 COREAI_ISA_NAME(coreai_unary_f32)
#define coreai_clamp_f32 COREAI_ISA_NAME(coreai_clamp_f32)
#define coreai_unary_i32 COREAI_ISA_NAME(coreai_unary_i32)
#define coreai_unary_i64 COREAI_ISA_NAME(coreai_unary_i64)
#endif

#endif /* COREAI_SRC_ISA_NAMES_H */
