/*
 * provider/scheme.c: declared signature schemes (provider/scheme.h):
 * their declaration checked and written back, requests verified and
 * signed with one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <sodium.h>

#include "base/fault.h"
#include "base/json.h"
#include "base/text.h"
#include "provider/digest.h"
#include "provider/form.h"
#include "provider/scheme.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define PART_MAX	32	/* bytes of a part's name */
#define SIG_LEN_MAX	64	/* the longest signature: SHA-512, Ed25519 */
#define TS_TEXT_MAX	24	/* decimal int64 and its NUL */
#define KEY_MAX		(HB_TEXT_MAX / 4 * 3)	/* a decoded secret */

enum alg {
	A_HMAC_SHA1 = 0,
	A_HMAC_SHA256,
	A_HMAC_SHA512,
	A_SHA1,
	A_SHA256,
	A_ED25519,
	A__N
};

static const struct {
	const char	*name;
	enum digest_alg	 digest;
	int		 hmac;
	int		 weak;
} algs[A__N] = {
	[A_HMAC_SHA1] = { "hmac-sha1", DIGEST_SHA1, 1, 1 },
	[A_HMAC_SHA256] = { "hmac-sha256", DIGEST_SHA256, 1, 0 },
	[A_HMAC_SHA512] = { "hmac-sha512", DIGEST_SHA512, 1, 0 },
	[A_SHA1] = { "sha1", DIGEST_SHA1, 0, 1 },
	[A_SHA256] = { "sha256", DIGEST_SHA256, 0, 1 },
	[A_ED25519] = { "ed25519", DIGEST_SHA512, 0, 0 },
};

enum enc { E_HEX = 0, E_BASE64, E_BASE64URL, E__N };

static const char *const encs[E__N] = {
	[E_HEX] = "hex", [E_BASE64] = "base64", [E_BASE64URL] = "base64url",
};

enum ts { T_NONE = 0, T_PART, T_HEADER };

enum pkind {
	P_LIT = 0, P_BODY, P_TIMESTAMP, P_URL, P_HEADER, P_SECRET, P_FORM
};

/* A placeholder's name in "signed", and what it stands for. */
static const struct {
	const char	*name;
	enum pkind	 kind;
} holders[] = {
	{ "body", P_BODY }, { "timestamp", P_TIMESTAMP }, { "url", P_URL },
	{ "secret", P_SECRET }, { "form", P_FORM },
};

#define HEADER_HOLDER	"header:"

struct piece {
	enum pkind	kind;
	size_t		off;	/* P_LIT: into tmpl; P_HEADER: into hdrs */
	size_t		len;
};

struct scheme {
	char		header[HB_ID_MAX + 1];	/* lower case */
	int		parts;		/* the header is a list */
	char		sep;
	char		assign;
	char		sig_part[PART_MAX + 1];
	char		prefix[SCHEME_PREFIX_MAX + 1];
	enum ts		ts;
	char		ts_name[HB_ID_MAX + 1];	/* a part, or a header in
						   lower case */
	int		ts_ms;
	char		tmpl[SCHEME_SIGNED_MAX + 1];	/* as written */
	struct piece	pieces[SCHEME_PIECES_MAX];
	size_t		npieces;
	char		hdrs[SCHEME_PIECES_MAX][HB_ID_MAX + 1];
	size_t		nhdrs;
	enum alg	alg;
	enum enc	enc;
	int		key_base64;
	char		key_prefix[SCHEME_PREFIX_MAX + 1];
	char		url[HB_TEXT_MAX + 1];
	const char	*signs[SCHEME_PIECES_MAX + 2];	/* NULL-ended */
};

/*
 * The declaration
 */

static const char *const members[] = {
	"header", "parts", "prefix", "timestamp", "signed", "algorithm",
	"encoding", "key", "key_prefix", "url",
};

/* Non-zero when obj has only members named in names[n]; else why. */
static int
only_members(const cJSON *obj, const char *path, const char *const *names,
    size_t n, char *why, size_t whylen)
{
	const cJSON	*c;
	char		 echo[48];
	size_t		 i;

	for (c = obj->child; c != NULL; c = c->next) {
		for (i = 0; i < n; i++)
			if (strcmp(c->string, names[i]) == 0)
				break;
		if (i == n) {
			text_say(why, whylen, "%s: \"%s\" is not one of its members",
			    path, text_escape(c->string, (size_t)-1, echo,
			    sizeof(echo)));
			return 0;
		}
	}
	return 1;
}

/*
 * The string member name of obj (NULL when absent and optional) into
 * *out; -1 with why filled when it is missing or not a string.
 */
static int
string_member(const cJSON *obj, const char *path, const char *name,
    int required, const char **out, char *why, size_t whylen)
{
	const cJSON	*c;

	*out = NULL;
	if ((c = cJSON_GetObjectItemCaseSensitive(obj, name)) == NULL) {
		if (!required)
			return 0;
		text_say(why, whylen, "%s.%s: missing", path, name);
		return -1;
	}
	if (!cJSON_IsString(c)) {
		text_say(why, whylen, "%s.%s: not a string", path, name);
		return -1;
	}
	*out = c->valuestring;
	return 0;
}

/* One of names[n] (exactly); -1 when it is none. */
static int
one_of(const char *s, const char *const *names, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

/* A header name into buf in lower case; -1 with why filled. */
static int
header_member(const char *s, const char *path, char *buf, char *why,
    size_t whylen)
{
	if (text_header_lower(buf, s) != 0) {
		text_say(why, whylen, "%s: not a header name (1 to %d of letters,"
		    " digits and !#$%%&'*+-.^_`|~)", path, HB_ID_MAX);
		return -1;
	}
	return 0;
}

/* A part's name: 1 to PART_MAX letters, digits, '_' and '-'. */
static int
part_name(const char *s)
{
	size_t	n = strlen(s);

	return n > 0 && n <= PART_MAX && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* A separator or assignment: one printable ASCII byte, no letter or digit. */
static int
punct(const char *s)
{
	return s[0] != '\0' && s[1] == '\0' && (s[0] == ' ' ||
	    (s[0] > ' ' && s[0] < 0x7f && strchr("abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", s[0]) == NULL));
}

/* Printable ASCII, 1 to max bytes, none of the bytes in not. */
static int
printable(const char *s, size_t max, const char *not)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++)
		if (i == max || s[i] < ' ' || s[i] >= 0x7f ||
		    strchr(not, s[i]) != NULL)
			return 0;
	return i > 0;
}

