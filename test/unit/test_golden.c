/*
 * Golden AdmissionReviews: test/data/NAME.request.json in, NAME.response.json
 * out (with the patch shown decoded), compared exactly as JSON. An optional
 * NAME.lookup.json answers the workload look-up; without it look-ups are off.
 * Its "networkPolicies", when present, is the namespace's NetworkPolicyList
 * (its items) that /validate lists.
 * GOLDEN_UPDATE=1 rewrites the expected files (review the diff before committing).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "testutil.h"
#include "base64.h"

#define DATA_DIR "test/data"

/* What the look-ups of one case answer. */
struct table {
	struct workload_spec spec;
	cJSON *netpols; /* the items of the NetworkPolicyList; NULL: not listed */
};

static int table_get(void *ctx, const struct workload_ref *ref, int fresh,
                     struct workload_spec *out, char *err, size_t errlen)
{
	(void)ref;
	(void)fresh;
	(void)err;
	(void)errlen;
	*out = ((const struct table *)ctx)->spec;
	return 0;
}

/* The case's NetworkPolicyList: a copy of its items (the case keeps its own). */
static int table_netpols(void *ctx, const char *ns, cJSON **out, char *err, size_t errlen)
{
	(void)ns;
	(void)err;
	(void)errlen;
	*out = cJSON_CreateObject();
	if (*out == NULL ||
	    !cJSON_AddItemToObject(*out, "items",
	                           cJSON_Duplicate(((const struct table *)ctx)->netpols, 1)))
		return -1; /* *out owns the copy */
	return 0;
}

static long num(const cJSON *o, const char *k, long dflt)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(it) ? (long)it->valuedouble : dflt;
}

static void run_case(const char *name, int update)
{
	char path[512], *req, *lk_txt, *want_txt;
	size_t len, l2, l3;
	struct config cfg;
	struct table tb = {WSPEC(-1, -1, -1, -1, 0, ""), NULL};
	struct workload_spec *spec = &tb.spec;
	struct workload_lookup lk = {table_get, &tb, NULL, NULL, NULL};
	struct admission_result res;
	cJSON *got = NULL, *want = NULL, *resp, *p;

	config_defaults(&cfg);
	/* the image the integration tier's configs give too: goldens do not follow VERSION */
	snprintf(cfg.wait_image, sizeof(cfg.wait_image), "distenv:test");
	snprintf(path, sizeof(path), DATA_DIR "/%s.request.json", name);
	req = test_read(path, &len);
	snprintf(path, sizeof(path), DATA_DIR "/%s.lookup.json", name);
	lk_txt = test_read(path, &l2);
	cfg.lookups = lk_txt != NULL; /* as serve --no-lookups when there is no look-up answer */
	if (lk_txt != NULL) {
		cJSON *l = cJSON_Parse(lk_txt);
		const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(l, "kind"));
		/* {"kind": "JobSet", "object": {...}}: the API server's answer, read by the core's
		 * reader */
		if (kind != NULL && strcmp(kind, "JobSet") == 0) {
			char *obj = cJSON_PrintUnformatted(cJSON_GetObjectItem(l, "object"));
			char perr[256];
			CHECK(obj != NULL && workload_parse(&kind_jobset, obj, strlen(obj), spec,
			                                    perr, sizeof(perr)) == 0,
			      "%s: lookup object: %s", name, obj ? perr : "missing");
			free(obj);
		}
		spec->replicas = num(l, "replicas", -1);
		spec->ordinals_start = num(l, "ordinalsStart", -1);
		spec->completions = num(l, "completions", -1);
		spec->parallelism = num(l, "parallelism", -1);
		spec->indexed = cJSON_IsTrue(cJSON_GetObjectItem(l, "indexed"));
		if (cJSON_IsArray(cJSON_GetObjectItem(l, "networkPolicies"))) {
			tb.netpols = cJSON_DetachItemFromObject(l, "networkPolicies"); /* ours */
			lk.list_netpols = table_netpols;
		}
		cJSON_Delete(l);
	}
	CHECK(req != NULL, "%s: cannot read request", name);
	if (req == NULL)
		goto out;
	/* validate-*: the /validate route; the others /mutate */
	CHECK((strncmp(name, "validate-", 9) == 0
	           ? admission_validate(req, len, &cfg, lk_txt ? &lk : NULL, &res)
	           : admission_handle(req, len, &cfg, lk_txt ? &lk : NULL, &res)) == 0,
	      "%s: handle", name);
	got = cJSON_Parse(res.body);
	resp = cJSON_GetObjectItem(got, "response");
	p = cJSON_GetObjectItem(resp, "patch");
	if (cJSON_IsString(p)) {
		size_t dn = 0;
		unsigned char *dec = base64_decode(p->valuestring, strlen(p->valuestring), &dn);
		cJSON *arr = dec ? cJSON_ParseWithLength((const char *)dec, dn) : NULL;
		CHECK(arr != NULL, "%s: patch is not base64 JSON", name);
		if (arr != NULL)
			cJSON_ReplaceItemInObject(resp, "patch", arr); /* resp owns arr */
		free(dec);
	}
	admission_result_free(&res);
	snprintf(path, sizeof(path), DATA_DIR "/%s.response.json", name);
	if (update) {
		char *txt = cJSON_Print(got);
		FILE *f = fopen(path, "w");
		if (f && txt) {
			fputs(txt, f);
			fputc('\n', f);
		}
		if (f)
			fclose(f);
		free(txt);
	}
	want_txt = test_read(path, &l3);
	want = want_txt ? cJSON_Parse(want_txt) : NULL;
	CHECK(want != NULL, "%s: no valid %s", name, path);
	if (want != NULL && got != NULL) {
		int same = cJSON_Compare(got, want, 1);
		char *g = same ? NULL : cJSON_Print(got);
		CHECK(same, "%s: response differs from %s; got:\n%s", name, path, g ? g : "");
		free(g);
	}
	free(want_txt);
out:
	cJSON_Delete(got);
	cJSON_Delete(want);
	free(req);
	free(lk_txt);
	cJSON_Delete(tb.netpols);
}

int main(void)
{
	DIR *d = opendir(DATA_DIR);
	struct dirent *e;
	int update = test_golden_update(), n = 0;

	if (update < 0) {
		if (d != NULL)
			closedir(d);
		TEST_MAIN_END("golden");
	}
	CHECK(d != NULL, "cannot open " DATA_DIR " (run from the repository root)");
	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		char name[256];
		if (l <= 13 || l - 13 >= sizeof(name) ||
		    strcmp(e->d_name + l - 13, ".request.json") != 0)
			continue;
		memcpy(name, e->d_name, l - 13);
		name[l - 13] = '\0';
		run_case(name, update);
		n++;
	}
	if (d != NULL)
		closedir(d);
	CHECK(n >= 10, "only %d golden cases found", n);
	TEST_MAIN_END("golden");
}
