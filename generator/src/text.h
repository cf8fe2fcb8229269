/*
 * text.h - a growing text buffer for the emitter. Appending to a talloc
 * string reallocates it to the exact new size each time, which copies the
 * whole text under ASan (and often without): quadratic in the output. The
 * buffer doubles its capacity instead, so appending n bytes in any number
 * of pieces costs O(n).
 */
#ifndef CG_TEXT_H
#define CG_TEXT_H

#include <stdarg.h>
#include <stddef.h>

typedef struct cg_text {
    char *s;          /* talloc'd, NUL-terminated; NULL after running out of memory */
    size_t len, cap;
} cg_text;

/* An empty text owned by mem_ctx. */
cg_text cg_text_new(void *mem_ctx);
void cg_text_puts(cg_text *t, const char *s);
void cg_text_printf(cg_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_text_vprintf(cg_text *t, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* The text as an ordinary talloc string (its size len + 1), or NULL when
 * memory ran out; t is empty afterwards and must not be used again. */
char *cg_text_take(cg_text *t);

#endif /* CG_TEXT_H */
