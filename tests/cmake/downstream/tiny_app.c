/* Calls the model converted at build time; checks the descriptor it publishes. */
#include <stdio.h>
#include <string.h>

#include "export_tiny.h"

int main(void)
{
    static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char workspace[EXPORT_TINY_WORKSPACE_SIZE + 1];
    float x[2 * 8] = {0}, y[2 * 4];
    const coreai_program *p = export_tiny_program();
    if (p->n_entrypoints != 1 || strcmp(p->entrypoints[0].inputs[0].name, "x") != 0 ||
        strcmp(p->entrypoints[0].outputs[0].name, "y") != 0) {
        fprintf(stderr, "tiny_app: unexpected descriptor\n");
        return 1;
    }
    coreai_status s = export_tiny_main(workspace, x, y);
    printf("tiny_app: status %s, y[0] = %g\n", coreai_status_string(s), (double)y[0]);
    return s == COREAI_STATUS_OK ? 0 : 1;
}
