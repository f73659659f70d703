/* stats.h -- the `ildl stats` blocking study (see stats.c). */
#ifndef ILDL_TOOLS_STATS_H
#define ILDL_TOOLS_STATS_H
#include "core/csr.h"

/* Print the study table for levels of fill 0..maxlf; with prefix, write PREFIX-levels.svg and
 * PREFIX-pattern.svg. Returns an ILDL_* status. */
int ildl_stats_run(const ildl_csr *A, const char *name, int maxlf, int max_bs, double threshold,
                   const char *prefix);

#endif
