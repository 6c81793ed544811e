package prdecor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/gitlabhost"
	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

const (
	glPath  = "platform/payments/api" // a project in a subgroup
	glIID   = 12
	glSHA   = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	glToken = "glpat-decorator"
)

// glWorld is world (whose GitHub integration must leave a GitLab merge
// request alone) with a GitLab instance under a relative URL root and the
// company's GitLab integration of it.
type glWorld struct {
	*world
	gl *gitlabhost.Server
}

func newGitLabWorld(t *testing.T) *glWorld {
	t.Helper()
	w := &glWorld{world: newWorld(t), gl: gitlabhost.New(t, gitlabhost.WithToken(glToken, "codescan-bot"), gitlabhost.WithRelativeRoot("/gitlab"))}
	w.gl.AddMergeRequest(glPath, gitlabhost.MergeRequest{IID: glIID, SHA: glSHA, SourceBranch: "fix-refund", TargetBranch: "main"})
	ctx := context.Background()
	in := schema.Integration{CompanyID: w.acme.ID, UUID: catalog.NewIntegrationUUID(), Name: "GitLab", Provider: "gitlab",
		AccountID: fmt.Sprint(w.gl.Account(glToken).ID), AccountName: "codescan-bot", OrgAllowlist: []string{"Platform"},
		BaseURL: w.gl.HostURL(), GatewayPrefix: w.gl.Root()}
	sealed, err := w.dec.Sealer.Seal(ctx, glToken, catalog.IntegrationTokenRecord(w.acme.ID, in.UUID))
	if err != nil {
		t.Fatal(err)
	}
	in.SealedToken = sealed
	if _, err := w.env.Store.Catalog.CreateIntegration(ctx, in); err != nil {
		t.Fatal(err)
	}
	return w
}

// mergeRequestVars are a GitLab CI merge request pipeline's variables.
func (w *glWorld) mergeRequestVars() string {
	return fmt.Sprintf(`{"CI_PIPELINE_SOURCE":"merge_request_event","CI_MERGE_REQUEST_IID":"%d","CI_PROJECT_PATH":%q,"CI_COMMIT_SHA":%q,`+
		`"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME":"fix-refund","CI_MERGE_REQUEST_TARGET_BRANCH_NAME":"main","CI_SERVER_URL":%q}`,
		glIID, glPath, glSHA, w.gl.HostURL())
}

func (w *glWorld) notes() []gitlabhost.Note { return w.gl.Notes(glPath, glIID) }

func (w *glWorld) lastStatus(t *testing.T) gitlabhost.Status {
	t.Helper()
	st := w.gl.Statuses(glPath, glSHA)
	if len(st) == 0 {
		t.Fatal("no status on the merge request's head")
	}
	return st[len(st)-1]
}

// A merge request that adds one critical finding to a project with twenty
// on main: a failed status on the head and one note listing exactly that
// finding; the same delivery again sends nothing; a second scan after the
// fix edits the same note and the status succeeds. The GitHub integration
// of the company calls nothing.
func TestDecoratesTheMergeRequest(t *testing.T) {
	w := newGitLabWorld(t)
	w.scan(t, "main", sarif(files(20)...), "")
	first := w.scan(t, "fix-refund", sarif(append(files(20), "api/refund.py")...), w.mergeRequestVars())
	w.dispatch(t, w.completed(first))

	notes := w.notes()
	if len(notes) != 1 {
		ins, _ := w.env.Store.Catalog.AllIntegrations(context.Background(), w.acme.ID)
		for _, in := range ins {
			log, _ := w.env.Store.Deliveries.ListAttempts(context.Background(), w.acme.ID, in.UUID, "", page.Request{Limit: 10})
			t.Logf("%s %s: %+v", in.Name, in.Provider, log.Items)
		}
		sc, _ := w.env.Store.Scans.GetScan(context.Background(), w.acme.ID, first)
		t.Logf("pr %+v requests %d", sc.PullRequest, len(w.gl.Requests()))
		t.Fatalf("%d notes, want 1", len(notes))
	}
	body := notes[0].Body
	t.Logf("the note on merge request !%d:\n%s", glIID, body)
	if !strings.HasPrefix(body, prdecor.Marker(1)) || !strings.Contains(body, "api/refund.py:12") || strings.Contains(body, "legacy/q") ||
		!strings.Contains(body, "**1 new**, 20 already on the base branch") || !strings.Contains(body, "Suggested fix for ` api/refund.py:12 `") {
		t.Fatalf("note:\n%s", body)
	}
	if st := w.lastStatus(t); st.State != "failed" || st.Name != "codescan/payments" || !strings.Contains(st.Description, "block") {
		t.Fatalf("status: %+v", st)
	}
	if n := len(w.host.Requests()); n != 0 {
		t.Fatalf("the GitHub integration sent %d requests for a GitLab merge request", n)
	}

	requests := len(w.gl.Requests())
	w.dispatch(t, w.completed(first)) // a redelivery
	if n := len(w.gl.Requests()); n != requests {
		t.Fatalf("a redelivered event sent %d more requests", n-requests)
	}

	second := w.scan(t, "fix-refund", sarif(files(20)...), w.mergeRequestVars())
	w.dispatch(t, w.completed(second))
	notes = w.notes()
	if len(notes) != 1 || notes[0].ID != notesID(t, w) || !strings.Contains(notes[0].Body, "**Fixed on this branch**") || !strings.Contains(notes[0].Body, "**0 new**") {
		t.Fatalf("after the fix: %+v", notes)
	}
	if st := w.lastStatus(t); st.State != "success" {
		t.Fatalf("status after the fix: %+v", st)
	}
	if c, e := len(w.gl.RequestsFor("postApiV4ProjectsIdMergeRequestsNoteableIdNotes")), len(w.gl.RequestsFor("putApiV4ProjectsIdMergeRequestsNoteableIdNotesNoteId")); c != 1 || e != 1 {
		t.Fatalf("%d notes created, %d edited; want 1 and 1", c, e)
	}
	for _, r := range w.gl.Requests() {
		if !strings.HasPrefix(r.Path, "/gitlab/api/v4/projects/platform%2Fpayments%2Fapi/") || r.Header.Get("PRIVATE-TOKEN") != glToken {
			t.Fatalf("request %s %s", r.Method, r.Path)
		}
	}
}

