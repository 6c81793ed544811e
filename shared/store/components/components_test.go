package components_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	comp "github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func mk(t testing.TB, purl string, licenses ...string) comp.Component {
	t.Helper()
	c, err := comp.New(purl, "", comp.Direct, licenses)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ref(company, project int64, branch, engine string, at time.Time) components.SetRef {
	return components.SetRef{CompanyID: company, ProjectID: project, ProjectName: fmt.Sprintf("p%d", project), Branch: branch,
		Engine: engine, ScanID: fmt.Sprintf("00000000-0000-4000-8000-%012d", at.Unix()%1_000_000_000_000), ScanAt: at}
}

func replace(t *testing.T, st *store.Store, r components.SetRef, list []comp.Component) (components.Changes, int, float64) {
	t.Helper()
	var m ddb.Meter
	ch, err := st.Components.ReplaceComponents(ddb.WithMeter(context.Background(), &m), r, list)
	if err != nil {
		t.Fatal(err)
	}
	_, _, wcu := m.Snapshot()
	writes := writeRequests(&m)
	return ch, writes, wcu
}

// writeRequests counts the write calls a meter saw: its requests less the
// replace's reads (the head and the set: two).
func writeRequests(m *ddb.Meter) int {
	n, _, _ := m.Snapshot()
	return n - 2
}

// deps is a set of n transitive npm packages, dep-000@1.0.0 and on.
func deps(n int) []comp.Component {
	var out []comp.Component
	for i := range n {
		out = append(out, compOf(fmt.Sprintf("pkg:npm/dep-%03d@1.0.%d", i, i)))
	}
	return out
}

func compOf(purl string) comp.Component {
	c, err := comp.New(purl, "", comp.Transitive, []string{"MIT"})
	if err != nil {
		panic(err)
	}
	return c
}

// Replacing a set writes what changed: everything the first time, only
// the head again, then one item per changed component with its counters.
func TestReplaceWritesWhatChanged(t *testing.T) {
	st := testenv.NewStore(t)
	set := deps(120)
	ch, writes, _ := replace(t, st, ref(1, 7, "main", "cyclonedx", t0), set)
	if ch.Added != 120 || writes < 3 {
		t.Fatalf("first: %+v, %d writes", ch, writes)
	}
	ch, writes, wcu := replace(t, st, ref(1, 7, "main", "cyclonedx", t0.Add(time.Hour)), set)
	if ch.Unchanged != 120 || ch.Added+ch.Removed+ch.Changed != 0 || writes != 1 || wcu > 1 {
		t.Fatalf("same set again: %+v, %d writes, %.1f WCU (want the head only)", ch, writes, wcu)
	}
	next := slices.Clone(set[1:])                        // dep-000 gone
	next = append(next, compOf("pkg:npm/new-one@2.0.0")) // one new
	next[0] = mk(t, next[0].PURL, "Apache-2.0")          // dep-001's licence and relation change
	ch, writes, _ = replace(t, st, ref(1, 7, "main", "cyclonedx", t0.Add(2*time.Hour)), next)
	if ch != (components.Changes{Added: 1, Removed: 1, Changed: 1, Unchanged: 118}) || writes != 2 {
		t.Fatalf("three changes: %+v, %d writes (want one transaction and the head)", ch, writes)
	}
	recount(t, st, 1, "pkg:npm/dep-000", "pkg:npm/dep-001", "pkg:npm/new-one")
	kept, err := st.Components.ComponentSet(context.Background(), 1, 7, "main", "cyclonedx")
	if err != nil || len(kept) != 120 || kept[0].PURL != "pkg:npm/dep-001@1.0.1" || kept[119].PURL != "pkg:npm/new-one@2.0.0" {
		t.Fatalf("set read back: %d %v", len(kept), err)
	}
	hs, _, err := st.Components.HoldersOf(context.Background(), 1, "pkg:npm/dep-001", "1.0.1", 10)
	if err != nil || len(hs) != 1 || hs[0].Relation != comp.Direct || !slices.Equal(hs[0].Licenses, []string{"Apache-2.0"}) ||
		hs[0].ProjectName != "p7" || !hs[0].ScanAt.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("changed holder: %+v %v", hs, err)
	}
}

// Counters follow holders across projects, branches and engines, and
// drop to zero (left out of the directories) when the last holder goes.
func TestDirectoriesCountHolders(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	log4j := func(v string) comp.Component { return compOf("pkg:maven/org.apache.logging.log4j/log4j-core@" + v) }
	replace(t, st, ref(1, 1, "main", "cyclonedx", t0), []comp.Component{log4j("2.14.1")})
	replace(t, st, ref(1, 1, "release/1.x", "cyclonedx", t0), []comp.Component{log4j("2.14.1")})
	replace(t, st, ref(1, 1, "main", "spdx", t0), []comp.Component{log4j("2.14.1")})
	replace(t, st, ref(1, 2, "main", "cyclonedx", t0), []comp.Component{log4j("2.17.1")})
	replace(t, st, ref(2, 1, "main", "cyclonedx", t0), []comp.Component{log4j("2.14.1")}) // another company
	pkg := "pkg:maven/org.apache.logging.log4j/log4j-core"
	vs, err := st.Components.PackageVersions(ctx, 1, pkg)
	if err != nil || len(vs) != 2 || vs[0].Version != "2.14.1" || vs[0].Holders != 3 || vs[1].Holders != 1 || vs[0].Ecosystem != "Maven" {
		t.Fatalf("versions: %+v %v", vs, err)
	}
	if n, err := st.Components.PackageProjects(ctx, 1, pkg); err != nil || n != 2 {
		t.Fatalf("projects: %d %v", n, err)
	}
	replace(t, st, ref(1, 2, "main", "cyclonedx", t0.Add(time.Hour)), nil)
	if n, _ := st.Components.PackageProjects(ctx, 1, pkg); n != 1 {
		t.Fatalf("projects after project 2 dropped it: %d", n)
	}
	if vs, _ := st.Components.PackageVersions(ctx, 1, pkg); len(vs) != 1 {
		t.Fatalf("versions after 2.17.1 went: %+v", vs)
	}
	recount(t, st, 1, pkg)
	recount(t, st, 2, pkg)
}

