package integrations_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/gitlabhost"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/store/schema"
)

const (
	glPath       = "platform/payments/api"
	glIID        = 12
	glSHA        = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	glAcmeToken  = "glpat-AcmeBot000000000001"
	glGlobexTok  = "glpat-GlobexBot0000000002"
	glAcmeSecret = "gl-hook-acme-0123456789abcdef"
)

// glHookWorld is hookWorld whose company also has a GitLab integration:
// its merge request !12 scanned and decorated (one summary note), the
// integration's webhook secret set.
type glHookWorld struct {
	*hookWorld
	gl     *gitlabhost.Server
	glIn   schema.Integration
	glRefs []string
}

func newGitLabHookWorld(t *testing.T) *glHookWorld {
	t.Helper()
	w := &glHookWorld{hookWorld: newHookWorld(t),
		gl: gitlabhost.New(t, gitlabhost.WithToken(glAcmeToken, "acme-gl-bot"), gitlabhost.WithToken(glGlobexTok, "globex-gl-bot"))}
	w.gl.AddMergeRequest(glPath, gitlabhost.MergeRequest{IID: glIID, SHA: glSHA, SourceBranch: "fix-refund", TargetBranch: "main"})
	w.glIn = w.gitlabIntegration(t, w.acme, glAcmeToken)
	w.setSecret(t, w.acme, w.glIn, glAcmeSecret)
	w.decorateMR(t)
	return w
}

func (w *glHookWorld) gitlabIntegration(t *testing.T, co *testenv.Company, token string) schema.Integration {
	t.Helper()
	return w.storeIntegration(t, schema.Integration{CompanyID: co.ID, Name: "GitLab", Provider: "gitlab",
		AccountID: fmt.Sprint(w.gl.Account(token).ID), AccountName: w.gl.Account(token).Username, OrgAllowlist: []string{"platform"},
		BaseURL: w.gl.HostURL()}, token)
}

// decorateMR scans the merge request's branch with GitLab CI's variables,
// decorates it and reads the refs of its summary note.
func (w *glHookWorld) decorateMR(t *testing.T) {
	t.Helper()
	run := uuid.NewString()
	key := testenv.Key(w.acme.Admin)
	res := testenv.Do(t, w.mux, "POST", "/scan-upload?engine=sarif&project=payments&branch=fix-refund&run_id="+run,
		hookSARIF("legacy/q1.py", "api/refund.py", "api/charge.py"), key...)
	var up struct {
		ScanID string `json:"sast_scan_id"`
	}
	res.Decode(t, &up)
	vars := fmt.Sprintf(`{"CI_MERGE_REQUEST_IID":"%d","CI_PROJECT_PATH":%q,"CI_COMMIT_SHA":%q,"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME":"fix-refund",`+
		`"CI_MERGE_REQUEST_TARGET_BRANCH_NAME":"main","CI_SERVER_URL":%q}`, glIID, glPath, glSHA, w.gl.HostURL())
	if res := testenv.Do(t, w.mux, "POST", "/ci-data-upload?platform=gitlab&run_id="+run, vars, key...); res.Status != 200 {
		t.Fatalf("ci-data: %d %s", res.Status, res.Body)
	}
	w.env.Ingest(t, w.acme.ID, up.ScanID)
	engine := &deliveryengine.Engine{Store: deliveryengine.StoreOf(w.env.Store), Sealer: w.sealer, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Backoff: deliveryengine.Backoff{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond, Horizon: time.Hour},
		Outbound: []outbound.Channel{&prdecor.Decorator{Store: prdecor.StoreOf(w.env.Store), Sealer: w.sealer,
			Host: scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 5 * time.Second})}}}
	ev := schema.Event{ID: "scan_completed-" + up.ScanID, CompanyID: w.acme.ID, Type: "scan_completed", CreatedAt: time.Now(),
		Data: []byte(fmt.Sprintf(`{"scan_id":%q}`, up.ScanID))}
	if failed := engine.Dispatch(context.Background(), []schema.Event{ev}); len(failed) > 0 {
		t.Fatalf("dispatch: %v", failed)
	}
	notes := w.gl.Notes(glPath, glIID)
	if len(notes) != 1 {
		t.Fatalf("%d notes after the decoration, want the summary", len(notes))
	}
	for _, m := range refCell.FindAllStringSubmatch(notes[0].Body, -1) {
		w.glRefs = append(w.glRefs, m[1])
	}
	if len(w.glRefs) != 2 {
		t.Fatalf("refs %v in the summary:\n%s", w.glRefs, notes[0].Body)
	}
}

