/*
 * diag.c - first-error-wins diagnostics.
 *
 * Only the first error is formatted: later ones are usually consequences of
 * it, and keeping one fixed-size message means reporting never allocates, so
 * it also works when the failure was an allocation.
 */
#include <stdio.h>
#include <string.h>

#include "diag.h"

void cg_diag_init(cg_diag *diag, const char *file)
{
    memset(diag, 0, sizeof(*diag));
    diag->file = file;
}

static void cg_diag_vrecord(cg_diag *diag, const char *file, int line,
                            const char *fmt, va_list ap)
{
    if (diag->failed)
        return;
    diag->failed = true;

    if (file == NULL)
        file = "<unknown>";
    int n;
    if (line > 0)
        n = snprintf(diag->message, sizeof(diag->message), "%s:%d: error: ", file, line);
    else
        n = snprintf(diag->message, sizeof(diag->message), "%s: error: ", file);
    if (n < 0 || (size_t)n >= sizeof(diag->message))
        return; /* the prefix alone filled the buffer; it is truncated but terminated */
    vsnprintf(diag->message + n, sizeof(diag->message) - (size_t)n, fmt, ap);
}

void cg_diag_error(cg_diag *diag, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_diag_vrecord(diag, diag->file, line, fmt, ap);
    va_end(ap);
}

void cg_diag_error_in(cg_diag *diag, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_diag_vrecord(diag, file, line, fmt, ap);
    va_end(ap);
}
