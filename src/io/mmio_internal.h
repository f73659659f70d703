/* mmio_internal.h -- what the Matrix Market reader and writer files share (not part of
 * mmio.h): the line reader over zlib, tokens and numbers, the banner and size lines, and
 * coordinate entries read as triplets tagged with their file line (mmio_parse.c), used by the
 * matrix reader (mmio.c) and the vector reader (mmio_vector.c). Every function that fails
 * leaves a message naming the file line in the reader's msg. */
#ifndef ILDL_IO_MMIO_INTERNAL_H
#define ILDL_IO_MMIO_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>
#include "io/mmio.h"

typedef struct {
    gzFile f;
    char *buf;
    size_t cap;
    int64_t line; /* number of the line last returned (1-based) */
    char *msg;
    size_t msglen;
} mm_reader;

enum { MM_COORD, MM_ARRAY };
enum { MM_REAL, MM_INTEGER, MM_PATTERN };
enum { MM_GENERAL, MM_SYMMETRIC };

typedef struct {
    int format, field, symmetry;
} mm_header;

/* One coordinate entry (0-based) and the file line it came from. */
typedef struct {
    int32_t i, j;
    double v;
    int64_t line;
} mm_trip;

/* Open path (plain or gzip) for reading line by line. ILDL_ERR_OUT_OF_MEMORY leaves nothing
 * to free; ILDL_ERR_IO leaves r->buf allocated (the caller's cleanup frees it). */
int ildl_mm_open(const char *path, char *msg, size_t msglen, mm_reader *r);
/* Read the next raw line into r->buf without its line ending. Returns 1 (line), 0 (end of
 * file) or a negative ILDL status (message set). */
int ildl_mm_getline(mm_reader *r);
/* Next line that is not blank and not a comment: 1, 0 at end of file, or -status. */
int ildl_mm_getdata(mm_reader *r);
/* Split the next whitespace-delimited token off *p (NUL-terminating it); NULL if none. */
char *ildl_mm_token(char **p);
/* Parse a whole token as a real number: 0 ok, 1 not a number (overflow gives +-Inf). */
int ildl_mm_parse_real(const char *t, double *v);
/* 1 if the line starts with the (case-insensitive) %%MatrixMarket banner. */
int ildl_mm_has_banner(const char *s);
/* Read and check the banner line (line 1) into h. Unsupported kinds give ILDL_ERR_FORMAT. */
int ildl_mm_read_banner(mm_reader *r, mm_header *h);
/* Read the size line "rows cols [entries]" (want tokens: 2 for array, 3 for coordinate). */
int ildl_mm_read_size(mm_reader *r, int want, long long sz[3]);
/* Read nnz coordinate entries of an nrows x ncols matrix with header h into *t_out
 * (allocated here), each checked; lower-canonical (i >= j) if sym. */
int ildl_mm_read_entries(mm_reader *r, const mm_header *h, int32_t nrows, int32_t ncols,
                         long long nnz, int sym, mm_trip **t_out);

#endif
