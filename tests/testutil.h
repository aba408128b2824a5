/*
 * testutil.h: helpers shared by the Check suites.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <check.h>

/* Runs the suite (forking per test), prints Check's summary, returns the exit status. */
int test_run(Suite *);

/*
 * Makes a fresh empty directory under $TMPDIR (or /tmp) for one test and
 * returns its path in static storage, valid until the next call.
 */
const char *test_tmpdir(void);

/* Removes a directory made by test_tmpdir() and everything in it. */
void test_rmdir(const char *);

#endif
