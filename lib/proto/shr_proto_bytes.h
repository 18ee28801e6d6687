/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PROTO_BYTES_H
#define SHR_PROTO_BYTES_H

/**
 * @file
 * Big-endian loads and stores at any alignment, for the wire formats (the header of
 * shr_proto.h, the MAC trailer). Compilers turn each into one load or store and a byte swap.
 */

#include <stdint.h>

/** @return The big-endian 16-bit value at p. */
static inline uint16_t
shr_proto_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/** @return The big-endian 32-bit value at p. */
static inline uint32_t
shr_proto_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/** @return The big-endian 64-bit value at p. */
static inline uint64_t
shr_proto_be64(const uint8_t *p)
{
	return (uint64_t)shr_proto_be32(p) << 32 | shr_proto_be32(p + 4);
}

/** Store v at p, big-endian. */
static inline void
shr_proto_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** Store v at p, big-endian. */
static inline void
shr_proto_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/** Store v at p, big-endian. */
static inline void
shr_proto_put_be64(uint8_t *p, uint64_t v)
{
	shr_proto_put_be32(p, (uint32_t)(v >> 32));
	shr_proto_put_be32(p + 4, (uint32_t)v);
}

#endif /* SHR_PROTO_BYTES_H */
