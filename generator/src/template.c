#include <string.h>

#include <talloc.h>

#include "template.h"

static const char *lookup(const cg_template_var *vars, size_t n, const char *key, size_t key_len)
{
    for (size_t i = 0; i < n; i++) {
        if (strlen(vars[i].key) == key_len && memcmp(vars[i].key, key, key_len) == 0)
            return vars[i].value;
    }
    return NULL;
}

/* If line [s, e) is only whitespace + "/ * @@KEY@@ * /", return the key span. */
static bool block_marker(const char *s, const char *e, const char **key, size_t *key_len)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    if (e - s < 10 || strncmp(s, "/* @@", 5) != 0 || strncmp(e - 5, "@@ */", 5) != 0)
        return false;
    *key = s + 5;
    *key_len = (size_t)((e - 5) - (s + 5));
    return memchr(*key, '@', *key_len) == NULL;
}

char *cg_template_render(void *mem_ctx, const char *name, const char *text, const cg_template_var *vars,
                         size_t n_vars, cg_diag *diag)
{
    char *out = talloc_strdup(mem_ctx, "");
    int line = 1;
    for (const char *s = text; *s; line++) {
        const char *e = strchr(s, '\n');
        const char *next = e ? e + 1 : s + strlen(s);
        if (!e)
            e = next;
        const char *key;
        size_t key_len;
        if (block_marker(s, e, &key, &key_len)) {
            const char *v = lookup(vars, n_vars, key, key_len);
            if (!v) {
                cg_diag_error_in(diag, name, line, "template marker @@%.*s@@ has no value", (int)key_len, key);
                talloc_free(out);
                return NULL;
            }
            out = talloc_strdup_append_buffer(out, v);
            s = next;
            continue;
        }
        /* inline markers */
        const char *p = s;
        if (p == e)
            out = talloc_strndup_append_buffer(out, p, (size_t)(next - p));
        while (p < e) {
            const char *m = strstr(p, "@@");
            if (!m || m >= e) {
                out = talloc_strndup_append_buffer(out, p, (size_t)(next - p));
                break;
            }
            const char *m2 = strstr(m + 2, "@@");
            if (!m2 || m2 >= e) {
                cg_diag_error_in(diag, name, line, "unterminated template marker");
                talloc_free(out);
                return NULL;
            }
            const char *v = lookup(vars, n_vars, m + 2, (size_t)(m2 - m - 2));
            if (!v) {
                cg_diag_error_in(diag, name, line, "template marker @@%.*s@@ has no value", (int)(m2 - m - 2),
                                 m + 2);
                talloc_free(out);
                return NULL;
            }
            out = talloc_strndup_append_buffer(out, p, (size_t)(m - p));
            out = talloc_strdup_append_buffer(out, v);
            p = m2 + 2;
            if (p >= e) {
                out = talloc_strndup_append_buffer(out, p, (size_t)(next - p));
                break;
            }
        }
        s = next;
    }
    return out;
}
