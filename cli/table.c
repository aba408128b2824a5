/*
 * The tool's plain-text tables (see table.h).
 */
#include <stdlib.h>
#include <string.h>

#include "table.h"

struct table {
	struct table_col	 cols[TABLE_COLS_MAX];
	size_t			 ncols;
	char			**cells;	/* nrows * ncols, row-major */
	size_t			 nrows, cap;
};

/* The characters of s (UTF-8 lead bytes; a continuation byte adds none). */
static size_t
width(const char *s)
{
	size_t	n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* The byte length of s's first w characters. */
static size_t
prefix(const char *s, size_t w)
{
	size_t	i = 0, n = 0;

	while (s[i] != '\0') {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == w)
			break;
		i++;
	}
	return i;
}

struct table *
table_new(const struct table_col *cols, size_t n)
{
	struct table	*t;

	if (n == 0 || n > TABLE_COLS_MAX || (t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	memcpy(t->cols, cols, n * sizeof(*cols));
	t->ncols = n;
	return t;
}

int
table_add(struct table *t, const char *const *cells)
{
	char	**grown, *c;
	size_t	  i;

	if (t->nrows == t->cap) {
		t->cap = t->cap == 0 ? 16 : t->cap * 2;
		if ((grown = reallocarray(t->cells, t->cap * t->ncols,
		    sizeof(*grown))) == NULL)
			return -1;
		t->cells = grown;
	}
	for (i = 0; i < t->ncols; i++) {
		if ((c = strdup(cells[i] != NULL ? cells[i] : "")) == NULL) {
			while (i-- > 0)
				free(t->cells[t->nrows * t->ncols + i]);
			return -1;
		}
		t->cells[t->nrows * t->ncols + i] = c;
	}
	t->nrows++;
	return 0;
}

/* Prints one cell padded to w (with pad: not for the line's last cell). */
static void
cell(FILE *f, const char *s, const struct table_col *c, size_t w, int pad)
{
	size_t	sw = width(s), cut = sw;

	if (c->max > 0 && sw > c->max)
		cut = c->max - 1;	/* room for the ellipsis */
	if (c->align == TABLE_RIGHT)
		fprintf(f, "%*s", (int)(w - (cut < sw ? cut + 1 : sw)), "");
	fwrite(s, 1, prefix(s, cut), f);
	if (cut < sw)
		fputs("\xe2\x80\xa6", f);
	if (c->align == TABLE_LEFT && pad)
		fprintf(f, "%*s", (int)(w - (cut < sw ? cut + 1 : sw)), "");
}

void
table_print(const struct table *t, FILE *f)
{
	size_t	w[TABLE_COLS_MAX], i, r, last, sw;

	for (i = 0; i < t->ncols; i++) {
		w[i] = width(t->cols[i].head);
		for (r = 0; r < t->nrows; r++)
			if ((sw = width(t->cells[r * t->ncols + i])) > w[i])
				w[i] = sw;
		if (t->cols[i].max > 0 && w[i] > t->cols[i].max)
			w[i] = t->cols[i].max;
	}
	for (r = 0; r <= t->nrows; r++) {
		/* The last cell that has something: nothing pads after it. */
		for (last = t->ncols; last > 0; last--)
			if ((r == 0 ? t->cols[last - 1].head :
			    t->cells[(r - 1) * t->ncols + last - 1])[0] != '\0')
				break;
		for (i = 0; i < last; i++) {
			if (i > 0)
				fputs("  ", f);
			cell(f, r == 0 ? t->cols[i].head :
			    t->cells[(r - 1) * t->ncols + i], &t->cols[i], w[i],
			    i + 1 < last);
		}
		fputc('\n', f);
	}
}

void
table_free(struct table *t)
{
	size_t	i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}
