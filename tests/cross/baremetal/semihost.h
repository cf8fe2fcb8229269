/* Arm semihosting (the debugger or QEMU's -semihosting): write a string and
 * exit. `bkpt 0xab` traps to the host; without one attached it faults, so
 * only the run under QEMU calls these. */
#ifndef COREAI_BAREMETAL_SEMIHOST_H
#define COREAI_BAREMETAL_SEMIHOST_H

#define SEMIHOST_SYS_WRITE0 0x04
#define SEMIHOST_SYS_EXIT 0x18
/* SYS_EXIT reasons: QEMU exits with status 0 for ApplicationExit, 1 otherwise */
#define SEMIHOST_APPLICATION_EXIT 0x20026
#define SEMIHOST_RUNTIME_ERROR 0x20023

static inline int semihost_call(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static inline void semihost_puts(const char *s) { semihost_call(SEMIHOST_SYS_WRITE0, s); }

__attribute__((noreturn)) static inline void semihost_exit(int failed)
{
    semihost_call(SEMIHOST_SYS_EXIT,
                  (const void *)(failed ? SEMIHOST_RUNTIME_ERROR : SEMIHOST_APPLICATION_EXIT));
    for (;;) {
    }
}

#endif
