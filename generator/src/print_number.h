/*
 * print_number.h - locale-independent, deterministic spellings of numbers in
 * the textual IR.
 */
#ifndef CG_PRINT_NUMBER_H
#define CG_PRINT_NUMBER_H

#include <stdint.h>

#define CG_NUMBER_BUF 40

/* An f32 value (given as the exact double) like MLIR: nine significant
 * digits, truncated: "9.99999974E-6", "1.00000000E+0"; infinities as the
 * bit pattern "0x7F800000". */
void cg_format_f32(char out[CG_NUMBER_BUF], double value);
/* An f64 value: %.17g, always with a '.' or exponent so it reads as a float. */
void cg_format_f64(char out[CG_NUMBER_BUF], double value);

#endif /* CG_PRINT_NUMBER_H */
