/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * An application built against an installed shouter (install_it.sh compiles it with
 * `pkg-config --cflags --libs shouter` and nothing else): it includes the installed headers,
 * links shr_comm_create() and shr_comm_allreduce() from libshouter, and proves the library
 * runs: shr_comm_create() with bad parameters returns NULL with errno EINVAL, and the CRC of
 * the wire protocol gives the standard CRC32C check value. Prints "install_app: ok".
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <shr_comm.h>
#include <shr_proto.h>

int
main(void)
{
	int (*allreduce)(struct shr_comm *, const void *, void *, uint64_t, uint8_t);
	struct shr_comm_params p;
	struct shr_comm *c;

	/* linked, not called: a communicator needs a box */
	allreduce = shr_comm_allreduce;
	if (allreduce == NULL)
		return 1;

	errno = 0;
	c = shr_comm_create(NULL);
	if (c != NULL || errno != EINVAL) {
		printf("install_app: shr_comm_create(NULL): %p errno %d\n", (void *)c, errno);
		return 1;
	}
	memset(&p, 0, sizeof(p));	/* world 0, no box address */
	errno = 0;
	c = shr_comm_create(&p);
	if (c != NULL || errno != EINVAL) {
		printf("install_app: shr_comm_create(world 0): %p errno %d\n", (void *)c, errno);
		return 1;
	}
	if (shr_crc32c(0, "123456789", 9) != 0xe3069283u) {
		printf("install_app: crc32c check value wrong\n");
		return 1;
	}
	printf("install_app: ok\n");
	return 0;
}
