/* query's own getopt table (nvidia-smi's syntax, parsed with getopt_long_only), for the
 * unit test that holds it to cmd_query_spec's option table. */
#pragma once

#include <getopt.h>

extern const struct option cmd_query_getopt[];
