/*
 * The generated FeedForwardBlock on a bare-metal Cortex-M: runs feedforward_main
 * on PyTorch's reference input (examples/feedforward/reference_input.npy,
 * linked in as bytes) and compares with reference_output.npy within the
 * example's 1e-5. No heap, no stdio: the result goes out by semihosting.
 *
 * The compressed images (int8 / int4 weights, examples/feedforward/
 * feedforward_int{8,4}.xml) link their own model's eager output as
 * ref_output and keep the same 1e-5: eager PyTorch dequantizes each weight
 * with one f32 rounding of q * scale, which the kernel's GEMM packer
 * reproduces bit for bit and its GEMV only reorders (per-block sums times
 * the scale), so what remains is f32 summation order, as for the f32 model.
 *
 * Built with COREAI_WEIGHTS_ADDR (the model generated with --weights-format
 * external), the weights are not in the image: they are expected at that
 * fixed address (QEMU's loader device puts feedforward_weights.bin there, as
 * a board would have them in a separately written flash region), checked
 * once with feedforward_weights_check() and passed to the entrypoint.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "feedforward.h"
#include "semihost.h"

#define TOLERANCE 1e-5
#define MAX_ELEMENTS 4096

extern const unsigned char ref_input_npy[], ref_output_npy[];
extern const unsigned long ref_input_npy_size, ref_output_npy_size;

static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char
    workspace[FEEDFORWARD_WORKSPACE_SIZE > 0 ? FEEDFORWARD_WORKSPACE_SIZE : 1];
static float input[MAX_ELEMENTS], output[MAX_ELEMENTS], expected[MAX_ELEMENTS];

/* The data of a version 1 little-endian f32 .npy as floats; the element
 * count, or -1 when it is not one. */
static long npy_f32(const unsigned char *npy, unsigned long size, float *out)
{
    if (size < 10 || memcmp(npy, "\x93NUMPY\x01", 7) != 0)
        return -1;
    const unsigned long header = 10ul + npy[8] + 256ul * npy[9];
    if (header > size || (size - header) % 4 != 0 || (size - header) / 4 > MAX_ELEMENTS)
        return -1;
    int f4 = 0;
    for (unsigned long i = 10; i + 3 <= header; i++)
        f4 |= memcmp(npy + i, "'<f4'", 5) == 0;
    if (!f4)
        return -1;
    memcpy(out, npy + header, size - header);
    return (long)((size - header) / 4);
}

static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static char *put_uint(char *p, unsigned long v)
{
    char t[24];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = t[--n];
    return p;
}

/* x >= 0 as d.ddde-NN (or "inf") */
static char *put_sci(char *p, double x)
{
    if (!(x < INFINITY))
        return put_str(p, "inf");
    int e = 0;
    if (x > 0.0) {
        while (x >= 10.0) {
            x /= 10.0;
            e++;
        }
        while (x < 1.0) {
            x *= 10.0;
            e--;
        }
    }
    unsigned long m = (unsigned long)(x * 1000.0 + 0.5);
    if (m >= 10000) {
        m /= 10;
        e++;
    }
    p = put_uint(p, m / 1000);
    *p++ = '.';
    *p++ = (char)('0' + m / 100 % 10);
    *p++ = (char)('0' + m / 10 % 10);
    *p++ = (char)('0' + m % 10);
    *p++ = 'e';
    *p++ = e < 0 ? '-' : '+';
    return put_uint(p, (unsigned long)(e < 0 ? -e : e));
}

int main(void)
{
    char line[160], *p = line;
    const coreai_program *program = feedforward_program();
    const coreai_entrypoint_desc *entry = coreai_program_find_entrypoint(program, "main");
    if (!entry || entry->n_inputs != 1 || entry->n_outputs != 1) {
        semihost_puts("FAIL: no entrypoint main(x) -> output\n");
        return 1;
    }
    const long n_in = npy_f32(ref_input_npy, ref_input_npy_size, input);
    const long n_out = npy_f32(ref_output_npy, ref_output_npy_size, expected);
    int64_t want_in = 1, want_out = 1;
    for (int i = 0; i < entry->inputs[0].rank; i++)
        want_in *= entry->inputs[0].shape[i];
    for (int i = 0; i < entry->outputs[0].rank; i++)
        want_out *= entry->outputs[0].shape[i];
    if (n_in != want_in || n_out != want_out) {
        semihost_puts("FAIL: the reference .npy files do not match the model's shapes\n");
        return 1;
    }

#ifdef COREAI_WEIGHTS_ADDR
    const void *weights = (const void *)(uintptr_t)(COREAI_WEIGHTS_ADDR);
    const coreai_status check = feedforward_weights_check(weights, FEEDFORWARD_WEIGHTS_SIZE);
    if (check != COREAI_STATUS_OK) {
        semihost_puts("FAIL: feedforward_weights_check: ");
        semihost_puts(coreai_status_string(check));
        semihost_puts("\n");
        return 1;
    }
    const coreai_status status = feedforward_main(workspace, weights, input, output);
#else
    const coreai_status status = feedforward_main(workspace, input, output);
#endif
    if (status != COREAI_STATUS_OK) {
        semihost_puts("FAIL: feedforward_main: ");
        semihost_puts(coreai_status_string(status));
        semihost_puts("\n");
        return 1;
    }
    double max_err = 0.0;
    for (long i = 0; i < n_out; i++) {
        const double d = fabs((double)output[i] - (double)expected[i]);
        if (!(d <= max_err))
            max_err = isnan(d) ? INFINITY : d;
    }
    const int ok = max_err <= TOLERANCE;
    p = put_str(p, ok ? "PASS" : "FAIL");
    p = put_str(p, ": max abs error vs PyTorch ");
    p = put_sci(p, max_err);
    p = put_str(p, " over ");
    p = put_uint(p, (unsigned long)n_out);
    p = put_str(p, " outputs (tolerance 1e-5), workspace ");
    p = put_uint(p, (unsigned long)program->workspace_size);
    p = put_str(p, " bytes, weights ");
    p = put_uint(p, (unsigned long)program->weights_size);
    p = put_str(p, " bytes\n");
    *p = '\0';
    semihost_puts(line);
    return ok ? 0 : 1;
}
