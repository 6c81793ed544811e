package uploads_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/routes"
	storescans "github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// cwes are the CWEs the generated reports spread their results over.
var cwes = []int{79, 89, 22, 78, 94}

// generated is a SARIF log of n distinct security results over n/10
// files (as the ingestion bench spreads them), spread over cwes in turn.
func generated(n int) []byte {
	files := max(n/10, 1)
	var b strings.Builder
	b.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gen"}},"results":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ruleId":"rule-%d","level":"error","message":{"text":"finding %d"},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/pkg%d/file%d.go"},"region":{"startLine":%d}}}],`+
			`"properties":{"tags":["security","external/cwe/cwe-%d"]}}`, i%cwes[0], i, i%17, i%files, 1+i%500, cwes[i%len(cwes)])
	}
	b.WriteString(`]}]}`)
	return []byte(b.String())
}

// scanView is what GET /scan/{id} answers that these tests read.
type scanView struct {
	ID           string                 `json:"id"`
	Status       string                 `json:"status"`
	FailedReason *string                `json:"failed_reason"`
	ScanErrors   []storescans.ScanError `json:"scan_errors"`
	Findings     int                    `json:"findings"`
}

// pollScan waits until the scan is no longer processing, reading it again
// after every write the store completes (the ingester's), then reads GET
// /scan/{id} as the client's wait loop does.
func pollScan(t *testing.T, env *testenv.Env, h http.Handler, u testenv.User, id string, limit time.Duration) scanView {
	t.Helper()
	env.WatchWrites(t).Until(t, "scan "+id+" no longer processing", limit, func() bool {
		sc, err := env.Store.Scans.GetScan(context.Background(), u.CompanyID, id)
		if err != nil {
			t.Fatalf("scan %s: %v", id, err)
		}
		return sc.Status != storescans.ScanProcessing
	})
	res := testenv.Do(t, h, "GET", "/scan/"+id, "", testenv.Key(u)...)
	if res.Status != 200 {
		t.Fatalf("GET /scan/%s: %d %s", id, res.Status, res.Body)
	}
	var v scanView
	res.Decode(t, &v)
	if v.Status == storescans.ScanProcessing {
		t.Fatalf("scan %s shown processing once stored %s", id, v.Status)
	}
	return v
}

