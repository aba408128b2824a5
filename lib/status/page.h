/*
 * status/page.h: the status page, an operator's view without a
 * dashboard: server-rendered HTML with inline SVG, no script, no
 * external asset, every string from the databases escaped.
 *
 * Transactions: none; it renders a struct status_view (status/status.h).
 */
#ifndef HB_STATUS_PAGE_H
#define HB_STATUS_PAGE_H

#include <stddef.h>

#include "status/status.h"

/*
 * The Content-Security-Policy the page is served with: nothing allowed
 * but its own inline style, named by its hash.  Static storage.
 */
HB_API const char *status_page_csp(void);

/*
 * Writes the page for v through put: health (NULL: ok; else why not),
 * the dispatcher's heartbeat, the outbox by state, the oldest pending
 * age, open conflicts and unknown outcomes, each destination, the dead
 * actions, and the last hour's requests and deliveries per minute.
 * Elements that carry a figure have an id (outbox-STATE, dest-I-FIELD,
 * requests-WORD, deliveries-WORD, ...), so that a test can read them.
 */
HB_API void status_page(const struct status_view *v, const char *health,
    status_put_fn put, void *arg);

#endif