static int
parse_parts(struct scheme *s, const cJSON *v, char *why, size_t whylen)
{
	static const char *const names[] = {
		"separator", "assign", "signature"
	};
	const char	*sep, *assign, *sig;

	if (!cJSON_IsObject(v)) {
		text_say(why, whylen, "signature.parts: not an object");
		return -1;
	}
	if (!only_members(v, "signature.parts", names, NELEM(names), why,
	    whylen) ||
	    string_member(v, "signature.parts", "separator", 1, &sep, why,
	    whylen) != 0 ||
	    string_member(v, "signature.parts", "assign", 1, &assign, why,
	    whylen) != 0 ||
	    string_member(v, "signature.parts", "signature", 1, &sig, why,
	    whylen) != 0)
		return -1;
	if (!punct(sep) || !punct(assign) || sep[0] == assign[0]) {
		text_say(why, whylen, "signature.parts: separator and assign are"
		    " two different characters, neither a letter, a digit,"
		    " '_' nor '-'");
		return -1;
	}
	if (!part_name(sig)) {
		text_say(why, whylen, "signature.parts.signature: not a part's name"
		    " (1 to %d letters, digits, '_' and '-')", PART_MAX);
		return -1;
	}
	s->parts = 1;
	s->sep = sep[0];
	s->assign = assign[0];
	memcpy(s->sig_part, sig, strlen(sig) + 1);
	return 0;
}

static int
parse_timestamp(struct scheme *s, const cJSON *v, char *why, size_t whylen)
{
	static const char *const names[] = { "part", "header", "unit" };
	static const char *const units[] = { "s", "ms" };
	const char	*part, *header, *unit;
	int		 u = 0;

	if (!cJSON_IsObject(v)) {
		text_say(why, whylen, "signature.timestamp: not an object");
		return -1;
	}
	if (!only_members(v, "signature.timestamp", names, NELEM(names), why,
	    whylen) ||
	    string_member(v, "signature.timestamp", "part", 0, &part, why,
	    whylen) != 0 ||
	    string_member(v, "signature.timestamp", "header", 0, &header, why,
	    whylen) != 0 ||
	    string_member(v, "signature.timestamp", "unit", 0, &unit, why,
	    whylen) != 0)
		return -1;
	if ((part == NULL) == (header == NULL)) {
		text_say(why, whylen, "signature.timestamp: names one of part and"
		    " header");
		return -1;
	}
	if (unit != NULL && (u = one_of(unit, units, NELEM(units))) < 0) {
		text_say(why, whylen, "signature.timestamp.unit: not s or ms");
		return -1;
	}
	s->ts_ms = u == 1;
	if (header != NULL) {
		s->ts = T_HEADER;
		return header_member(header, "signature.timestamp.header",
		    s->ts_name, why, whylen);
	}
	if (!s->parts) {
		text_say(why, whylen, "signature.timestamp.part: the header has no"
		    " parts (signature.parts)");
		return -1;
	}
	if (!part_name(part) || strcmp(part, s->sig_part) == 0) {
		text_say(why, whylen, "signature.timestamp.part: not a part's name"
		    " other than the signature's");
		return -1;
	}
	s->ts = T_PART;
	memcpy(s->ts_name, part, strlen(part) + 1);
	return 0;
}

/* Adds a piece; -1 with why filled when there are too many. */
static int
add_piece(struct scheme *s, enum pkind kind, size_t off, size_t len,
    char *why, size_t whylen)
{
	if (s->npieces == SCHEME_PIECES_MAX) {
		text_say(why, whylen, "signature.signed: more than %d pieces",
		    SCHEME_PIECES_MAX);
		return -1;
	}
	s->pieces[s->npieces].kind = kind;
	s->pieces[s->npieces].off = off;
	s->pieces[s->npieces].len = len;
	s->npieces++;
	return 0;
}

/* A {header:NAME} placeholder (name, len bytes) as a piece. */
static int
add_header_piece(struct scheme *s, const char *name, size_t len, char *why,
    size_t whylen)
{
	char	buf[HB_ID_MAX + 1];
	size_t	i;

	if (len > HB_ID_MAX) {
		text_say(why, whylen, "signature.signed: a header name is longer"
		    " than %d bytes", HB_ID_MAX);
		return -1;
	}
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (header_member(buf, "signature.signed: {header:...}", buf, why,
	    whylen) != 0)
		return -1;
	for (i = 0; i < s->nhdrs; i++)
		if (strcmp(s->hdrs[i], buf) == 0)
			break;
	if (i == s->nhdrs)
		memcpy(s->hdrs[s->nhdrs++], buf, len + 1);
	return add_piece(s, P_HEADER, i, 0, why, whylen);
}

