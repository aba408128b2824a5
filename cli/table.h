/*
 * table.h: the tool's plain-text tables.  Cells are added row by row,
 * then printed with each column as wide as its widest cell (at most its
 * max width: a longer cell is cut and ends in "…"), columns two spaces
 * apart, numbers right-aligned, and no trailing spaces.  Widths count
 * UTF-8 characters, not bytes.
 *
 * A table owns copies of its cells: table_free() releases them.
 */
#ifndef HB_CLI_TABLE_H
#define HB_CLI_TABLE_H

#include <stdio.h>

#define TABLE_COLS_MAX	16

enum table_align { TABLE_LEFT = 0, TABLE_RIGHT };

struct table_col {
	const char		*head;	/* static storage */
	enum table_align	 align;
	size_t			 max;	/* widest a cell may print; 0: no limit */
};

struct table;

/* A table of n columns (at most TABLE_COLS_MAX) copied from cols; NULL when out of memory. */
struct table	*table_new(const struct table_col *cols, size_t n);
/* Appends a row of the table's n cells (NULL prints empty); -1 when out of memory. */
int		 table_add(struct table *, const char *const *cells);
/* Prints the header line and every row to f. */
void		 table_print(const struct table *, FILE *f);
void		 table_free(struct table *);

#endif /* HB_CLI_TABLE_H */
