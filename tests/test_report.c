/*
 * test_report.c - `pagecache report DIR` as a user runs it: the built
 * command on a copy of tests/fixtures/compare/suite (four workloads,
 * kernel, pagecache and limit, profiles and counter samples), then its
 * report.html read back by a strict checker written here (xmllint is not
 * a dependency of the project):
 *
 * - well-formed: one <!DOCTYPE html>, then one <html> holding <head> (with
 *   <meta charset>, <title>, <style>) and <body>; every element closed in
 *   order, void elements (img, meta, br, hr, link) self-closed and nothing
 *   else; attributes name="value", none twice; text and attribute values
 *   free of '<' and '>', every '&' an entity (&name; or &#N;); the <style>
 *   text free of '<';
 * - every <img> has an alt and a src, relative, naming a file that exists
 *   beside the page and is a PNG (signature, then an IHDR chunk of
 *   non-zero width and height);
 * - every <a href="#id"> names an id of the page, ids are unique, and every
 *   relative href names a file that exists;
 * - the content: the verdict's rows, a section per workload, the profile
 *   tables, the machine.
 *
 * The checker itself is tested first on pages that break each rule.  The
 * charts need gnuplot; without it the page must still be well-formed and
 * say so (the image checks are then skipped, with a message).  No random
 * input, so no seed.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define MAX_DEPTH 64
#define MAX_IDS 512

struct page {
	const char *dir;	/* where relative names resolve */
	char err[512];		/* the first problem, empty when none */
	int imgs, links;	/* checked references */
	char ids[MAX_IDS][64];
	int nids;
	char frags[MAX_IDS][64];	/* "#id" hrefs, checked at the end */
	int nfrags;
};

static bool problem(struct page *pg, const char *what, const char *at)
{
	if (!pg->err[0])
		snprintf(pg->err, sizeof(pg->err), "%s at: %.60s", what, at);
	return false;
}

static bool is_void(const char *name)
{
	static const char *const v[] = { "img", "meta", "br", "hr", "link" };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(name, v[i]))
			return true;
	return false;
}

/* '&' must open &name; or &#digits; */
static bool entities_ok(struct page *pg, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t j = i + 1;

		if (s[i] == '<' || s[i] == '>')
			return problem(pg, "bare < or > in text", s + i);
		if (s[i] != '&')
			continue;
		if (j < n && s[j] == '#') {
			for (j++; j < n && isdigit((unsigned char)s[j]); j++)
				;
		} else {
			for (; j < n && isalpha((unsigned char)s[j]); j++)
				;
		}
		if (j == i + 1 || j >= n || s[j] != ';' ||
		    (s[i + 1] == '#' && j == i + 2))
			return problem(pg, "bare &", s + i);
	}
	return true;
}

static bool png_ok(const char *path)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n',
					      0x1a, '\n' };
	unsigned char b[24];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(b, 1, sizeof(b), f) : 0;
	unsigned long w, h;

	if (f)
		fclose(f);
	if (n < 24 || memcmp(b, sig, 8) || memcmp(b + 12, "IHDR", 4))
		return false;
	w = (unsigned long)b[16] << 24 | b[17] << 16 | b[18] << 8 | b[19];
	h = (unsigned long)b[20] << 24 | b[21] << 16 | b[22] << 8 | b[23];
	return w > 0 && h > 0;
}

