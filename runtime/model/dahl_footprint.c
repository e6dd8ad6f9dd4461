/* Footprints of dahl's perf models (see dahl_footprint.h). The CRC is StarPU 1.3.10's (src/common/hash.c):
 * big-endian CRC32C, one bit at a time, over the bytes in memory order. */
#include "dahl_footprint.h"

#include <stddef.h>

#define CRC32C_POLY_BE 0x1EDC6F41u

static uint32_t crc32c_be_8(uint8_t byte, uint32_t crc)
{
    crc ^= (uint32_t)byte << 24;
    for (int i = 0; i < 8; i++)
        crc = (crc << 1) ^ ((crc & 0x80000000u) ? CRC32C_POLY_BE : 0u);
    return crc;
}

uint32_t dahl_crc32c_be_n(const void *input, size_t n, uint32_t crc)
{
    const uint8_t *p = input;
    for (size_t i = 0; i < n; i++)
        crc = crc32c_be_8(p[i], crc);
    return crc;
}

uint32_t dahl_crc32c_be(uint32_t input, uint32_t crc)
{
    return dahl_crc32c_be_n(&input, sizeof(input), crc);
}

/* An element count, as a 64-bit integer whatever size_t is. */
static uint32_t count_footprint(size_t n)
{
    const uint64_t n64 = n;
    return dahl_crc32c_be_n(&n64, sizeof(n64), 0);
}

uint32_t dahl_conv2d_footprint_of(const struct dahl_conv2d_shape *s)
{
    return dahl_crc32c_be_n(s, sizeof(*s), 0);
}

uint32_t dahl_maxpool_footprint_of(const struct dahl_maxpool_shape *s)
{
    /* without padding, the fields before pad alone: the footprints calibrations recorded before it existed */
    return dahl_crc32c_be_n(s, s->pad == 0 ? offsetof(struct dahl_maxpool_shape, pad) : sizeof(*s), 0);
}

uint32_t dahl_relu_footprint_of(size_t n)
{
    return count_footprint(n);
}

uint32_t dahl_dense_footprint_of(int n_in, int n_out)
{
    return dahl_crc32c_be((uint32_t)n_out, dahl_crc32c_be((uint32_t)n_in, 0));
}

uint32_t dahl_bn_footprint_of(int c, int hw)
{
    return dahl_crc32c_be((uint32_t)hw, dahl_crc32c_be((uint32_t)c, 0x62u));
}

uint32_t dahl_softmax_xent_footprint_of(int k)
{
    return dahl_crc32c_be((uint32_t)k, 0);
}

uint32_t dahl_sgd_update_footprint_of(size_t n, bool with_momentum)
{
    return dahl_crc32c_be(with_momentum ? 1u : 0u, count_footprint(n));
}

uint32_t dahl_reduce_footprint_of(size_t n)
{
    return count_footprint(n);
}

uint32_t dahl_grouped_footprint_of(uint32_t fp, int n)
{
    return n <= 1 ? fp : dahl_crc32c_be((uint32_t)n, fp);
}
