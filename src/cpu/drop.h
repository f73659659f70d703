/* drop.h -- dual-threshold dropping of an in-flight tile (Saad's ILUT rule per block row),
 * for double and (suffix _s) float tiles: drop.c is compiled for both (cpu/real.h). */
#ifndef ILDL_CPU_DROP_H
#define ILDL_CPU_DROP_H
#include <stdint.h>

/* Zero every entry of the mi x mj tile (row-major, ld 32) with |u_rc| <= tau * rownorm[r]
 * (rownorm = 2-norm of row r of the whole block row; tau rounded to the tile's type first),
 * then, if more than keep nonzeros remain, keep only the keep largest in magnitude (ties:
 * smaller local index r*32+c wins) and zero the rest. Returns the number of nonzeros left.
 * keep < 0 means no limit. */
int ildl_drop_tile(int mi, int mj, double *tile, const double *rownorm, double tau, int keep);
int ildl_drop_tile_s(int mi, int mj, float *tile, const float *rownorm, double tau, int keep);

/* Gather the nonzeros of the tile in ascending local index into idx/val; returns count. */
int ildl_tile_compress(int mi, int mj, const double *tile, uint16_t *idx, double *val);
int ildl_tile_compress_s(int mi, int mj, const float *tile, uint16_t *idx, float *val);

#endif
