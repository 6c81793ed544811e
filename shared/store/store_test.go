package store_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestNextIDIsASequence(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	for want := int64(1); want <= 3; want++ {
		got, err := st.NextID(ctx, "thing")
		if err != nil || got != want {
			t.Fatalf("NextID = %d, %v; want %d", got, err, want)
		}
	}
	if other, _ := st.NextID(ctx, "other"); other != 1 {
		t.Fatalf("sequences are independent: %d", other)
	}
}

func TestProjectsAndErrors(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	p, err := st.CreateProject(ctx, store.Project{CompanyID: 1, Name: "Web", RepoURL: "https://git.example/acme/web"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateProject(ctx, store.Project{CompanyID: 1, Name: "web"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate name: %v", err)
	}
	if _, err := st.CreateProject(ctx, store.Project{CompanyID: 2, Name: "Web"}); err != nil {
		t.Fatalf("same name in another company: %v", err)
	}
	if got, err := st.ProjectByName(ctx, 1, "WEB"); err != nil || got.ID != p.ID {
		t.Fatalf("by name: %+v %v", got, err)
	}
	if _, err := st.GetProject(ctx, 2, p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another company's id must be not found: %v", err)
	}
	list, err := st.ListProjects(ctx, 1)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	if err := store.Update(st, ctx, store.Key{PK: store.CompanyPK(1), SK: "PROJECT#nope"}, expression.Set(expression.Name("x"), expression.Value(1)), nil, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a missing item: %v", err)
	}
	cond := expression.Name("name").Equal(expression.Value("Other"))
	if err := store.Update(st, ctx, p.Key, expression.Set(expression.Name("x"), expression.Value(1)), &cond, nil); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("failed extra condition: %v", err)
	}
}

type row struct {
	store.Key
	store.OffsetKeys
}

func rowList(c int64) store.List {
	return store.List{Partition: store.CompanyPK(c), SKPrefix: "ROW#", Forward: true, OffsetPartition: store.CompanyPK(c) + "#ROWS"}
}

// pageThrough reads l by cursor from its first page and returns the rows.
func pageThrough(t *testing.T, st *store.Store, l store.List, size int) []string {
	t.Helper()
	var seen []string
	q := store.PageQuery{Limit: size}
	for {
		var rows []row
		res, err := store.QueryPage(st, context.Background(), l, q, &rows)
		if err != nil {
			t.Fatal(err)
		}
		if res.Offset != len(seen) {
			t.Fatalf("page at offset %d after %d rows", res.Offset, len(seen))
		}
		for _, r := range rows {
			seen = append(seen, r.SK)
		}
		if res.Next == "" {
			return seen
		}
		q.Token = res.Next
	}
}

func TestPagesByCursorAndByNumberAgree(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	for c := int64(1); c <= 2; c++ {
		for i := range 7 {
			k := store.Key{PK: store.CompanyPK(c), SK: fmt.Sprintf("ROW#%d", i)}
			if err := store.PutItem(st, ctx, row{k, store.OffsetKeys{OffsetPK: rowList(c).OffsetPartition, OffsetSK: k.SK}}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	byCursor := pageThrough(t, st, rowList(1), 3)
	if fmt.Sprint(byCursor) != "[ROW#0 ROW#1 ROW#2 ROW#3 ROW#4 ROW#5 ROW#6]" {
		t.Fatalf("paged rows %v", byCursor)
	}
	var byNumber []string
	for offset := 0; offset < 12; offset += 3 {
		var rows []row
		res, err := store.QueryPage(st, ctx, rowList(1), store.PageQuery{Limit: 3, Offset: offset}, &rows)
		if err != nil || res.Offset != offset {
			t.Fatalf("offset %d: %+v %v", offset, res, err)
		}
		for _, r := range rows {
			byNumber = append(byNumber, r.SK)
		}
	}
	if fmt.Sprint(byNumber) != fmt.Sprint(byCursor) {
		t.Fatalf("by number %v, by cursor %v", byNumber, byCursor)
	}
}

func TestPageTokensStayInTheirList(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	for c := int64(1); c <= 2; c++ {
		for i := range 5 {
			if err := store.PutItem(st, ctx, store.Key{PK: store.CompanyPK(c), SK: fmt.Sprintf("ROW#%d", i)}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	var rows []row
	res, err := store.QueryPage(st, ctx, rowList(1), store.PageQuery{Limit: 2}, &rows)
	if err != nil || res.Next == "" {
		t.Fatalf("first page: %+v %v", res, err)
	}
	token := res.Next
	data, sum, _ := strings.Cut(token, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(data)
	edited := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), "ROW#1", "ROW#3", 1))) + "." + sum
	other := rowList(1)
	other.SKPrefix = "ROW#1"
	for name, c := range map[string]struct {
		l     store.List
		token string
	}{
		"another company's list": {rowList(2), token},
		"another list":           {other, token},
		"edited":                 {rowList(1), edited},
		"truncated":              {rowList(1), token[:len(token)-2]},
		"no checksum":            {rowList(1), data},
		"garbage":                {rowList(1), "!!.!!"},
	} {
		if _, err := store.QueryPage(st, ctx, c.l, store.PageQuery{Limit: 2, Token: c.token}, &rows); !errors.Is(err, store.ErrBadPageToken) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestMeterAddsUpConsumedCapacity(t *testing.T) {
	st := testenv.NewStore(t)
	var m store.Meter
	ctx := store.WithMeter(context.Background(), &m)
	if _, err := st.CreateProject(ctx, store.Project{CompanyID: 1, Name: "Web"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ProjectByName(ctx, 1, "Web"); err != nil {
		t.Fatal(err)
	}
	// Creating: id, projects revision, transaction, teams' selectors; by
	// name: guard and project.
	req, rcu, wcu := m.Snapshot()
	if req != 6 || rcu <= 0 || wcu <= 0 {
		t.Fatalf("requests %d rcu %.1f wcu %.1f", req, rcu, wcu)
	}
}
