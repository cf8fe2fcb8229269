/*
 * Minimal Cortex-M startup: the vector table (initial stack pointer, reset
 * and fault handlers), FPU enable, .bss cleared, main(), then a semihosting
 * exit with main's status. Faults exit with a failure instead of hanging.
 */
#include <stdint.h>
#include <string.h>

#include "semihost.h"

int main(void);
void Reset_Handler(void);
void Fault_Handler(void);

extern uint32_t __bss_start__[], __bss_end__[], __stack_top[];

void Fault_Handler(void)
{
    semihost_puts("FAIL: fault\n");
    semihost_exit(1);
}

void Reset_Handler(void)
{
    /* CPACR: full access to CP10 and CP11 (the FPU), before any FP instruction */
    volatile uint32_t *const cpacr = (volatile uint32_t *)0xE000ED88u;
    *cpacr |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    memset(__bss_start__, 0, (size_t)((char *)__bss_end__ - (char *)__bss_start__));
    semihost_exit(main() != 0);
}

/* initial SP, reset, NMI, HardFault, MemManage, BusFault, UsageFault */
__attribute__((section(".vectors"), used)) void *const coreai_vectors[7] = {
    __stack_top,   (void *)Reset_Handler, (void *)Fault_Handler, (void *)Fault_Handler,
    (void *)Fault_Handler, (void *)Fault_Handler, (void *)Fault_Handler,
};