// note writes a note as username on the merge request and returns its
// note hook delivery's body.
func (w *glHookWorld) note(username, body string) []byte {
	author := gitlabhost.User{ID: 700 + int64(len(username)), Username: username}
	id := w.gl.AddNote(glPath, glIID, author, body)
	return w.gl.Payload(gitlabhost.NoteEvent{ProjectPath: glPath, IID: glIID, NoteID: id, Author: author, Body: body, CreatedAt: time.Now()})
}

// sendNote posts a note hook delivery with token; it returns the answer.
func (w *glHookWorld) sendNote(t *testing.T, uuid, token string, body []byte) *testenv.Response {
	t.Helper()
	return w.post(t, uuid, body, gitlabhost.Headers(token))
}

func result(t *testing.T, res *testenv.Response) string {
	t.Helper()
	var out struct{ Status, Result string }
	res.Decode(t, &out)
	if res.Status != http.StatusOK || out.Status != "ok" {
		t.Fatalf("delivery: %d %s", res.Status, res.Body)
	}
	return out.Result
}

// glReplies are the notes of ours that answer commands.
func (w *glHookWorld) glReplies() []gitlabhost.Note {
	var out []gitlabhost.Note
	for _, n := range w.gl.Notes(glPath, glIID) {
		if strings.HasPrefix(n.Body, prtriage.ReplyMarker) {
			out = append(out, n)
		}
	}
	return out
}

