/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Static jobs of shouter-agg: --job ID:WORLD:DTYPE[:WINDOW[:CHUNK]] and the config file's
 * [job.N] sections (fixed member addresses, token, secret), into conf->jobs. A job given
 * twice is replaced whole: the command line, read after the file, wins.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "agg_private.h"

static int
parse_dtype(const char *what, const char *s, uint8_t *dtype)
{
	int d = shr_proto_dtype_parse(s);

	if (d <= 0 || d >= SHR_DTYPE_MAX) {
		fprintf(stderr, "shouter-agg: %s: unknown dtype '%s' (allowed: int32, float32, "
			"float16, bfloat16, qint32)\n", what, s);
		return -EINVAL;
	}
	*dtype = (uint8_t)d;
	return 0;
}

/* Find or append the job with this id; an existing one is replaced (command line wins). */
static struct agg_job *
job_slot(struct agg_conf *conf, uint32_t id)
{
	struct agg_job *j;
	uint32_t i;

	for (i = 0; i < conf->njobs; i++)
		if (conf->jobs[i].conf.job == id)
			break;
	if (i < conf->njobs) {
		j = &conf->jobs[i];
		free(j->addrs);
	} else {
		j = realloc(conf->jobs, (conf->njobs + 1) * sizeof(*j));
		if (j == NULL) {
			fprintf(stderr, "shouter-agg: out of memory\n");
			return NULL;
		}
		conf->jobs = j;
		j = &conf->jobs[conf->njobs++];
	}
	/* a new definition, replaced whole: the defaults of a new job, none of the old one's */
	memset(j, 0, sizeof(*j));
	j->conf.job = id;
	j->conf.ordered = 1;	/* real endpoints; a looped replay sets ordered = 0 */
	return j;
}

/* --job ID:WORLD:DTYPE[:WINDOW[:CHUNK]] */
int
agg_config_job_opt(struct agg_conf *conf, const char *arg)
{
	char buf[128];
	char *f[6];
	int nf = 0;
	char *p, *rest;
	uint64_t id, world, window = AGG_DEF_JOB_WINDOW, chunk = AGG_DEF_CHUNK;
	uint8_t dtype;
	struct agg_job *j;

	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	/* strsep, not strtok: an empty field ("1::int32", "1:4:int32:") is an error, not skipped */
	for (rest = buf; (p = strsep(&rest, ":")) != NULL && nf < 6;)
		f[nf++] = p;
	if (p != NULL)
		goto bad;	/* more than 6 fields */
	if (nf < 3 || nf > 5)
		goto bad;
	if (agg_conf_u64("--job ID", f[0], 0, UINT32_MAX, &id) < 0 ||
	    agg_conf_u64("--job WORLD", f[1], 1, SHR_PROTO_MAX_WORLD, &world) < 0 ||
	    parse_dtype("--job DTYPE", f[2], &dtype) < 0 ||
	    (nf > 3 && agg_conf_u64("--job WINDOW", f[3], 1, SHR_PROTO_SLOT_MASK, &window) < 0) ||
	    (nf > 4 && agg_conf_u64("--job CHUNK", f[4], 1, UINT32_MAX, &chunk) < 0))
		return -EINVAL;
	j = job_slot(conf, (uint32_t)id);
	if (j == NULL)
		return -ENOMEM;
	j->conf.world = (uint16_t)world;
	j->conf.dtype = dtype;
	j->conf.window = (uint32_t)window;
	j->conf.chunk_elems = (uint32_t)chunk;
	snprintf(j->origin, sizeof(j->origin), "--job %u", (unsigned int)id);
	return 0;
bad:
	fprintf(stderr, "shouter-agg: --job: expected ID:WORLD:DTYPE[:WINDOW[:CHUNK]], got '%s'\n",
		arg);
	return -EINVAL;
}

