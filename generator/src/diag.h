/*
 * diag.h - diagnostics in the form "FILE:LINE: error: message".
 *
 * The first error wins: it is kept and later ones are counted but not
 * reported, because the first one is almost always the cause (after nanopb's
 * first-error-wins rule). Callers check cg_diag_failed() and unwind.
 */
#ifndef CG_DIAG_H
#define CG_DIAG_H

#include <stdarg.h>
#include <stdbool.h>

typedef struct cg_diag {
    const char *file;      /* default file for messages */
    bool failed;
    char message[1024];    /* first error, fully formatted with file:line */
} cg_diag;

void cg_diag_init(cg_diag *diag, const char *file);

/* Record an error at file:line (line <= 0 prints "file: error: ..."). */
void cg_diag_error(cg_diag *diag, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, naming another file (weights file, output path). */
void cg_diag_error_in(cg_diag *diag, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static inline bool cg_diag_failed(const cg_diag *diag) { return diag->failed; }

#endif /* CG_DIAG_H */