// The upload answers before the findings are written: the scan is
// processing, the ingester completes it, and GET /scan/{id} shows it; the
// findings are counted once. Another company's user sees no such scan.
func TestAsyncUpload(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	scans := projects.New(w.env.Deps)
	q := "engine=sarif&project=async&branch=main&run_id=" + newRun()
	res := w.upload(t, w.uploader, q, generated(500))
	if res.Status != 200 {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	var up scanResult
	res.Decode(t, &up)
	v := pollScan(t, w.env, scans, w.company.Admin, up.ScanID, 2*time.Minute)
	if v.Status != storescans.ScanComplete || v.Findings != 500 || v.FailedReason != nil {
		t.Fatalf("scan after ingestion: %+v", v)
	}
	got, total := w.groups(t, "project=async")
	if total != 500 || got["CWE-79"] != 100 || len(got) != len(cwes) {
		t.Fatalf("groups: %v (total %d)", got, total)
	}
	other := w.env.Company(t, "Other")
	mine := testenv.Do(t, scans, "GET", "/scan/"+up.ScanID, "", testenv.Key(other.Admin)...)
	missing := testenv.Do(t, scans, "GET", "/scan/00000000-0000-4000-8000-000000000000", "", testenv.Key(other.Admin)...)
	if mine.Status != 404 || missing.Status != 404 || !bytes.Equal(mine.Body, missing.Body) {
		t.Fatalf("another company's scan: %d %s, missing: %d %s", mine.Status, mine.Body, missing.Status, missing.Body)
	}
	// The stored report is under the company's prefix.
	objs, err := testenv.Reports(t).List(context.Background(), fmt.Sprintf("%s%d/%s/", reportstore.ReportsPrefix, w.company.ID, up.ScanID))
	if err != nil || len(objs) != 1 {
		t.Fatalf("stored report: %v %v", objs, err)
	}
}

// chunkedResults is the size of the chunked upload test: 400 by default
// (eight chunks either way), to keep make test's time reasonable (the
// 2-core machine ingests some 15–80 results/s on DynamoDB Local, see the
// README);
// UPLOAD_TEST_RESULTS=25000 runs it at GitHub's limit (make bench measures
// the 25,000-result chunked upload too).
func chunkedResults(t *testing.T) int {
	if raw := os.Getenv("UPLOAD_TEST_RESULTS"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 || n > uploads.MaxFindings {
			t.Fatalf("UPLOAD_TEST_RESULTS=%q", raw)
		}
		return n
	}
	return 400
}

// A gzip report sent by the client's chunked protocol, with a chunk sent
// twice (a retry after a dropped response) and one sent out of turn, is
// assembled, ingested and counted exactly once; each chunk's answer echoes
// the offset after it.
func TestChunkedUpload(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := chunkedResults(t)
	report := testenv.Gzip(t, generated(n))
	const chunks = 8
	size := (len(report) + chunks - 1) / chunks
	q := "/scan-upload?engine=sarif&project=chunked&branch=main&run_id=" + newRun()
	send := func(off int) *testenv.Response {
		end := min(off+size, len(report))
		return testenv.DoBytes(t, w.up, "POST", q, report[off:end], append(testenv.Key(w.uploader),
			"Content-Type", "application/json", "Upload-Offset", strconv.Itoa(off), "Upload-Length", strconv.Itoa(len(report)))...)
	}
	var last *testenv.Response
	for i := 0; i*size < len(report); i++ {
		off := i * size
		if i == 3 {
			// Out of turn: the chunk after this one first.
			res := send(off + size)
			if res.Status != 409 || res.Header.Get("Upload-Offset") != strconv.Itoa(off) {
				t.Fatalf("chunk out of turn: %d %v %s", res.Status, res.Header, res.Body)
			}
		}
		last = send(off)
		end := min(off+size, len(report))
		if last.Status != 200 || last.Header.Get("Upload-Offset") != strconv.Itoa(end) {
			t.Fatalf("chunk at %d: %d %v %s", off, last.Status, last.Header, last.Body)
		}
		if i == 2 {
			// The response to chunk 2 was lost: the client sends it again.
			if again := send(off); again.Status != 200 || again.Header.Get("Upload-Offset") != strconv.Itoa(end) {
				t.Fatalf("repeated chunk: %d %s", again.Status, again.Body)
			}
		}
	}
	var up scanResult
	last.Decode(t, &up)
	if up.Status != "ok" || up.ScanID == "" {
		t.Fatalf("last chunk answered %s", last.Body)
	}
	// The last chunk repeated answers the same scan.
	if again := send((len(report) - 1) / size * size); again.Status != 200 || !bytes.Equal(again.Body, last.Body) {
		t.Fatalf("last chunk again: %d %s", again.Status, again.Body)
	}
	start := time.Now()
	v := pollScan(t, w.env, projects.New(w.env.Deps), w.uploader, up.ScanID, 10*time.Minute)
	if v.Status != storescans.ScanComplete || v.Findings != n {
		t.Fatalf("scan: %+v", v)
	}
	t.Logf("%d results (%d bytes gzip) ingested %s after the last chunk", n, len(report), time.Since(start).Round(time.Millisecond))
	got, total := w.groups(t, "project=chunked")
	if total != n || got["CWE-79"] != (n+len(cwes)-1)/len(cwes) {
		t.Fatalf("groups: %v (total %d, want %d)", got, total, n)
	}
	testenv.Recount(t, w.env.Store, w.company.ID)
}

// Chunk headers are checked at once: bad values are 400, a total past the
// limits 413 naming the limit.
func TestChunkErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	q := "/scan-upload?engine=sarif&project=p&run_id=" + newRun()
	body := testenv.Gzip(t, generated(10))
	cases := []struct {
		name        string
		off, length string
		body        []byte
		status      int
		message     string
	}{
		{"offset alone", "0", "", body, 400, "Upload-Offset and Upload-Length must be sent together"},
		{"bad offset", "-1", "10", body, 400, "Upload-Offset must be a non-negative integer"},
		{"bad length", "0", "x", body, 400, "Upload-Length must be a positive integer"},
		{"offset past length", "10", "10", body, 400, "Upload-Offset must be less than Upload-Length"},
		{"chunk past length", "0", "5", body, 400, fmt.Sprintf("The chunk ends at byte %d, past Upload-Length 5", len(body))},
		{"too long", "0", strconv.Itoa(64<<20 + 1), body, 413, "The report exceeds the upload limit of 64 MiB"},
		{"compressed too long", "0", strconv.Itoa(10<<20 + 1), body, 413, "The compressed report exceeds the upload limit of 10 MiB"},
		{"gap", "100", "100000", body, 409, "Expected the chunk at offset 0"},
		{"too many chunks", "0", strconv.Itoa(2 << 20), body, 400, "A report comes in at most 1024 chunks: send chunks of at least 2048 bytes"},
		{"not gzip after all", "0", "4", []byte{0x1f, 0x8b, 0, 0}, 400, "The report is not valid gzip"},
	}
	for _, c := range cases {
		h := append(testenv.Key(w.uploader), "Content-Type", "application/json", "Upload-Offset", c.off)
		if c.length != "" {
			h = append(h, "Upload-Length", c.length)
		}
		res := testenv.DoBytes(t, w.up, "POST", q, c.body, h...)
		want := fmt.Sprintf(`{"message":%q,"status":"error"}`, c.message)
		if res.Status != c.status || !jsonEqual(t, res.Body, want) {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.Status, res.Body, c.status, want)
		}
	}
	if ps, err := w.env.Store.Catalog.AllProjects(context.Background(), w.company.ID); err != nil || len(ps) != 0 {
		t.Fatalf("projects after rejected chunks: %+v %v", ps, err)
	}
}

