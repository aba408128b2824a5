/*
 * base/fault.c: the fault injection registry (test build only).
 */
#include "base/fault.h"

#ifdef HB_FAULT
static struct {
	fault_fn	 fn;
	void		*arg;
} points[FAULT__N];

void
fault_set(enum fault_point p, fault_fn fn, void *arg)
{
	if ((unsigned)p < FAULT__N) {
		points[p].fn = fn;
		points[p].arg = arg;
	}
}

int
fault_fire(enum fault_point p)
{
	if ((unsigned)p >= FAULT__N || points[p].fn == NULL)
		return 0;
	return points[p].fn(p, points[p].arg);
}
#else
/* ISO C forbids an empty translation unit. */
typedef int fault_unused;
#endif
