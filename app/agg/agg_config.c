/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Command line and INI configuration of shouter-agg. The config file is read first; the
 * command line overrides it. Every error names the option (or the file, section and key)
 * and what is allowed; the caller exits with status 2.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_cfgfile.h>

#include "agg_private.h"

enum {
	OPT_CONFIG = 256,
	OPT_IP,
	OPT_PORT,
	OPT_LANES,
	OPT_JOB,
	OPT_NSLOTS,
	OPT_REPRO_SLOTS,
	OPT_MAX_ELEMS,
	OPT_MAX_WORLD,
	OPT_MAX_JOBS,
	OPT_JOB_TIMEOUT, OPT_IDLE_MS, OPT_MAX_SRC_JOBS, OPT_DEF_WINDOW,
	OPT_ALLOW, OPT_SECRET_FILE, OPT_AUTH_TTL,
	OPT_IDLE_US, OPT_IDLE_AFTER_US,
	OPT_STATS,
	OPT_VLAN,
	OPT_NO_ZEROCOPY, OPT_MAC,
	OPT_BENCH, OPT_BENCH_CHUNK,
	OPT_UPSTREAM, OPT_UP_RANK, OPT_UP_WORLD, OPT_BOX, OPT_RESULT_GROUP,
};

static const struct option agg_opts[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "lanes", required_argument, NULL, OPT_LANES },
	{ "job", required_argument, NULL, OPT_JOB },
	{ "nslots", required_argument, NULL, OPT_NSLOTS },
	{ "repro-slots", required_argument, NULL, OPT_REPRO_SLOTS },
	{ "max-elems", required_argument, NULL, OPT_MAX_ELEMS },
	{ "max-world", required_argument, NULL, OPT_MAX_WORLD },
	{ "max-jobs", required_argument, NULL, OPT_MAX_JOBS },
	{ "job-timeout-ms", required_argument, NULL, OPT_JOB_TIMEOUT },
	{ "idle-ms", required_argument, NULL, OPT_IDLE_MS },
	{ "max-src-jobs", required_argument, NULL, OPT_MAX_SRC_JOBS },
	{ "def-window", required_argument, NULL, OPT_DEF_WINDOW },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "secret-file", required_argument, NULL, OPT_SECRET_FILE },
	{ "auth-ttl-ms", required_argument, NULL, OPT_AUTH_TTL },
	{ "idle-us", required_argument, NULL, OPT_IDLE_US },
	{ "idle-after-us", required_argument, NULL, OPT_IDLE_AFTER_US },
	{ "stats", required_argument, NULL, OPT_STATS },
	{ "vlan", required_argument, NULL, OPT_VLAN },
	{ "no-zerocopy", no_argument, NULL, OPT_NO_ZEROCOPY },
	{ "mac", no_argument, NULL, OPT_MAC },
	{ "upstream", required_argument, NULL, OPT_UPSTREAM },
	{ "up-rank", required_argument, NULL, OPT_UP_RANK },
	{ "up-world", required_argument, NULL, OPT_UP_WORLD },
	{ "box", required_argument, NULL, OPT_BOX },
	{ "result-group", required_argument, NULL, OPT_RESULT_GROUP },
	{ "bench-mpps", required_argument, NULL, OPT_BENCH },
	{ "bench-chunk", required_argument, NULL, OPT_BENCH_CHUNK },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void