// A linked triager's `/codescan ignore` note on the merge request triages
// the finding once (history naming the merge request and the username,
// counters exact), answered with a note; the same delivery again, or the
// same note under a new event UUID, changes nothing more.
func TestIgnoreFromTheMergeRequest(t *testing.T) {
	t.Parallel()
	w := newGitLabHookWorld(t)
	ref := w.glRefs[0]
	_, hist0 := w.issue(t, ref)
	body := w.note("Octo-Dev", "/codescan ignore "+ref+" test fixture, never deployed")
	h := gitlabhost.Headers(glAcmeSecret)
	if res := w.post(t, w.glIn.UUID, body, h); result(t, res) != prtriage.Triaged {
		t.Fatalf("command: %s", res.Body)
	}
	after, hist := w.issue(t, ref)
	const why = "test fixture, never deployed (from merge request !12 by Octo-Dev)"
	if after.Status != "false_positive" || after.Reason != why || len(hist) != len(hist0)+1 || hist[len(hist)-1].By.UserID != w.triager.ID {
		t.Fatalf("issue after the command: %s %q, %d history entries", after.Status, after.Reason, len(hist))
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
	w.auditedOnce(t, after.ID)
	if r := w.glReplies(); len(r) != 1 || !strings.Contains(r[0].Body, "is now `false_positive`") || r[0].Author.Username != "acme-gl-bot" {
		t.Fatalf("replies: %+v", r)
	}

	if got := result(t, w.post(t, w.glIn.UUID, body, h)); got != "duplicate" {
		t.Fatalf("replay: %s", got)
	}
	if got := result(t, w.sendNote(t, w.glIn.UUID, glAcmeSecret, body)); got != "duplicate" {
		t.Fatalf("the same note under a new event UUID: %s", got)
	}
	if _, h2 := w.issue(t, ref); len(h2) != len(hist) || len(w.glReplies()) != 1 {
		t.Fatalf("%d history entries, %d replies after the replays", len(h2), len(w.glReplies()))
	}
	w.auditedOnce(t, after.ID)
	testenv.Recount(t, w.env.Store, w.acme.ID)
}

// An unlinked user's command changes nothing and is answered why; a
// wrong or missing token, another company's integration and an
// unknown uuid answer 401 with nothing changed; notes that are no command
// (plain notes, our own, other events) are ignored.
func TestGitLabRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	w := newGitLabHookWorld(t)
	ref := w.glRefs[0]
	globex := w.env.Company(t, "Globex")
	gIn := w.gitlabIntegration(t, globex, glGlobexTok)
	w.setSecret(t, globex, gIn, "gl-hook-globex-0123456789abcdef")

	if got := result(t, w.sendNote(t, w.glIn.UUID, glAcmeSecret, w.note("stranger", "/codescan ignore "+ref+" not mine"))); got != prtriage.Refused {
		t.Fatalf("unlinked: %s", got)
	}
	if r := w.glReplies(); len(r) != 1 || !strings.Contains(r[0].Body, "`stranger` is not linked") {
		t.Fatalf("replies: %+v", r)
	}
	before := w.table(t)
	cmd := w.note("Octo-Dev", "/codescan ignore "+ref+" forged")
	cases := map[string]struct {
		uuid string
		h    http.Header
	}{
		"wrong token":         {w.glIn.UUID, gitlabhost.Headers(glAcmeSecret + "x")},
		"no token":            {w.glIn.UUID, gitlabhost.Headers("")},
		"another company's":   {gIn.UUID, gitlabhost.Headers(glAcmeSecret)},
		"unknown integration": {uuid.NewString(), gitlabhost.Headers(glAcmeSecret)},
		"the GitHub secret":   {w.in.UUID, gitlabhost.Headers(acmeSecret)},
	}
	for name, c := range cases {
		if res := w.post(t, c.uuid, cmd, c.h); res.Status != http.StatusUnauthorized || strings.TrimSpace(string(res.Body)) != `{"error":"Missing or invalid authorization header"}` {
			t.Fatalf("%s: %d %s", name, res.Status, res.Body)
		}
	}
	if after := w.table(t); !slices.Equal(before, after) {
		t.Fatal("a refused delivery changed the table")
	}
	own := w.gl.Payload(gitlabhost.NoteEvent{ProjectPath: glPath, IID: glIID, NoteID: 99, Author: w.gl.Account(glAcmeToken),
		Body: "/codescan ignore " + ref + " by the bot", CreatedAt: time.Now()})
	plain := w.note("Octo-Dev", "Looks good to me")
	old := w.gl.Payload(gitlabhost.NoteEvent{ProjectPath: glPath, IID: glIID, NoteID: 98, Author: gitlabhost.User{ID: 5, Username: "Octo-Dev"},
		Body: "/codescan ignore " + ref + " stale", CreatedAt: time.Now().Add(-100 * time.Hour)})
	issueNote := w.gl.Payload(gitlabhost.NoteEvent{ProjectPath: glPath, NoteID: 97, Author: gitlabhost.User{ID: 5, Username: "Octo-Dev"},
		Body: "/codescan ignore " + ref + " on an issue", CreatedAt: time.Now()})
	for name, body := range map[string][]byte{"our own": own, "plain": plain, "too old": old, "an issue's": issueNote} {
		if got := result(t, w.sendNote(t, w.glIn.UUID, glAcmeSecret, body)); got != prtriage.Ignored {
			t.Fatalf("%s note: %s", name, got)
		}
	}
	push := gitlabhost.Headers(glAcmeSecret)
	push.Set(gitlabhost.EventHeader, "Push Hook")
	if got := result(t, w.post(t, w.glIn.UUID, []byte(`{"object_kind":"push"}`), push)); got != prtriage.Ignored {
		t.Fatalf("a push: %s", got)
	}
	if i, _ := w.issue(t, ref); i.Status != "open" {
		t.Fatalf("the issue is %s", i.Status)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
}
