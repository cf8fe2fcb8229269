/*
 * print_number.c - float spellings for the textual IR.
 *
 * An f32 value gets nine significant digits, truncated rather than rounded
 * (so 1e-5f reads 9.99999974E-6, as MLIR prints it); the cut is below half
 * a float ulp, so the text still reads back as the same float. MLIR writes
 * the exponent without padding, so the zeros printf adds are removed. The decimal point is '.' because
 * coreai-gen never calls setlocale and so stays in the C locale.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "print_number.h"

/* "9.99999974E-06" -> "9.99999974E-6", "1.0E+00" -> "1.0E+0" */
static void cg_strip_exponent_zeros(char *s)
{
    char *e = strchr(s, 'E');
    if (e == NULL)
        e = strchr(s, 'e');
    if (e == NULL)
        return;
    char *digits = e + 1;
    if (*digits == '+' || *digits == '-')
        digits++;
    char *first = digits;
    while (first[0] == '0' && first[1] != '\0')
        first++;
    memmove(digits, first, strlen(first) + 1);
}

void cg_format_f32(char out[CG_NUMBER_BUF], double value)
{
    if (isnan(value)) {
        snprintf(out, CG_NUMBER_BUF, "0x7FC00000");
        return;
    }
    if (isinf(value)) {
        snprintf(out, CG_NUMBER_BUF, "%s", value > 0 ? "0x7F800000" : "0xFF800000");
        return;
    }
    /* 120 fractional digits hold the exact expansion of every float (the
     * longest, of the smallest subnormal, has 105), so the cut below is a true
     * truncation, never one of printf's roundings. */
    char exact[160];
    snprintf(exact, sizeof(exact), "%.120E", value);
    const char *e = strchr(exact, 'E');
    size_t mantissa = exact[0] == '-' ? 11 : 10; /* [-]d.dddddddd */
    if (e == NULL || (size_t)(e - exact) < mantissa) {
        snprintf(out, CG_NUMBER_BUF, "%.8E", value); /* not reached with a sane libc */
    } else {
        snprintf(out, CG_NUMBER_BUF, "%.*s%s", (int)mantissa, exact, e);
    }
    cg_strip_exponent_zeros(out);
}

void cg_format_f64(char out[CG_NUMBER_BUF], double value)
{
    if (isnan(value)) {
        snprintf(out, CG_NUMBER_BUF, "0x7FF8000000000000");
    } else if (isinf(value)) {
        snprintf(out, CG_NUMBER_BUF, "%s",
                 value > 0 ? "0x7FF0000000000000" : "0xFFF0000000000000");
    } else {
        snprintf(out, CG_NUMBER_BUF, "%.17g", value);
        if (strpbrk(out, ".e") == NULL)
            strncat(out, ".0", CG_NUMBER_BUF - strlen(out) - 1);
        cg_strip_exponent_zeros(out);
    }
}
