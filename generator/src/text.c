#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "text.h"

cg_text cg_text_new(void *mem_ctx)
{
    cg_text t = {.s = talloc_array(mem_ctx, char, 64), .len = 0, .cap = 64};
    if (t.s)
        t.s[0] = '\0';
    return t;
}

/* Room for `more` bytes and the NUL; talloc caps one allocation below
 * 256 MiB, which is then running out of memory. */
static char *reserve(cg_text *t, size_t more)
{
    if (t->s == NULL)
        return NULL;
    if (more < t->cap - t->len)
        return t->s + t->len;
    size_t cap = t->cap;
    while (cap - t->len <= more) {
        if (cap > SIZE_MAX / 2) {
            cap = SIZE_MAX;
            break;
        }
        cap *= 2;
    }
    char *bigger = cap - t->len > more ? talloc_realloc(NULL, t->s, char, cap) : NULL;
    if (bigger == NULL) {
        talloc_free(t->s);
        t->s = NULL;
        return NULL;
    }
    t->s = bigger;
    t->cap = cap;
    return t->s + t->len;
}

void cg_text_puts(cg_text *t, const char *s)
{
    size_t n = strlen(s);
    char *at = reserve(t, n);
    if (at == NULL)
        return;
    memcpy(at, s, n + 1);
    t->len += n;
}

void cg_text_vprintf(cg_text *t, const char *fmt, va_list ap)
{
    if (t->s == NULL)
        return;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    if (n >= 0 && (size_t)n >= t->cap - t->len) {
        char *at = reserve(t, (size_t)n);
        n = at ? vsnprintf(at, t->cap - t->len, fmt, again) : -1;
    }
    va_end(again);
    if (n < 0) {
        talloc_free(t->s);
        t->s = NULL;
        return;
    }
    t->len += (size_t)n;
}

void cg_text_printf(cg_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_text_vprintf(t, fmt, ap);
    va_end(ap);
}

char *cg_text_take(cg_text *t)
{
    char *s = t->s ? talloc_realloc(NULL, t->s, char, t->len + 1) : NULL;
    if (s == NULL)
        talloc_free(t->s);
    *t = (cg_text){0};
    return s;
}
