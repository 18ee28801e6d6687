/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * A main() for builds without libFuzzer (gcc, or clang without -fsanitize=fuzzer): runs
 * the target once on every file named on the command line, or in the directories named
 * there (sorted, not recursive). The meson suite `fuzz` uses it to replay the seed corpus
 * and the regression inputs in every build, sanitized or not.
 */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int
run_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	size_t n;
	FILE *f;

	f = fopen(path, "rb");
	if (f == NULL || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	/* An exactly sized heap block, so that a sanitizer sees any read past the input. */
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (buf == NULL) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n != (size_t)st.st_size) {
		fprintf(stderr, "%s: short read\n", path);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int
main(int argc, char **argv)
{
	struct dirent **ents;
	char path[4096];
	struct stat st;
	int i, j, n, runs = 0, errors = 0;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			errors++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			errors += run_file(argv[i]) != 0;
			runs++;
			continue;
		}
		n = scandir(argv[i], &ents, NULL, by_name);
		if (n < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			errors++;
			continue;
		}
		for (j = 0; j < n; j++) {
			snprintf(path, sizeof(path), "%s/%s", argv[i], ents[j]->d_name);
			if (ents[j]->d_name[0] != '.' && stat(path, &st) == 0 &&
			    S_ISREG(st.st_mode)) {
				errors += run_file(path) != 0;
				runs++;
			}
			free(ents[j]);
		}
		free(ents);
	}
	printf("replayed %d inputs, %d unreadable\n", runs, errors);
	/* Replaying nothing is a failure: the corpus went missing. */
	return errors || runs == 0 ? 1 : 0;
}