/* "signed": literals and placeholders into pieces. */
static int
parse_signed(struct scheme *s, const char *t, char *why, size_t whylen)
{
	const char	*p, *open, *close;
	size_t		 i, len, nbody = 0;

	if (!printable(t, SCHEME_SIGNED_MAX, "")) {
		text_say(why, whylen, "signature.signed: not 1 to %d bytes of"
		    " printable ASCII", SCHEME_SIGNED_MAX);
		return -1;
	}
	memcpy(s->tmpl, t, strlen(t) + 1);
	for (p = s->tmpl; *p != '\0'; p = close + 1) {
		if ((open = strchr(p, '{')) == NULL)
			open = p + strlen(p);
		close = open[0] == '\0' ? NULL : strchr(open, '}');
		if (memchr(p, '}', (size_t)(open - p)) != NULL ||
		    (open[0] != '\0' && (close == NULL ||
		    memchr(open + 1, '{', (size_t)(close - open - 1)) !=
		    NULL))) {
			text_say(why, whylen, "signature.signed: a '{' or '}' that"
			    " is not around a placeholder");
			return -1;
		}
		if (open > p && add_piece(s, P_LIT, (size_t)(p - s->tmpl),
		    (size_t)(open - p), why, whylen) != 0)
			return -1;
		if (close == NULL)
			break;
		len = (size_t)(close - open - 1);
		if (len > strlen(HEADER_HOLDER) &&
		    strncmp(open + 1, HEADER_HOLDER, strlen(HEADER_HOLDER)) ==
		    0) {
			if (add_header_piece(s, open + 1 +
			    strlen(HEADER_HOLDER), len - strlen(HEADER_HOLDER),
			    why, whylen) != 0)
				return -1;
			continue;
		}
		for (i = 0; i < NELEM(holders); i++)
			if (strlen(holders[i].name) == len &&
			    memcmp(holders[i].name, open + 1, len) == 0)
				break;
		if (i == NELEM(holders)) {
			text_say(why, whylen, "signature.signed: {%.*s} is none of"
			    " {body}, {form}, {timestamp}, {url}, {secret},"
			    " {header:NAME}", (int)(len > 32 ? 32 : len),
			    open + 1);
			return -1;
		}
		if (holders[i].kind == P_BODY || holders[i].kind == P_FORM)
			nbody++;
		if (add_piece(s, holders[i].kind, 0, 0, why, whylen) != 0)
			return -1;
	}
	if (nbody != 1) {
		text_say(why, whylen, "signature.signed: {body} or {form} once, or"
		    " the body would not be what is signed");
		return -1;
	}
	return 0;
}

static int
has_piece(const struct scheme *s, enum pkind kind)
{
	size_t	i;

	for (i = 0; i < s->npieces; i++)
		if (s->pieces[i].kind == kind)
			return 1;
	return 0;
}

/* The members that depend on one another, once each is read. */
static int
check_whole(struct scheme *s, char *why, size_t whylen)
{
	size_t	i, n = 0;

	if (has_piece(s, P_TIMESTAMP) && s->ts == T_NONE) {
		text_say(why, whylen, "signature.signed: {timestamp} without"
		    " signature.timestamp");
		return -1;
	}
	if (has_piece(s, P_SECRET) != (!algs[s->alg].hmac &&
	    s->alg != A_ED25519)) {
		text_say(why, whylen, "signature.signed: {secret} is for a plain"
		    " digest (sha1, sha256) and required by one; an HMAC"
		    " or ed25519 takes the secret as its key");
		return -1;
	}
	if (has_piece(s, P_URL) != (s->url[0] != '\0')) {
		text_say(why, whylen, "signature.url: %s", s->url[0] == '\0' ?
		    "missing: the URL the provider calls, which {url} signs" :
		    "given, but signature.signed has no {url}");
		return -1;
	}
	for (i = 0; i < s->nhdrs; i++)
		s->signs[n++] = s->hdrs[i];
	if (s->ts == T_HEADER && has_piece(s, P_TIMESTAMP))
		s->signs[n++] = s->ts_name;
	s->signs[n] = NULL;
	return 0;
}

static int
parse_members(struct scheme *s, const cJSON *v, char *why, size_t whylen)
{
	static const char *const keys[] = { "text", "base64" };
	const char	*str;
	const cJSON	*c;
	int		 i;

	if (!only_members(v, "signature", members, NELEM(members), why,
	    whylen))
		return -1;
	if (string_member(v, "signature", "header", 1, &str, why,
	    whylen) != 0 ||
	    header_member(str, "signature.header", s->header, why,
	    whylen) != 0)
		return -1;
	if ((c = cJSON_GetObjectItemCaseSensitive(v, "parts")) != NULL &&
	    parse_parts(s, c, why, whylen) != 0)
		return -1;
	if (string_member(v, "signature", "prefix", 0, &str, why,
	    whylen) != 0)
		return -1;
	if (str != NULL) {
		if (!printable(str, SCHEME_PREFIX_MAX, " ")) {
			text_say(why, whylen, "signature.prefix: not 1 to %d bytes"
			    " of printable ASCII without a space",
			    SCHEME_PREFIX_MAX);
			return -1;
		}
		memcpy(s->prefix, str, strlen(str) + 1);
	}
	if ((c = cJSON_GetObjectItemCaseSensitive(v, "timestamp")) != NULL &&
	    parse_timestamp(s, c, why, whylen) != 0)
		return -1;
	if (string_member(v, "signature", "signed", 1, &str, why,
	    whylen) != 0 || parse_signed(s, str, why, whylen) != 0)
		return -1;

	if (string_member(v, "signature", "algorithm", 1, &str, why,
	    whylen) != 0)
		return -1;
	for (i = 0; i < A__N && strcmp(str, algs[i].name) != 0; i++)
		;
	if (i == A__N) {
		text_say(why, whylen, "signature.algorithm: not one of hmac-sha1,"
		    " hmac-sha256, hmac-sha512, sha1, sha256, ed25519");
		return -1;
	}
	s->alg = (enum alg)i;
	if (string_member(v, "signature", "encoding", 1, &str, why,
	    whylen) != 0)
		return -1;
	if ((i = one_of(str, encs, E__N)) < 0) {
		text_say(why, whylen, "signature.encoding: not one of hex, base64,"
		    " base64url");
		return -1;
	}
	s->enc = (enum enc)i;
	if (string_member(v, "signature", "key", 0, &str, why, whylen) != 0)
		return -1;
	if (str != NULL && (i = one_of(str, keys, NELEM(keys))) < 0) {
		text_say(why, whylen, "signature.key: not text or base64");
		return -1;
	}
	s->key_base64 = str != NULL && i == 1;
	if (s->alg == A_ED25519 && !s->key_base64) {
		text_say(why, whylen, "signature.key: base64 for ed25519 (the"
		    " sender's public key)");
		return -1;
	}
	if (string_member(v, "signature", "key_prefix", 0, &str, why,
	    whylen) != 0)
		return -1;
	if (str != NULL) {
		if (!s->key_base64 || !printable(str, SCHEME_PREFIX_MAX,
		    " ")) {
			text_say(why, whylen, "signature.key_prefix: 1 to %d bytes"
			    " of printable ASCII, for a base64 key",
			    SCHEME_PREFIX_MAX);
			return -1;
		}
		memcpy(s->key_prefix, str, strlen(str) + 1);
	}
	if (string_member(v, "signature", "url", 0, &str, why, whylen) != 0)
		return -1;
	if (str != NULL) {
		if (!text_valid_line(str, HB_TEXT_MAX) || str[0] == '\0' ||
		    strchr(str, '?') != NULL || strchr(str, '#') != NULL ||
		    (strncmp(str, "https://", 8) != 0 &&
		    strncmp(str, "http://", 7) != 0)) {
			text_say(why, whylen, "signature.url: not an http or https"
			    " URL without a query or fragment (the request's"
			    " query is added to it)");
			return -1;
		}
		memcpy(s->url, str, strlen(str) + 1);
	}
	return check_whole(s, why, whylen);
}

