package uploads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

const notFound = `{"status":"unable to find scan associated to this run id"}`

func (w *world) post(t *testing.T, u testenv.User, path, contentType string, body []byte) *testenv.Response {
	t.Helper()
	return testenv.DoBytes(t, w.up, "POST", path, body, append(testenv.Key(u), "Content-Type", contentType)...)
}

func TestCIData(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	run := newRun()
	scan := w.uploadOK(t, "engine=sarif&project=web&run_id="+run, report(t, "semgrep.sarif"))
	ctx := context.Background()

	env := `{
		"GITHUB_REPOSITORY": "acme/web-app",
		"GITHUB_RUN_ID": "9876543210",
		"GITHUB_SHA": "4c0f1e5b9a7d3e2f1a0b9c8d7e6f5a4b3c2d1e0f",
		"GITHUB_TOKEN": "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
		"ACTIONS_RUNTIME_TOKEN": "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.e30.sig",
		"ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.actions.githubusercontent.com/abc",
		"NPM_AUTH": "abc",
		"DEPLOY_KEY": "abc",
		"db_password": "hunter2",
		"GITHUB_SERVER_URL": "https://github.com",
		"CLONE_URL": "https://x-access-token:abc123@github.com/acme/web-app.git",
		"SOME_NOTE": "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
		"LEAKED": "token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 in text",
		"ATTEMPT": 2,
		"nested": {"clientSecret": {"a": 1}, "steps": ["ok", "AKIAIOSFODNN7EXAMPLE"]}
	}`
	res := w.post(t, w.uploader, "/ci-data-upload?platform=github&run_id="+run, "application/json", []byte(env))
	if res.Status != 200 || !jsonEqual(t, res.Body, `{"status":"ok"}`) {
		t.Fatalf("ci-data: %d %s", res.Status, res.Body)
	}
	got, err := bulkload.CIData(ctx, w.env.Store, w.company.ID, scan.ScanID)
	if err != nil || got.Platform != "github" || got.RunID != run || got.UploadedAt == "" {
		t.Fatalf("stored: %+v %v", got, err)
	}
	want := `{
		"GITHUB_REPOSITORY": "acme/web-app", "GITHUB_RUN_ID": "9876543210",
		"GITHUB_SHA": "4c0f1e5b9a7d3e2f1a0b9c8d7e6f5a4b3c2d1e0f",
		"GITHUB_TOKEN": "[masked]", "ACTIONS_RUNTIME_TOKEN": "[masked]",
		"ACTIONS_ID_TOKEN_REQUEST_URL": "[masked]", "NPM_AUTH": "[masked]", "DEPLOY_KEY": "[masked]",
		"db_password": "[masked]", "GITHUB_SERVER_URL": "https://github.com", "CLONE_URL": "[masked]",
		"SOME_NOTE": "[masked]", "LEAKED": "[masked]", "ATTEMPT": 2,
		"nested": {"clientSecret": "[masked]", "steps": ["ok", "[masked]"]}
	}`
	if !jsonEqual(t, []byte(got.Data), want) {
		t.Fatalf("stored data: %s", got.Data)
	}
	stored := w.companyItems(t)
	for _, secret := range []string{"ghs_16C7", "hunter2", "abc123", "ghp_", "AKIA", "PRIVATE KEY", "eyJ0eXAi"} {
		if strings.Contains(stored, secret) {
			t.Fatalf("secret %q stored", secret)
		}
	}

	// A second upload replaces the first.
	if res := w.post(t, w.uploader, "/ci-data-upload?platform=unknown&run_id="+strings.ToUpper(run), "application/json", []byte(`{"CI":"true"}`)); res.Status != 200 {
		t.Fatalf("second ci-data: %d %s", res.Status, res.Body)
	}
	if got, err := bulkload.CIData(ctx, w.env.Store, w.company.ID, scan.ScanID); err != nil || got.Platform != "unknown" || !jsonEqual(t, []byte(got.Data), `{"CI":"true"}`) {
		t.Fatalf("replaced: %+v %v", got, err)
	}

	other := w.env.Company(t, "Other")
	otherUploader := w.env.User(t, other, testenv.UserSpec{Email: "ci@other.test", Permissions: []string{"scans.upload_scan"}})
	invalid := `{"message":"Invalid JSON format","status":"error"}`
	cases := []struct {
		name, query, body string
		user              testenv.User
		status            int
		want              string
	}{
		{"not JSON", "run_id=" + run, `GITHUB_SHA=abc`, w.uploader, 400, invalid},
		{"empty", "run_id=" + run, ``, w.uploader, 400, invalid},
		{"array", "run_id=" + run, `[{"a":"b"}]`, w.uploader, 400, invalid},
		{"string", "run_id=" + run, `"x"`, w.uploader, 400, invalid},
		{"null", "run_id=" + run, `null`, w.uploader, 400, invalid},
		{"two objects", "run_id=" + run, `{}{}`, w.uploader, 400, invalid},
		{"missing run_id", "platform=github", `{}`, w.uploader, 400, `{"status":"error","message":"Missing run_id"}`},
		{"malformed run_id", "run_id=42", `{}`, w.uploader, 400, `{"status":"error","message":"run_id must be a UUID"}`},
		{"unknown run", "run_id=" + newRun(), `{}`, w.uploader, 404, notFound},
		{"another company's run", "run_id=" + run, `{"x":"y"}`, otherUploader, 404, notFound},
		{"too large", "run_id=" + run, `{"a":"` + strings.Repeat("x", uploads.MaxCIDataBytes) + `"}`, w.uploader, 413,
			`{"status":"error","message":"The CI metadata exceeds the upload limit of 256 KiB"}`},
	}
	for _, c := range cases {
		res := w.post(t, c.user, "/ci-data-upload?"+c.query, "application/json", []byte(c.body))
		if res.Status != c.status || !jsonEqual(t, res.Body, c.want) {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.Status, res.Body, c.status, c.want)
		}
	}
	// None of them changed what is stored.
	if got, err := bulkload.CIData(ctx, w.env.Store, w.company.ID, scan.ScanID); err != nil || !jsonEqual(t, []byte(got.Data), `{"CI":"true"}`) {
		t.Fatalf("after errors: %+v %v", got, err)
	}
}

