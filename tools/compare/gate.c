/*
 * gate.c - `--fail-below PCT`: the regression gate a build can fail on.
 *
 * For every case, the headline metric of every set but the base is
 * compared with the base's: "worse by" is -%change for higher-is-better
 * metrics and +%change for lower-is-better ones (%change as in the LKP
 * table: relative, or the plain difference for a metric named "...%",
 * whose PCT is then in percentage points).  A line is a regression when
 * it is worse by more than PCT *and* the change is real by the LKP rule
 * (pcc_stats_real_change: >= 3 samples a side, ranges apart, ratio above
 * 1.01), so noise alone never fails a build.  Each regression is printed
 * on out; the caller turns a non-zero count into exit status 1.
 *
 * Reads the db only.
 */
#include <math.h>

#include "model.h"
#include "stats.h"

size_t pcc_gate(const struct pcc_db *db, double pct, FILE *out)
{
	size_t bad = 0;

	for (size_t k = 0; k < db->ncase; k++) {
		const struct pcc_case *c = &db->kase[k];
		const struct pcc_metric *m = pcc_headline(c);
		const struct pcc_vals *b;
		double mb;

		if (!m || !m->per_set[0].n)
			continue;
		b = &m->per_set[0];
		mb = pcc_stats_mean(b->v, b->n);
		for (size_t s = 1; s < db->nset; s++) {
			const struct pcc_vals *x = &m->per_set[s];
			char vb[32], vn[32], ch[32];
			double mn, change, worse;

			if (!x->n)
				continue;
			mn = pcc_stats_mean(x->v, x->n);
			change = pcc_stats_lkp_change(mb, mn, m->pct);
			if (isnan(change))	/* base 0, new not */
				change = mn > mb ? INFINITY : -INFINITY;
			worse = m->higher ? -change : change;
			if (!(worse > pct) ||
			    !pcc_stats_real_change(b->v, b->n, x->v, x->n))
				continue;
			if (!bad++)
				fprintf(out, "Headline metrics worse than the "
					"base by more than %g%% (points for "
					"metrics in %%), real changes only:\n",
					pct);
			fprintf(out, "  %s.%s: %s %s against %s %s: %s "
				"(%s is better)\n", c->name, m->name,
				db->set[s], pcc_fmt_value(mn, vn),
				db->set[0], pcc_fmt_value(mb, vb),
				pcc_fmt_change(change, m->pct, ch),
				m->higher ? "higher" : "lower");
		}
	}
	return bad;
}