// quietWorld is a world whose table has no stream, so no worker runs
// unless the test runs it.
func quietWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.New(t)
	w := &world{env: env, up: uploads.New(env.Deps), find: issues.New(env.Deps), company: env.Company(t, "Acme")}
	w.uploader = env.User(t, w.company, testenv.UserSpec{Email: "ci@acme.test", Permissions: []string{routes.PermUploadScan}})
	return w
}

// A redelivered stream record (the worker run twice on one scan, by the
// poller's path and by the Lambda handler's) never duplicates findings.
func TestWorkerRedelivery(t *testing.T) {
	t.Parallel()
	w := quietWorld(t)
	res := w.upload(t, w.uploader, "engine=sarif&project=again&branch=main&run_id="+newRun(), generated(300))
	var up scanResult
	res.Decode(t, &up)
	if sc, err := w.env.Store.Scans.GetScan(context.Background(), w.company.ID, up.ScanID); err != nil || sc.Status != storescans.ScanProcessing {
		t.Fatalf("before the worker: %+v %v", sc, err)
	}
	in := w.env.Ingester(t)
	job := ingester.Job{CompanyID: w.company.ID, ScanID: up.ScanID}
	// A first delivery cut short after the quality and SCA writes, then
	// the whole job twice more.
	if err := in.Ingest(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if err := in.Ingest(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	out, err := in.HandleStream(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventName: "INSERT",
		Change: events.DynamoDBStreamRecord{SequenceNumber: "1", NewImage: map[string]events.DynamoDBAttributeValue{
			"SK":         events.NewStringAttribute(schema.ScanSKPrefix + up.ScanID),
			"id":         events.NewStringAttribute(up.ScanID),
			"company_id": events.NewNumberAttribute(strconv.FormatInt(w.company.ID, 10)),
			"run_id":     events.NewStringAttribute(newRun()),
			"status":     events.NewStringAttribute(storescans.ScanProcessing),
		}},
	}}})
	if err != nil || len(out.BatchItemFailures) != 0 {
		t.Fatalf("stream handler: %+v %v", out, err)
	}
	_, total := w.groups(t, "project=again")
	if total != 300 {
		t.Fatalf("counted %d after redelivery, want 300", total)
	}
	testenv.Recount(t, w.env.Store, w.company.ID)
}