agg_usage(const char *prg)
{
	printf("usage: %s [EAL args] -- [options]\n"
	       "  --config FILE        INI file (rte_cfgfile, ';' comments); options override it\n"
	       "  --ip A.B.C.D         this box's IPv4 address (ARP, ICMP echo); required\n"
	       "  --port P             base UDP port (default %u); lanes use P .. P+lanes-1\n"
	       "  --lanes N            UDP lanes (1..%u; default: the number of worker lcores);\n"
	       "                       data lcores = queues = min(lanes, lcores, device queues)\n"
	       "  --job ID:WORLD:DTYPE[:WINDOW[:CHUNK]]  static job, ranks bind on JOIN\n"
	       "                       (repeatable; DTYPE int32|float32|float16|bfloat16|qint32;\n"
	       "                       default window %u, chunk %u elements)\n"
	       "  --nslots N --max-elems N --max-world N --max-jobs N   pool dimensions\n"
	       "                       (defaults 4096 slots; chunks up to what fits the port's\n"
	       "                       MTU, at most %u elements; world 1024; 64 jobs)\n"
	       "  --repro-slots N      slots for reproducible jobs (JOIN flag, or repro = 1), in\n"
	       "                       addition to --nslots: exact accumulators, 82 bytes per\n"
	       "                       element of --max-elems each (default %u: 43 MB at 2048\n"
	       "                       elements); 0: reproducible jobs are refused\n"
	       "  --job-timeout-ms N   abort a job whose round stays open this long "
	       "(default 5000),\n"
	       "                       or whose members have not all joined in 4 times that\n"
	       "  --idle-ms N          abort a job none of whose members sent anything for N ms\n"
	       "                       (default 60000)\n"
	       "  --max-src-jobs N     jobs made by JOINs from one IPv4 address at once "
	       "(default 4)\n"
	       "  --def-window N       window of a JOIN that asks for 0 (default 128; at most\n"
	       "                       512, and at most --nslots)\n"
	       "  --allow CIDR[,CIDR]  admit JOINs only from these IPv4 subnets (repeatable, at\n"
	       "                       most %u; replaces the config file's allow; default: any\n"
	       "                       address)\n"
	       "  --secret-file PATH   jobs made by JOIN (and static jobs without secret_file)\n"
	       "                       admit only members that prove this secret (%u..%u bytes,\n"
	       "                       file not readable by others) by challenge-response\n"
	       "  --auth-ttl-ms N      a challenge is good for 1 to 2 times N ms (default 10000)\n"
	       "  --mac                jobs made by JOIN require the per-job message\n"
	       "                       authentication code (AES-GMAC; needs --secret-file)\n"
	       "  --idle-us N          sleep N us at a time once idle (0 = busy poll; default 0);\n"
	       "                       the lcore's timer slack is set to 1 us, so a sleep lasts\n"
	       "                       about N us\n"
	       "  --idle-after-us M    idle: %u empty polls in a row and M us since the last\n"
	       "                       traffic (default %u)\n"
	       "  --stats S            one-line stats every S seconds (0 = never; default 0)\n"
	       "  --vlan ID            the port is on IEEE 802.1Q VLAN ID (1..%u): only frames\n"
	       "                       tagged with it are taken (any priority), and every frame\n"
	       "                       sent carries it; others (other VIDs, untagged, stacked\n"
	       "                       tags) are dropped, counted in vlan_other. 0 (default):\n"
	       "                       untagged (and VID 0), tagged frames counted in vlan_other\n"
	       "  --upstream A.B.C.D[:PORT]  a tree of boxes: every job here is one member of\n"
	       "                       the job of the same id on that box (one lane; every\n"
	       "                       collective, given the workers' --tree-rank)\n"
	       "  --up-rank R --up-world W   this box's place among the W boxes under it\n"
	       "  --box NAME           with --config FILE: a topology file describing every box\n"
	       "                       of a tree or shard set ([box.NAME] sections: "
	       "the [agg] keys,\n"
	       "                       upstream = NAME); this box takes [box.NAME] (README)\n"
	       "  --result-group A.B.C.D[:PORT]  a job's results for every member go out once, to\n"
	       "                       this multicast group or broadcast address of the segment\n"
	       "                       (UDP port PORT + the job's entry; default PORT %u), when\n"
	       "                       all its members offer it (workers do unless --no-group)\n"
	       "  --no-zerocopy        copy the result per member instead of chaining one shared\n"
	       "                       payload mbuf behind a small header mbuf per member\n"
	       "  --bench-mpps S       benchmark: the data path on one lcore per lane, "
	       "fed from\n"
	       "                       memory through an in-process ring port (no --ip), then its\n"
	       "                       kernels: S seconds a phase (about 7 S in all, more with\n"
	       "                       --lanes; SIGINT or SIGTERM stops it: exit 1, no figures);\n"
	       "                       --lanes N (N lcores: -l 0-1 for 2) times the handoff "
	       "(queues\n"
	       "                       spread by flow) and steering (by lane): agg_mpps_total\n"
	       "  --bench-chunk N      --bench-mpps's chunk: N int32 elements (1..%u, default %u)\n"
	       "  -h, --help\n"
	       "Lanes and lcores: DATA for slot s goes to UDP port P + s mod lanes; data lcore i\n"
	       "(of Q) owns the lanes l with l mod Q == i, and so their slots. The data lcores\n"
	       "are the worker lcores, and the main lcore too when the workers are fewer than\n"
	       "--lanes (-l 0,1 --lanes 2: two data lcores). Each polls its own rx/tx queue:\n"
	       "with rte_flow (a NIC that has it) each lane is steered to its lcore's queue;\n"
	       "without (af_packet, pcap, ring, memif, null, tap here) every lcore hands the DATA\n"
	       "of another lcore's lanes to it through a ring (counted in lane_fwd, lane_in), so\n"
	       "a slot is only touched by its lcore. A device needs Q queues: af_packet\n"
	       "qpairs=Q (its kernel fanout spreads frames by flow: about half are handed on at\n"
	       "Q = 2), net_ring as many rings; with one queue one lcore handles every lane.\n"
	       "Static jobs with fixed member addresses go in the config file ([job.N] addrs=).\n",
	       prg, SHR_PROTO_UDP_PORT, AGG_MAX_LANES, AGG_DEF_JOB_WINDOW, AGG_DEF_CHUNK,
	       AGG_MAX_ELEMS, AGG_DEF_REPRO_SLOTS, SHR_AUTH_ACL_MAX, SHR_AUTH_SECRET_MIN,
	       SHR_AUTH_SECRET_MAX, AGG_IDLE_POLLS, AGG_DEF_IDLE_AFTER_US, SHR_L2_VLAN_MAX,
	       SHR_AGG_GROUP_PORT, AGG_MAX_ELEMS, AGG_BENCH_DEF_ELEMS);
}

