/* Pure CPU kernels of the dahl runtime: plain C over raw pointers and dimensions, no StarPU.
 * Every kernel states its tensor shapes and layout; the caller owns every buffer passed in. */
#ifndef DAHL_KERNELS_H
#define DAHL_KERNELS_H

/* Busy-waits on the calling thread for duration_us microseconds of wall time (not a sleep: the core stays
 * busy, as a compute kernel would keep it). Used by the probe codelet that checks both StarPU flavours. */
void dahl_spin_us(double duration_us);

#endif /* DAHL_KERNELS_H */
