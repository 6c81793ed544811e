// Package benchkit holds what the benchmark commands (scripts/bench,
// scripts/bench-components) share: a tenant with an admin API key, one
// measured call through a handler, latency percentiles and the
// environment's defaults of their flags.
package benchkit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Tenant is a benchmark company and the API key of its admin.
type Tenant struct {
	Company int64
	Admin   int64
	APIKey  string
}

// NewTenant writes a company named name and an active admin (the n-th
// benchmark admin) with an API key.
func NewTenant(ctx context.Context, st *store.Store, n int, name string) (Tenant, error) {
	id, err := st.Ledger.NextID(ctx, "company")
	if err != nil {
		return Tenant{}, err
	}
	if err := bulkload.PutCompany(ctx, st, schema.Company{ID: id, Name: name}); err != nil {
		return Tenant{}, err
	}
	uid, err := st.Ledger.NextID(ctx, "user")
	if err != nil {
		return Tenant{}, err
	}
	if err := bulkload.PutUser(ctx, st, schema.User{ID: uid, CompanyID: id, Email: fmt.Sprintf("admin%d@bench.test", n), IsAdmin: true, Active: true}); err != nil {
		return Tenant{}, err
	}
	t := Tenant{Company: id, Admin: uid, APIKey: auth.NewAPIKey()}
	return t, bulkload.PutAPIKey(ctx, st, id, uid, t.APIKey)
}

// Sample is one measured call: its latency, and the DynamoDB requests and
// read capacity it consumed.
type Sample struct {
	Latency time.Duration
	RCU     float64
	Calls   int
}

// Call GETs path through h with apiKey and measures it; an answer other
// than 200 is an error.
func Call(ctx context.Context, h http.Handler, apiKey, path string) (Sample, error) {
	m := &ddb.Meter{}
	req := httptest.NewRequestWithContext(ddb.WithMeter(ctx, m), http.MethodGet, path, nil)
	req.Header.Set(auth.APIKeyHeader, apiKey)
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, req)
	elapsed := time.Since(start)
	if rec.Code != http.StatusOK {
		return Sample{}, fmt.Errorf("%s: %d %s", path, rec.Code, rec.Body)
	}
	calls, rcu, _ := m.Snapshot()
	return Sample{Latency: elapsed, RCU: rcu, Calls: calls}, nil
}

// Percentile is the p-th (0 to 1) latency of samples (at least one).
func Percentile(samples []Sample, p float64) time.Duration {
	l := make([]time.Duration, len(samples))
	for n, s := range samples {
		l[n] = s.Latency
	}
	slices.Sort(l)
	return l[min(len(l)-1, int(p*float64(len(l))))]
}

// MeanRCU is the samples' mean read capacity.
func MeanRCU(samples []Sample) float64 {
	var sum float64
	for _, s := range samples {
		sum += s.RCU
	}
	return sum / float64(len(samples))
}

// Millis is d in milliseconds with one decimal, as the reports print it.
func Millis(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// EnvInt is the integer in the environment variable name, or def.
func EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// EnvString is the environment variable name, or def when unset or empty.
func EnvString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