static int
parse_u64(const char *what, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (s == NULL || *s == '\0' || *s == '-')
		goto bad;
	/* decimal, or hex after 0x (tokens): never octal, where "010" would be eight */
	if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) && s[2] != '\0' && s[2] != '-')
		v = strtoull(s + 2, &end, 16);
	else
		v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "shouter-agg: %s: expected an integer in %llu..%llu, got '%s'\n",
		what, (unsigned long long)lo, (unsigned long long)hi, s ? s : "");
	return -EINVAL;
}

static int
parse_ip(const char *what, const char *s, uint32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1 || a.s_addr == 0) {
		fprintf(stderr, "shouter-agg: %s: expected an IPv4 address A.B.C.D, got '%s'\n",
			what, s);
		return -EINVAL;
	}
	*ip = ntohl(a.s_addr);
	return 0;
}

/* the box's own address: unicast, not multicast (224/4) or 240/4 (255.255.255.255) */
static int
parse_host_ip(const char *what, const char *s, uint32_t *ip)
{
	uint32_t v;

	if (parse_ip(what, s, &v) < 0)
		return -EINVAL;
	if (v >= 0xe0000000u) {
		fprintf(stderr, "shouter-agg: %s: %s is not a unicast address (multicast, or "
			"240.0.0.0/4)\n", what, s);
		return -EINVAL;
	}
	*ip = v;
	return 0;
}

/* "A.B.C.D:PORT" -> SHR_AGG_ADDR; with def_port (not 0), "A.B.C.D" alone takes that port */
static int
parse_addr(const char *what, const char *s, uint16_t def_port, uint64_t *addr)
{
	char buf[64];
	char *colon;
	uint32_t ip;
	uint64_t port = def_port;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (colon == NULL && def_port == 0)
		goto bad;
	if (colon != NULL)
		*colon = '\0';
	if (parse_ip(what, buf, &ip) < 0 ||
	    (colon != NULL && parse_u64(what, colon + 1, 1, 65535, &port) < 0))
		return -EINVAL;
	*addr = SHR_AGG_ADDR(ip, port);
	return 0;
bad:
	fprintf(stderr, "shouter-agg: %s: expected A.B.C.D%s, got '%s'\n", what,
		def_port == 0 ? ":PORT" : "[:PORT]", s);
	return -EINVAL;
}

/* The same parsers for agg_tree.c (its keys and topology file) and agg_config_job.c. */
int
agg_conf_u64(const char *what, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	return parse_u64(what, s, lo, hi, out);
}

int
agg_conf_addr(const char *what, const char *s, uint16_t def_port, uint64_t *addr)
{
	return parse_addr(what, s, def_port, addr);
}

