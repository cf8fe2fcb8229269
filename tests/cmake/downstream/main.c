/*
 * Downstream use of a generated model: run feedforward_main on the reference
 * input and compare with PyTorch's output.
 *
 *   downstream INPUT.npy REFERENCE_OUTPUT.npy
 *
 * The .npy files are the f32, C-order, version 1.0 files export.py writes;
 * only as much of the header is parsed as this check needs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feedforward.h"

static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char
    workspace[FEEDFORWARD_WORKSPACE_SIZE > 0 ? FEEDFORWARD_WORKSPACE_SIZE : 1];

/* Reads the data of a '<f4' .npy file holding exactly `count` elements. */
static int load_f32(const char *path, float *dst, size_t count)
{
    unsigned char head[10];
    size_t header_len;
    char *header;
    long data_start, end;
    int ok = 0;
    FILE *f = fopen(path, "rb");

    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return 0;
    }
    if (fread(head, 1, sizeof head, f) != sizeof head || memcmp(head, "\x93NUMPY\x01\x00", 8) != 0) {
        fprintf(stderr, "%s: not a version 1.0 .npy file\n", path);
        fclose(f);
        return 0;
    }
    header_len = (size_t)head[8] | ((size_t)head[9] << 8);
    header = malloc(header_len + 1);
    if (header && fread(header, 1, header_len, f) == header_len) {
        header[header_len] = '\0';
        data_start = ftell(f);
        if (!strstr(header, "'descr': '<f4'") || !strstr(header, "'fortran_order': False")) {
            fprintf(stderr, "%s: not a C-ordered '<f4' array\n", path);
        } else if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0 ||
                   (size_t)(end - data_start) != count * sizeof(float)) {
            fprintf(stderr, "%s: expected %zu float32 values\n", path, count);
        } else if (fseek(f, data_start, SEEK_SET) != 0 || fread(dst, sizeof(float), count, f) != count) {
            fprintf(stderr, "%s: read error\n", path);
        } else {
            ok = 1; /* little-endian host assumed (checked in main) */
        }
    }
    free(header);
    fclose(f);
    return ok;
}

int main(int argc, char **argv)
{
    const coreai_program *program = feedforward_program();
    const coreai_entrypoint_desc *entry = coreai_program_find_entrypoint(program, "main");
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
    if (!entry || entry->n_inputs != 1 || entry->n_outputs != 1 ||
        program->workspace_size != FEEDFORWARD_WORKSPACE_SIZE ||
        program->workspace_alignment > COREAI_ALIGNMENT || strcmp(program->name, "feedforward") != 0) {
        fprintf(stderr, "unexpected program descriptor\n");
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
            printf("downstream: max abs error vs PyTorch: %.3g\n", max_err);
            rc = max_err <= 1e-5 ? 0 : 1;
        }
    }
    free(x);
    free(y);
    free(ref);
    return rc;
}
