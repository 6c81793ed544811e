package issues_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
)

// GET /scan/{scan_id}/issues/sca filters on kev=true and epss_gte as the
// project's list does, keeping the scan's own findings only (not those of
// another branch's scan of the project): highest score first, in KEV
// without a score last (by id, descending), by number and by cursor
// alike, with exact totals. A token opens only the list and filter it
// came from; bad values are 400 naming the field; another company's scan
// is 404.
func TestScanSCAListFiltersOnExploitability(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	a := newWorld(t, env, "Exploited", 0, 5)
	b := newWorld(t, env, "Elsewhere", 0, 6)
	web := a.projects[0].ID
	main, ids := a.scanSCA(t, web, "main",
		[3]string{"log4j", "CVE-2021-44228", "CRITICAL"}, // KEV, score 0.94358 (added below)
		[3]string{"high", "CVE-1999-0016", "HIGH"},       // score 0.95739
		[3]string{"low", "CVE-1999-0001", "LOW"},         // score 0.03351
		[3]string{"v8", "CVE-2025-5419", "HIGH"},         // KEV, no score
		[3]string{"simple", "CVE-2024-57727", "HIGH"},    // KEV, no score
		[3]string{"none", "CVE-2099-0001", "HIGH"},       // neither
	)
	log4j, high, low, v8, simple := ids[0], ids[1], ids[2], ids[3], ids[4]
	dev, devIDs := a.scanSCA(t, web, "dev", [3]string{"log4j", "CVE-2021-44228", "CRITICAL"}, [3]string{"high", "CVE-1999-0016", "HIGH"})
	bScan, bIDs := b.scanSCA(t, b.projects[0].ID, "main", [3]string{"log4j", "CVE-2021-44228", "CRITICAL"})

	path := "/scan/" + main.ID + "/issues/sca"
	if got := a.page(t, path, vals("kev", "true")); got.TotalIssues != 0 || len(got.Issues) != 0 {
		t.Fatalf("kev=true before any import: %+v", got)
	}
	cat, sc := parseFeeds(t, "CVE-2021-44228,0.94358,0.99960\n")
	if _, err := env.Store.Exploits.Import(ctx, cat, sc); err != nil {
		t.Fatal(err)
	}
	// Reported again after the import, with a new KEV finding: enriched by
	// the write itself.
	main2, ids2 := a.scanSCA(t, web, "main", [3]string{"log4j", "CVE-2021-44228", "CRITICAL"}, [3]string{"eternal", "CVE-2017-0144", "HIGH"})
	eternal := ids2[1]
	noScore := func(ids ...string) []string {
		slices.Sort(ids)
		slices.Reverse(ids)
		return ids
	}
	for _, tc := range []struct {
		path string
		q    []string
		want []string
	}{
		{path, []string{"kev", "true"}, append([]string{log4j}, noScore(v8, simple)...)},
		{path, []string{"epss_gte", "0.5"}, []string{high, log4j}},
		{path, []string{"epss_gte", "0"}, []string{high, log4j, low}},
		{path, []string{"epss_gte", "0.95739"}, []string{high}},
		{path, []string{"kev", "true", "epss_gte", "0.9"}, []string{log4j}},
		{path, []string{"epss_gte", "0.99"}, nil},
		{"/scan/" + dev.ID + "/issues/sca", []string{"epss_gte", "0.1"}, []string{devIDs[1], devIDs[0]}},
		{"/scan/" + dev.ID + "/issues/sca", []string{"kev", "true"}, []string{devIDs[0]}},
		{"/scan/" + main2.ID + "/issues/sca", []string{"kev", "true"}, append([]string{log4j}, eternal)},
		{"/issues/sca", []string{"kev", "true", "project", "web"}, append(noScore(log4j, devIDs[0]), noScore(v8, simple, eternal)...)},
	} {
		for _, size := range []int{1, 2, 5} {
			a.walk(t, tc.path, vals(tc.q...), size, tc.want)
		}
	}
	b.walk(t, "/scan/"+bScan.ID+"/issues/sca", vals("kev", "true"), 2, bIDs)

	// Tokens stay in their list, filter and company.
	tok := a.page(t, path, vals("kev", "true", "page_size", "1")).NextPageToken
	projectTok := a.page(t, "/issues/sca", vals("kev", "true", "project", "web", "page_size", "1")).NextPageToken
	for _, c := range []struct {
		w    *world
		path string
		q    []string
	}{
		{a, "/scan/" + dev.ID + "/issues/sca", []string{"kev", "true", "next_page_token", tok}},
		{a, path, []string{"epss_gte", "0", "next_page_token", tok}},
		{a, path, []string{"next_page_token", tok}},
		{a, path, []string{"kev", "true", "next_page_token", projectTok}},
		{a, "/issues/sca", []string{"kev", "true", "project", "web", "next_page_token", tok}},
		{a, path, []string{"kev", "true", "next_page_token", strings.Replace(tok, tok[2:4], "zz", 1)}},
	} {
		if res := c.w.get(t, c.path, vals(c.q...)); res.Status != 400 {
			t.Errorf("%s %v: %d %s", c.path, c.q, res.Status, res.Body)
		}
	}
	// Another company's scan: 404 like a missing one, filtered or not.
	for _, q := range [][]string{nil, {"kev", "true"}, {"epss_gte", "0"}} {
		if res := b.get(t, path, vals(q...)); res.Status != 404 || !strings.Contains(string(res.Body), "Scan not found") {
			t.Errorf("another company's scan %v: %d %s", q, res.Status, res.Body)
		}
	}
	// Bad values: 400 naming the field, for a scan or none.
	for _, p := range []string{path, "/scan/0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7b/issues/sca"} {
		for _, q := range [][]string{{"kev", "false"}, {"kev", "1"}, {"epss_gte", "1.5"}, {"epss_gte", "-0.1"}, {"epss_gte", "high"}, {"epss_gte", "NaN"}, {"epss_gte", ""}} {
			res := a.get(t, p, vals(q...))
			if res.Status != 400 || !strings.Contains(string(res.Body), q[0]) {
				t.Errorf("%s %v: %d %s", p, q, res.Status, res.Body)
			}
		}
	}
	testenv.Recount(t, env.Store, a.company.ID)
}