static int
load_secret(const char *what, const char *path, struct shr_auth_secret *secret)
{
	int rc = shr_auth_secret_load(path, secret);

	if (rc == -EINVAL)
		fprintf(stderr, "shouter-agg: %s: '%s': the secret must be a regular file of "
			"%u..%u bytes (trailing newlines and blanks are not counted)\n", what, path,
			SHR_AUTH_SECRET_MIN, SHR_AUTH_SECRET_MAX);
	else if (rc == -EACCES)
		fprintf(stderr, "shouter-agg: %s: '%s': open to its group or others; chmod 600 it "
			"(or cannot open it)\n", what, path);
	else if (rc < 0)
		fprintf(stderr, "shouter-agg: %s: '%s': %s\n", what, path, strerror(-rc));
	return rc < 0 ? -EINVAL : 0;
}

/* load_secret() for agg_config_job.c (a static job's secret_file). */
int
agg_conf_secret(const char *what, const char *path, struct shr_auth_secret *secret)
{
	return load_secret(what, path, secret);
}

static int
parse_allow(const char *what, const char *list, struct shr_auth_acl *acl)
{
	int rc = shr_auth_acl_add(acl, list);

	if (rc == -ENOSPC)
		fprintf(stderr, "shouter-agg: %s: more than %u subnets\n", what, SHR_AUTH_ACL_MAX);
	else if (rc < 0)
		fprintf(stderr, "shouter-agg: %s: expected IPv4 subnets A.B.C.D/LEN or addresses "
			"A.B.C.D separated by commas, got '%s'\n", what, list);
	return rc < 0 ? -EINVAL : 0;
}

/* One [agg] key (also used for the long options of the same name). */
static int
set_agg_key(struct agg_conf *conf, const char *what, const char *key, const char *val)
{
	uint64_t v = 0;
	int rc;

	if (strcmp(key, "ip") == 0)
		return parse_host_ip(what, val, &conf->ip);
	if (strcmp(key, "port") == 0) {
		rc = parse_u64(what, val, 1, 65535, &v);
		conf->port = (uint16_t)v;
	} else if (strcmp(key, "lanes") == 0) {
		rc = parse_u64(what, val, 1, AGG_MAX_LANES, &v);
		conf->lanes = (uint16_t)v;
	} else if (strcmp(key, "nslots") == 0) {
		rc = parse_u64(what, val, 1, 1u << 24, &v);
		conf->params.nslots = (uint32_t)v;
	} else if (strcmp(key, "repro_slots") == 0 || strcmp(key, "repro-slots") == 0) {
		rc = parse_u64(what, val, 0, 1u << 20, &v);
		conf->params.repro_slots = (uint32_t)v;
	} else if (strcmp(key, "max_elems") == 0 || strcmp(key, "max-elems") == 0) {
		/* a chunk must fit one jumbo frame */
		rc = parse_u64(what, val, 1, AGG_MAX_ELEMS, &v);
		conf->params.max_elems = (uint32_t)v;
	} else if (strcmp(key, "max_world") == 0 || strcmp(key, "max-world") == 0) {
		rc = parse_u64(what, val, 1, SHR_PROTO_MAX_WORLD, &v);
		conf->params.max_world = (uint16_t)v;
	} else if (strcmp(key, "max_jobs") == 0 || strcmp(key, "max-jobs") == 0) {
		rc = parse_u64(what, val, 1, 1u << 16, &v);
		conf->params.max_jobs = (uint32_t)v;
	} else if (strcmp(key, "job_timeout_ms") == 0 || strcmp(key, "job-timeout-ms") == 0) {
		rc = parse_u64(what, val, 1, 3600 * 1000, &v);
		conf->params.job_timeout_ns = v * 1000000ull;
	} else if (strcmp(key, "idle_ms") == 0 || strcmp(key, "idle-ms") == 0) {
		rc = parse_u64(what, val, 1, 86400ull * 1000, &v);
		conf->params.idle_ns = v * 1000000ull;
	} else if (strcmp(key, "max_src_jobs") == 0 || strcmp(key, "max-src-jobs") == 0) {
		rc = parse_u64(what, val, 1, 1u << 16, &v);
		conf->params.max_src_jobs = (uint32_t)v;
	} else if (strcmp(key, "def_window") == 0 || strcmp(key, "def-window") == 0) {
		rc = parse_u64(what, val, 1, SHR_PROTO_SLOT_MASK, &v);
		conf->params.def_window = (uint32_t)v;
	} else if (strcmp(key, "allow") == 0) {
		rc = parse_allow(what, val, &conf->allow);
	} else if (strcmp(key, "secret_file") == 0 || strcmp(key, "secret-file") == 0) {
		rc = load_secret(what, val, &conf->secret);
	} else if (strcmp(key, "mac") == 0) {
		rc = parse_u64(what, val, 0, 1, &v);
		conf->params.mac = (uint8_t)v;
	} else if (strcmp(key, "auth_ttl_ms") == 0 || strcmp(key, "auth-ttl-ms") == 0) {
		rc = parse_u64(what, val, 1, 3600 * 1000, &v);
		conf->params.auth_ttl_ns = v * 1000000ull;
	} else if (strcmp(key, "idle_us") == 0 || strcmp(key, "idle-us") == 0) {
		rc = parse_u64(what, val, 0, 1000000, &v);
		conf->idle_us = (uint32_t)v;
	} else if (strcmp(key, "idle_after_us") == 0 || strcmp(key, "idle-after-us") == 0) {
		rc = parse_u64(what, val, 0, 60000000, &v);
		conf->idle_after_us = (uint32_t)v;
	} else if (strcmp(key, "stats") == 0) {
		rc = parse_u64(what, val, 0, 86400, &v);
		conf->stats_s = (uint32_t)v;
	} else if (strcmp(key, "zerocopy") == 0) {
		rc = parse_u64(what, val, 0, 1, &v);
		conf->zerocopy = v != 0;
	} else if (strcmp(key, "vlan") == 0) {
		rc = parse_u64(what, val, 0, SHR_L2_VLAN_MAX, &v);
		conf->vlan = (uint16_t)v;
	} else if ((rc = agg_tree_key(conf, what, key, val)) != -ENOENT ||
		   (rc = agg_group_key(conf, what, key, val)) != -ENOENT) {
		return rc;
	} else {
		fprintf(stderr, "shouter-agg: %s: unknown key (allowed: ip, port, lanes, nslots, "
			"repro_slots, max_elems, max_world, max_jobs, job_timeout_ms, idle_ms, "
			"max_src_jobs, def_window, allow, secret_file, mac, auth_ttl_ms, idle_us, "
			"idle_after_us, stats, zerocopy, upstream, up_rank, up_world, vlan, "
			"result_group)\n",
			what);
		return -EINVAL;
	}
	return rc;
}

