#ifndef COREAI_KERNELS_RECURRENT_H
#define COREAI_KERNELS_RECURRENT_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * rnn / gru / lstm composites (docs/composite-ops.md): one layer, time-major.
 *
 *   x [S, B, I]; initial_h (and initial_c) [B, D*H]; output [S, B, D*H];
 *   h_n (and c_n) [B, D*H]; D = 2 when bidirectional, the forward direction
 *   in [:, :H] and the reverse one (which runs t = S-1 .. 0) in [:, H:].
 *   Weights are dense: weight_ih [G*H, I], weight_hh [G*H, H], biases [G*H].
 *
 *   rnn  (G = 1): h' = act(W_ih x + W_hh h + bias), act tanh or relu.
 *   gru  (G = 3, PyTorch gate order r, z, n):
 *        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
 *        z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
 *        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
 *        h' = (1 - z) * n + z * h
 *   lstm (G = 4, gate rows in the composite's i, f, o, g order, one bias
 *        b_ih + b_hh): c' = f * c + i * g, h' = o * tanh(c') with
 *        i, f, o = sigmoid(...), g = tanh(...).
 *
 * Dot products accumulate in double; states are f32 between steps. Each
 * hidden unit is computed independently, so no workspace is needed: the
 * previous hidden state is read from the output sequence (or initial_h),
 * the cell state lives in c_n. h_n may alias initial_h and c_n initial_c.
 * Any bias may be NULL (zeros). The *_back operands are read only when
 * bidirectional.
 */
typedef enum coreai_rnn_activation {
    COREAI_RNN_TANH = 0,
    COREAI_RNN_RELU = 1
} coreai_rnn_activation;

typedef struct coreai_recurrent_params {
    int64_t seq_len;     /* S */
    int64_t batch;       /* B */
    int64_t input_size;  /* I */
    int64_t hidden_size; /* H */
    int32_t bidirectional;
    int32_t activation;  /* rnn only: coreai_rnn_activation */
} coreai_recurrent_params;

coreai_status coreai_rnn_f32(const coreai_recurrent_params *params, const float *x,
                             const float *initial_h, const float *weight_ih,
                             const float *weight_hh, const float *bias,
                             const float *weight_ih_back, const float *weight_hh_back,
                             const float *bias_back, float *output, float *h_n);

coreai_status coreai_gru_f32(const coreai_recurrent_params *params, const float *x,
                             const float *initial_h, const float *weight_ih,
                             const float *weight_hh, const float *bias_ih, const float *bias_hh,
                             const float *weight_ih_back, const float *weight_hh_back,
                             const float *bias_ih_back, const float *bias_hh_back, float *output,
                             float *h_n);

coreai_status coreai_lstm_f32(const coreai_recurrent_params *params, const float *x,
                              const float *initial_h, const float *initial_c,
                              const float *weight_ih, const float *weight_hh, const float *bias,
                              const float *weight_ih_back, const float *weight_hh_back,
                              const float *bias_back, float *output, float *h_n, float *c_n);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_RECURRENT_H */
