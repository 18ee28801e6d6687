/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Trees of boxes in shouter-agg's configuration (lib/agg, shr_agg_params::upstream): the
 * keys upstream, up_rank and up_world ([agg] or --upstream, --up-rank, --up-world), and the
 * topology file: one INI file that describes every box of a tree (or a set of shard boxes),
 * one [box.NAME] section each, read by every box with --config FILE --box NAME:
 *
 *   [box.root]
 *   ip = 198.18.0.3
 *   [box.leaf1]
 *   ip = 198.18.0.1
 *   upstream = root
 *   [box.leaf2]
 *   ip = 198.18.0.2
 *   upstream = root
 *
 * A box takes the [agg] keys of its own section (ip, port, job_timeout_ms, ...); upstream
 * names another box of the file (or is an address, A.B.C.D[:PORT]); its up_rank is its
 * place among the sections that name the same upstream, in file order, and up_world their
 * number, unless given. The other boxes' sections only give those places and addresses.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "agg_private.h"

static int
tree_u16(const char *what, const char *s, uint64_t lo, uint64_t hi, uint16_t *v)
{
	uint64_t x = 0;
	int rc = agg_conf_u64(what, s, lo, hi, &x);

	*v = (uint16_t)x;
	return rc;
}

int
agg_tree_key(struct agg_conf *conf, const char *what, const char *key, const char *val)
{
	struct shr_agg_params *p = &conf->params;

	if (strcmp(key, "upstream") == 0)
		return agg_conf_addr(what, val, SHR_PROTO_UDP_PORT, &p->upstream);
	if (strcmp(key, "up_rank") == 0 || strcmp(key, "up-rank") == 0) {
		conf->tree_rank_set = true;
		return tree_u16(what, val, 0, SHR_PROTO_MAX_WORLD - 1, &p->up_rank);
	}
	if (strcmp(key, "up_world") == 0 || strcmp(key, "up-world") == 0) {
		conf->tree_world_set = true;
		return tree_u16(what, val, 1, SHR_PROTO_MAX_WORLD, &p->up_world);
	}
	return -ENOENT;
}

/* The value of key in section sec, or NULL. */
static const char *
tree_get(struct rte_cfgfile *cfg, const char *sec, const char *key)
{
	return rte_cfgfile_has_entry(cfg, sec, key) ? rte_cfgfile_get_entry(cfg, sec, key) :
						      NULL;
}

/*
 * The chain of upstream boxes from [own] must end at a box without one (the root) or at an
 * address: a loop (a's upstream b, b's upstream a) would send every round up forever.
 * Returns 0, or -EINVAL (said).
 */
static int
tree_no_loop(struct rte_cfgfile *cfg, const char *path, const char *own, int nsec)
{
	char sec[CFG_NAME_LEN + 8];
	const char *up;
	int hops;

	snprintf(sec, sizeof(sec), "%s", own);
	for (hops = 0; hops <= nsec; hops++) {
		up = tree_get(cfg, sec, "upstream");
		if (up == NULL)
			return 0;
		snprintf(sec, sizeof(sec), "box.%s", up);
		if (!rte_cfgfile_has_section(cfg, sec))
			return 0;	/* an address: outside the file */
		if (strcmp(sec, own) == 0)
			break;
	}
	fprintf(stderr, "shouter-agg: %s: [%s]: its chain of upstream boxes %s (a tree has a "
		"root: a box with no upstream)\n", path, own,
		hops > nsec ? "loops above it" : "comes back to it");
	return -EINVAL;
}