// A scan older than the one that wrote the set changes nothing.
func TestStaleScanChangesNothing(t *testing.T) {
	st := testenv.NewStore(t)
	replace(t, st, ref(1, 1, "main", "osv-scanner", t0.Add(time.Hour)), []comp.Component{compOf("pkg:npm/a@1.0.0")})
	ch, writes, _ := replace(t, st, ref(1, 1, "main", "osv-scanner", t0), []comp.Component{compOf("pkg:npm/a@0.9.0")})
	if !ch.Stale || writes != -1 { // one read (the head), no write
		t.Fatalf("older scan: %+v, %d", ch, writes)
	}
	if vs, _ := st.Components.PackageVersions(context.Background(), 1, "pkg:npm/a"); len(vs) != 1 || vs[0].Version != "1.0.0" {
		t.Fatalf("versions: %+v", vs)
	}
}

// Holders page by key within the package, a version range is a key range,
// a version set a filter; another company's holders never appear, and its
// token is refused.
func TestHoldersPages(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	for p := int64(1); p <= 25; p++ {
		replace(t, st, ref(1, p, "main", "cyclonedx", t0), []comp.Component{compOf(fmt.Sprintf("pkg:npm/lodash@4.17.%d", 10+p%5)), compOf("pkg:npm/other@1.0.0")})
	}
	replace(t, st, ref(2, 1, "main", "cyclonedx", t0), []comp.Component{compOf("pkg:npm/lodash@4.17.11")})
	all := testenv.Pages(t, 7, nil, func(q page.Request) (page.Page[components.Holder], error) {
		return st.Components.ListHolders(ctx, 1, components.HolderQuery{Package: "pkg:npm/lodash", View: "all"}, q)
	})
	first, err := st.Components.ListHolders(ctx, 1, components.HolderQuery{Package: "pkg:npm/lodash", View: "all"}, page.Request{Limit: 7})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Components.ListHolders(ctx, 2, components.HolderQuery{Package: "pkg:npm/lodash", View: "all"}, page.Request{Limit: 7, Token: first.Next}); err == nil {
		t.Fatal("company 2 opened company 1's token")
	}
	if len(all) != 25 {
		t.Fatalf("all: %d holders", len(all))
	}
	for _, h := range all {
		if h.ScanID == "" || h.ProjectName == "" {
			t.Fatalf("holder without its head: %+v", h)
		}
	}
	onePage, err := st.Components.ListHolders(ctx, 1, components.HolderQuery{Package: "pkg:npm/lodash", Version: "4.17.11", View: "all"}, page.Request{Limit: 100})
	one := onePage.Items
	if err != nil || len(one) != 5 {
		t.Fatalf("one version: %d %v", len(one), err)
	}
	somePage, err := st.Components.ListHolders(ctx, 1, components.HolderQuery{Package: "pkg:npm/lodash", Versions: []string{"4.17.10", "4.17.14"}, View: "x"}, page.Request{Limit: 100})
	some := somePage.Items
	if err != nil || len(some) != 10 {
		t.Fatalf("two versions: %d %v", len(some), err)
	}
	nonePage, err := st.Components.ListHolders(ctx, 1, components.HolderQuery{Package: "pkg:npm/lodash", Versions: []string{}, View: "x"}, page.Request{Limit: 100})
	none := nonePage.Items
	if err != nil || len(none) != 0 {
		t.Fatalf("no version: %d %v", len(none), err)
	}
	otherPage, err := st.Components.ListHolders(ctx, 2, components.HolderQuery{Package: "pkg:npm/lodash", View: "all"}, page.Request{Limit: 100})
	other := otherPage.Items
	if err != nil || len(other) != 1 || other[0].ProjectID != 1 {
		t.Fatalf("company 2: %+v %v", other, err)
	}
}

// recount checks the version directory of each package against its
// holders on the package index (a count of the index, as recount.Check
// does for the store's other counters).
func recount(t *testing.T, st *store.Store, company int64, pkgs ...string) {
	t.Helper()
	ctx := context.Background()
	for _, pkg := range pkgs {
		counted := map[string]int64{}
		var start map[string]types.AttributeValue
		for {
			res, err := st.Client().Query(ctx, &dynamodb.QueryInput{TableName: aws.String(st.TableName()), IndexName: aws.String(tabledef.GSI1.Name),
				KeyConditionExpression:    aws.String("GSI1PK = :p"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: fmt.Sprintf("C#%d#PKG#%s", company, pkg)}},
				ExclusiveStartKey:         start})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range res.Items {
				counted[it["version"].(*types.AttributeValueMemberS).Value]++
			}
			if start = res.LastEvaluatedKey; start == nil {
				break
			}
		}
		vs, err := st.Components.PackageVersions(ctx, company, pkg)
		if err != nil {
			t.Fatal(err)
		}
		kept := map[string]int64{}
		for _, v := range vs {
			kept[v.Version] = v.Holders
		}
		if fmt.Sprint(kept) != fmt.Sprint(counted) {
			t.Errorf("company %d %s: directory %v, index %v", company, pkg, kept, counted)
		}
	}
}
