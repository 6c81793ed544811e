package exportjob_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/internal/localstream"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/exportjob"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/streamimage"
)

// Streams: the worker reads the table's stream (through the ingester), on
// a DynamoDB Local of this package's own.
func TestMain(m *testing.M) { testenv.MainOwnDynamoDB(m) }

// world is a company with projects and issues, the issues group's handler
// and the export worker.
type world struct {
	env      *testenv.Env
	h        http.Handler
	company  *testenv.Company
	projects []schema.Project
	x        *exportjob.Worker
	// writes signals the store's writes once run started the worker.
	writes *testenv.Writes
}

func newWorld(t *testing.T, n int) *world {
	t.Helper()
	env := testenv.NewStreaming(t)
	w := &world{env: env, h: issues.New(env.Deps), company: env.Company(t, "Acme")}
	w.x = &exportjob.Worker{Store: exportjob.StoreOf(env.Store), Bucket: testenv.Reports(t), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), PageSize: 37}
	ctx := context.Background()
	for _, name := range []string{"Web", "Lib", "Tools"} {
		p, err := env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: w.company.ID, Name: name, RepoURL: "https://github.com/acme/" + strings.ToLower(name)})
		if err != nil {
			t.Fatal(err)
		}
		w.projects = append(w.projects, p)
	}
	r := rand.New(rand.NewPCG(uint64(n), 7))
	var batch []findings.Issue
	for k := range n {
		p := w.projects[r.IntN(len(w.projects))]
		batch = append(batch, findings.Issue{
			ID:        uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("export-%d", k))).String(),
			ProjectID: p.ID, ProjectName: p.Name, Branch: []string{"main", "dev"}[r.IntN(2)],
			Tool: []string{"gosec", "semgrep"}[r.IntN(2)], RuleID: fmt.Sprintf("R%d", r.IntN(9)),
			CWE: []int{79, 89, 22, findings.NoCWE}[r.IntN(4)], FilePath: fmt.Sprintf("src/pkg%d/file%d.go", r.IntN(3), r.IntN(3)),
			Line: 1 + r.IntN(400), Urgency: findings.Urgencies[r.IntN(4)], Status: findings.Statuses[r.IntN(len(findings.Statuses))],
			Title: "=SUM(A1)", Fingerprint: fmt.Sprintf("fp%d", k), CreatedAt: fmt.Sprintf("2025-04-%02dT10:00:00Z", 1+r.IntN(28)),
		})
	}
	if _, err := bulkload.CreateIssues(ctx, env.Store, w.company.ID, batch); err != nil {
		t.Fatal(err)
	}
	return w
}

