/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * The config file's text, checked before rte_cfgfile reads it. rte_cfgfile_load() drops a
 * line without '=' in silence, keeps a second [section] of a name that the lookup by name
 * never finds, keeps a key twice, and reads a FIFO or /dev/zero until it is killed: each
 * would run the box on a config that is not the one written. Here every line must be blank,
 * a comment (';' to the end of the line), [NAME] or KEY = VALUE, no section or key of a
 * section twice, names and values within rte_cfgfile's lengths, in a regular file.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_cfgfile.h>

#include "agg_private.h"

/* the longest line rte_cfgfile reads (its buffer: a name, a value, '=', '\n', '\0') */
#define INI_LINE_MAX (CFG_NAME_LEN + CFG_VALUE_LEN + 2)

/* One name seen: its section's index (-1 for a section itself) and the name. */
struct ini_name {
	int sec;
	char name[CFG_NAME_LEN];
};

struct ini_seen {
	struct ini_name *v;
	size_t n, cap;
};

static char *
ini_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/*
 * Record name (a section's: sec -1; else a key of section sec) at path:lineno, the first
 * time; 0, or -EINVAL (said) when it was there before, or no memory.
 */
static int
ini_seen_add(struct ini_seen *seen, int sec, const char *name, const char *path,
	     unsigned int lineno)
{
	size_t i;

	for (i = 0; i < seen->n; i++) {
		if (seen->v[i].sec == sec && strcmp(seen->v[i].name, name) == 0) {
			fprintf(stderr, sec < 0 ? "shouter-agg: %s:%u: section [%s] given twice\n" :
				"shouter-agg: %s:%u: key '%s' given twice in its section\n", path,
				lineno, name);
			return -EINVAL;
		}
	}
	if (seen->n == seen->cap) {
		size_t cap = seen->cap != 0 ? seen->cap * 2 : 64;
		struct ini_name *v = realloc(seen->v, cap * sizeof(*v));

		if (v == NULL) {
			fprintf(stderr, "shouter-agg: %s: out of memory\n", path);
			return -EINVAL;
		}
		seen->v = v;
		seen->cap = cap;
	}
	seen->v[seen->n].sec = sec;
	snprintf(seen->v[seen->n].name, sizeof(seen->v[seen->n].name), "%s", name);
	seen->n++;
	return 0;
}

/*
 * The line (comment and blanks taken off) at path:lineno; sec: the current section (its
 * entry in seen), -1 before the first.
 */
static int
ini_line(const char *path, unsigned int lineno, char *s, struct ini_seen *seen, int *sec)
{
	char *eq, *key, *val;

	if (*s == '[') {
		size_t len = strlen(s);

		if (len < 3 || s[len - 1] != ']') {
			fprintf(stderr, "shouter-agg: %s:%u: expected [NAME], got '%s'\n", path,
				lineno, s);
			return -EINVAL;
		}
		s[len - 1] = '\0';
		key = ini_trim(s + 1);
		if (*key == '\0' || strlen(key) >= CFG_NAME_LEN) {
			fprintf(stderr, "shouter-agg: %s:%u: a section name of 1..%u characters\n",
				path, lineno, CFG_NAME_LEN - 1);
			return -EINVAL;
		}
		if (ini_seen_add(seen, -1, key, path, lineno) < 0)
			return -EINVAL;
		*sec = (int)seen->n - 1;
		return 0;
	}
	eq = strchr(s, '=');
	if (eq == NULL) {
		fprintf(stderr, "shouter-agg: %s:%u: expected KEY = VALUE or [NAME], got '%s'\n",
			path, lineno, s);
		return -EINVAL;
	}
	*eq = '\0';
	key = ini_trim(s);
	val = ini_trim(eq + 1);
	if (*key == '\0' || strlen(key) >= CFG_NAME_LEN || strlen(val) >= CFG_VALUE_LEN) {
		fprintf(stderr, "shouter-agg: %s:%u: a key of 1..%u characters and a value of at "
			"most %u\n", path, lineno, CFG_NAME_LEN - 1, CFG_VALUE_LEN - 1);
		return -EINVAL;
	}
	if (*sec < 0) {
		fprintf(stderr, "shouter-agg: %s:%u: '%s' before any [section]\n", path, lineno,
			key);
		return -EINVAL;
	}
	return ini_seen_add(seen, *sec, key, path, lineno);
}

int
agg_ini_check(const char *path)
{
	struct ini_seen seen = { 0 };
	unsigned int lineno = 0;
	int sec = -1, rc = 0;
	char *line = NULL;
	size_t cap = 0;
	struct stat st;
	ssize_t len;
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "shouter-agg: --config: cannot open '%s': %s\n", path,
			strerror(errno));
		return -EINVAL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "shouter-agg: --config: '%s' is not a regular file\n", path);
		fclose(f);
		return -EINVAL;
	}
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		char *c, *s;

		lineno++;
		if (len - (len > 0 && line[len - 1] == '\n') > INI_LINE_MAX) {
			fprintf(stderr, "shouter-agg: %s:%u: a line (comments too) longer than %u "
				"characters\n", path, lineno, INI_LINE_MAX);
			rc = -EINVAL;
			break;
		}
		if ((size_t)len != strlen(line)) {
			fprintf(stderr, "shouter-agg: %s:%u: a NUL byte: not a text file\n", path,
				lineno);
			rc = -EINVAL;
			break;
		}
		c = strchr(line, ';');
		if (c != NULL)
			*c = '\0';
		s = ini_trim(line);
		if (*s != '\0')
			rc = ini_line(path, lineno, s, &seen, &sec);
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "shouter-agg: --config: cannot read '%s'\n", path);
		rc = -EINVAL;
	}
	free(line);
	free(seen.v);
	fclose(f);
	return rc;
}
