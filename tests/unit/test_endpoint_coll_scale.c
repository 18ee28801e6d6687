/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/* Collectives through N endpoints and the real box (endpoint_coll_test.h) at scale: N = 33
 * and 1024, and a third of the messages lost each way. */

#include "endpoint_coll_test.h"

static void
test_large_world(void **state)
{
	static const uint8_t kinds[] = { SHR_KIND_ALLGATHER, SHR_KIND_ALLTOALL };

	(void)state;
	run_kinds(33, SHR_DTYPE_INT32, kinds, 2, 5, 0, 0, 0, 11);
	run_kinds(33, SHR_DTYPE_FLOAT32, kinds, 2, 3, 7, 11, 13, 12);
	run_kinds(33, SHR_DTYPE_INT32, all_kinds, NKINDS, 20, 7, 11, 13, 13);
}

/*
 * A third of the messages lost in each direction (more than the 30% the issue asks for),
 * with duplicates and reordering: every kind at N = 2, 3 and 33 still gives exact outputs.
 */
static void
test_heavy_loss(void **state)
{
	(void)state;
	run_kinds(2, SHR_DTYPE_INT32, all_kinds, NKINDS, 37, 3, 11, 13, 31);
	run_kinds(3, SHR_DTYPE_FLOAT32, all_kinds, NKINDS, 37, 3, 11, 13, 32);
	run_kinds(33, SHR_DTYPE_INT32, all_kinds, NKINDS, 5, 3, 11, 13, 33);
	/*
	 * Seed 37: a chunk of rank 8 lost 10 times in a row (one chunk in 3^10 = 59k; 80k go
	 * here); resending 2 of its 6-7 expired chunks per rto_max, it took longer than the
	 * box's 2 s job timeout (ep_deadline(): paced at rto_max).
	 */
	run_kinds(33, SHR_DTYPE_INT32, all_kinds, NKINDS, 5, 3, 11, 13, 37);
}

/*
 * A world of 1024 with a third of the messages lost each way: the kinds whose rounds are
 * one block (allreduce, reduce, broadcast), 3 elements: every rank's output exact.
 */
static void
test_world_1024_heavy_loss(void **state)
{
	static const uint8_t kinds[] = { SHR_KIND_ALLREDUCE, SHR_KIND_REDUCE, SHR_KIND_BROADCAST };

	(void)state;
	run_kinds(1024, SHR_DTYPE_INT32, kinds, 3, 3, 3, 11, 13, 34);
}

/*
 * A world of 1024, 2% lost and duplicated: broadcast and allgather (1024 rounds of 1024
 * members). (Every kind but alltoall, 1 in 7 lost, passes too, but takes minutes: 68 million
 * messages.)
 */
static void
test_world_1024(void **state)
{
	static const uint8_t kinds[] = { SHR_KIND_BROADCAST, SHR_KIND_ALLGATHER };

	(void)state;
	run_kinds(1024, SHR_DTYPE_INT32, kinds, 2, 1, 50, 50, 13, 14);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_world),
		cmocka_unit_test(test_heavy_loss),
		cmocka_unit_test(test_world_1024_heavy_loss),
		cmocka_unit_test(test_world_1024),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