// run starts the ingester, which runs the export items through the
// worker, on the table's stream through the local poller, as the dev
// server does, until the test ends.
func (w *world) run(t *testing.T) {
	t.Helper()
	streams, err := localstream.NewClient(context.Background(), testenv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	w.writes = w.env.WatchWrites(t)
	in := w.env.Ingester(t)
	in.Exporter = w.x
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p := &localstream.Poller{DB: w.env.Store.Client(), Table: w.env.Store.TableName(), Log: w.x.Log, Streams: streams,
		Idle: 20 * time.Millisecond, Consumers: []localstream.Consumer{in.HandleImage}}
	go func() { defer close(done); _ = p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

type exportAnswer struct {
	Status string `json:"status"`
	Export struct {
		ID           string            `json:"id"`
		Format       string            `json:"format"`
		Filters      map[string]string `json:"filters"`
		Status       string            `json:"status"`
		RowsRead     int64             `json:"rows_read"`
		RowsExpected int64             `json:"rows_expected"`
		Rows         *int64            `json:"rows"`
		Error        string            `json:"error"`
		Download     *struct {
			URL      string `json:"url"`
			Filename string `json:"filename"`
		} `json:"download"`
	} `json:"export"`
}

func (w *world) create(t *testing.T, u testenv.User, body string) exportAnswer {
	t.Helper()
	res := testenv.Do(t, w.h, "POST", "/exports", body, testenv.Key(u)...)
	if res.Status != http.StatusAccepted {
		t.Fatalf("POST /exports %s: %d %s", body, res.Status, res.Body)
	}
	var a exportAnswer
	res.Decode(t, &a)
	if a.Export.Status != exports.Queued || a.Export.Rows != nil {
		t.Fatalf("new export %+v", a.Export)
	}
	return a
}

// wait follows the export until it is done or failed (read again after
// every write the store completes) and answers it as GET /exports/{id}
// shows it.
func (w *world) wait(t *testing.T, u testenv.User, id string) exportAnswer {
	t.Helper()
	if w.writes == nil {
		t.Fatal("wait before run")
	}
	w.writes.Until(t, "export "+id+" done or failed", 2*time.Minute, func() bool {
		e, err := w.env.Store.Exports.GetExport(context.Background(), w.company.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return e.Status == exports.Done || e.Status == exports.Failed
	})
	res := testenv.Do(t, w.h, "GET", "/exports/"+id, "", testenv.Key(u)...)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /exports/%s: %d %s", id, res.Status, res.Body)
	}
	var a exportAnswer
	res.Decode(t, &a)
	if a.Export.Status != exports.Done && a.Export.Status != exports.Failed {
		t.Fatalf("export %s shown %s once stored done or failed", id, a.Export.Status)
	}
	return a
}

// download reads a done export's object through its link.
func download(t *testing.T, a exportAnswer) []byte {
	t.Helper()
	if a.Export.Download == nil {
		t.Fatalf("export %s has no download link", a.Export.ID)
	}
	res, err := http.Get(a.Export.Download.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("download: %d %v %s", res.StatusCode, err, b)
	}
	if cd := res.Header.Get("Content-Disposition"); !strings.Contains(cd, a.Export.Download.Filename) {
		t.Errorf("Content-Disposition %q", cd)
	}
	return b
}

// listIDs walks GET /issues with q by its tokens and returns the ids and
// the total it announces.
func (w *world) listIDs(t *testing.T, q url.Values) ([]string, int) {
	t.Helper()
	var ids []string
	total, token := 0, ""
	for {
		q.Set("page_size", "100")
		q.Set("next_page_token", token)
		res := testenv.Do(t, w.h, "GET", "/issues?"+q.Encode(), "", testenv.Key(w.company.Admin)...)
		var p struct {
			TotalIssues   int    `json:"total_issues"`
			NextPageToken string `json:"next_page_token"`
			Issues        []struct {
				ID string `json:"id"`
			} `json:"issues"`
		}
		res.Decode(t, &p)
		total = p.TotalIssues
		for _, i := range p.Issues {
			ids = append(ids, i.ID)
		}
		if token = p.NextPageToken; token == "" {
			return ids, total
		}
	}
}

// A CSV export holds exactly the issues of the list with the same filters,
// as many rows as its total, whatever the filters (a whole company, a
// project and urgency, a CWE and status, a file and CWE, which has no
// counter); JSON Lines and SARIF carry the same count.
func TestExportCountsEqualTheList(t *testing.T) {
	w := newWorld(t, 700)
	w.run(t)
	for _, filters := range []map[string]string{
		{},
		{"project": "web", "urgency": "high"},
		{"cwe": "CWE-79", "status": "open"},
		{"file_path_exact": "src/pkg1/file2.go", "cwe": "89"},
		{"repo": "https://github.com/acme/lib.git", "branch": "dev"},
	} {
		q := url.Values{}
		for k, v := range filters {
			q.Set(k, v)
		}
		want, total := w.listIDs(t, q)
		if total != len(want) || (len(filters) == 0 && total != 700) {
			t.Fatalf("%v: list total %d, %d ids", filters, total, len(want))
		}
		fb, _ := json.Marshal(filters)
		a := w.wait(t, w.company.Admin, w.create(t, w.company.Admin, `{"format":"csv","filters":`+string(fb)+`}`).Export.ID)
		if a.Export.Status != exports.Done || *a.Export.Rows != int64(total) || a.Export.RowsRead != int64(total) || a.Export.RowsExpected != int64(total) {
			t.Fatalf("%v: export %+v, list total %d", filters, a.Export, total)
		}
		recs, err := csv.NewReader(bytes.NewReader(download(t, a))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs)-1 != total {
			t.Fatalf("%v: %d CSV rows, list total %d", filters, len(recs)-1, total)
		}
		var got []string
		for _, r := range recs[1:] {
			got = append(got, r[0])
			if r[5] != "'=SUM(A1)" {
				t.Fatalf("title cell %q is not guarded", r[5])
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%v: CSV ids differ from the list's (in order)", filters)
		}
	}
	q := url.Values{"project": {"Tools"}}
	_, total := w.listIDs(t, q)
	a := w.wait(t, w.company.Admin, w.create(t, w.company.Admin, `{"format":"jsonl","filters":{"project":"Tools"}}`).Export.ID)
	if lines := bytes.Count(download(t, a), []byte("\n")); lines != total || *a.Export.Rows != int64(total) {
		t.Fatalf("JSON Lines: %d lines, %v rows, list total %d", lines, *a.Export.Rows, total)
	}
	a = w.wait(t, w.company.Admin, w.create(t, w.company.Admin, `{"format":"sarif","filters":{"project":"Tools"}}`).Export.ID)
	var log struct {
		Runs []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(download(t, a), &log); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range log.Runs {
		n += len(r.Results)
	}
	if n != total || *a.Export.Rows != int64(total) || len(log.Runs) != 2 {
		t.Fatalf("SARIF: %d results in %d runs, %v rows, list total %d", n, len(log.Runs), *a.Export.Rows, total)
	}
}

// exportItems counts the company's export items.
func exportItems(t *testing.T, env *testenv.Env, companyID int64) int32 {
	t.Helper()
	out, err := env.Store.Client().Query(context.Background(), &dynamodb.QueryInput{
		TableName:              aws.String(env.Store.TableName()),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":pk": &ddbtypes.AttributeValueMemberS{Value: schema.CompanyPK(companyID)},
			":sk": &ddbtypes.AttributeValueMemberS{Value: "EXPORT#"},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Count
}

// Bad input is a 400 naming the problem, and nothing is created; filters
// matching no project answer as the list does.
func TestExportBadInputCreatesNothing(t *testing.T) {
	w := newWorld(t, 0)
	for _, c := range []struct{ body, msg string }{
		{`{"format":"xlsx"}`, "format must be one of"},
		{`{"format":""}`, "format must be one of"},
		{`{"format":"csv","filters":{"severity":"high"}}`, `Unknown filter \"severity\"`},
		{`{"format":"csv","filters":{"urgency":"urgent"}}`, "urgency must be one of"},
		{`{"format":"csv","filters":{"cwe":"XSS"}}`, "cwe must be a CWE id"},
		{`{"format":"csv","filters":{"status":"gone"}}`, "status must be one of"},
		{`{"format":"vex"}`, "vex needs the project filter"},
		{`{"format":"vex","filters":{"project":"Web","branch":"main"}}`, "vex needs the project filter"},
		{`{"format":"csv","filters":{"project":7}}`, ""},
		{`{"format":"csv","extra":1}`, ""},
	} {
		res := testenv.Do(t, w.h, "POST", "/exports", c.body, testenv.Key(w.company.Admin)...)
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), c.msg) {
			t.Errorf("%s: %d %s", c.body, res.Status, res.Body)
		}
	}
	res := testenv.Do(t, w.h, "POST", "/exports", `{"format":"csv","filters":{"project":"Nope"}}`, testenv.Key(w.company.Admin)...)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "no_project_found") {
		t.Errorf("unknown project: %d %s", res.Status, res.Body)
	}
	if n := exportItems(t, w.env, w.company.ID); n != 0 {
		t.Fatalf("%d exports created by bad input", n)
	}
}

// Who may export: the export permission (admins hold it), a company admin
// for an export without the project filter. An export is seen by its
// creator and the admins only; another company's export id, another
// user's and an unknown one answer alike.
func TestExportAccessAndTenantIsolation(t *testing.T) {
	w := newWorld(t, 20)
	other := w.env.Company(t, "Globex")
	plain := w.env.User(t, w.company, testenv.UserSpec{Email: "plain@acme.test"})
	exporterUser := w.env.User(t, w.company, testenv.UserSpec{Email: "exp@acme.test", Permissions: []string{routes.PermExportIssues}})

	if res := testenv.Do(t, w.h, "POST", "/exports", `{"format":"csv","filters":{"project":"Web"}}`, testenv.Key(plain)...); res.Status != http.StatusForbidden {
		t.Fatalf("without the permission: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "POST", "/exports", `{"format":"csv"}`, testenv.Key(exporterUser)...); res.Status != http.StatusForbidden ||
		!strings.Contains(string(res.Body), "company admin") {
		t.Fatalf("company-wide by a non-admin: %d %s", res.Status, res.Body)
	}
	mine := w.create(t, exporterUser, `{"format":"csv","filters":{"project":"Web"}}`).Export.ID
	admins := w.create(t, w.company.Admin, `{"format":"csv"}`).Export.ID
	missing := testenv.Do(t, w.h, "GET", "/exports/"+uuid.NewString(), "", testenv.Key(other.Admin)...)
	if missing.Status != http.StatusNotFound {
		t.Fatalf("unknown export: %d %s", missing.Status, missing.Body)
	}
	for _, c := range []struct {
		u  testenv.User
		id string
	}{{other.Admin, mine}, {other.Admin, admins}, {exporterUser, admins}, {plain, mine}} {
		res := testenv.Do(t, w.h, "GET", "/exports/"+c.id, "", testenv.Key(c.u)...)
		want := http.StatusNotFound
		if c.u.APIKey == plain.APIKey {
			want = http.StatusForbidden // no permission at all
		}
		if res.Status != want || (want == http.StatusNotFound && !bytes.Equal(res.Body, missing.Body)) {
			t.Errorf("user %d reading export %s: %d %s", c.u.ID, c.id, res.Status, res.Body)
		}
	}
	for _, c := range []struct {
		u  testenv.User
		id string
	}{{exporterUser, mine}, {w.company.Admin, mine}, {w.company.Admin, admins}} {
		if res := testenv.Do(t, w.h, "GET", "/exports/"+c.id, "", testenv.Key(c.u)...); res.Status != http.StatusOK {
			t.Errorf("user %d reading export %s: %d %s", c.u.ID, c.id, res.Status, res.Body)
		}
	}
	if n := exportItems(t, w.env, other.ID); n != 0 {
		t.Fatalf("%d exports in the other company", n)
	}
}

// The worker is idempotent: a done export is never started again, an
// attempt superseded by a later one writes nothing, an export tried
// MaxAttempts times is failed, and one whose filters cannot be read fails
// with the reason.
func TestWorkerAttempts(t *testing.T) {
	w := newWorld(t, 30)
	ctx := context.Background()
	st := w.env.Store
	e, err := st.Exports.CreateExport(ctx, schema.ExportItem{CompanyID: w.company.ID, UserID: w.company.Admin.ID, Format: "csv", Filters: "{}", Query: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	job := exportjob.Job{CompanyID: w.company.ID, ID: e.ID}
	if err := w.x.Run(ctx, job); err != nil {
		t.Fatal(err)
	}
	done, err := st.Exports.GetExport(ctx, w.company.ID, e.ID)
	if err != nil || done.Status != exports.Done || done.Rows != 30 || done.Attempt != 1 || done.Bytes == 0 {
		t.Fatalf("export %+v, %v", done, err)
	}
	if err := w.x.Run(ctx, job); err != nil {
		t.Fatal(err)
	}
	again, _ := st.Exports.GetExport(ctx, w.company.ID, e.ID)
	if again != done {
		t.Fatalf("a second delivery changed the export:\n%+v\n%+v", done, again)
	}

	e, _ = st.Exports.CreateExport(ctx, schema.ExportItem{CompanyID: w.company.ID, UserID: w.company.Admin.ID, Format: "csv", Filters: "{}", Query: "{}"})
	first, ok, err := st.Exports.StartExport(ctx, w.company.ID, e.ID, exportjob.MaxAttempts)
	if err != nil || !ok || first.Attempt != 1 {
		t.Fatalf("first start: %+v %v %v", first, ok, err)
	}
	if _, ok, err := st.Exports.StartExport(ctx, w.company.ID, e.ID, exportjob.MaxAttempts); err != nil || !ok {
		t.Fatalf("second start: %v %v", ok, err)
	}
	if err := st.Exports.FinishExport(ctx, w.company.ID, e.ID, first.Attempt, exports.Result{Rows: 1, ObjectKey: "k"}); err != ddb.ErrConflict {
		t.Fatalf("a superseded attempt finished: %v", err)
	}
	if err := st.Exports.ExportProgress(ctx, w.company.ID, e.ID, first.Attempt, 1, 1); err != ddb.ErrConflict {
		t.Fatalf("a superseded attempt recorded progress: %v", err)
	}
	if _, ok, err := st.Exports.StartExport(ctx, w.company.ID, e.ID, exportjob.MaxAttempts); err != nil || !ok {
		t.Fatalf("third start: %v %v", ok, err)
	}
	if err := w.x.Run(ctx, exportjob.Job{CompanyID: w.company.ID, ID: e.ID}); err != nil {
		t.Fatal(err)
	}
	gaveUp, _ := st.Exports.GetExport(ctx, w.company.ID, e.ID)
	if gaveUp.Status != exports.Failed || !strings.Contains(gaveUp.Error, "gave up after 3 attempts") {
		t.Fatalf("after %d attempts: %+v", exportjob.MaxAttempts, gaveUp)
	}

	e, _ = st.Exports.CreateExport(ctx, schema.ExportItem{CompanyID: w.company.ID, UserID: w.company.Admin.ID, Format: "csv", Filters: "{}", Query: "not json"})
	if err := w.x.Run(ctx, exportjob.Job{CompanyID: w.company.ID, ID: e.ID}); err != nil {
		t.Fatal(err)
	}
	bad, _ := st.Exports.GetExport(ctx, w.company.ID, e.ID)
	if bad.Status != exports.Failed || bad.Error == "" {
		t.Fatalf("unreadable filters: %+v", bad)
	}
	res := testenv.Do(t, w.h, "GET", "/exports/"+e.ID, "", testenv.Key(w.company.Admin)...)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"status":"failed"`) || strings.Contains(string(res.Body), "download") {
		t.Fatalf("failed export: %d %s", res.Status, res.Body)
	}
}

// JobOf selects what deployspec.ExportFilter selects, new export items,
// when they name their company and id; nothing else is a job.
func TestJobOf(t *testing.T) {
	item := func(change func(map[string]ddbtypes.AttributeValue)) map[string]ddbtypes.AttributeValue {
		img := map[string]ddbtypes.AttributeValue{
			"PK": &ddbtypes.AttributeValueMemberS{Value: "C#7"}, "SK": &ddbtypes.AttributeValueMemberS{Value: "EXPORT#e1"},
			"entity": &ddbtypes.AttributeValueMemberS{Value: schema.ExportEntity}, "id": &ddbtypes.AttributeValueMemberS{Value: "e1"},
			"company_id": &ddbtypes.AttributeValueMemberN{Value: "7"},
		}
		if change != nil {
			change(img)
		}
		return img
	}
	if job, ok := exportjob.JobOf(streamimage.FromSDK(item(nil))); !ok || job != (exportjob.Job{CompanyID: 7, ID: "e1"}) {
		t.Fatalf("export item: %+v %v", job, ok)
	}
	for name, change := range map[string]func(map[string]ddbtypes.AttributeValue){
		"bulk triage": func(m map[string]ddbtypes.AttributeValue) {
			m["entity"] = &ddbtypes.AttributeValueMemberS{Value: schema.TriageEntity}
		},
		"no entity":  func(m map[string]ddbtypes.AttributeValue) { delete(m, "entity") },
		"no id":      func(m map[string]ddbtypes.AttributeValue) { delete(m, "id") },
		"no company": func(m map[string]ddbtypes.AttributeValue) { delete(m, "company_id") },
		"company 0": func(m map[string]ddbtypes.AttributeValue) {
			m["company_id"] = &ddbtypes.AttributeValueMemberN{Value: "0"}
		},
	} {
		if job, ok := exportjob.JobOf(streamimage.FromSDK(item(change))); ok {
			t.Errorf("%s: a job %+v", name, job)
		}
	}
}