// companyItems is every stored item of the company, as JSON text, read
// straight from the table.
func (w *world) companyItems(t *testing.T) string {
	t.Helper()
	kc := expression.Key(tabledef.PK).Equal(expression.Value(schema.CompanyPK(w.company.ID)))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		t.Fatal(err)
	}
	p := dynamodb.NewQueryPaginator(w.env.Store.Client(), &dynamodb.QueryInput{
		TableName: aws.String(w.env.Store.TableName()), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var items []map[string]any
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var batch []map[string]any
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &batch); err != nil {
			t.Fatal(err)
		}
		items = append(items, batch...)
	}
	if len(items) == 0 {
		t.Fatal("no items")
	}
	b, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func multipartBody(t *testing.T, field, content string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile(field, "config")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte(content))
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

const gitConfig = `[core]
	repositoryformatversion = 0
	bare = false
[remote "upstream"]
	url = git@github.com:someone-else/fork.git
	fetch = +refs/heads/*:refs/remotes/upstream/*
[remote "origin"]
	url = https://x-access-token:ghs_secretvalue123@GitHub.com/Acme/API.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[http "https://github.com/"]
	extraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA==
[branch "main"]
	remote = origin
	merge = refs/heads/main
`

func TestGitConfig(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	run := newRun()
	scan := w.uploadOK(t, "engine=sarif&project=api&branch=main&run_id="+run, report(t, "gosec.sarif"))

	// The spec's form: the raw text.
	res := w.post(t, w.uploader, "/git-config-upload?run_id="+run, "text/plain; charset=utf-8", []byte(gitConfig))
	if res.Status != 200 || !jsonEqual(t, res.Body, `{"status":"ok"}`) {
		t.Fatalf("git-config: %d %s", res.Status, res.Body)
	}
	const canonical = "https://github.com/Acme/API"
	sc, err := w.env.Store.Scans.GetScan(ctx, w.company.ID, scan.ScanID)
	if err != nil || sc.RepoURL != canonical {
		t.Fatalf("scan repo: %+v %v", sc, err)
	}
	p, err := w.env.Store.Catalog.GetProject(ctx, w.company.ID, scan.ProjectID)
	if err != nil || p.RepoURL != canonical {
		t.Fatalf("project repo: %+v %v", p, err)
	}
	// The repo filter of the findings routes matches it in any form.
	for _, repo := range []string{"git@github.com:Acme/API.git", "https://github.com/Acme/API", "ssh://git@github.com/Acme/API.git"} {
		if _, total := w.groups(t, "repo="+url.QueryEscape(repo)); total != 4 {
			t.Fatalf("repo filter %q: %d issues", repo, total)
		}
	}

	// The current client's form: multipart with a `file` part. A project
	// with a repository URL keeps it; the scan gets the new one.
	run2 := newRun()
	scan2 := w.uploadOK(t, "engine=sarif&project=api&branch=dev&run_id="+run2, report(t, "gosec.sarif"))
	body, ct := multipartBody(t, "file", "[remote \"origin\"]\n\turl = git@gitlab.example.com:acme/api-mirror.git\n")
	if res := w.post(t, w.uploader, "/git-config-upload?run_id="+run2, ct, body); res.Status != 200 {
		t.Fatalf("multipart: %d %s", res.Status, res.Body)
	}
	if sc, err := w.env.Store.Scans.GetScan(ctx, w.company.ID, scan2.ScanID); err != nil || sc.RepoURL != "https://gitlab.example.com/acme/api-mirror" {
		t.Fatalf("scan 2 repo: %+v %v", sc, err)
	}
	if p, err := w.env.Store.Catalog.GetProject(ctx, w.company.ID, scan.ProjectID); err != nil || p.RepoURL != canonical {
		t.Fatalf("project repo overwritten: %+v %v", p, err)
	}

	// No credential of the configuration is stored anywhere.
	stored := w.companyItems(t)
	for _, secret := range []string{"ghs_", "x-access-token", "extraheader", "eC1hY2Nlc3"} {
		if strings.Contains(stored, secret) {
			t.Fatalf("%q stored", secret)
		}
	}

	other := w.env.Company(t, "Other")
	otherUploader := w.env.User(t, other, testenv.UserSpec{Email: "ci@other.test", Permissions: []string{"scans.upload_scan"}})
	noFile, noFileCT := multipartBody(t, "config", gitConfig)
	bigPart, bigPartCT := multipartBody(t, "file", strings.Repeat("#", uploads.MaxGitConfigBytes+1))
	cases := []struct {
		name, query, contentType string
		body                     []byte
		user                     testenv.User
		status                   int
		want                     string
	}{
		{"empty", "run_id=" + run, "text/plain", []byte(" \n"), w.uploader, 400, "The Git configuration is empty"},
		{"not UTF-8", "run_id=" + run, "text/plain", []byte("[remote \"origin\"]\n\turl = \xff\xfe\n"), w.uploader, 400, "The Git configuration is not UTF-8 text"},
		{"too large", "run_id=" + run, "text/plain", bytes.Repeat([]byte("#"), uploads.MaxGitConfigBytes+1), w.uploader, 413, "The Git configuration exceeds the upload limit of 64 KiB"},
		{"too large part", "run_id=" + run, bigPartCT, bigPart, w.uploader, 413, "The Git configuration exceeds the upload limit of 64 KiB"},
		{"no file part", "run_id=" + run, noFileCT, noFile, w.uploader, 400, `The multipart body has no part named "file"`},
		{"not a config", "run_id=" + run, "text/plain", []byte("hello world"), w.uploader, 400, "Invalid Git configuration: not a valid Git configuration (1:1: expected section header)"},
		{"no remote", "run_id=" + run, "text/plain", []byte("[core]\n\tbare = false\n"), w.uploader, 400, "Invalid Git configuration: the Git configuration has no remote with a URL"},
		{"local remote", "run_id=" + run, "text/plain", []byte("[remote \"origin\"]\n\turl = /srv/git/api.git\n"), w.uploader, 400, `Invalid Git configuration: the URL of remote "origin" is not a remote repository URL`},
		{"missing run_id", "", "text/plain", []byte(gitConfig), w.uploader, 400, "Missing run_id"},
		{"unknown run", "run_id=" + newRun(), "text/plain", []byte(gitConfig), w.uploader, 404, ""},
		{"another company's run", "run_id=" + run, "text/plain", []byte(gitConfig), otherUploader, 404, ""},
	}
	for _, c := range cases {
		want := notFound
		if c.want != "" {
			b, _ := json.Marshal(map[string]string{"status": "error", "message": c.want})
			want = string(b)
		}
		res := w.post(t, c.user, "/git-config-upload?"+c.query, c.contentType, c.body)
		if res.Status != c.status || !jsonEqual(t, res.Body, want) {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.Status, res.Body, c.status, want)
		}
	}
	if sc, err := w.env.Store.Scans.GetScan(ctx, w.company.ID, scan.ScanID); err != nil || sc.RepoURL != canonical {
		t.Fatalf("after errors: %+v %v", sc, err)
	}
}