static bool file_exists(const struct page *pg, const char *rel)
{
	char path[1500];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", pg->dir, rel);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Attributes of one tag: check them, and what img/a/id refer to. */
static bool attrs(struct page *pg, const char *tag, const char *s,
		  const char *end)
{
	char names[16][32], src[600] = "", href[600] = "";
	int n = 0;
	bool alt = false;

	while (s < end) {
		const char *name = s, *val, *q;
		size_t nlen, vlen;

		while (s < end && isspace((unsigned char)*s))
			s++;
		if (s == end)
			break;
		name = s;
		while (s < end && (isalnum((unsigned char)*s) || *s == '-'))
			s++;
		nlen = (size_t)(s - name);
		if (!nlen || nlen >= 32 || s + 1 >= end || s[0] != '=' ||
		    s[1] != '"')
			return problem(pg, "attribute not name=\"value\"", name);
		val = s + 2;
		q = memchr(val, '"', (size_t)(end - val));
		if (!q)
			return problem(pg, "unterminated attribute", name);
		vlen = (size_t)(q - val);
		if (!entities_ok(pg, val, vlen))
			return false;
		for (int i = 0; i < n; i++)
			if (strlen(names[i]) == nlen && !strncmp(names[i], name, nlen))
				return problem(pg, "attribute given twice", name);
		if (n < 16)
			snprintf(names[n++], 32, "%.*s", (int)nlen, name);
		if (nlen == 3 && !strncmp(name, "src", 3))
			snprintf(src, sizeof(src), "%.*s", (int)vlen, val);
		if (nlen == 4 && !strncmp(name, "href", 4))
			snprintf(href, sizeof(href), "%.*s", (int)vlen, val);
		if (nlen == 3 && !strncmp(name, "alt", 3))
			alt = vlen > 0;
		if (nlen == 2 && !strncmp(name, "id", 2)) {
			for (int i = 0; i < pg->nids; i++)
				if (strlen(pg->ids[i]) == vlen &&
				    !strncmp(pg->ids[i], val, vlen))
					return problem(pg, "id given twice", val);
			if (pg->nids < MAX_IDS)
				snprintf(pg->ids[pg->nids++], 64, "%.*s",
					 (int)vlen, val);
		}
		s = q + 1;
	}
	if (!strcmp(tag, "img")) {
		char path[1500];

		if (!alt || !src[0])
			return problem(pg, "img without alt or src", end);
		if (strstr(src, "://") || src[0] == '/')
			return problem(pg, "img not beside the page", src);
		snprintf(path, sizeof(path), "%s/%s", pg->dir, src);
		if (!png_ok(path))
			return problem(pg, "img not a PNG file", src);
		pg->imgs++;
	}
	if (!strcmp(tag, "a") && href[0] == '#') {
		if (pg->nfrags < MAX_IDS)
			snprintf(pg->frags[pg->nfrags++], 64, "%.63s", href + 1);
	} else if (!strcmp(tag, "a") && href[0] && !strstr(href, "://")) {
		if (!file_exists(pg, href))
			return problem(pg, "link to a missing file", href);
		pg->links++;
	}
	return true;
}

/* The whole check; true when the page passes, else pg->err says why. */
static bool check_page(struct page *pg, const char *html)
{
	char stack[MAX_DEPTH][16];
	int depth = 0, roots = 0;
	bool head = false, body = false, title = false, charset = false;
	const char *s = html;

	if (strncmp(s, "<!DOCTYPE html>", 15))
		return problem(pg, "no <!DOCTYPE html> first", s);
	s += 15;
	while (*s) {
		const char *lt = strchr(s, '<'), *gt;
		char name[16];
		size_t nlen;
		bool close, self;

		if (!lt)
			lt = s + strlen(s);
		if (!entities_ok(pg, s, (size_t)(lt - s)))
			return false;
		if (depth == 0 && lt > s && strspn(s, " \n") < (size_t)(lt - s))
			return problem(pg, "text outside <html>", s);
		if (!*lt)
			break;
		gt = strchr(lt, '>');
		if (!gt)
			return problem(pg, "unterminated tag", lt);
		close = lt[1] == '/';
		self = gt[-1] == '/';
		nlen = strspn(lt + 1 + close, "abcdefghijklmnopqrstuvwxyz0123456789");
		if (!nlen || nlen >= sizeof(name))
			return problem(pg, "not a tag", lt);
		snprintf(name, sizeof(name), "%.*s", (int)nlen, lt + 1 + close);
		if (close) {
			if (!depth || strcmp(stack[depth - 1], name))
				return problem(pg, "close tag out of order", lt);
			depth--;
			s = gt + 1;
			continue;
		}
		if (is_void(name) != self)
			return problem(pg, self ? "self-closed non-void element"
					       : "void element not self-closed", lt);
		if (!attrs(pg, name, lt + 1 + nlen, gt - self))
			return false;
		if (depth == 0 && (strcmp(name, "html") || roots++))
			return problem(pg, "a second root, or not <html>", lt);
		head |= !strcmp(name, "head") && depth == 1;
		body |= !strcmp(name, "body") && depth == 1;
		title |= !strcmp(name, "title");
		charset |= !strcmp(name, "meta") && strstr(lt, "charset=\"utf-8\"") &&
			   strstr(lt, "charset=\"utf-8\"") < gt;
		s = gt + 1;
		if (self)
			continue;
		if (depth == MAX_DEPTH)
			return problem(pg, "nested too deep", lt);
		snprintf(stack[depth++], 16, "%s", name);
		if (!strcmp(name, "style")) {	/* raw text up to </style> */
			const char *e = strstr(s, "</style>");

			if (!e || memchr(s, '<', (size_t)(e - s)))
				return problem(pg, "'<' inside <style>", s);
			s = e;
		}
	}
	if (depth)
		return problem(pg, "unclosed element", stack[depth - 1]);
	if (!head || !body || !title || !charset)
		return problem(pg, "no head, body, title or meta charset", html);
	for (int i = 0; i < pg->nfrags; i++) {
		bool found = false;

		for (int j = 0; j < pg->nids && !found; j++)
			found = !strcmp(pg->frags[i], pg->ids[j]);
		if (!found)
			return problem(pg, "link to a missing #id", pg->frags[i]);
	}
	return true;
}

/* ---------------------------------------------------------------- helpers */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	fclose(f);
	return buf;
}

