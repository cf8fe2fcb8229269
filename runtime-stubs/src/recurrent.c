/* coreai_rnn_f32 / coreai_gru_f32 / coreai_lstm_f32: one recurrent layer. */
#include "coreai/kernels/recurrent.h"

#include <math.h>
#include <string.h>

typedef enum cell_kind { CELL_RNN, CELL_GRU, CELL_LSTM } cell_kind;

typedef struct direction {
    const float *wih, *whh;
    const float *b1, *b2; /* rnn / lstm: bias, NULL; gru: bias_ih, bias_hh */
} direction;

static double dot_d(const float *restrict a, const float *restrict b, int64_t n)
{
    double s0 = 0.0, s1 = 0.0;
    int64_t i = 0;
    for (; i + 2 <= n; i += 2) {
        s0 += (double)a[i] * b[i];
        s1 += (double)a[i + 1] * b[i + 1];
    }
    if (i < n)
        s0 += (double)a[i] * b[i];
    return s0 + s1;
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static double bias_at(const float *b, int64_t i) { return b != NULL ? (double)b[i] : 0.0; }

/* Pre-activation of gate row `row`: W_ih[row] x + W_hh[row] h (no biases). */
static double gate(const direction *w, int64_t row, const float *x, const float *h, int64_t in,
                   int64_t hid)
{
    return dot_d(w->wih + row * in, x, in) + dot_d(w->whh + row * hid, h, hid);
}

static void run_direction(const coreai_recurrent_params *p, cell_kind kind, const direction *w,
                          int reverse, const float *x, const float *h0, float *c, float *out)
{
    const int64_t seq = p->seq_len, nb = p->batch, in = p->input_size, hid = p->hidden_size;
    const int64_t dh = (p->bidirectional ? 2 : 1) * hid, col = reverse ? hid : 0;
    for (int64_t s = 0; s < seq; ++s) {
        const int64_t t = reverse ? seq - 1 - s : s, tprev = reverse ? t + 1 : t - 1;
        for (int64_t b = 0; b < nb; ++b) {
            const float *xt = x + (t * nb + b) * in;
            const float *hp = s == 0 ? h0 + b * dh + col : out + (tprev * nb + b) * dh + col;
            float *ho = out + (t * nb + b) * dh + col;
            float *cb = c != NULL ? c + b * dh + col : NULL;
            for (int64_t j = 0; j < hid; ++j) {
                if (kind == CELL_RNN) {
                    const double a = gate(w, j, xt, hp, in, hid) + bias_at(w->b1, j);
                    ho[j] = (float)(p->activation == COREAI_RNN_RELU ? (a > 0.0 ? a : 0.0) : tanh(a));
                } else if (kind == CELL_GRU) {
                    const double r = sigmoid(gate(w, j, xt, hp, in, hid) + bias_at(w->b1, j) +
                                             bias_at(w->b2, j));
                    const double z = sigmoid(gate(w, hid + j, xt, hp, in, hid) + bias_at(w->b1, hid + j) +
                                             bias_at(w->b2, hid + j));
                    const double xn = dot_d(w->wih + (2 * hid + j) * in, xt, in) + bias_at(w->b1, 2 * hid + j);
                    const double hn = dot_d(w->whh + (2 * hid + j) * hid, hp, hid) + bias_at(w->b2, 2 * hid + j);
                    const double n = tanh(xn + r * hn);
                    ho[j] = (float)((1.0 - z) * n + z * (double)hp[j]);
                } else {
                    /* composite gate order: i, f, o, g */
                    const double ig = sigmoid(gate(w, j, xt, hp, in, hid) + bias_at(w->b1, j));
                    const double fg = sigmoid(gate(w, hid + j, xt, hp, in, hid) + bias_at(w->b1, hid + j));
                    const double og = sigmoid(gate(w, 2 * hid + j, xt, hp, in, hid) + bias_at(w->b1, 2 * hid + j));
                    const double gg = tanh(gate(w, 3 * hid + j, xt, hp, in, hid) + bias_at(w->b1, 3 * hid + j));
                    const float cn = (float)(fg * (double)cb[j] + ig * gg);
                    cb[j] = cn;
                    ho[j] = (float)(og * tanh((double)cn));
                }
            }
        }
    }
}

static int64_t prod3(int64_t a, int64_t b, int64_t c)
{
    if (a < 0 || b < 0 || c < 0)
        return -1;
    if (a != 0 && b > INT64_MAX / a)
        return -1;
    const int64_t ab = a * b;
    if (ab != 0 && c > INT64_MAX / ab)
        return -1;
    return ab * c;
}

static coreai_status run(const coreai_recurrent_params *p, cell_kind kind, const direction *fw,
                         const direction *bw, const float *x, const float *h0, const float *c0,
                         float *out, float *h_n, float *c_n)
{
    if (p == NULL || x == NULL || h0 == NULL || out == NULL || h_n == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (kind == CELL_LSTM && (c0 == NULL || c_n == NULL))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (kind == CELL_RNN && p->activation != COREAI_RNN_TANH && p->activation != COREAI_RNN_RELU)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int dirs = p->bidirectional ? 2 : 1;
    const int64_t gates = kind == CELL_RNN ? 1 : kind == CELL_GRU ? 3 : 4;
    const int64_t dh = prod3(dirs, p->hidden_size, 1);
    const int64_t states = prod3(p->batch, dh, 1);
    if (prod3(p->seq_len, p->batch, p->input_size) < 0 || states < 0 ||
        prod3(p->seq_len, p->batch, dh) < 0 || prod3(gates, p->hidden_size, p->input_size + p->hidden_size) < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const direction *ds[2] = {fw, bw};
    for (int d = 0; d < dirs; ++d)
        if (ds[d]->wih == NULL || ds[d]->whh == NULL)
            return COREAI_STATUS_INVALID_ARGUMENT;
    if (kind == CELL_LSTM && c_n != c0 && states > 0)
        memmove(c_n, c0, (size_t)states * sizeof(float));
    for (int d = 0; d < dirs; ++d)
        run_direction(p, kind, ds[d], d == 1, x, h0, kind == CELL_LSTM ? c_n : NULL, out);
    /* h_n last: it may share its buffer with initial_h */
    const int64_t seq = p->seq_len, hid = p->hidden_size;
    if (seq == 0) {
        if (h_n != h0 && states > 0)
            memmove(h_n, h0, (size_t)states * sizeof(float));
        return COREAI_STATUS_OK;
    }
    for (int64_t b = 0; b < p->batch; ++b) {
        memcpy(h_n + b * dh, out + ((seq - 1) * p->batch + b) * dh, (size_t)hid * sizeof(float));
        if (dirs == 2)
            memcpy(h_n + b * dh + hid, out + b * dh + hid, (size_t)hid * sizeof(float));
    }
    return COREAI_STATUS_OK;
}

coreai_status coreai_rnn_f32(const coreai_recurrent_params *params, const float *x,
                             const float *initial_h, const float *weight_ih,
                             const float *weight_hh, const float *bias,
                             const float *weight_ih_back, const float *weight_hh_back,
                             const float *bias_back, float *output, float *h_n)
{
    const direction fw = {weight_ih, weight_hh, bias, NULL};
    const direction bw = {weight_ih_back, weight_hh_back, bias_back, NULL};
    return run(params, CELL_RNN, &fw, &bw, x, initial_h, NULL, output, h_n, NULL);
}

coreai_status coreai_gru_f32(const coreai_recurrent_params *params, const float *x,
                             const float *initial_h, const float *weight_ih,
                             const float *weight_hh, const float *bias_ih, const float *bias_hh,
                             const float *weight_ih_back, const float *weight_hh_back,
                             const float *bias_ih_back, const float *bias_hh_back, float *output,
                             float *h_n)
{
    const direction fw = {weight_ih, weight_hh, bias_ih, bias_hh};
    const direction bw = {weight_ih_back, weight_hh_back, bias_ih_back, bias_hh_back};
    return run(params, CELL_GRU, &fw, &bw, x, initial_h, NULL, output, h_n, NULL);
}

coreai_status coreai_lstm_f32(const coreai_recurrent_params *params, const float *x,
                              const float *initial_h, const float *initial_c,
                              const float *weight_ih, const float *weight_hh, const float *bias,
                              const float *weight_ih_back, const float *weight_hh_back,
                              const float *bias_back, float *output, float *h_n, float *c_n)
{
    const direction fw = {weight_ih, weight_hh, bias, NULL};
    const direction bw = {weight_ih_back, weight_hh_back, bias_back, NULL};
    return run(params, CELL_LSTM, &fw, &bw, x, initial_h, initial_c, output, h_n, c_n);
}
