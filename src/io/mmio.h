/* mmio.h -- Matrix Market reader/writer (coordinate real/integer/pattern, symmetric/general;
 * plain .mtx or gzip-compressed .mtx.gz, read through zlib). */
#ifndef ILDL_IO_MMIO_H
#define ILDL_IO_MMIO_H
#include <stddef.h>
#include "core/csr.h"

/* Read a square symmetric matrix into A (full symmetric pattern, sorted, duplicates
 * summed). Symmetric files may store either triangle or a mix (an entry given as both (i,j)
 * and (j,i) counts as a duplicate and is summed, as the format says); a general
 * file must be symmetric in pattern and values (relative tolerance 1e-12). Pattern files get
 * value 1. Rows may be empty, but a size line whose entry count cannot give every row an entry
 * (fewer than n entries, or than n/2 in a symmetric file) is refused before anything of size
 * n is allocated, so memory is bounded by the file's contents. Returns ILDL_SUCCESS,
 * ILDL_ERR_IO (cannot open/read), ILDL_ERR_FORMAT (bad header, bad line, wrong entry count,
 * unsupported field/kind such as complex or array), ILDL_ERR_NOT_SQUARE, ILDL_ERR_INDEX_RANGE,
 * ILDL_ERR_NAN_INF (a value, or a sum of duplicates, not finite), ILDL_ERR_NOT_SYMMETRIC,
 * ILDL_ERR_SINGULAR (too few entries for n rows), ILDL_ERR_EMPTY (n == 0),
 * ILDL_ERR_OUT_OF_MEMORY; on failure msg names the file line. */
int ildl_mm_read(const char *path, ildl_csr *A, char *msg, size_t msglen);

/* Read a dense vector: Matrix Market "array real general" or "coordinate real general" n x 1
 * (or 1 x n; coordinate entries summed), or one number per line. want_n > 0: the length the
 * caller needs; a header declaring another length is refused before anything of that size is
 * allocated, as is a headerless file with more or fewer values (ILDL_ERR_SIZE_MISMATCH).
 * want_n = 0: any length (a coordinate file then allocates the length it declares). *x is
 * malloc'ed; *n receives its length. Returns ILDL_SUCCESS, ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_IO,
 * ILDL_ERR_FORMAT, ILDL_ERR_INDEX_RANGE, ILDL_ERR_NAN_INF, ILDL_ERR_EMPTY,
 * ILDL_ERR_SIZE_MISMATCH, ILDL_ERR_OUT_OF_MEMORY; on failure msg names the file line. */
int ildl_mm_read_vector(const char *path, int32_t want_n, double **x, int32_t *n, char *msg, size_t msglen);

/* Write A as "coordinate real symmetric" (lower triangle, 1-based, %.17g); a path ending in
 * .gz is gzip-compressed. Returns ILDL_SUCCESS or ILDL_ERR_IO. */
int ildl_mm_write(const char *path, const ildl_csr *A, char *msg, size_t msglen);

#endif
