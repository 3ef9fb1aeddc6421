/*
 * cmd.c - `pagecache trace`: report and dump a trace file.
 *
 *   pagecache trace report FILE     event counts, the LRU age model
 *   pagecache trace dump FILE [N]   the first N events (all), as text
 *
 * The report prints, in this order: what the file is; LOST EVENTS in a
 * banner when any were dropped or the file is incomplete (also to stderr:
 * a lossy trace must not pass unnoticed); event counts; the age model
 * table; readahead waste; refault and writeback timings; anything that
 * did not add up.  All times in milliseconds.  No shared state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

static const char *const insert_names[PC_TRACE_NR_INS + 1] = {
	"read", "write", "readahead", "refault", "other",
};
static const char *const evict_names[PC_TRACE_NR_EV + 1] = {
	"reclaim", "drop-behind", "truncate/invalidate", "migrated", "other",
};
static const char *const span_list[PCT_NR_SP] = {
	"inactive", "inactive", "active", "active", "insertion",
};
static const char *const span_end[PCT_NR_SP] = {
	"activation", "eviction", "deactivation", "eviction", "eviction",
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pagecache trace report FILE\n"
		"       pagecache trace dump FILE [COUNT]\n"
		"FILE is written by a cache created with trace=FILE.\n");
}

static void stat_cols(FILE *out, const struct pct_stat *s)
{
	if (!s->count) {
		fprintf(out, " %10s %10s %10s", "-", "-", "-");
		return;
	}
	fprintf(out, " %10.3f %10.3f %10.3f", s->avg, s->p50, s->p95);
}

static bool lossy(const struct pct_report *r)
{
	return r->lost || r->missing || r->truncated || r->bad_blocks;
}

static void loss_banner(FILE *out, const char *path,
			const struct pct_report *r)
{
	uint64_t emitted = r->nr_events + r->lost;

	fprintf(out, "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
	if (r->lost)
		fprintf(out, "!!! %s: %" PRIu64 " EVENTS LOST (%.1f%% of %" PRIu64
			") in %zu of %zu threads:\n!!! their rings overflowed; "
			"the ages below are biased\n", path, r->lost,
			100.0 * (double)r->lost / (double)emitted, emitted,
			r->lost_threads, r->nr_threads);
	if (r->missing)
		fprintf(out, "!!! %s: %" PRIu64 " events declared by the footer "
			"are missing from the file\n", path, r->missing);
	if (r->truncated)
		fprintf(out, "!!! %s: INCOMPLETE: %s\n", path, r->has_footer ?
			"cut inside a block" :
			"no footer (the program did not close the cache); "
			"losses unknown");
	if (r->bad_blocks)
		fprintf(out, "!!! %s: %" PRIu64 " malformed block(s): the rest "
			"of the file was not read\n", path, r->bad_blocks);
	fprintf(out, "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
}

static void print_counts(FILE *out, const struct pct_report *r)
{
	fprintf(out, "\nevents\n");
	for (unsigned e = 0; e < PC_TRACE_NR_EVENTS; e++)
		fprintf(out, "  %-18s %12" PRIu64 "\n", pct_event_name(e),
			r->events[e]);
	if (r->unknown_events)
		fprintf(out, "  %-18s %12" PRIu64 "\n", "unknown",
			r->unknown_events);
	fprintf(out, "  %-18s %12" PRIu64 "\n", "total", r->nr_events);
	fprintf(out, "  inserted by reason:");
	for (unsigned i = 0; i <= PC_TRACE_NR_INS; i++)
		if (i < PC_TRACE_NR_INS || r->insert_reason[i])
			fprintf(out, "%s %s %" PRIu64, i ? "," : "",
				insert_names[i], r->insert_reason[i]);
	fprintf(out, " (straight onto the active list: %" PRIu64 ")\n",
		r->insert_active);
	fprintf(out, "  evicted by kind:");
	for (unsigned i = 0; i <= PC_TRACE_NR_EV; i++)
		if (i < PC_TRACE_NR_EV || r->evict_kind[i])
			fprintf(out, "%s %s %" PRIu64, i ? "," : "",
				evict_names[i], r->evict_kind[i]);
	fprintf(out, "\n");
}

static void print_ages(FILE *out, const struct pct_report *r)
{
	fprintf(out, "\nLRU age model: time on a list until it is left (ms), "
		"by page type when it is left\n");
	fprintf(out, "  %-17s %-10s %-13s %9s %10s %10s %10s\n", "page type",
		"list", "until", "count", "avg", "p50", "p95");
	for (int t = 0; t < PCT_NR_PT; t++) {
		bool any = false;

		for (int s = 0; s < PCT_NR_SP; s++) {
			const struct pct_stat *st = &r->age[t][s];

			if (!st->count)
				continue;
			fprintf(out, "  %-17s %-10s %-13s %9" PRIu64,
				any ? "" : pct_ptype_name(t),
				span_list[s], span_end[s], st->count);
			stat_cols(out, st);
			fprintf(out, "\n");
			any = true;
		}
		if (!any)
			fprintf(out, "  %-17s (no span ended)\n",
				pct_ptype_name(t));
	}
	fprintf(out, "  still on the LRU at the end (not in the ages):");
	for (int t = 0; t < PCT_NR_PT; t++)
		fprintf(out, "%s %s %" PRIu64, t ? "," : "",
			pct_ptype_name(t), r->resident[t]);
	fprintf(out, "\n");
}

static void print_other(FILE *out, const struct pct_report *r)
{
	fprintf(out, "\nreadahead: %" PRIu64 " pages inserted, %" PRIu64
		" evicted, %" PRIu64 " of them unused: %.1f%% of readahead "
		"pages were evicted unused\n", r->ra_inserted, r->ra_evicted,
		r->ra_evicted_unused, 100.0 * r->ra_unused_share);
	fprintf(out, "%-34s %9s %10s %10s %10s\n", "", "count", "avg", "p50",
		"p95");
	fprintf(out, "%-34s %9" PRIu64, "refault distance (pages)",
		r->refault_distance.count);
	stat_cols(out, &r->refault_distance);
	fprintf(out, "\n%-34s %9" PRIu64, "dirty until writeback (ms)",
		r->dirty_ms.count);
	stat_cols(out, &r->dirty_ms);
	fprintf(out, "\n%-34s %9" PRIu64, "writeback time (ms)",
		r->writeback_ms.count);
	stat_cols(out, &r->writeback_ms);
	fprintf(out, "\nrefaults of working-set pages (PG_workingset): %" PRIu64
		"\n", r->refault_workingset);
	if (r->evict_without_insert || r->event_without_insert ||
	    r->life_without_evict || r->unsorted)
		fprintf(out, "\ndid not add up: %" PRIu64 " evictions without an "
			"insertion, %" PRIu64 " list moves of pages not on the "
			"LRU, %" PRIu64 " lives without an eviction, %" PRIu64
			" events out of order\n", r->evict_without_insert,
			r->event_without_insert, r->life_without_evict,
			r->unsorted);
}

void pct_report_print(FILE *out, const char *path,
			   const struct pct_report *r)
{
	const struct pc_trace_file_header *h = &r->hdr;

	fprintf(out, "trace %s\n", path);
	fprintf(out, "  %u node(s) x %u frames (%" PRIu64 " MiB), pid %u, "
		"%.3f ms, %zu thread(s), %" PRIu64 " events, %" PRIu64
		" lost\n", h->nr_nodes, h->frames_per_node,
		h->nr_frames * h->page_size >> 20, h->pid, r->duration_ms,
		r->nr_threads, r->nr_events, r->lost);
	if (h->note[0])
		fprintf(out, "  cache: %s\n", h->note);
	if (lossy(r))
		loss_banner(out, path, r);
	print_counts(out, r);
	print_ages(out, r);
	print_other(out, r);
	if (lossy(r))
		loss_banner(out, path, r);
}

static const char *flag_str(uint16_t f, char *buf, size_t len)
{
#define FL(bit, name) { PC_TRACE_PG_##bit, name }
	static const struct { int bit; const char *name; } fl[] = {
		FL(locked, "locked"), FL(referenced, "ref"),
		FL(uptodate, "uptodate"), FL(dirty, "dirty"),
		FL(writeback, "wb"), FL(reclaim, "reclaim"),
		FL(readahead, "ra"), FL(active, "active"),
		FL(lru, "lru"), FL(workingset, "ws"),
		FL(error, "error"), FL(dropbehind, "dropbehind"),
	};
#undef FL
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]); i++)
		if (f & (1u << fl[i].bit))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0,
					      "%s%s", n ? "," : "", fl[i].name);
	return buf[0] ? buf : "-";
}

static int dump(const char *path, uint64_t max)
{
	struct pct_file f;
	char err[512], fb[128];
	int r = pct_file_read(path, &f, err, sizeof(err));

	if (r) {
		fprintf(stderr, "pagecache trace: %s\n", err);
		return 1;
	}
	printf("%12s %6s %-16s %8s %4s %10s %10s %10s  %s\n", "ms", "tid",
	       "event", "pfn", "node", "mapping", "index", "arg", "flags");
	for (size_t i = 0; i < f.nr_ev && i < max; i++) {
		const struct pc_trace_rec *e = f.ev[i];

		printf("%12.6f %6u %-16s %8u %4u %10u %10" PRIu64 " %10u  %s\n",
		       (double)(int64_t)(e->ts - f.hdr.start_ns) / 1e6,
		       f.tid[i], pct_event_name(e->event), e->pfn, e->node,
		       e->mapping, e->index, e->arg,
		       flag_str(e->flags, fb, sizeof(fb)));
	}
	if (!f.has_footer || f.truncated)
		printf("(no footer: the trace is incomplete)\n");
	pct_file_free(&f);
	return 0;
}

static int report(const char *path)
{
	struct pct_report r;
	char err[512];
	int ret = pct_report_file(path, &r, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "pagecache trace: %s\n", err);
		return 1;
	}
	pct_report_print(stdout, path, &r);
	fflush(stdout);
	if (lossy(&r))
		loss_banner(stderr, path, &r);
	return 0;
}

int pc_trace_main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "help"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "report"))
		return report(argv[2]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "dump")) {
		uint64_t max = UINT64_MAX;

		if (argc == 4) {
			char *end;

			errno = 0;
			max = strtoull(argv[3], &end, 10);
			if (errno || *end || end == argv[3]) {
				usage(stderr);
				return 2;
			}
		}
		return dump(argv[2], max);
	}
	usage(stderr);
	return 2;
}
