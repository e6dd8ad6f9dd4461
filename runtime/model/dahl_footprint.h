/* What StarPU keys and scales each dahl codelet's perf model by, without StarPU: the footprint of a task
 * (a CRC32C of its shape, computed exactly as StarPU 1.3.10's starpu_hash_crc32c_be* do) and its size.
 * Each codelet's footprint callback (runtime/codelets/) computes its footprint with these, from the task's
 * arguments (or, for dahl_accumulate and dahl_zero, the handle's element count); dahl_catalogue.c and
 * dahl_stepgraph.c compute the same values from layer shapes alone, so perf models can be written for tasks
 * that never ran. Changing one of them changes every footprint in calibration/: recalibrate. */
#ifndef DAHL_FOOTPRINT_H
#define DAHL_FOOTPRINT_H

#include "dahl_kernels.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* StarPU 1.3.10's starpu_hash_crc32c_be_n and starpu_hash_crc32c_be, bit for bit (tests/test_model.c
 * checks them against StarPU's): the CRC32C of n bytes (of the 4 bytes of input, in memory order) from crc. */
uint32_t dahl_crc32c_be_n(const void *input, size_t n, uint32_t crc);
uint32_t dahl_crc32c_be(uint32_t input, uint32_t crc);

uint32_t dahl_conv2d_footprint_of(const struct dahl_conv2d_shape *s);  /* the three conv2d models */
uint32_t dahl_maxpool_footprint_of(const struct dahl_maxpool_shape *s); /* both max-pool models */
uint32_t dahl_relu_footprint_of(size_t n);                              /* both ReLU models */
uint32_t dahl_dense_footprint_of(int n_in, int n_out);                  /* the three dense models */
uint32_t dahl_bn_footprint_of(int c, int hw);                          /* every batch-norm model */
uint32_t dahl_softmax_xent_footprint_of(int k);
uint32_t dahl_sgd_update_footprint_of(size_t n, bool with_momentum);
uint32_t dahl_reduce_footprint_of(size_t n); /* dahl_accumulate and dahl_zero: n, the elements of dst */
/* A task over n samples of a per-sample layer (the training's grain, issue 21) of one-sample footprint fp:
 * fp itself for n == 1 (every calibration made before grains keeps its keys), else fp mixed with n. ReLU
 * needs none: its footprint is already the element count of the n samples. */
uint32_t dahl_grouped_footprint_of(uint32_t fp, int n);

/* A perf model's size (StarPU's size_base) from a task's flop count: every dahl codelet's size is
 * dahl_size_of_flops(its kernel's _flops()), except dahl_zero's, which is dahl_size_of_flops(n). Regression
 * models fit log(time) against log(size), so the size is positive even for a task that does no arithmetic. */
static inline size_t dahl_size_of_flops(double flops)
{
    return flops < 1.0 ? 1 : (size_t)flops;
}

#endif /* DAHL_FOOTPRINT_H */
