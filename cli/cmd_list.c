/*
 * The list commands over config.db: `tenant list`, `endpoint list`,
 * `destination list`, `job list`.
 */
#include <string.h>

#include "config_admin.h"

#include "cli.h"

/* The config.db table a command's first word names. */
int
table_of(const char *name, enum config_table *t)
{
	static const char *const names[] = {
		[CONFIG_TENANTS] = "tenant",
		[CONFIG_ENDPOINTS] = "endpoint",
		[CONFIG_DESTINATIONS] = "destination",
		[CONFIG_JOBS] = "job",
	};
	size_t	i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0) {
			*t = (enum config_table)i;
			return 0;
		}
	return -1;
}

int
cmd_list(struct settings *e, int argc, char **argv)
{
	struct config		*cfg = NULL;
	cJSON			*arr = NULL;
	enum config_table	 t;
	int			 rc;

	(void)argv;
	if (argc != 1 || table_of(cli_cmd->name, &t) != 0)
		return usage();
	if ((rc = open_config(e, CONFIG_READ, &cfg)) != EXIT_OK)
		return rc;
	rc = config_done(config_list(cfg, t, &arr), cli_cmd->name, NULL);
	config_close(cfg);
	if (rc != EXIT_OK)
		return rc;
	return print_json(arr);
}
