/*
 * A Makefile-built application of the feedforward example model, linked with
 * the installed runtime found by pkg-config (tests/cmake/run_pkgconfig_app.sh):
 * runs feedforward_main on the reference input and compares with PyTorch's
 * reference output.
 *
 *   app INPUT.npy REFERENCE_OUTPUT.npy
 *
 * Both are the little-endian f32 .npy files of examples/feedforward; only the
 * header length is read from the header, the sizes come from the model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feedforward.h"

static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char
    workspace[FEEDFORWARD_WORKSPACE_SIZE > 0 ? FEEDFORWARD_WORKSPACE_SIZE : 1];

/* Reads the `count` f32 values of a version 1.0 .npy file. */
static int load_f32(const char *path, float *dst, size_t count)
{
    unsigned char head[10];
    int ok = 0;
    FILE *f = fopen(path, "rb");

    if (f && fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, "\x93NUMPY\x01\x00", 8) == 0 &&
        fseek(f, (long)(sizeof head + ((size_t)head[8] | (size_t)head[9] << 8)), SEEK_SET) == 0 &&
        fread(dst, sizeof(float), count, f) == count && fgetc(f) == EOF)
        ok = 1;
    if (!ok)
        fprintf(stderr, "%s: not a version 1.0 .npy file of %zu float32 values\n", path, count);
    if (f)
        fclose(f);
    return ok;
}

int main(int argc, char **argv)
{
    const coreai_entrypoint_desc *entry = coreai_program_find_entrypoint(feedforward_program(), "main");
    const uint32_t one = 1;
    float *x, *y, *ref;
    size_t n_in, n_out;
    double max_err = 0.0;
    coreai_status status;
    int rc = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: %s INPUT.npy REFERENCE_OUTPUT.npy\n", argv[0]);
        return 2;
    }
    if (*(const unsigned char *)&one != 1) {
        fprintf(stderr, "skipped: big-endian host\n");
        return 0;
    }
    if (!entry || entry->n_inputs != 1 || entry->n_outputs != 1) {
        fprintf(stderr, "unexpected entrypoint descriptor\n");
        return 1;
    }
    n_in = (size_t)coreai_tensor_desc_numel(&entry->inputs[0]);
    n_out = (size_t)coreai_tensor_desc_numel(&entry->outputs[0]);
    x = malloc(n_in * sizeof *x);
    y = malloc(n_out * sizeof *y);
    ref = malloc(n_out * sizeof *ref);
    if (x && y && ref && load_f32(argv[1], x, n_in) && load_f32(argv[2], ref, n_out)) {
        status = feedforward_main(workspace, x, y);
        if (status != COREAI_STATUS_OK) {
            fprintf(stderr, "feedforward_main: %s\n", coreai_status_string(status));
        } else {
            for (size_t i = 0; i < n_out; i++) {
                double d = fabs((double)y[i] - (double)ref[i]);
                if (!(d <= max_err))
                    max_err = isnan(d) ? INFINITY : d;
            }
            printf("pkgconfig_app: max abs error vs PyTorch: %.3g\n", max_err);
            rc = max_err <= 1e-5 ? 0 : 1;
        }
    }
    free(x);
    free(y);
    free(ref);
    return rc;
}