// notesID is the id of the one note the first decoration created.
func notesID(t *testing.T, w *glWorld) int64 {
	t.Helper()
	created := w.gl.RequestsFor("postApiV4ProjectsIdMergeRequestsNoteableIdNotes")
	if len(created) != 1 {
		t.Fatalf("%d notes created", len(created))
	}
	return w.notes()[0].ID
}

// A note of someone else that starts with the marker is never taken for
// ours; a link lost (no id known) finds our note by marker and author and
// edits it.
func TestNoteFoundByMarkerAndAuthor(t *testing.T) {
	w := newGitLabWorld(t)
	w.gl.AddNote(glPath, glIID, gitlabhost.User{ID: 77, Username: "mallory"}, prdecor.Marker(1)+"\nfake summary")
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), w.mergeRequestVars())
	w.dispatch(t, w.completed(id))
	notes := w.notes()
	if len(notes) != 2 || notes[0].Body != prdecor.Marker(1)+"\nfake summary" || notes[1].Author.Username != "codescan-bot" {
		t.Fatalf("notes: %+v", notes)
	}
}

func TestLostLinkEditsOurNoteFoundByMarker(t *testing.T) {
	w := newGitLabWorld(t)
	w.gl.AddNote(glPath, glIID, gitlabhost.User{ID: 77, Username: "mallory"}, prdecor.Marker(1)+"\nfake summary")
	ours := w.gl.AddNote(glPath, glIID, w.gl.Account(glToken), prdecor.Marker(1)+"\na summary whose link was lost")
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), w.mergeRequestVars())
	w.dispatch(t, w.completed(id))
	notes := w.notes()
	if len(notes) != 2 || notes[0].Body != prdecor.Marker(1)+"\nfake summary" || notes[1].ID != ours ||
		!strings.Contains(notes[1].Body, "api/refund.py:12") {
		t.Fatalf("notes: %+v", notes)
	}
	if n := len(w.gl.RequestsFor("postApiV4ProjectsIdMergeRequestsNoteableIdNotes")); n != 0 {
		t.Fatalf("%d notes created, want ours edited", n)
	}
}

// GitLab's 429: the attempt waits for its Retry-After, nothing is dropped,
// and the retry posts one note.
func TestGitLabRateLimitIsWaitedOut(t *testing.T) {
	w := newGitLabWorld(t)
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), w.mergeRequestVars())
	now := time.Now()
	w.engine.Now = func() time.Time { return now }
	w.gl.RateLimit(1, 30*time.Second)
	w.dispatch(t, w.completed(id))
	if n := len(w.notes()); n != 0 {
		t.Fatalf("%d notes while limited", n)
	}
	now = now.Add(20 * time.Second)
	if ran, err := w.engine.RunDue(context.Background()); err != nil || ran != 0 {
		t.Fatalf("a retry ran before GitLab's Retry-After: %d %v", ran, err)
	}
	now = now.Add(15 * time.Second)
	if ran, err := w.engine.RunDue(context.Background()); err != nil || ran != 1 {
		t.Fatalf("retry: %d %v", ran, err)
	}
	if n := len(w.notes()); n != 1 || w.lastStatus(t).State != "failed" {
		t.Fatalf("after the retry: %d notes", n)
	}
}
