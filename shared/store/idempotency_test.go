package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
)

// A key is taken until its request answers; a kept answer is replayed
// until the key expires; a request that died frees its key when its lease
// runs out, and its late completion then fails instead of overwriting.
func TestIdempotencyKeyLifecycle(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	claim := func(subject, key, fp string, at time.Time) (*store.IdempotencyClaim, *store.IdempotencyRecord) {
		t.Helper()
		c, rec, err := st.ClaimIdempotencyKey(ctx, 1, subject, key, fp, at)
		if err != nil {
			t.Fatal(err)
		}
		if (c == nil) == (rec == nil) {
			t.Fatalf("claim %v record %v: want exactly one", c, rec)
		}
		return c, rec
	}
	first, _ := claim("key#1", "k", "fp1", t0)
	if _, rec := claim("key#1", "k", "fp1", t0.Add(time.Second)); rec == nil || rec.Done || rec.Fingerprint != "fp1" {
		t.Fatalf("while in progress: %+v", rec)
	}
	if c, _ := claim("key#2", "k", "fp1", t0); c == nil {
		t.Fatal("another credential's key of the same name is its own")
	}
	answer := store.IdempotentAnswer{Status: 201, Header: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"id":1}`)}
	if err := st.CompleteIdempotencyKey(ctx, first, answer); err != nil {
		t.Fatal(err)
	}
	_, rec := claim("key#1", "k", "fp1", t0.Add(23*time.Hour))
	if rec == nil || !rec.Done || rec.Answer.Status != 201 || string(rec.Answer.Body) != `{"id":1}` || rec.Answer.Header["Content-Type"] != "application/json" {
		t.Fatalf("kept answer: %+v", rec)
	}
	if c, _ := claim("key#1", "k", "fp2", t0.Add(24*time.Hour+time.Second)); c == nil {
		t.Fatal("an expired key (not yet removed by TTL) is free again")
	}

	dead, _ := claim("key#1", "dies", "fp", t0)
	if _, rec := claim("key#1", "dies", "fp", t0.Add(4*time.Minute)); rec == nil {
		t.Fatal("within its lease the key stays taken")
	}
	taker, _ := claim("key#1", "dies", "fp", t0.Add(6*time.Minute))
	if taker == nil {
		t.Fatal("past its lease the key is free")
	}
	if err := st.CompleteIdempotencyKey(ctx, dead, answer); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("late completion of a lost claim: %v, want ErrConflict", err)
	}
	if err := st.ReleaseIdempotencyKey(ctx, dead); err != nil {
		t.Fatal(err)
	}
	if _, rec := claim("key#1", "dies", "fp", t0.Add(7*time.Minute)); rec == nil {
		t.Fatal("a lost claim's release must leave the new claim alone")
	}
	if err := st.ReleaseIdempotencyKey(ctx, taker); err != nil {
		t.Fatal(err)
	}
	if c, _ := claim("key#1", "dies", "fp", t0.Add(7*time.Minute)); c == nil {
		t.Fatal("a released key is free")
	}
}
