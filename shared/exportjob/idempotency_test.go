package exportjob_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// postExport sends POST /exports with an Idempotency-Key.
func (w *world) postExport(t *testing.T, u testenv.User, body, key string) *testenv.Response {
	t.Helper()
	return testenv.Do(t, w.h, "POST", "/exports", body, append(testenv.Key(u), httpapi.IdempotencyKeyHeader, key)...)
}

// exportAudits counts the company's export.create audit entries.
func exportAudits(t *testing.T, env *testenv.Env, companyID int64) int {
	t.Helper()
	entriesPage, err := env.Store.Tenancy.ListAudit(context.Background(), companyID, tenancy.AuditFilter{Action: "export.create"}, page.Request{Limit: 10})
	entries := entriesPage.Items
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// POST /exports takes Idempotency-Key as the creations do: a retry with
// the key and the same request answers the first export again and starts
// no second job (one item, one audit entry, so one stream record for the
// worker); the key with another body is 422 and creates nothing; another
// company's same key is its own.
func TestExportIdempotencyKey(t *testing.T) {
	w := newWorld(t, 10)
	other := w.env.Company(t, "Globex")
	const body = `{"format":"csv","filters":{"urgency":"high"}}`

	first := w.postExport(t, w.company.Admin, body, "nightly-2026-03-01")
	if first.Status != http.StatusAccepted || first.Header.Get(httpapi.ReplayedHeader) != "" {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	var a exportAnswer
	first.Decode(t, &a)
	for range 2 {
		again := w.postExport(t, w.company.Admin, body, "nightly-2026-03-01")
		if again.Status != http.StatusAccepted || string(again.Body) != string(first.Body) || again.Header.Get(httpapi.ReplayedHeader) != "true" {
			t.Fatalf("retry: %d %q %s, want the first answer %s", again.Status, again.Header.Get(httpapi.ReplayedHeader), again.Body, first.Body)
		}
	}
	mismatch := w.postExport(t, w.company.Admin, `{"format":"jsonl","filters":{"urgency":"high"}}`, "nightly-2026-03-01")
	if mismatch.Status != http.StatusUnprocessableEntity || !strings.Contains(string(mismatch.Body), "Idempotency-Key was already used with another request") {
		t.Fatalf("another body: %d %s", mismatch.Status, mismatch.Body)
	}
	if n, audits := exportItems(t, w.env, w.company.ID), exportAudits(t, w.env, w.company.ID); n != 1 || audits != 1 {
		t.Fatalf("%d exports and %d audit entries after retries, want 1 and 1", n, audits)
	}
	if got, err := w.env.Store.Exports.GetExport(context.Background(), w.company.ID, a.Export.ID); err != nil || got.Format != "csv" {
		t.Fatalf("the export: %+v %v", got, err)
	}

	theirs := w.postExport(t, other.Admin, body, "nightly-2026-03-01")
	var b exportAnswer
	theirs.Decode(t, &b)
	if theirs.Status != http.StatusAccepted || theirs.Header.Get(httpapi.ReplayedHeader) != "" || b.Export.ID == a.Export.ID {
		t.Fatalf("another company's key: %d %s", theirs.Status, theirs.Body)
	}
	if n := exportItems(t, w.env, other.ID); n != 1 {
		t.Fatalf("%d exports in the other company, want 1", n)
	}
	if n := exportItems(t, w.env, w.company.ID); n != 1 {
		t.Fatalf("%d exports after the other company's request, want 1", n)
	}
}

// A malformed key is the 400 the creations answer, and nothing is created.
func TestExportIdempotencyKeyBounds(t *testing.T) {
	w := newWorld(t, 0)
	const body = `{"format":"csv"}`
	for _, key := range []string{"", strings.Repeat("k", 256), "two words", "caf\u00e9", "tab\tkey"} {
		res := w.postExport(t, w.company.Admin, body, key)
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "Idempotency-Key must be") {
			t.Errorf("key %q: %d %s", key, res.Status, res.Body)
		}
	}
	req := httptest.NewRequest("POST", testenv.Host+routes.BasePath+"/exports", strings.NewReader(body))
	req.Header.Set("SERVICE-TOKEN", w.company.Admin.APIKey)
	req.Header.Add(httpapi.IdempotencyKeyHeader, "a")
	req.Header.Add(httpapi.IdempotencyKeyHeader, "b")
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Idempotency-Key must be") {
		t.Errorf("two keys: %d %s", rec.Code, rec.Body)
	}
	if n := exportItems(t, w.env, w.company.ID); n != 0 {
		t.Fatalf("%d exports after refused keys", n)
	}
}

// Concurrent submits with one key start one export: the first claims the
// key, the others answer 409 (in progress, with Retry-After) or, once it
// answered, the same export replayed.
func TestExportIdempotencyKeyConcurrent(t *testing.T) {
	w := newWorld(t, 5)
	const n = 8
	answers := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			req := httptest.NewRequest("POST", testenv.Host+routes.BasePath+"/exports", strings.NewReader(`{"format":"sarif"}`))
			req.Header.Set("SERVICE-TOKEN", w.company.Admin.APIKey)
			req.Header.Set(httpapi.IdempotencyKeyHeader, "deploy-42")
			answers[k] = httptest.NewRecorder()
			w.h.ServeHTTP(answers[k], req)
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, rec := range answers {
		switch rec.Code {
		case http.StatusAccepted:
			var a exportAnswer
			if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
				t.Fatal(err)
			}
			ids[a.Export.ID] = true
		case http.StatusConflict:
			if rec.Header().Get("Retry-After") == "" {
				t.Errorf("409 without Retry-After: %s", rec.Body)
			}
		default:
			t.Errorf("concurrent submit: %d %s", rec.Code, rec.Body)
		}
	}
	if stored := exportItems(t, w.env, w.company.ID); len(ids) != 1 || stored != 1 {
		t.Fatalf("export ids answered %v, %d stored; want one", ids, stored)
	}
}