// The CI metadata of a pull request's run gives its scan the pull request:
// GET /scan answers pull_request_id as a string and the pull request, and
// a run that built a branch (or says too little) records none. Metadata
// sent after the scan completed asks once for the decoration of the pull
// request (a pull_request_scan event, named by the scan).
func TestCIDataRecordsThePullRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	scans := projects.New(w.env.Deps)
	ctx := context.Background()
	pull := `{"GITHUB_EVENT_NAME":"pull_request","GITHUB_REF":"refs/pull/318/merge","GITHUB_HEAD_REF":"fix/refund",` +
		`"GITHUB_BASE_REF":"main","GITHUB_REPOSITORY":"acme/web-app","GITHUB_SERVER_URL":"https://github.com",` +
		`"GITHUB_SHA":"9fceb02d0ae598e95dc970b74767f19372d61af8","GITHUB_TOKEN":"ghs_16C7e42F292c6912E7710c838347Ae178B4a"}`
	for _, c := range []struct {
		name, env, wantID string
	}{
		{"pull request", pull, "318"},
		{"push", `{"GITHUB_REF":"refs/heads/main","GITHUB_REPOSITORY":"acme/web-app"}`, ""},
		{"gitlab merge request", `{"CI_MERGE_REQUEST_IID":"42","CI_PROJECT_PATH":"acme/web","CI_COMMIT_SHA":"1f9d2c3b4a5e6f708192a3b4c5d6e7f809102030","CI_MERGE_REQUEST_TARGET_BRANCH_NAME":"main"}`, "42"},
	} {
		run := newRun()
		scan := w.uploadOK(t, "engine=sarif&project=web&branch=fix-refund&run_id="+run, report(t, "semgrep.sarif"))
		w.ingested(t, w.uploader, scan.ScanID)
		if res := w.post(t, w.uploader, "/ci-data-upload?platform=github&run_id="+run, "application/json", []byte(c.env)); res.Status != 200 {
			t.Fatalf("%s: ci-data %d %s", c.name, res.Status, res.Body)
		}
		var got struct {
			PullRequestID *string `json:"pull_request_id"`
			PullRequest   *struct {
				Repo       string `json:"repo"`
				BaseBranch string `json:"base_branch"`
			} `json:"pull_request"`
		}
		res := testenv.Do(t, scans, "GET", "/scan/"+scan.ScanID, "", testenv.Key(w.company.Admin)...)
		res.Decode(t, &got)
		if c.wantID == "" {
			if got.PullRequestID != nil || got.PullRequest != nil {
				t.Fatalf("%s: %s", c.name, res.Body)
			}
			continue
		}
		if got.PullRequestID == nil || *got.PullRequestID != c.wantID || got.PullRequest == nil || got.PullRequest.BaseBranch != "main" {
			t.Fatalf("%s: %s", c.name, res.Body)
		}
		if strings.Contains(string(res.Body), "ghs_") {
			t.Fatalf("%s: the token reached the answer: %s", c.name, res.Body)
		}
		once, err := w.env.Store.Ledger.RecordEventOnce(ctx, schema.Event{ID: pullrequest.EventID(scan.ScanID), CompanyID: w.company.ID, Type: pullrequest.EventType, CreatedAt: time.Now()})
		if err != nil || once {
			t.Fatalf("%s: the complete scan's decoration was not asked for (new %v, %v)", c.name, once, err)
		}
	}
}
