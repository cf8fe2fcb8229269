/*
 * ir_half.h - IEEE binary16 (f16) and bfloat16 bit patterns.
 *
 * Conversions from double round once, to nearest with ties to even, straight
 * from the parsed double: going through float first would round twice and
 * could land one ulp off.
 */
#ifndef CG_IR_HALF_H
#define CG_IR_HALF_H

#include <stdbool.h>
#include <stdint.h>

/* *overflow is set when a finite value rounds to infinity. NaN is not
 * accepted by the loader, so it is only mapped to a quiet NaN here. */
uint16_t cg_half_from_double(double value, bool *overflow);
uint16_t cg_bf16_from_double(double value, bool *overflow);

/* Exact: every f16 and bf16 value is a double. */
double cg_half_to_double(uint16_t bits);
double cg_bf16_to_double(uint16_t bits);

#endif /* CG_IR_HALF_H */
