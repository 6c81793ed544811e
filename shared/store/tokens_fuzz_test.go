package store_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// tokenList is one company-scoped list read with a page token, as its
// handler reads it: page size 1, the token, and the ids of the rows read.
type tokenList struct {
	name string
	read func(ctx context.Context, company int64, token string) (ids []string, next string, err error)
	// sealed is the list, for the fuzzer to seal cursors for it (nil: the
	// fuzzer sends tokens it cannot seal).
	sealed func(company int64) page.List
}

// idsOf is what a tokenList reads of one page: its rows' ids (by id) and
// the next page's token.
func idsOf[T any](p page.Page[T], err error, id func(T) any) ([]string, string, error) {
	out := make([]string, len(p.Items))
	for n, it := range p.Items {
		out[n] = fmt.Sprint(id(it))
	}
	return out, p.Next, err
}

func tokenLists(st *store.Store, project func(company int64) int64) []tokenList {
	pr := func(token string) page.Request { return page.Request{Limit: 1, Token: token} }
	return []tokenList{
		{"teams", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Catalog.ListTeams(ctx, c, pr(token))
			return idsOf(p, err, func(t schema.Team) any { return t.ID })
		}, store.TeamList},
		{"integrations", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Catalog.ListIntegrations(ctx, c, pr(token))
			return idsOf(p, err, func(in schema.Integration) any { return in.UUID })
		}, store.IntegrationList},
		{"projects", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Catalog.ListProjects(ctx, c, pr(token))
			return idsOf(p, err, func(p schema.Project) any { return p.ID })
		}, nil},
		{"policies", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Catalog.ListPolicies(ctx, c, pr(token))
			return idsOf(p, err, func(p schema.Policy) any { return p.ID })
		}, nil},
		{"blocking rules", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Catalog.ListBlockingRules(ctx, c, pr(token))
			return idsOf(p, err, func(r schema.BlockingRule) any { return r.ID })
		}, nil},
		{"scans of a project", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Scans.ListScans(ctx, c, scans.ScanQuery{ProjectID: project(c)}, pr(token))
			return idsOf(p, err, func(sc scans.Scan) any { return sc.ID })
		}, nil},
		{"scans of the company", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Scans.ListScans(ctx, c, scans.ScanQuery{}, pr(token))
			return idsOf(p, err, func(sc scans.Scan) any { return sc.ID })
		}, nil},
		{"webhooks", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Deliveries.ListWebhooks(ctx, c, pr(token))
			return idsOf(p, err, func(e schema.WebhookEndpoint) any { return e.ID })
		}, nil},
		{"users", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Tenancy.ListUsers(ctx, c, tenancy.FacetAll, pr(token))
			return idsOf(p, err, func(u schema.User) any { return u.ID })
		}, nil},
		{"api keys", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Tenancy.ListAPIKeys(ctx, c, 0, pr(token))
			return idsOf(p, err, func(k schema.APIKey) any { return k.ID })
		}, nil},
		{"audit log", func(ctx context.Context, c int64, token string) ([]string, string, error) {
			p, err := st.Tenancy.ListAudit(ctx, c, tenancy.AuditFilter{}, pr(token))
			return idsOf(p, err, func(r tenancy.AuditRecord) any { return r.ID })
		}, nil},
	}
}