static int
load_config(struct agg_conf *conf, const char *path)
{
	struct rte_cfgfile *cfg;
	char **secs = NULL;
	struct rte_cfgfile_entry *ent = NULL;
	char what[256];
	int nsec, i, k, n, nbox = 0, rc = -EINVAL;

	if (agg_ini_check(path) < 0)
		return -EINVAL;
	cfg = rte_cfgfile_load(path, 0);
	if (cfg == NULL) {
		fprintf(stderr, "shouter-agg: --config: cannot load '%s' (missing file or not "
			"INI: [section] and key = value lines)\n", path);
		return -EINVAL;
	}
	nsec = rte_cfgfile_num_sections(cfg, NULL, 0);
	secs = calloc(nsec + 1, sizeof(*secs));
	if (secs == NULL)
		goto out;
	for (i = 0; i < nsec; i++) {
		secs[i] = malloc(CFG_NAME_LEN);
		if (secs[i] == NULL)
			goto out;
	}
	nsec = rte_cfgfile_sections(cfg, secs, nsec);
	for (i = 0; i < nsec; i++) {
		if (strcmp(secs[i], "agg") == 0) {
			n = rte_cfgfile_section_num_entries(cfg, secs[i]);
			free(ent);
			ent = calloc(n + 1, sizeof(*ent));
			if (ent == NULL)
				goto out;
			n = rte_cfgfile_section_entries(cfg, secs[i], ent, n);
			for (k = 0; k < n; k++) {
				snprintf(what, sizeof(what), "%s [agg] %s", path, ent[k].name);
				if (set_agg_key(conf, what, ent[k].name, ent[k].value) < 0)
					goto out;
			}
		} else if (strncmp(secs[i], "job.", 4) == 0) {
			if (agg_config_job_section(conf, cfg, path, secs[i]) < 0)
				goto out;
		} else if (strncmp(secs[i], "box.", 4) == 0) {
			nbox++;	/* a topology file: read below */
		} else {
			fprintf(stderr, "shouter-agg: %s: unknown section [%s] (allowed: [agg], "
				"[job.N], [box.NAME])\n", path, secs[i]);
			goto out;
		}
	}
	if ((nbox != 0 || conf->box != NULL) &&
	    agg_tree_load(conf, cfg, path, secs, nsec, set_agg_key) < 0)
		goto out;
	rc = 0;
out:
	free(ent);
	if (secs != NULL)
		for (i = 0; secs[i] != NULL; i++)
			free(secs[i]);
	free(secs);
	rte_cfgfile_close(cfg);
	return rc;
}

