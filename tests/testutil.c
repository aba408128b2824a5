/*
 * testutil.c: helpers shared by the Check suites.
 */
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"

int
test_run(Suite *s)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

const char *
test_tmpdir(void)
{
	static char	 path[PATH_MAX];
	const char	*base;

	if ((base = getenv("TMPDIR")) == NULL)
		base = "/tmp";
	if (snprintf(path, sizeof(path), "%s/hbtest.XXXXXX", base) >=
	    (int)sizeof(path))
		ck_abort_msg("TMPDIR too long");
	if (mkdtemp(path) == NULL)
		ck_abort_msg("mkdtemp failed");
	return path;
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

void
test_rmdir(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
