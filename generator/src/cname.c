#include <ctype.h>
#include <string.h>

#include <talloc.h>

#include "cname.h"

static const char *const reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary",
    "_Noreturn", "_Static_assert", "_Thread_local", "bool", "true", "false", "asm", "typeof", NULL};

/* names the generated functions use for their own parameters */
static const char *const own_params[] = {"workspace", "ws", "state", NULL};

static bool in_list(const char *const *list, const char *s)
{
    for (const char *const *r = list; *r; r++) {
        if (strcmp(*r, s) == 0)
            return true;
    }
    return false;
}

static bool is_reserved(const char *s)
{
    return in_list(reserved, s) || in_list(own_params, s);
}

char *cg_cname(void *mem_ctx, const char *name)
{
    bool need_prefix = name[0] == '\0' || isdigit((unsigned char)name[0]) || name[0] == '_';
    char *s = talloc_asprintf(mem_ctx, "%s%s", need_prefix ? "t_" : "", name);
    for (char *p = s; *p; p++) {
        if (!isalnum((unsigned char)*p) || (unsigned char)*p > 127)
            *p = '_';
    }
    if (is_reserved(s))
        s = talloc_strdup_append(s, "_");
    return s;
}

bool cg_cname_is_valid(const char *text)
{
    if (!text[0] || isdigit((unsigned char)text[0]))
        return false;
    for (const char *p = text; *p; p++) {
        if (!(isalnum((unsigned char)*p) || *p == '_') || (unsigned char)*p > 127)
            return false;
    }
    return !in_list(reserved, text);
}