struct scheme *
scheme_parse(const cJSON *v, char *why, size_t whylen, int *nomem)
{
	struct scheme	*s;

	*nomem = 0;
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (!cJSON_IsObject(v)) {
		text_say(why, whylen, "signature: not an object");
		return NULL;
	}
	if (fault_fire(FAULT_ALLOC) || (s = calloc(1, sizeof(*s))) == NULL) {
		text_say(why, whylen, "out of memory");
		*nomem = 1;
		return NULL;
	}
	if (parse_members(s, v, why, whylen) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void
scheme_free(struct scheme *s)
{
	free(s);
}

const char *const *
scheme_signed_headers(const struct scheme *s)
{
	return s->signs;
}

const char *
scheme_algorithm(const struct scheme *s)
{
	return algs[s->alg].name;
}

int
scheme_weak(const struct scheme *s)
{
	return algs[s->alg].weak;
}

int
scheme_timed(const struct scheme *s)
{
	return s->ts != T_NONE;
}

/*
 * The key a configured secret stands for, into *key (keylen bytes): the
 * secret itself for a text key; for a base64 one, decoded into buf
 * (KEY_MAX bytes, the caller wipes keylen of them), after key_prefix,
 * or when sign is set after any prefix of the form "xxxx_" (a private
 * key's).  -1 when it does not decode or is empty.
 */
static int key_of(const struct scheme *, const unsigned char *, size_t, int,
    unsigned char *, const unsigned char **, size_t *);

const char *
scheme_check_secret(const struct scheme *s, const unsigned char *secret,
    size_t len)
{
	unsigned char		 buf[KEY_MAX];
	const unsigned char	*key;
	size_t			 keylen = 0;
	int			 rc;

	rc = key_of(s, secret, len, 0, buf, &key, &keylen);
	sodium_memzero(buf, sizeof(buf));
	if (s->alg == A_ED25519)
		return rc == 0 && keylen == crypto_sign_PUBLICKEYBYTES ? NULL :
		    "expected the sender's Ed25519 public key, base64 of 32"
		    " bytes (after the scheme's key_prefix)";
	if (rc != 0)
		return "expected base64 (after the scheme's key_prefix)";
	return keylen >= SCHEME_KEY_MIN ? NULL :
	    "expected a key of at least 16 bytes";
}

/*
 * The canonical text
 */

static void
put_member(struct json_out *o, const char *name, const char *value)
{
	json_out_raw(o, ",\"");
	json_out_raw(o, name);
	json_out_raw(o, "\":");
	json_out_str(o, value);
}

char *
scheme_text(const struct scheme *s)
{
	struct json_out	o;
	char		one[2][2] = { { s->sep, '\0' }, { s->assign, '\0' } };

	/* Each member's text at 6 bytes a byte, names and marks besides. */
	o.len = 6 * (sizeof(s->header) + sizeof(s->tmpl) + sizeof(s->url) +
	    sizeof(s->ts_name) + sizeof(s->sig_part) + 2 * sizeof(s->prefix)) +
	    512;
	if (fault_fire(FAULT_ALLOC) || (o.buf = malloc(o.len)) == NULL)
		return NULL;
	o.off = 0;
	o.ok = 1;
	o.buf[0] = '\0';
	json_out_raw(&o, "{\"header\":");
	json_out_str(&o, s->header);
	if (s->parts) {
		json_out_raw(&o, ",\"parts\":{\"separator\":");
		json_out_str(&o, one[0]);
		json_out_raw(&o, ",\"assign\":");
		json_out_str(&o, one[1]);
		json_out_raw(&o, ",\"signature\":");
		json_out_str(&o, s->sig_part);
		json_out_raw(&o, "}");
	}
	if (s->prefix[0] != '\0')
		put_member(&o, "prefix", s->prefix);
	if (s->ts != T_NONE) {
		json_out_raw(&o, ",\"timestamp\":{");
		json_out_raw(&o, s->ts == T_PART ? "\"part\":" : "\"header\":");
		json_out_str(&o, s->ts_name);
		json_out_raw(&o, s->ts_ms ? ",\"unit\":\"ms\"}" :
		    ",\"unit\":\"s\"}");
	}
	put_member(&o, "signed", s->tmpl);
	put_member(&o, "algorithm", algs[s->alg].name);
	put_member(&o, "encoding", encs[s->enc]);
	put_member(&o, "key", s->key_base64 ? "base64" : "text");
	if (s->key_prefix[0] != '\0')
		put_member(&o, "key_prefix", s->key_prefix);
	if (s->url[0] != '\0')
		put_member(&o, "url", s->url);
	json_out_raw(&o, "}");
	if (!o.ok) {
		free(o.buf);
		return NULL;
	}
	return o.buf;
}

/*
 * Requests
 */

static int
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * A header's value, bounded: AUTH_MISSING when absent or empty,
 * AUTH_MALFORMED when longer than AUTH_HEADER_MAX or holding a control
 * byte.
 */
static enum auth_status
header_value(const struct scheme_req *req, const char *name,
    const char **v, size_t *len)
{
	size_t	n;

	*v = req->header(req->arg, name);
	if (*v == NULL || **v == '\0')
		return AUTH_MISSING;
	for (n = 0; n <= AUTH_HEADER_MAX && (*v)[n] != '\0'; n++)
		;
	if (n > AUTH_HEADER_MAX || text_has_ctl(*v, n))
		return AUTH_MALFORMED;
	*len = n;
	return AUTH_OK;
}

/* Bytes of the scheme's signature. */
static size_t
sig_len(const struct scheme *s)
{
	return s->alg == A_ED25519 ? crypto_sign_BYTES :
	    digest_len(algs[s->alg].digest);
}

/* Signatures presented, decoded; the time as presented. */
struct presented {
	unsigned char	sig[SCHEME_SIGS_MAX][SIG_LEN_MAX];
	int		ok[SCHEME_SIGS_MAX];	/* decoded to sig_len() */
	size_t		n;
	const char	*ts;
	size_t		tslen;
};

/* Decodes text (len bytes) in the scheme's encoding to exactly want bytes. */
static int
decode(enum enc enc, const char *text, size_t len, unsigned char *out,
    size_t want)
{
	size_t	got = 0;

	if (enc == E_HEX)
		return sodium_hex2bin(out, want, text, len, NULL, &got,
		    NULL) == 0 && got == want;
	if (enc == E_BASE64URL) {
		while (len > 0 && text[len - 1] == '=')
			len--;
		return sodium_base642bin(out, want, text, len, NULL, &got,
		    NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING) == 0 &&
		    got == want;
	}
	return sodium_base642bin(out, want, text, len, NULL, &got, NULL,
	    sodium_base64_VARIANT_ORIGINAL) == 0 && got == want;
}

/* One signature value (len bytes at v): its prefix checked, decoded. */
static enum auth_status
add_sig(const struct scheme *s, struct presented *p, const char *v,
    size_t len)
{
	size_t	plen = strlen(s->prefix);

	if (len < plen || memcmp(v, s->prefix, plen) != 0)
		return AUTH_OK;		/* not of this scheme: ignored */
	if (p->n == SCHEME_SIGS_MAX)
		return AUTH_MALFORMED;
	p->ok[p->n] = decode(s->enc, v + plen, len - plen, p->sig[p->n],
	    sig_len(s));
	p->n++;
	return AUTH_OK;
}

/*
 * The signature header's list: elements between separators, white space
 * around each dropped, those without the assignment or of other names
 * ignored, the timestamp's part exactly once.
 */
static enum auth_status
split_parts(const struct scheme *s, struct presented *p, const char *h,
    size_t len)
{
	const char		*e, *end = h + len, *eq, *next;
	enum auth_status	 rc;
	size_t			 nlen;

	for (; h <= end; h = next + 1) {
		if ((e = memchr(h, s->sep, (size_t)(end - h))) == NULL)
			e = end;
		next = e;
		while (h < e && is_ows(*h))
			h++;
		while (e > h && is_ows(e[-1]))
			e--;
		if ((eq = memchr(h, s->assign, (size_t)(e - h))) != NULL) {
			nlen = (size_t)(eq - h);
			if (nlen == strlen(s->sig_part) &&
			    memcmp(h, s->sig_part, nlen) == 0) {
				if ((rc = add_sig(s, p, eq + 1,
				    (size_t)(e - eq - 1))) != AUTH_OK)
					return rc;
			} else if (s->ts == T_PART &&
			    nlen == strlen(s->ts_name) &&
			    memcmp(h, s->ts_name, nlen) == 0) {
				if (p->ts != NULL)
					return AUTH_MALFORMED;
				p->ts = eq + 1;
				p->tslen = (size_t)(e - eq - 1);
			}
		}
		if (next == end)
			break;
	}
	return AUTH_OK;
}

/* The request's signatures and time, as presented. */
static enum auth_status
presented(const struct scheme *s, const struct scheme_req *req,
    struct presented *p)
{
	const char		*h;
	size_t			 len;
	enum auth_status	 rc;

	if ((rc = header_value(req, s->header, &h, &len)) != AUTH_OK)
		return rc;
	if (s->parts)
		rc = split_parts(s, p, h, len);
	else {
		while (len > 0 && is_ows(*h)) {
			h++;
			len--;
		}
		while (len > 0 && is_ows(h[len - 1]))
			len--;
		rc = add_sig(s, p, h, len);
	}
	if (rc != AUTH_OK)
		return rc;
	if (s->ts == T_HEADER &&
	    (rc = header_value(req, s->ts_name, &p->ts, &p->tslen)) !=
	    AUTH_OK)
		return rc;
	if (p->n == 0 || (s->ts != T_NONE && p->ts == NULL))
		return AUTH_MALFORMED;
	return AUTH_OK;
}

/*
 * The time (len bytes at t) read and checked: AUTH_MALFORMED when it is
 * not a decimal integer, AUTH_TIMESTAMP when it is further than
 * tolerance seconds from now.
 */
static enum auth_status
timely(const struct scheme *s, const char *t, size_t len, int64_t now_ms,
    int64_t tolerance)
{
	int64_t		v;
	uint64_t	diff;

	if (text_decimal(t, len, &v) != 0)
		return AUTH_MALFORMED;
	if (!s->ts_ms) {
		if (v > INT64_MAX / 1000)
			return AUTH_TIMESTAMP;
		v *= 1000;
	}
	diff = v >= now_ms ? (uint64_t)v - (uint64_t)now_ms :
	    (uint64_t)now_ms - (uint64_t)v;
	return diff / 1000 < (uint64_t)tolerance ||
	    (diff / 1000 == (uint64_t)tolerance && diff % 1000 == 0) ?
	    AUTH_OK : AUTH_TIMESTAMP;
}

/*
 * The signed text as parts, the key (len bytes) standing for {secret};
 * form (message_free()) what {form} stands for.
 */
struct message {
	const unsigned char	*part[SCHEME_PIECES_MAX];
	size_t			 len[SCHEME_PIECES_MAX];
	size_t			 n;
	size_t			 secret[SCHEME_PIECES_MAX];	/* indexes */
	size_t			 nsecret;
	char			 url[HB_TEXT_MAX * 2 + 2];
	char			*form;
};

static void
message_free(struct message *m)
{
	free(m->form);
	m->form = NULL;
}

static int
by_name(const void *a, const void *b)
{
	const struct form_field	*x = a, *y = b;

	return strcmp(x->name, y->name);
}

/*
 * {form}: the body read as a form (provider/form.h), each field's name
 * then its value, decoded, the fields in the bytewise order of their
 * names (Twilio's), into *out (len bytes, allocated).  AUTH_MALFORMED
 * when the body is no form, AUTH_ERROR when out of memory.
 */
static enum auth_status
sorted_form(const struct scheme_req *req, char **out, size_t *len)
{
	struct form	f;
	enum form_err	fe;
	size_t		i, n = 0, l;
	char		why[8];

	*out = NULL;
	*len = 0;
	if ((fe = form_parse((const char *)req->body, req->bodylen, &f, why,
	    sizeof(why))) != FORM_OK)
		return fe == FORM_NOMEM ? AUTH_ERROR : AUTH_MALFORMED;
	qsort(f.f, f.n, sizeof(*f.f), by_name);
	/* Decoded, a form is never longer than the body. */
	if (fault_fire(FAULT_ALLOC) || (*out = malloc(req->bodylen + 1)) ==
	    NULL) {
		form_free(&f);
		return AUTH_ERROR;
	}
	for (i = 0; i < f.n; i++) {
		l = strlen(f.f[i].name);
		memcpy(*out + n, f.f[i].name, l);
		n += l;
		l = strlen(f.f[i].value);
		memcpy(*out + n, f.f[i].value, l);
		n += l;
	}
	form_free(&f);
	*len = n;
	return AUTH_OK;
}

static enum auth_status
message(const struct scheme *s, const struct scheme_req *req,
    const char *ts, size_t tslen, struct message *m)
{
	const struct piece	*pc;
	const char		*v = NULL;
	size_t			 i, len = 0, ulen;
	enum auth_status	 rc;

	m->n = m->nsecret = 0;
	m->form = NULL;
	for (i = 0; i < s->npieces; i++) {
		pc = &s->pieces[i];
		switch (pc->kind) {
		case P_LIT:
			v = s->tmpl + pc->off;
			len = pc->len;
			break;
		case P_BODY:
			v = (const char *)req->body;
			len = req->bodylen;
			break;
		case P_TIMESTAMP:
			v = ts;
			len = tslen;
			break;
		case P_URL:
			ulen = strlen(s->url);
			memcpy(m->url, s->url, ulen);
			if (req->query != NULL && req->query[0] != '\0') {
				len = strnlen(req->query, HB_TEXT_MAX + 1);
				if (len > HB_TEXT_MAX)
					return AUTH_MALFORMED;
				m->url[ulen++] = '?';
				memcpy(m->url + ulen, req->query, len);
				ulen += len;
			}
			v = m->url;
			len = ulen;
			break;
		case P_HEADER:
			if ((rc = header_value(req, s->hdrs[pc->off], &v,
			    &len)) != AUTH_OK)
				return rc;
			break;
		case P_SECRET:
			m->secret[m->nsecret++] = m->n;
			v = NULL;
			len = 0;
			break;
		case P_FORM:
			if ((rc = sorted_form(req, &m->form, &len)) != AUTH_OK)
				return rc;
			v = m->form;
			break;
		}
		m->part[m->n] = (const unsigned char *)v;
		m->len[m->n] = len;
		m->n++;
	}
	return AUTH_OK;
}

static int
key_of(const struct scheme *s, const unsigned char *secret, size_t len,
    int sign, unsigned char *buf, const unsigned char **key, size_t *keylen)
{
	const char	*b64 = (const char *)secret;
	const char	*us;
	size_t		 plen = strlen(s->key_prefix);

	*keylen = 0;
	*key = buf;
	if (secret == NULL || len == 0)
		return -1;
	if (!s->key_base64) {
		*key = secret;
		*keylen = len;
		return 0;
	}
	if (plen > 0 && len >= plen && memcmp(b64, s->key_prefix, plen) == 0) {
		b64 += plen;
		len -= plen;
	} else if (sign && (us = memchr(b64, '_', len < 8 ? len : 8)) !=
	    NULL) {
		len -= (size_t)(us + 1 - b64);
		b64 = us + 1;
	}
	if (sodium_base642bin(buf, KEY_MAX, b64, len, NULL, keylen, NULL,
	    sodium_base64_VARIANT_ORIGINAL) != 0 || *keylen == 0) {
		sodium_memzero(buf, KEY_MAX);
		*keylen = 0;
		return -1;
	}
	return 0;
}

/* The message in one piece, for Ed25519 (allocated; free()). */
static unsigned char *
flatten(const struct message *m, size_t *len)
{
	unsigned char	*buf;
	size_t		 i, off = 0;

	for (*len = 0, i = 0; i < m->n; i++)
		*len += m->len[i];
	if (fault_fire(FAULT_ALLOC) || (buf = malloc(*len + 1)) == NULL)
		return NULL;
	for (i = 0; i < m->n; i++) {
		if (m->len[i] != 0)
			memcpy(buf + off, m->part[i], m->len[i]);
		off += m->len[i];
	}
	return buf;
}

/* The scheme's MAC or digest of m with key into out (sig_len()). */
static int
mac(const struct scheme *s, struct message *m, const unsigned char *key,
    size_t keylen, unsigned char *out)
{
	size_t	i;

	for (i = 0; i < m->nsecret; i++) {
		m->part[m->secret[i]] = key;
		m->len[m->secret[i]] = keylen;
	}
	if (algs[s->alg].hmac)
		return digest_hmac(algs[s->alg].digest, key, keylen, m->part,
		    m->len, m->n, out);
	return digest_hash(algs[s->alg].digest, m->part, m->len, m->n, out);
}

/* Usable at now: unexpired, non-empty. */
static int
active(const struct auth_secret *a, int64_t now_ms)
{
	return a->keylen != 0 && a->key != NULL &&
	    (a->expires_at == 0 || a->expires_at > now_ms / 1000);
}

enum auth_status
scheme_verify(const struct scheme *s, const struct scheme_req *req,
    const struct auth_secret *secrets, size_t nsecrets, int64_t tolerance,
    size_t *matched)
{
	struct presented	 p;
	struct message		 m;
	unsigned char		 buf[KEY_MAX], d[SIG_LEN_MAX];
	const unsigned char	*key;
	unsigned char		*flat = NULL;
	size_t			 i, j, keylen = 0, flatlen = 0, nactive = 0;
	size_t			 len, first = 0;
	int			 match = 0, mi;
	enum auth_status	 rc;

	/* What was presented is the request's: only our own is wiped. */
	p.n = 0;
	p.ts = NULL;
	p.tslen = 0;
	m.form = NULL;
	if (s == NULL || req == NULL || req->header == NULL ||
	    (req->body == NULL && req->bodylen != 0) || tolerance < 0 ||
	    (secrets == NULL && nsecrets != 0)) {
		rc = AUTH_ERROR;
		goto out;
	}
	len = sig_len(s);
	if ((rc = presented(s, req, &p)) != AUTH_OK)
		goto out;
	if (s->ts != T_NONE && (rc = timely(s, p.ts, p.tslen, req->now_ms,
	    tolerance)) != AUTH_OK)
		goto out;
	if ((rc = message(s, req, p.ts, p.tslen, &m)) != AUTH_OK)
		goto out;
	if (s->alg == A_ED25519 && (flat = flatten(&m, &flatlen)) == NULL) {
		rc = AUTH_ERROR;
		goto out;
	}
	for (i = 0; i < nsecrets; i++) {
		if (!active(&secrets[i], req->now_ms) ||
		    key_of(s, secrets[i].key, secrets[i].keylen, 0, buf, &key,
		    &keylen) != 0)
			continue;
		mi = 0;
		if (s->alg == A_ED25519) {
			if (keylen != crypto_sign_PUBLICKEYBYTES)
				continue;
			nactive++;
			for (j = 0; j < p.n; j++)
				mi |= p.ok[j] &
				    (crypto_sign_verify_detached(p.sig[j],
				    flat, flatlen, key) == 0);
		} else {
			nactive++;
			if (mac(s, &m, key, keylen, d) != 0) {
				rc = AUTH_ERROR;
				goto out;
			}
			for (j = 0; j < p.n; j++)
				mi |= p.ok[j] & (sodium_memcmp(p.sig[j], d,
				    len) == 0);
		}
		if (s->key_base64)
			sodium_memzero(buf, keylen);
		if (mi && !match)
			first = i;
		match |= mi;
	}
	rc = auth_verdict(nactive, match, first, matched);
out:
	sodium_memzero(d, sizeof(d));
	message_free(&m);
	free(flat);
	return rc;
}

/* sig (len bytes) in the scheme's encoding into out (outlen bytes). */
static int
encode(enum enc enc, const unsigned char *sig, size_t len, char *out,
    size_t outlen)
{
	if (enc == E_HEX) {
		if (outlen < 2 * len + 1)
			return -1;
		sodium_bin2hex(out, outlen, sig, len);
		return 0;
	}
	if (outlen < sodium_base64_ENCODED_LEN(len,
	    sodium_base64_VARIANT_ORIGINAL))
		return -1;
	sodium_bin2base64(out, outlen, sig, len, enc == E_BASE64 ?
	    sodium_base64_VARIANT_ORIGINAL :
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return 0;
}

int
scheme_make_secret(const struct scheme *s, char *secret, size_t secretlen,
    char *signer, size_t signerlen)
{
	unsigned char	rnd[24], pk[crypto_sign_PUBLICKEYBYTES];
	unsigned char	sk[crypto_sign_SECRETKEYBYTES];
	size_t		plen = strlen(s->key_prefix);
	int		rc = -1;

	if (secretlen < SCHEME_SECRET_LEN || signerlen < SCHEME_SECRET_LEN)
		return -1;
	memcpy(secret, s->key_prefix, plen + 1);
	if (s->alg == A_ED25519) {
		(void)crypto_sign_keypair(pk, sk);
		sodium_bin2base64(secret + plen, secretlen - plen, pk,
		    sizeof(pk), sodium_base64_VARIANT_ORIGINAL);
		memcpy(signer, "whsk_", 5);
		sodium_bin2base64(signer + 5, signerlen - 5, sk, sizeof(sk),
		    sodium_base64_VARIANT_ORIGINAL);
		rc = 0;
		goto out;
	}
	randombytes_buf(rnd, sizeof(rnd));
	if (s->key_base64)
		sodium_bin2base64(secret + plen, secretlen - plen, rnd,
		    sizeof(rnd), sodium_base64_VARIANT_ORIGINAL);
	else
		sodium_bin2hex(secret, secretlen, rnd, sizeof(rnd));
	memcpy(signer, secret, strlen(secret) + 1);
	rc = 0;
out:
	sodium_memzero(rnd, sizeof(rnd));
	sodium_memzero(sk, sizeof(sk));
	return rc;
}

/* A request's headers, and those scheme_sign() made up for it. */
struct made {
	const struct scheme		*s;
	const struct scheme_req		*req;
	const char			*ts;	/* the time being signed */
	const struct scheme_header	*out;
	size_t				 n;
};

static const char *
made_header(const void *arg, const char *name)
{
	const struct made	*md = arg;
	const char		*v;
	size_t			 i;

	if (md->s->ts == T_HEADER && text_eqi(md->s->ts_name, name))
		return md->ts;
	if ((v = md->req->header(md->req->arg, name)) != NULL)
		return v;
	for (i = 0; i < md->n; i++)
		if (text_eqi(md->out[i].name, name))
			return md->out[i].value;
	return NULL;
}

/*
 * Each header the scheme signs that the request lacks, made up into
 * out[*nout...]; -1 when out is full.
 */
static int
make_up(const struct scheme *s, const struct scheme_req *req,
    struct scheme_header *out, size_t *nout)
{
	unsigned char	rnd[12];
	size_t		i;

	for (i = 0; i < s->nhdrs; i++) {
		if (req->header(req->arg, s->hdrs[i]) != NULL ||
		    (s->ts == T_HEADER && strcmp(s->hdrs[i], s->ts_name) == 0))
			continue;
		if (*nout == SCHEME_OUT_MAX)
			return -1;
		memcpy(out[*nout].name, s->hdrs[i], strlen(s->hdrs[i]) + 1);
		memcpy(out[*nout].value, "msg_", 4);
		randombytes_buf(rnd, sizeof(rnd));
		sodium_bin2hex(out[*nout].value + 4,
		    sizeof(out[*nout].value) - 4, rnd, sizeof(rnd));
		(*nout)++;
	}
	return 0;
}

int
scheme_sign(const struct scheme *s, const struct scheme_req *req,
    const unsigned char *secret, size_t secretlen,
    struct scheme_header out[SCHEME_OUT_MAX], size_t *nout)
{
	struct scheme_header	 made[SCHEME_OUT_MAX];
	struct made		 md;
	struct scheme_req	 mr;
	struct message		 m;
	unsigned char		 buf[KEY_MAX], d[SIG_LEN_MAX];
	unsigned char		 sk[crypto_sign_SECRETKEYBYTES];
	unsigned char		 pk[crypto_sign_PUBLICKEYBYTES];
	const unsigned char	*key;
	unsigned char		*flat = NULL;
	char			 ts[TS_TEXT_MAX], enc[2 * SIG_LEN_MAX + 4];
	size_t			 i, keylen, flatlen, tslen = 0;
	int			 n, rc = -1;

	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(sk, sizeof(sk));
	sodium_memzero(d, sizeof(d));
	m.form = NULL;
	*nout = 0;
	ts[0] = '\0';
	if (s == NULL || req == NULL || req->header == NULL ||
	    (req->body == NULL && req->bodylen != 0) || req->now_ms < 0)
		goto out;
	if (s->ts != T_NONE) {
		n = snprintf(ts, sizeof(ts), "%" PRId64, s->ts_ms ?
		    req->now_ms : req->now_ms / 1000);
		if (n < 0 || (size_t)n >= sizeof(ts))
			goto out;
		tslen = (size_t)n;
	}
	md.s = s;
	md.req = req;
	md.ts = ts;
	md.out = made;
	md.n = 0;
	if (make_up(s, req, made, &md.n) != 0)
		goto out;
	mr = *req;
	mr.header = made_header;
	mr.arg = &md;
	if (message(s, &mr, ts, tslen, &m) != AUTH_OK ||
	    key_of(s, secret, secretlen, 1, buf, &key, &keylen) != 0)
		goto out;
	if (s->alg == A_ED25519) {
		if (keylen == crypto_sign_SEEDBYTES)
			(void)crypto_sign_seed_keypair(pk, sk, key);
		else if (keylen == crypto_sign_SECRETKEYBYTES)
			memcpy(sk, key, keylen);
		else
			goto out;
		if ((flat = flatten(&m, &flatlen)) == NULL ||
		    crypto_sign_detached(d, NULL, flat, flatlen, sk) != 0)
			goto out;
	} else if (mac(s, &m, key, keylen, d) != 0)
		goto out;
	if (encode(s->enc, d, sig_len(s), enc, sizeof(enc)) != 0)
		goto out;

	memcpy(out[0].name, s->header, strlen(s->header) + 1);
	if (!s->parts)
		n = snprintf(out[0].value, sizeof(out[0].value), "%s%s",
		    s->prefix, enc);
	else if (s->ts == T_PART)
		n = snprintf(out[0].value, sizeof(out[0].value),
		    "%s%c%s%c%s%c%s%s", s->ts_name, s->assign, ts, s->sep,
		    s->sig_part, s->assign, s->prefix, enc);
	else
		n = snprintf(out[0].value, sizeof(out[0].value), "%s%c%s%s",
		    s->sig_part, s->assign, s->prefix, enc);
	if (n < 0 || (size_t)n >= sizeof(out[0].value))
		goto out;
	*nout = 1;
	if (s->ts == T_HEADER) {
		memcpy(out[1].name, s->ts_name, strlen(s->ts_name) + 1);
		memcpy(out[1].value, ts, tslen + 1);
		*nout = 2;
	}
	for (i = 0; i < md.n; i++) {
		if (*nout == SCHEME_OUT_MAX)
			goto out;
		out[(*nout)++] = made[i];
	}
	rc = 0;
out:
	if (rc != 0)
		*nout = 0;
	message_free(&m);
	free(flat);
	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(sk, sizeof(sk));
	sodium_memzero(d, sizeof(d));
	sodium_memzero(enc, sizeof(enc));
	return rc;
}
