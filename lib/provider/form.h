/*
 * provider/form.h: a provider's body posted as a form
 * (application/x-www-form-urlencoded, as Twilio posts), read with the
 * strictness of provider/mapping.h's JSON bodies, and written back.
 *
 * A form is name=value fields joined by '&': every byte of it printable
 * ASCII (a space is '+'), "%XX" two hex digits, a field without '=' an
 * empty value.  Refused: an empty field ("a=1&&b=2", a '&' at either
 * end), an empty name, a name given twice (readers of one body would
 * disagree on its value), a decoded name or value that is not UTF-8 or
 * holds a control character, more than FORM_FIELDS_MAX fields.
 *
 * Transactions: none; no database.
 */
#ifndef HB_FORM_H
#define HB_FORM_H

#include <stddef.h>

#include "base/hb.h"

#define FORM_FIELDS_MAX	256

struct form_field {
	const char	*name;		/* decoded, NUL-terminated */
	const char	*value;
};

/* A form read: its fields in the order sent, in memory of its own. */
struct form {
	struct form_field	*f;
	size_t			 n;
	char			*buf;
};

enum form_err {
	FORM_OK = 0,
	FORM_INVALID,	/* not a form of the rules above */
	FORM_NOMEM
};

/*
 * Reads the len bytes at b into *out (form_free()); on FORM_INVALID why
 * says what is wrong ("body: a field named twice: CallSid"), naming a
 * field only when its name is plain, never a value.
 */
HB_API enum form_err form_parse(const char *b, size_t len, struct form *out,
    char *why, size_t whylen) HB_MUST_CHECK;

HB_API void form_free(struct form *);

/*
 * The n fields written as a form, in their order: letters, digits and
 * "*-._" as they are, a space as '+', every other byte as %XX.
 * Allocated (free()); NULL when out of memory.
 */
HB_API char *form_encode(const struct form_field *f, size_t n);

#endif