/* as the command finds it: PC_GNUPLOT, else gnuplot on PATH */
static bool have_gnuplot(void)
{
	const char *gp = getenv("PC_GNUPLOT");

	if (gp && *gp)
		return access(gp, X_OK) == 0;
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static const char *fixtures(void)
{
	static char dir[1200];

	tu_source(dir, sizeof(dir), "tests/fixtures/compare/suite");
	return dir;
}

static bool check_text(const char *html, const char *dir)
{
	struct page pg = { .dir = dir };

	if (check_page(&pg, html))
		return true;
	print_message("checker: %s\n", pg.err);
	return false;
}

/* ------------------------------------------------------------------ tests */

/* The checker refuses each kind of bad page, and takes a good one. */
static void test_checker(void **state)
{
	static const char head[] = "<!DOCTYPE html>\n<html><head><meta "
		"charset=\"utf-8\" /><title>t</title><style>p{}</style></head>"
		"<body>";
	static const char *const bad[] = {
		"<p>unclosed</body></html>",
		"<p>a</b></p></body></html>",
		"<p>a & b</p></body></html>",
		"<p>a &amp b</p></body></html>",
		"<p>1 < 2</p></body></html>",
		"<img src=\"plots/none.png\" alt=\"x\" /></body></html>",
		"<img src=\"plots/none.png\" alt=\"x\"></body></html>",
		"<img src=\"x.png\" /></body></html>",
		"<p class=x>a</p></body></html>",
		"<p class=\"a\" class=\"b\">a</p></body></html>",
		"<p id=\"a\">a</p><p id=\"a\">b</p></body></html>",
		"<a href=\"#nowhere\">a</a></body></html>",
		"<a href=\"missing.json\">a</a></body></html>",
		"<div />x</body></html>",
		"</body></html><p>after</p>",
	};
	char page[2048];

	(void)state;
	snprintf(page, sizeof(page), "%s<p id=\"x\">a &amp; b &#39; "
		 "<a href=\"#x\">x</a></p></body></html>\n", head);
	assert_true(check_text(page, tu_dir()));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct page pg = { .dir = tu_dir() };

		snprintf(page, sizeof(page), "%s%s", head, bad[i]);
		if (check_page(&pg, page))
			fail_msg("the checker took: %s", bad[i]);
	}
}

static void test_report_page(void **state)
{
	const char *build = getenv("PC_TEST_BUILD");
	char cmd[4000], path[1500], *html, *out;
	const char *dir = tu_path("suite");
	struct page pg = { .dir = dir };
	bool gnuplot = have_gnuplot();
	int rc;

	(void)state;
	if (!build)
		fail_msg("PC_TEST_BUILD is not set (run through tests/run.sh)");
	snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s' && '%s/pagecache' report "
		 "'%s' >'%s/stdout' 2>'%s/stderr'", fixtures(), dir, build, dir,
		 tu_dir(), tu_dir());
	rc = system(cmd);
	snprintf(path, sizeof(path), "%s/stderr", tu_dir());
	out = slurp(path);
	if (rc != 0)
		fail_msg("pagecache report: status %d: %s", rc, out ? out : "");
	free(out);
	snprintf(path, sizeof(path), "%s/stdout", tu_dir());
	out = slurp(path);
	assert_non_null(out);
	assert_non_null(strstr(out, "Verdict: pagecache against kernel"));
	assert_non_null(strstr(out, "/report.html\n"));
	free(out);

	snprintf(path, sizeof(path), "%s/report.html", dir);
	html = slurp(path);
	assert_non_null(html);
	if (!check_page(&pg, html))
		fail_msg("report.html: %s", pg.err);
	/* every result file is linked (9), and compare.txt */
	assert_true(pg.links >= 10);
	if (gnuplot) {
		/* the overview, and per workload the repetitions (4) and the
		 * counters (the 3 with samples) */
		assert_int_equal(pg.imgs, 1 + 4 + 3);
	} else {
		print_message("gnuplot missing: no charts to check\n");
		assert_int_equal(pg.imgs, 0);
		assert_non_null(strstr(html, "No charts: gnuplot was not found"));
	}
	/* what a reader comes for */
	assert_non_null(strstr(html, "<h2 id=\"verdict\">Verdict</h2>"));
	assert_non_null(strstr(html, "is <b>1.13</b> (+12.9%)"));
	assert_non_null(strstr(html, "<td class=\"better\">better</td>"));
	assert_non_null(strstr(html, "<td class=\"worse\">worse</td>"));
	assert_non_null(strstr(html, "<td class=\"n\">57%</td>"));
	for (int k = 0; k < 4; k++) {
		char id[32];

		snprintf(id, sizeof(id), "<h2 id=\"w%d\">", k);
		assert_non_null(strstr(html, id));
	}
	assert_non_null(strstr(html, "<code>_copy_to_iter</code>"));
	assert_non_null(strstr(html, "<code>pc_pread</code>"));
	assert_non_null(strstr(html, "one writer, a new file of 3xB"));
	assert_non_null(strstr(html, "0123456789ab"));
	assert_non_null(strstr(html, "QEMU Virtual CPU"));
	assert_non_null(strstr(html, "load average 1.5 to 3.5 on 2 cores"));
	free(html);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checker),
		cmocka_unit_test(test_report_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
