/*
 * base/fault.h: fault injection points, compiled in only with -DHB_FAULT (the
 * test build).  In every other build fault_fire() is the constant 0 and
 * the hooks do not exist.
 *
 * A test arms a point with a callback; when the library reaches the
 * point, the callback runs and a non-zero return makes the library fail
 * there as if the underlying call had failed (an I/O error, or for
 * FAULT_ALLOC a malloc() that returned NULL).  The registry is not
 * thread-safe: tests arm points while no other thread runs the library,
 * and the callbacks must be safe on the thread that fires them (the
 * thread that runs a group's batch, its writer or a request's, fires
 * FAULT_GROUP_TAKE and the state.db points).
 *
 * Transactions: none; no database.
 */
#ifndef HB_FAULT_H
#define HB_FAULT_H

#include "base/hb.h"

enum fault_point {
	FAULT_OUTBOX_INSERT = 0,	/* an outbox row, before its INSERT */
	FAULT_BEFORE_COMMIT,		/* store_commit(), before COMMIT */
	FAULT_AFTER_COMMIT,		/* store_commit(), after a COMMIT that
					   went through: the file check fails */
	FAULT_ALLOC,			/* every cJSON allocation
					   (base/json.c), and
					   provider/mapping.c's own */
	FAULT_GROUP_TAKE,		/* intake/group.c, before a batch takes
					   what waits (a failure is ignored) */
	FAULT_LOOKED,			/* intake/accept.c, between a
					   batch's look-up and its writes (a
					   failure is ignored) */
	FAULT_CACHE_READ,		/* config/cache.c, before a read of the
					   version (and the snapshot): it
					   fails as busy */
	FAULT__N
};

typedef int (*fault_fn)(enum fault_point, void *arg);

#ifdef HB_FAULT
/* Arms (fn non-NULL) or disarms a point. */
HB_API void fault_set(enum fault_point, fault_fn fn, void *arg);
int fault_fire(enum fault_point);
#else
#define fault_fire(p) 0
#endif

#endif
