package schema_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
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

// keyLiteral is what a key prefix or key part looks like in a string
// literal: "SCAN#...", "...#AUDIT...".
var keyLiteral = regexp.MustCompile(`^[A-Z_]+#|#[A-Z_]+`)

// keyLiteralsAllowed are the store packages (relative to shared/store)
// whose key literals are still to move into this package, each with why.
// An entry only shrinks this list: the rule is that every key of the
// table is built here.
var keyLiteralsAllowed = map[string]string{}

// Every key of the table is built in this package: no other non-test
// file of the store spells a key prefix or key part in a string literal
// .
func TestKeysAreBuiltOnlyInSchema(t *testing.T) {
	t.Parallel()
	root := ".."
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "schema" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !keyLiteral.MatchString(s) {
				return true
			}
			found[pkg] = true
			if _, ok := keyLiteralsAllowed[pkg]; !ok {
				t.Errorf("%s: key literal %s outside shared/store/schema; add a key builder or prefix constant there", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range keyLiteralsAllowed {
		if !found[pkg] {
			t.Logf("shared/store/%s spells no key literal any more: drop it from keyLiteralsAllowed", pkg)
		}
	}
}

// The builders moved here from the areas make the same keys,
// byte for byte, as the areas' own code made them (spelled out here as it
// was).
func TestMovedKeysAreUnchanged(t *testing.T) {
	t.Parallel()
	const c, p, scan, id, gen = int64(42), int64(7), "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94", "issue-1", "g1"
	co := fmt.Sprintf("C#%d", c)
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	bh := schema.BranchHash("main")
	for _, k := range []struct{ got, want string }{
		{schema.ScanProjectPK(c, p), fmt.Sprintf("%s#SCANS#P%012d", co, p)},
		{schema.ScanBranchPK(c, p, "main"), fmt.Sprintf("%s#SCANS#P%012d", co, p) + "#" + bh},
		{schema.ScanLogPK(c), co + "#SCANLOG"},
		{schema.ScanCount(0, ""), "SCANS"},
		{schema.ScanCount(p, ""), fmt.Sprintf("SCANS#P%012d", p)},
		{schema.ScanCount(p, "main"), fmt.Sprintf("SCANS#P%012d#%s", p, bh)},
		{schema.IngestProcessingKey(at.UnixMilli(), c, scan).PK, "INGEST#PROCESSING"},
		{schema.IngestProcessingKey(at.UnixMilli(), c, scan).SK, fmt.Sprintf("%013d#%d#%s", at.UnixMilli(), c, scan)},
		{schema.ScanCIDataKey(c, scan).SK, "SCANCI#" + scan},
		{schema.ScanSourcesKey(c, scan).SK, "SCANSRC#" + scan},
		{schema.UploadRunKey(c, scan).SK, "UPLOAD#" + scan},
		{schema.UploadQuotaKey(c).SK, "UPLOADS"},
		{schema.NewestFirst(at.UnixMilli(), id), fmt.Sprintf("%013d#%s", schema.MaxMillis-at.UnixMilli(), id)},
		{schema.SCAIssueKey(c, id).SK, "SCA#" + id},
		{schema.SCAMemberPK(c, scan), fmt.Sprintf("%s#SCANSCA#%s", co, scan)},
		{schema.SCACompanyPK(c), co + "#SCA"},
		{schema.SCAProjectPK(c, p), fmt.Sprintf("%s#SCAP#%d", co, p)},
		{schema.SCACount(0), "SCA"},
		{schema.SCACount(p), fmt.Sprintf("SCA#P%012d", p)},
		{schema.SCAScanCount(scan), "SCANSCA#" + scan},
		{schema.QualityScanPrefix(scan), "QI#" + scan + "#"},
		{schema.QualityScanOffsetPK(c, scan), co + "#QI#" + scan},
		{schema.QualityClassPK(c, scan, "Style"), fmt.Sprintf("%s#QC#%s#%s", co, scan, schema.QualityClassKey("Style"))},
		{schema.QualityDirPK(c, scan), fmt.Sprintf("%s#QDIR#%s", co, scan)},
		{schema.QualityProjectPK(c, p), fmt.Sprintf("%s#QP#%d", co, p)},
		{schema.QualityProjectCount(p), fmt.Sprintf("QUALITY#P%012d", p)},
		{schema.ExploitValuePK(3), fmt.Sprintf("EXPLOIT#V#%02d", 3)},
		{schema.ExploitUsePK(3), fmt.Sprintf("EXPLOIT#U#%02d", 3)},
		{schema.ExploitRefKey("CVE-1", ddb.Key{PK: "a", SK: "b"}).PK, "EXPLOIT#R#CVE-1"},
		{schema.ExploitRefKey("CVE-1", ddb.Key{PK: "a", SK: "b"}).SK, "a|b"},
		{schema.ExploitStateKey.PK + " " + schema.ExploitStateKey.SK, "EXPLOIT#STATE STATE"},
		{schema.ExploitEntryPK(c, 0, schema.ExploitKEV), co + "#SCAX#ALL#KEV"},
		{schema.ExploitEntryPK(c, p, schema.ExploitEPSS), fmt.Sprintf("%s#SCAX#P%012d#EPSS", co, p)},
		{schema.ExploitEntrySK("0.5", id), "0.5#" + id},
		{schema.CounterPrefix(schema.Scope{ProjectID: p}, schema.ByCWE), fmt.Sprintf("GRP#%s#%s#", schema.ByCWE, schema.ScopeID(schema.Scope{ProjectID: p}))},
		{schema.BranchSummariesPrefix(p), "SCOPE#" + schema.ScopeID(schema.Scope{ProjectID: p}) + "B"},
		{schema.DueProject(p), fmt.Sprintf("#P%012d#", p)},
		{schema.AcceptedDuePK(c), co + "#DUE#ACCEPTED"},
		{schema.AcceptedDueSK(at, id), at.UTC().Format("2006-01-02T15:04:05Z") + "#" + id},
		{schema.AcceptedDueBefore(at), at.UTC().Format("2006-01-02T15:04:05Z") + "#"},
		{schema.ScanJournalDoneSK, "~DONE"},
		{schema.ScanJournalChunkPrefix(gen), "C#" + gen + "#"},
		{schema.ScanJournalTrendSK(gen), "T#" + gen + "#"},
		{schema.ScanJournalBriefSK(gen, 3), fmt.Sprintf("%s%06d", "N#"+gen+"#", 3)},
		{schema.HistorySK("2026-11-27T10:00:00Z", 12, 3), fmt.Sprintf("%s#%010d#%04d", "2026-11-27T10:00:00Z", 12, 3)},
		{schema.IssueScopePrefix(schema.Scope{}), ""},
		{schema.IssueScopePrefix(schema.Scope{ProjectID: p}), fmt.Sprintf("P%012d#", p)},
		{schema.IssueIndexSK(p, "main", at.UnixMilli(), id), fmt.Sprintf("%s%013d#%s", fmt.Sprintf("P%012d#%s#", p, bh), schema.MaxMillis-at.UnixMilli(), id)},
		{schema.TriageRuleKey(c, id).SK, "TRIAGERULE#" + id},
		{schema.TriageRulesCount, "TRIAGERULES"},
		{schema.TriageRuleActivePK(c, p), fmt.Sprintf("%s#TRIAGE#P%d", co, p)},
		{schema.UserKey(c, 9).SK, fmt.Sprintf("USER#%d", 9)},
		{schema.UserSKPrefix, "USER#"},
		{schema.ProjectSKPrefix, "PROJECT#"},
		{schema.PolicySKPrefix, "POLICY#"},
		{schema.NotifCompanyPrefix, "NOTIF#COMPANY#"},
		{schema.NotifUserPrefix, "NOTIF#USER#"},
		{schema.RateSubject(7, 1), "key#7"},
		{schema.RateSubject(0, 1), "user#1"},
		{schema.AuditSK(at, id), at.Format(schema.AuditTimeLayout) + "#" + id},
		{schema.AuditSKUpTo(at), at.UTC().Format(schema.AuditTimeLayout) + "#\U0010FFFF"},
		{schema.EventKey(c, id).SK, "EVENT#" + id},
		{schema.EventOnceKey(c, id).SK, "ONCE#" + id},
	} {
		if k.got != k.want {
			t.Errorf("key %q, was %q", k.got, k.want)
		}
	}
	if !strings.HasPrefix(schema.ProjectKey(c, p).SK, schema.ProjectSKPrefix) {
		t.Errorf("project key %s outside %s", schema.ProjectKey(c, p).SK, schema.ProjectSKPrefix)
	}
}