// seedTokenLists gives two companies three rows in every list.
func seedTokenLists(t testing.TB, st *store.Store) (project func(int64) int64) {
	bg := context.Background()
	projects := map[int64]int64{}
	for c := int64(1); c <= 2; c++ {
		ctx := ledger.WithAuditActor(bg, ledger.AuditActor{UserID: c * 100, Via: ledger.ViaAPIKey, KeyID: 1})
		for i := range 3 {
			name := fmt.Sprintf("c%d-%d", c, i)
			must := func(_ any, err error) {
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			must(st.Catalog.CreateTeam(ctx, schema.Team{CompanyID: c, Name: name}))
			must(st.Catalog.CreateIntegration(bg, schema.Integration{CompanyID: c, UUID: catalog.NewIntegrationUUID(), Name: name, SealedToken: "sealed"}))
			p, err := st.Catalog.CreateProject(bg, schema.Project{CompanyID: c, Name: name})
			must(p, err)
			projects[c] = p.ID
			must(st.Catalog.CreatePolicy(bg, schema.Policy{CompanyID: c, Name: name, Active: true}))
			must(st.Catalog.CreateBlockingRule(bg, schema.BlockingRule{CompanyID: c, Slug: name, Name: name, Active: true}))
			must(st.Deliveries.CreateWebhook(bg, schema.WebhookEndpoint{ID: delivery.NewWebhookID(), CompanyID: c, URL: "https://hooks.example/" + name, Types: []string{"scan_completed"}, Active: true}))
			must(nil, bulkload.PutUser(bg, st, schema.User{ID: c*100 + int64(i), CompanyID: c, Email: name + "@example.test", Active: true, Subject: "sub|" + name}))
			must(nil, bulkload.PutAPIKey(bg, st, c, c*100+int64(i), fmt.Sprintf("csk_fuzz%d%d", c, i)))
		}
		for range 3 {
			if _, err := st.Scans.CreateScan(bg, scans.Scan{CompanyID: c, ProjectID: projects[c], Branch: "main", Engine: "sarif"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return func(c int64) int64 { return projects[c] }
}

// walk reads a whole list page by page: its row ids and its tokens.
func walk(t testing.TB, l tokenList, company int64) (ids map[string]bool, tokens []string) {
	ids = map[string]bool{}
	token := ""
	for range 100 {
		rows, next, err := l.read(context.Background(), company, token)
		if err != nil {
			t.Fatalf("%s of company %d: %v", l.name, company, err)
		}
		for _, id := range rows {
			ids[id] = true
		}
		if next == "" {
			return ids, tokens
		}
		tokens = append(tokens, next)
		token = next
	}
	t.Fatalf("%s of company %d: no end", l.name, company)
	return nil, nil
}

// tokenContent is what a token carries: the part before its checksum.
func tokenContent(token string) []byte {
	data, _, _ := strings.Cut(token, ".")
	b, _ := base64.RawURLEncoding.DecodeString(data)
	return b
}

// Token forms of FuzzListPageTokens: the payload as the token itself, as
// base64url content without a checksum, or (a cursor's JSON) sealed for
// the list as an attacker can.
const (
	asToken = iota
	asKeyToken
	asSealed
	tokenForms
)

// FuzzListPageTokens reads company 1's lists on DynamoDB Local with any
// token: a payload (a list by index, a form, the payload) becomes the
// token. Whatever the token, the read answers rows or one of the client's
// errors (ErrBadPageToken, a key past DynamoDB's limits), never another
// error (DynamoDB refusing the start key would be a 500); every row read
// is one of company 1's rows of that list; a token company 2 was given for
// the list is refused; a token company 1 was given for it is read.
func FuzzListPageTokens(f *testing.F) {
	st := testenv.NewStore(f)
	lists := tokenLists(st, seedTokenLists(f, st))
	own := make([]map[string]bool, len(lists))
	mine, foreign := make([]map[string]bool, len(lists)), make([]map[string]bool, len(lists))
	for i, l := range lists {
		var tokens1, tokens2 []string
		own[i], tokens1 = walk(f, l, 1)
		_, tokens2 = walk(f, l, 2)
		if len(own[i]) != 3 || len(tokens1) == 0 || len(tokens2) == 0 {
			f.Fatalf("%s: %d rows, %d and %d tokens", l.name, len(own[i]), len(tokens1), len(tokens2))
		}
		mine[i], foreign[i] = map[string]bool{}, map[string]bool{}
		for _, tok := range tokens1 {
			mine[i][tok] = true
			f.Add(uint8(i), []byte(tok), uint8(asToken))
		}
		for _, tok := range tokens2 {
			foreign[i][tok] = true
			f.Add(uint8(i), []byte(tok), uint8(asToken))
		}
		form := uint8(asKeyToken)
		if l.sealed != nil {
			form = asSealed
		}
		f.Add(uint8(i), tokenContent(tokens1[0]), form)
		f.Add(uint8(i), tokenContent(tokens2[0]), form)
	}
	f.Add(uint8(0), []byte("!!.!!"), uint8(asToken))
	f.Add(uint8(2), []byte(`{}`), uint8(asKeyToken))
	f.Add(uint8(0), []byte(`{"k":{},"o":1}`), uint8(asSealed))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, i uint8, payload []byte, form uint8) {
		n := int(i) % len(lists)
		l := lists[n]
		var token string
		switch form % tokenForms {
		case asToken:
			token = string(payload)
		case asKeyToken:
			token = base64.RawURLEncoding.EncodeToString(payload)
		case asSealed:
			if l.sealed == nil {
				return
			}
			var c page.Cursor
			if json.Unmarshal(payload, &c) != nil {
				return
			}
			var err error
			if token, err = l.sealed(1).Seal(c); err != nil {
				return
			}
		}
		rows, next, err := l.read(ctx, 1, token)
		var long *ddb.KeyTooLongError
		switch {
		case errors.Is(err, page.ErrBadToken) || errors.As(err, &long):
			if mine[n][token] {
				t.Fatalf("%s: company 1's own token refused: %v", l.name, err)
			}
			return
		case err != nil:
			t.Fatalf("%s: token %q: %v", l.name, truncate(token), err)
		case foreign[n][token]:
			t.Fatalf("%s: company 2's token %q read rows %v of company 1", l.name, truncate(token), rows)
		}
		for _, id := range rows {
			if !own[n][id] {
				t.Fatalf("%s: token %q read row %s, not one of company 1's", l.name, truncate(token), id)
			}
		}
		if next != "" {
			if _, _, err := l.read(ctx, 1, next); err != nil {
				t.Fatalf("%s: the next token %q after %q: %v", l.name, truncate(next), truncate(token), err)
			}
		}
	})
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
