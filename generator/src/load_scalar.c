/*
 * load_scalar.c - strict conversions of attribute and constant text.
 *
 * strtoll/strtod alone accept leading blanks, a '+' sign, "0x" prefixes (with
 * base 0) and trailing garbage; the format is stricter, so the shape of each
 * token is checked before it is converted and the whole token must be used.
 * Conversions assume the C locale (coreai-gen never calls setlocale).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load_internal.h"

bool cg_is_xml_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool cg_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool cg_all_digits(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++) {
        if (!cg_is_digit(*s))
            return false;
    }
    return true;
}

cg_num_status cg_parse_i64(const char *text, int64_t *out)
{
    if (!cg_all_digits(text[0] == '-' ? text + 1 : text))
        return CG_NUM_SYNTAX;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (errno == ERANGE)
        return CG_NUM_RANGE;
#if LLONG_MAX > INT64_MAX
    if (v < INT64_MIN || v > INT64_MAX)
        return CG_NUM_RANGE;
#endif
    if (end == NULL || *end != '\0')
        return CG_NUM_SYNTAX;
    *out = (int64_t)v;
    return CG_NUM_OK;
}

cg_num_status cg_parse_u64(const char *text, uint64_t *out)
{
    if (!cg_all_digits(text))
        return CG_NUM_SYNTAX;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return CG_NUM_RANGE;
#if ULLONG_MAX > UINT64_MAX
    if (v > UINT64_MAX)
        return CG_NUM_RANGE;
#endif
    if (end == NULL || *end != '\0')
        return CG_NUM_SYNTAX;
    *out = (uint64_t)v;
    return CG_NUM_OK;
}

cg_num_status cg_parse_f64(const char *text, double *out)
{
    /* strtod would skip these silently */
    if (text[0] == '\0' || cg_is_xml_space(text[0]) || text[0] == '+')
        return CG_NUM_SYNTAX;
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || end == NULL || *end != '\0')
        return CG_NUM_SYNTAX;
    if (isnan(v))
        return CG_NUM_NAN;
    /* ERANGE also flags underflow to a subnormal or zero, which is fine */
    if (errno == ERANGE && isinf(v))
        return CG_NUM_RANGE;
    *out = v;
    return CG_NUM_OK;
}

cg_num_status cg_parse_f32(const char *text, double *out)
{
    double v;
    cg_num_status st = cg_parse_f64(text, &v);
    if (st != CG_NUM_OK)
        return st;
    float f = (float)v;
    if (isinf(f) && !isinf(v))
        return CG_NUM_RANGE;
    *out = (double)f;
    return CG_NUM_OK;
}

char *cg_token_next(char **cursor)
{
    char *p = *cursor;
    while (*p != '\0' && cg_is_xml_space(*p))
        p++;
    if (*p == '\0') {
        *cursor = p;
        return NULL;
    }
    char *start = p;
    while (*p != '\0' && !cg_is_xml_space(*p))
        p++;
    if (*p != '\0')
        *p++ = '\0';
    *cursor = p;
    return start;
}

size_t cg_token_count(const char *text)
{
    size_t n = 0;
    bool in_token = false;
    for (; *text != '\0'; text++) {
        bool space = cg_is_xml_space(*text);
        if (!space && !in_token)
            n++;
        in_token = !space;
    }
    return n;
}