/* [job.N]: world, dtype, window, chunk, addrs = A:P,A:P,... and/or addr.R = A:P */
int
agg_config_job_section(struct agg_conf *conf, struct rte_cfgfile *cfg, const char *path,
		       const char *sec)
{
	struct rte_cfgfile_entry *ent = NULL;
	char what[256];
	uint64_t id, v;
	struct agg_job *j;
	int n, i, dup, rc = -EINVAL;
	bool have_world = false, have_dtype = false;

	if (agg_conf_u64("job section id", sec + 4, 0, UINT32_MAX, &id) < 0) {
		fprintf(stderr, "shouter-agg: %s: section [%s]: expected [job.N]\n", path, sec);
		return -EINVAL;
	}
	j = job_slot(conf, (uint32_t)id);
	if (j == NULL)
		return -ENOMEM;
	snprintf(j->origin, sizeof(j->origin), "[%s]", sec);
	j->conf.window = AGG_DEF_JOB_WINDOW;
	j->conf.chunk_elems = AGG_DEF_CHUNK;
	n = rte_cfgfile_section_num_entries(cfg, sec);
	if (n < 0)
		return -EINVAL;
	ent = calloc(n + 1, sizeof(*ent));
	if (ent == NULL)
		return -ENOMEM;
	n = rte_cfgfile_section_entries(cfg, sec, ent, n);
	/* world first: the address list needs it */
	for (i = 0; i < n; i++) {
		if (strcmp(ent[i].name, "world") != 0)
			continue;
		snprintf(what, sizeof(what), "%s [%s] world", path, sec);
		if (agg_conf_u64(what, ent[i].value, 1, SHR_PROTO_MAX_WORLD, &v) < 0)
			goto out;
		j->conf.world = (uint16_t)v;
		have_world = true;
	}
	if (!have_world) {
		fprintf(stderr, "shouter-agg: %s [%s]: missing key 'world' (1..%u)\n", path, sec,
			SHR_PROTO_MAX_WORLD);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *k = ent[i].name, *val = ent[i].value;

		snprintf(what, sizeof(what), "%s [%s] %s", path, sec, k);
		if (strcmp(k, "world") == 0) {
			continue;
		} else if (strcmp(k, "dtype") == 0) {
			if (parse_dtype(what, val, &j->conf.dtype) < 0)
				goto out;
			have_dtype = true;
		} else if (strcmp(k, "window") == 0) {
			if (agg_conf_u64(what, val, 1, SHR_PROTO_SLOT_MASK, &v) < 0)
				goto out;
			j->conf.window = (uint32_t)v;
		} else if (strcmp(k, "chunk") == 0) {
			if (agg_conf_u64(what, val, 1, UINT32_MAX, &v) < 0)
				goto out;
			j->conf.chunk_elems = (uint32_t)v;
		} else if (strcmp(k, "ordered") == 0) {
			if (agg_conf_u64(what, val, 0, 1, &v) < 0)
				goto out;
			j->conf.ordered = (uint8_t)v;
		} else if (strcmp(k, "repro") == 0) {
			if (agg_conf_u64(what, val, 0, 1, &v) < 0)
				goto out;
			j->conf.repro = (uint8_t)v;
		} else if (strcmp(k, "mac") == 0) {
			if (agg_conf_u64(what, val, 0, 1, &v) < 0)
				goto out;
			j->conf.mac = (uint8_t)v;
		} else if (strcmp(k, "secret_file") == 0) {
			if (agg_conf_secret(what, val, &j->secret) < 0)
				goto out;
		} else if (strcmp(k, "token") == 0) {
			if (agg_conf_u64(what, val, 1, UINT64_MAX, &v) < 0)
				goto out;
			j->conf.token = v;
		} else if (strcmp(k, "addrs") == 0 || strncmp(k, "addr.", 5) == 0) {
			char buf[CFG_VALUE_LEN];
			char *p, *save = NULL;
			uint64_t r = 0;

			if (j->addrs == NULL) {
				j->addrs = calloc(j->conf.world, sizeof(*j->addrs));
				if (j->addrs == NULL) {
					rc = -ENOMEM;
					goto out;
				}
			}
			if (k[4] == '.' &&
			    agg_conf_u64(what, k + 5, 0, j->conf.world - 1, &r) < 0)
				goto out;
			snprintf(buf, sizeof(buf), "%s", val);
			for (p = strtok_r(buf, ", \t", &save); p != NULL;
			     p = strtok_r(NULL, ", \t", &save), r++) {
				if (r >= j->conf.world) {
					fprintf(stderr, "shouter-agg: %s: more addresses than "
						"world=%u\n", what, j->conf.world);
					goto out;
				}
				if (j->addrs[r] != 0) {
					/* addrs and addr.R, or addr.1 and addr.01: which one? */
					fprintf(stderr, "shouter-agg: %s: rank %u's address given "
						"twice (addrs, addr.R)\n", what, (unsigned int)r);
					goto out;
				}
				if (agg_conf_addr(what, p, 0, &j->addrs[r]) < 0)
					goto out;
			}
		} else {
			fprintf(stderr, "shouter-agg: %s: unknown key (allowed: world, dtype, "
				"window, chunk, ordered, repro, token, secret_file, mac, addrs, "
				"addr.R)\n",
				what);
			goto out;
		}
	}
	if (!have_dtype) {
		fprintf(stderr, "shouter-agg: %s [%s]: missing key 'dtype' (int32, float32, "
			"float16, bfloat16, qint32)\n", path, sec);
		goto out;
	}
	if (j->addrs != NULL) {
		for (i = 0; i < j->conf.world; i++) {
			if (j->addrs[i] == 0) {
				fprintf(stderr, "shouter-agg: %s [%s]: no address for rank %d "
					"(give all %u ranks, or none to bind on JOIN)\n",
					path, sec, i, j->conf.world);
				goto out;
			}
			for (dup = 0; dup < i; dup++) {
				if (j->addrs[dup] == j->addrs[i]) {
					/* one socket is one rank: the box could not tell them
					 * apart */
					fprintf(stderr, "shouter-agg: %s [%s]: ranks %d and %d "
						"have the same address\n", path, sec, dup, i);
					goto out;
				}
			}
		}
	}
	rc = 0;
out:
	free(ent);
	return rc;
}