void
agg_config_free(struct agg_conf *conf)
{
	uint32_t i;

	for (i = 0; i < conf->njobs; i++)
		free(conf->jobs[i].addrs);
	free(conf->jobs);
	conf->jobs = NULL;
	conf->njobs = 0;
}

int
agg_config_parse(struct agg_conf *conf, int argc, char **argv)
{
	const char *prg = "shouter-agg";
	const char *cfg_path = NULL;
	uint64_t v = 0;
	double d;
	char *end;
	bool cli_allow = false;
	int opt, i, rc;

	memset(conf, 0, sizeof(*conf));
	conf->port = SHR_PROTO_UDP_PORT;
	conf->zerocopy = true;
	conf->idle_after_us = AGG_DEF_IDLE_AFTER_US;
	conf->params.repro_slots = AGG_DEF_REPRO_SLOTS;

	/* the config file first, so that the command line overrides it; getopt_long() below
	 * checks that it found the same --config and --box (not abbreviated, not twice) */
	for (i = 1; i < argc; i++) {
		const char **dst = NULL, *val = NULL;

		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			dst = &cfg_path, val = argv[++i];
		else if (strncmp(argv[i], "--config=", 9) == 0)
			dst = &cfg_path, val = argv[i] + 9;
		else if (strcmp(argv[i], "--box") == 0 && i + 1 < argc)
			dst = &conf->box, val = argv[++i];	/* the topology file needs it */
		else if (strncmp(argv[i], "--box=", 6) == 0)
			dst = &conf->box, val = argv[i] + 6;
		else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			agg_usage(prg);
			return 1;
		}
		if (dst != NULL && *dst != NULL) {
			fprintf(stderr, "shouter-agg: --%s given twice\n",
				dst == &cfg_path ? "config" : "box");
			return -EINVAL;
		}
		if (dst != NULL)
			*dst = val;
	}
	if (cfg_path != NULL && load_config(conf, cfg_path) < 0)
		return -EINVAL;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", agg_opts, NULL)) != -1) {
		const char *name = NULL;

		for (i = 0; agg_opts[i].name != NULL; i++)
			if (agg_opts[i].val == opt)
				name = agg_opts[i].name;
		rc = 0;
		switch (opt) {
		case OPT_CONFIG:
		case OPT_BOX:
			/* read above, where only the whole name is looked for */
			if ((opt == OPT_CONFIG ? cfg_path : conf->box) != optarg) {
				fprintf(stderr, "shouter-agg: %s: give the option's whole name "
					"(--%s)\n", argv[optind - 1 - (argv[optind - 1] == optarg)],
					name);
				rc = -EINVAL;
				break;
			}
			if (opt == OPT_BOX && cfg_path == NULL) {
				fprintf(stderr, "shouter-agg: --box: needs --config FILE (a "
					"topology file with a [box.%s] section)\n", optarg);
				rc = -EINVAL;
			}
			break;
		case OPT_IP:
			rc = parse_host_ip("--ip", optarg, &conf->ip);
			break;
		case OPT_PORT:
		case OPT_LANES:
		case OPT_NSLOTS:
		case OPT_REPRO_SLOTS:
		case OPT_MAX_ELEMS:
		case OPT_MAX_WORLD:
		case OPT_MAX_JOBS:
		case OPT_JOB_TIMEOUT:
		case OPT_IDLE_MS:
		case OPT_MAX_SRC_JOBS:
		case OPT_DEF_WINDOW:
		case OPT_ALLOW:
			if (opt == OPT_ALLOW && !cli_allow) {
				/* the command line's list replaces the file's, as every option
				 * does: a narrower --allow must not keep the file's subnets */
				conf->allow.n = 0;
				cli_allow = true;
			}
			/* fall through */
		case OPT_SECRET_FILE:
		case OPT_AUTH_TTL:
		case OPT_IDLE_US:
		case OPT_IDLE_AFTER_US:
		case OPT_STATS:
		case OPT_VLAN:
		case OPT_UPSTREAM:	/* set_agg_key() hands the tree's keys to agg_tree_key() */
		case OPT_UP_RANK:
		case OPT_UP_WORLD:
		case OPT_RESULT_GROUP: {
			char what[64];

			snprintf(what, sizeof(what), "--%s", name);
			rc = set_agg_key(conf, what, name, optarg);
			break;
		}
		case OPT_JOB:
			rc = agg_config_job_opt(conf, optarg);
			break;
		case OPT_NO_ZEROCOPY:
			conf->zerocopy = false;
			break;
		case OPT_MAC:
			conf->params.mac = 1;
			break;
		case OPT_BENCH:
			errno = 0;
			d = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || !(d > 0 && d <= 3600)) {
				fprintf(stderr, "shouter-agg: --bench-mpps: expected seconds in "
					"(0, 3600], got '%s'\n", optarg);
				rc = -EINVAL;
			}
			conf->bench_s = d;
			break;
		case OPT_BENCH_CHUNK:
			if (parse_u64("--bench-chunk", optarg, 1, AGG_MAX_ELEMS, &v) < 0)
				rc = -EINVAL;
			conf->bench_elems = (uint32_t)v;
			break;
		case 'h':
			agg_usage(prg);
			return 1;
		case ':':
			fprintf(stderr, "shouter-agg: %s: missing argument (see --help)\n",
				argv[optind - 1]);
			rc = -EINVAL;
			break;
		default:
			fprintf(stderr, "shouter-agg: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			rc = -EINVAL;
			break;
		}
		if (rc < 0)
			return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "shouter-agg: unexpected argument '%s' (options start with --; "
			"EAL arguments go before --)\n", argv[optind]);
		return -EINVAL;
	}
	/* the window a JOIN gets by default must be one the box can grant */
	if (conf->params.def_window != 0) {
		uint32_t mw = shr_agg_def_max_window(conf->params.nslots);

		if (conf->params.def_window > mw) {
			fprintf(stderr, "shouter-agg: def_window %u: at most %u (the largest "
				"window granted: %u, or nslots if fewer)\n",
				conf->params.def_window, mw, SHR_AGG_DEF_MAX_WINDOW);
			return -EINVAL;
		}
	}
	/* Pointers into conf only now: the job array moved while it grew. */
	conf->params.allow = &conf->allow;
	conf->params.secret = &conf->secret;
	for (i = 0; i < (int)conf->njobs; i++) {
		conf->jobs[i].conf.secret = &conf->jobs[i].secret;
		if (conf->jobs[i].conf.mac && conf->jobs[i].secret.len == 0 &&
		    conf->secret.len == 0) {
			fprintf(stderr, "shouter-agg: %s: mac = 1 needs a secret (secret_file, "
				"here or in [agg])\n", conf->jobs[i].origin);
			return -EINVAL;
		}
	}
	if (conf->params.mac && conf->secret.len == 0) {
		fprintf(stderr, "shouter-agg: mac (--mac): needs the jobs' secret (--secret-file, "
			"[agg] secret_file)\n");
		return -EINVAL;
	}
	if (conf->bench_elems != 0 && conf->bench_s == 0) {
		fprintf(stderr, "shouter-agg: --bench-chunk: only with --bench-mpps\n");
		return -EINVAL;
	}
	if (conf->params.max_elems != 0 && conf->bench_elems > conf->params.max_elems) {
		fprintf(stderr, "shouter-agg: --bench-chunk %u: over max_elems (%u)\n",
			conf->bench_elems, conf->params.max_elems);
		return -EINVAL;
	}
	if (conf->ip == 0 && conf->bench_s == 0) {
		fprintf(stderr, "shouter-agg: --ip: required (the box's IPv4 address A.B.C.D)\n");
		return -EINVAL;
	}
	if (agg_tree_check(conf) < 0 || agg_group_check(conf) < 0)
		return -EINVAL;
	if (conf->lanes != 0 && (uint32_t)conf->port + conf->lanes - 1 > 65535) {
		fprintf(stderr, "shouter-agg: --port/--lanes: ports %u..%u exceed 65535\n",
			conf->port, conf->port + conf->lanes - 1);
		return -EINVAL;
	}
	return 0;
}