// A report the worker cannot read ends the scan incomplete with the
// reason and a scan error, as GET /scan/{id} shows; a second delivery
// changes nothing.
func TestWorkerFailure(t *testing.T) {
	t.Parallel()
	w := quietWorld(t)
	scans := projects.New(w.env.Deps)
	res := w.upload(t, w.uploader, "engine=sarif&project=broken&branch=main&run_id="+newRun(), generated(3))
	var up scanResult
	res.Decode(t, &up)
	sc, err := w.env.Store.Scans.GetScan(context.Background(), w.company.ID, up.ScanID)
	if err != nil {
		t.Fatal(err)
	}
	// The stored report is damaged before the worker reads it.
	if err := testenv.Reports(t).Put(context.Background(), reportstore.ReportKey(w.company.ID, sc.ID, sc.ReportSHA256), []byte{0x1f, 0x8b, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	w.env.Ingest(t, w.company.ID, up.ScanID)
	w.env.Ingest(t, w.company.ID, up.ScanID)
	v := pollScan(t, w.env, scans, w.company.Admin, up.ScanID, time.Second)
	if v.Status != storescans.ScanIncomplete || v.FailedReason == nil || *v.FailedReason != "The uploaded report could not be read" ||
		len(v.ScanErrors) != 1 || v.ScanErrors[0].Level != "error" || v.ScanErrors[0].Message != "The report is not valid gzip" { // the upload's own answer for the same report
		t.Fatalf("failed scan: %+v", v)
	}
	if _, total := w.groups(t, "project=broken"); total != 0 {
		t.Fatalf("findings of a failed scan: %d", total)
	}
	// The scan_failed notification event is recorded with the failure.
	st := w.env.Store
	item, err := st.Client().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(st.TableName()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(w.company.ID)}, "SK": &types.AttributeValueMemberS{Value: "EVENT#scan_failed-" + up.ScanID},
	}})
	if err != nil || item.Item == nil {
		t.Fatalf("scan_failed event: %v %v", item, err)
	}
	ev, ok, err := schema.DecodeEventImage(item.Item)
	if err != nil || !ok || ev.Type != "scan_failed" || !strings.Contains(string(ev.Data), `"failed_reason":"The uploaded report could not be read"`) ||
		!strings.Contains(string(ev.Data), `"project_name":"broken"`) {
		t.Fatalf("scan_failed event: %+v %s %v", ev, ev.Data, err)
	}
}

// Compressed reports: sent with Content-Encoding: gzip they may expand
// past the 10 MiB a body carries (up to 64 MiB, counted while reading, so
// a gzip bomb is 413 naming both limits); a body that is itself a gzip
// file is read the same.
func TestGzipReports(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	pad := func(n int) []byte {
		return append(append([]byte(`{"version":"2.1.0","runs":[],"pad":"`), bytes.Repeat([]byte("a"), n)...), `"}`...)
	}
	gz := append(testenv.Key(w.uploader), "Content-Type", "application/json", "Content-Encoding", "gzip")
	res := testenv.DoBytes(t, w.up, "POST", "/scan-upload?engine=sarif&project=gz&run_id="+newRun(), testenv.Gzip(t, pad(12<<20)), gz...)
	if res.Status != 200 {
		t.Fatalf("12 MiB decompressed: %d %s", res.Status, res.Body)
	}
	var up scanResult
	res.Decode(t, &up)
	w.ingested(t, w.uploader, up.ScanID)

	res = testenv.DoBytes(t, w.up, "POST", "/scan-upload?engine=sarif&project=gz&run_id="+newRun(), testenv.Gzip(t, pad(64<<20)), gz...)
	want := `{"status":"error","message":"The request body exceeds the upload limit of 10 MiB as sent (64 MiB decompressed); send a larger report gzip-compressed or in chunks (Upload-Offset, Upload-Length)"}`
	if res.Status != 413 || !jsonEqual(t, res.Body, want) {
		t.Fatalf("gzip bomb: %d %s", res.Status, res.Body)
	}

	file := testenv.Gzip(t, generated(10))
	up = w.uploadOK(t, "engine=sarif&project=gzfile&run_id="+newRun(), file)
	if _, total := w.groups(t, "project=gzfile"); total != 10 {
		t.Fatalf("gzip file: %d counted", total)
	}
	bad := testenv.DoBytes(t, w.up, "POST", "/scan-upload?engine=sarif&project=gzfile&run_id="+newRun(), file[:len(file)/2],
		append(testenv.Key(w.uploader), "Content-Type", "application/json")...)
	if bad.Status != 400 || !jsonEqual(t, bad.Body, `{"status":"error","message":"The report is not valid gzip"}`) {
		t.Fatalf("truncated gzip file: %d %s", bad.Status, bad.Body)
	}
}