int
agg_tree_load(struct agg_conf *conf, struct rte_cfgfile *cfg, const char *path, char **secs,
	      int nsec, agg_key_fn key)
{
	char own[CFG_NAME_LEN], what[CFG_NAME_LEN + 300];
	struct rte_cfgfile_entry *ent = NULL;
	const char *up = NULL, *v;
	uint16_t place = 0, world = 0;
	int i, k, n, rc = -EINVAL;

	snprintf(own, sizeof(own), "box.%s", conf->box != NULL ? conf->box : "");
	if (conf->box == NULL || !rte_cfgfile_has_section(cfg, own)) {
		fprintf(stderr, "shouter-agg: %s: %s (the file describes boxes: start each with "
			"--box NAME, one of its [box.NAME] sections)\n", path,
			conf->box == NULL ? "no --box given" : "no section for --box");
		return -EINVAL;
	}
	n = rte_cfgfile_section_num_entries(cfg, own);
	ent = calloc(n > 0 ? n + 1 : 1, sizeof(*ent));
	if (n < 0 || ent == NULL)
		goto out;
	n = rte_cfgfile_section_entries(cfg, own, ent, n);
	for (k = 0; k < n; k++) {
		snprintf(what, sizeof(what), "%s [%s] %s", path, own, ent[k].name);
		if (strcmp(ent[k].name, "upstream") == 0) {
			up = ent[k].value;
			continue;
		}
		if (agg_tree_key(conf, what, ent[k].name, ent[k].value) == -ENOENT &&
		    key(conf, what, ent[k].name, ent[k].value) < 0)
			goto out;
	}
	if (up != NULL) {
		char sec[CFG_NAME_LEN + 8], addr[64];
		const char *a = up;

		if (tree_no_loop(cfg, path, own, nsec) < 0)
			goto out;

		/* another box of the file, or an address */
		snprintf(what, sizeof(what), "%s [%s] upstream", path, own);
		snprintf(sec, sizeof(sec), "box.%s", up);
		if (rte_cfgfile_has_section(cfg, sec)) {
			v = tree_get(cfg, sec, "ip");
			if (v == NULL) {
				fprintf(stderr, "shouter-agg: %s: [%s] has no ip\n", what, sec);
				goto out;
			}
			snprintf(addr, sizeof(addr), "%s:%s", v,
				 tree_get(cfg, sec, "port") != NULL ? tree_get(cfg, sec, "port") :
								      RTE_STR(SHR_PROTO_UDP_PORT));
			a = addr;
		}
		if (agg_conf_addr(what, a, SHR_PROTO_UDP_PORT, &conf->params.upstream) < 0)
			goto out;
		/* this box's place among the boxes under the same upstream, in file order */
		for (i = 0; i < nsec; i++) {
			if (strncmp(secs[i], "box.", 4) != 0)
				continue;
			v = tree_get(cfg, secs[i], "upstream");
			if (v == NULL || strcmp(v, up) != 0)
				continue;
			if (strcmp(secs[i], own) == 0)
				place = world;
			world++;
		}
		if (!conf->tree_rank_set)
			conf->params.up_rank = place;
		if (!conf->tree_world_set)
			conf->params.up_world = world;
	}
	rc = 0;
out:
	free(ent);
	return rc;
}

int
agg_tree_check(struct agg_conf *conf)
{
	struct shr_agg_params *p = &conf->params;

	if (p->upstream == 0) {
		if (conf->tree_rank_set || conf->tree_world_set) {
			fprintf(stderr, "shouter-agg: --up-rank/--up-world: need --upstream\n");
			return -EINVAL;
		}
		return 0;
	}
	if (p->up_world == 0 || p->up_rank >= p->up_world) {
		fprintf(stderr, "shouter-agg: --upstream: needs --up-world W (the boxes under that "
			"upstream) and --up-rank R below it (this box's place), got rank %u of "
			"%u\n", p->up_rank, p->up_world);
		return -EINVAL;
	}
	if (SHR_AGG_ADDR_IP(p->upstream) == conf->ip) {
		fprintf(stderr, "shouter-agg: --upstream: this box's own address\n");
		return -EINVAL;
	}
	if (conf->lanes > 1) {
		fprintf(stderr, "shouter-agg: --upstream: a box of a tree runs one lane (got "
			"--lanes %u)\n", conf->lanes);
		return -EINVAL;
	}
	conf->lanes = 1;
	return 0;
}
