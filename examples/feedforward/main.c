/*
 * feedforward: runs the generated FeedForwardBlock on the input that
 * export.py saved and compares with PyTorch's eager output.
 *
 *   feedforward-app [reference_input.npy reference_output.npy]
 *
 * Exit status 0 when the max abs error is within 1e-5, 1 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feedforward.h"
#include "npy.h"

/* Built with WEIGHTS_FORMAT external (FEEDFORWARD_WEIGHTS_SIZE is then defined):
 * the blob is read and checked at start-up and every call takes it. */
#ifdef FEEDFORWARD_WEIGHTS_SIZE
#include "weights_file.h"
static void *weights;
#define WEIGHTS_ARG , weights
#define WEIGHTS_LOAD() \
    ((weights = example_weights_load(EXAMPLE_WEIGHTS_FILE, FEEDFORWARD_WEIGHTS_ALIGNMENT, feedforward_weights_check)) != NULL)
#else
#define WEIGHTS_ARG
#define WEIGHTS_LOAD() 1
#endif

#ifndef FEEDFORWARD_DATA_DIR
#define FEEDFORWARD_DATA_DIR "."
#endif

#define TOLERANCE 1e-5

/* The model's scratch memory: no allocation on the inference path. */
static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char
    workspace[FEEDFORWARD_WORKSPACE_SIZE > 0 ? FEEDFORWARD_WORKSPACE_SIZE : 1];

static int same_shape(const coreai_tensor_desc *desc, const npy_f32 *array)
{
    if (desc->dtype != COREAI_DTYPE_F32 || desc->rank != array->rank)
        return 0;
    for (int i = 0; i < desc->rank; i++) {
        if (desc->shape[i] != array->shape[i])
            return 0;
    }
    return 1;
}

static void print_shape(FILE *out, const int64_t *shape, int rank)
{
    fputc('[', out);
    for (int i = 0; i < rank; i++)
        fprintf(out, "%s%lld", i ? ", " : "", (long long)shape[i]);
    fputc(']', out);
}

int main(int argc, char **argv)
{
    const char *input_path = FEEDFORWARD_DATA_DIR "/reference_input.npy";
    const char *reference_path = FEEDFORWARD_DATA_DIR "/reference_output.npy";
    const coreai_program *program = feedforward_program();
    const coreai_entrypoint_desc *entry;
    npy_f32 input, reference;
    float *output;
    char err[256];
    double max_err = 0.0;
    coreai_status status;

    if (argc == 3) {
        input_path = argv[1];
        reference_path = argv[2];
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [INPUT.npy REFERENCE_OUTPUT.npy]\n", argv[0]);
        return 2;
    }

    if (!WEIGHTS_LOAD())
        return 1;
    entry = coreai_program_find_entrypoint(program, "main");
    if (!entry || entry->n_inputs != 1 || entry->n_states != 0 || entry->n_outputs != 1) {
        fprintf(stderr, "error: the model has no entrypoint main(x) -> output\n");
        return 1;
    }
    if (npy_read_f32(input_path, &input, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return 1;
    }
    if (npy_read_f32(reference_path, &reference, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        npy_free(&input);
        return 1;
    }
    if (!same_shape(&entry->inputs[0], &input) || !same_shape(&entry->outputs[0], &reference)) {
        fprintf(stderr, "error: the .npy shapes do not match the model: input ");
        print_shape(stderr, input.shape, input.rank);
        fprintf(stderr, " (model ");
        print_shape(stderr, entry->inputs[0].shape, entry->inputs[0].rank);
        fprintf(stderr, "), output ");
        print_shape(stderr, reference.shape, reference.rank);
        fprintf(stderr, " (model ");
        print_shape(stderr, entry->outputs[0].shape, entry->outputs[0].rank);
        fprintf(stderr, ")\n");
        npy_free(&input);
        npy_free(&reference);
        return 1;
    }

    output = malloc(reference.count * sizeof *output);
    if (!output) {
        fprintf(stderr, "error: out of memory\n");
        npy_free(&input);
        npy_free(&reference);
        return 1;
    }

    printf("model %s (coreai-gen %s): workspace %zu bytes, weights %zu bytes",
           program->name, program->generator_version, program->workspace_size,
           program->weights_size);
    for (int i = 0; i < program->n_composite_ops; i++)
        printf("%s%s", i ? ", " : ", composite ops: ", program->composite_ops[i]);
    printf("\n");

    status = feedforward_main(workspace WEIGHTS_ARG, input.data, output);
    if (status != COREAI_STATUS_OK) {
        fprintf(stderr, "error: feedforward_main: %s\n", coreai_status_string(status));
        free(output);
        npy_free(&input);
        npy_free(&reference);
        return 1;
    }

    for (size_t i = 0; i < reference.count; i++) {
        double d = fabs((double)output[i] - (double)reference.data[i]);
        if (!(d <= max_err)) /* also catches NaN */
            max_err = isnan(d) ? INFINITY : d;
    }
    printf("output [%g, %g, %g, ...]\n", output[0], output[1], output[2]);
    printf("max abs error vs PyTorch: %.3g\n", max_err);

    free(output);
    npy_free(&input);
    npy_free(&reference);
    if (!(max_err <= TOLERANCE)) {
        fprintf(stderr, "FAIL: error above %g\n", TOLERANCE);
        return 1;
    }
    return 0;
}
