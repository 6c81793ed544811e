package schema_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// Every key a company owns starts with its partition, so an id is only
// ever looked up inside the caller's company; the same id of two
// companies is two keys.
func TestCompanyKeysStartWithTheCompany(t *testing.T) {
	t.Parallel()
	for _, c := range []int64{1, 42} {
		pk := schema.CompanyPK(c)
		for name, k := range map[string]ddb.Key{
			"user":       schema.UserKey(c, 7),
			"user email": schema.UserEmailKey(c, "A@Acme.test"),
			"user facet": schema.UserFacetKey(c, "all", 7),
			"api key":    schema.APIKeyRecordKey(c, 7),
			"scm login":  schema.SCMLoginKey(c, "octo"),
			"sequence":   schema.CompanySeqKey(c, "user"),
			"event":      schema.EventKey(c, "scan_completed-1"),
			"op":         schema.TriageOpKey(c, "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94"),
		} {
			if k.PK != pk && !strings.HasPrefix(k.PK, pk+"#") {
				t.Errorf("%s key %+v is outside company %d's partition %s", name, k, c, pk)
			}
		}
		if a := schema.AuditActionPK(c, "x"); !strings.HasPrefix(a, schema.AuditPK(c)) {
			t.Errorf("audit index %s outside the company's log", a)
		}
	}
	if schema.UserKey(1, 7) == schema.UserKey(42, 7) {
		t.Fatal("two companies' user 7 share a key")
	}
	// Keys that sort by id sort numerically.
	if a, b := schema.UserFacetKey(1, "all", 9).SK, schema.UserFacetKey(1, "all", 10).SK; a >= b {
		t.Fatalf("facet keys do not sort by id: %s >= %s", a, b)
	}
	if schema.UserEmailKey(1, "A@Acme.test") != schema.UserEmailKey(1, "a@acme.test") {
		t.Fatal("email keys depend on case")
	}
	if sk := schema.ScanSK("abc"); sk != schema.ScanSKPrefix+"abc" || !strings.HasPrefix(schema.ScanRunSK("abc"), "SCANRUN#") ||
		strings.HasPrefix(schema.ScanRunSK("abc"), schema.ScanSKPrefix) {
		t.Fatalf("scan keys %s %s: a run's look-up must not read as a scan", sk, schema.ScanRunSK("abc"))
	}
}

func TestCanonicalUUID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0B8F4A52-8C1E-4E7A-9D3B-2F6C5A1E0D94": "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94",
		"0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94": "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94",
	} {
		if got, ok := schema.CanonicalUUID(in); !ok || got != want {
			t.Errorf("%s: %s %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "x", "0b8f4a528c1e4e7a9d3b2f6c5a1e0d94", "{0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94}", "urn:uuid:0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94"} {
		if got, ok := schema.CanonicalUUID(in); ok {
			t.Errorf("%q accepted as %s", in, got)
		}
	}
}

// An event becomes an outbox item that a stream record's image decodes
// back to it; an invalid event is refused, and an image of anything else
// is no event.
func TestEventItemRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 10, 0, 0, 123, time.UTC)
	e := schema.Event{ID: "scan_completed-1", CompanyID: 7, Type: "scan_completed", CreatedAt: at, Data: json.RawMessage(`{"findings":3}`)}
	it, err := e.Item(time.Now())
	if err != nil || it.Entity != schema.EventEntity || it.ExpiresAt != at.Add(schema.EventTTL).Unix() {
		t.Fatalf("item %+v %v", it, err)
	}
	image, err := attributevalue.MarshalMap(it)
	if err != nil {
		t.Fatal(err)
	}
	back, ok, err := schema.DecodeEventImage(image)
	if err != nil || !ok || back.ID != e.ID || back.CompanyID != 7 || !back.CreatedAt.Equal(at) || string(back.Data) != `{"findings":3}` {
		t.Fatalf("decoded %+v %v %v", back, ok, err)
	}
	if _, ok, err := schema.DecodeEventImage(map[string]types.AttributeValue{"entity": &types.AttributeValueMemberS{Value: "triage"}}); ok || err != nil {
		t.Fatalf("another entity decoded: %v %v", ok, err)
	}
	for _, bad := range []schema.Event{
		{CompanyID: 7, Type: "x"},
		{ID: "a#b", CompanyID: 7, Type: "x"},
		{ID: "a b", CompanyID: 7, Type: "x"},
		{ID: strings.Repeat("a", 201), CompanyID: 7, Type: "x"},
		{ID: "a", CompanyID: 7, Type: "x", Data: json.RawMessage(`[1]`)},
		{ID: "a", Type: "x"},
	} {
		if _, err := bad.Item(at); err == nil {
			t.Errorf("event %+v accepted", bad)
		}
	}
}
