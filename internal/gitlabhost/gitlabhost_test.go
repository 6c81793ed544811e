package gitlabhost_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/acme/codescan-api/internal/gitlabhost"
)

const (
	path = "platform/payments/api"
	sha  = "9fceb02d0ae598e95dc970b74767f19372d61af8"
)

func client(t *testing.T, h *gitlabhost.Server, token string) *gitlab.Client {
	t.Helper()
	gl, err := gitlab.NewClient(token, gitlab.WithBaseURL(h.HostURL()+h.Root()), gitlab.WithoutRetries())
	if err != nil {
		t.Fatal(err)
	}
	return gl
}

// The operations the decoration calls, through GitLab's own client, are
// described and answered; a nested group's project path is one segment.
func TestClientCallsAreDescribed(t *testing.T) {
	h := gitlabhost.New(t, gitlabhost.WithToken("glpat-1", "codescan-bot"), gitlabhost.WithRelativeRoot("/gitlab"))
	h.AddMergeRequest(path, gitlabhost.MergeRequest{IID: 7, SHA: sha, SourceBranch: "fix", TargetBranch: "main"})
	gl := client(t, h, "glpat-1")

	u, _, err := gl.Users.CurrentUser()
	if err != nil || u.Username != "codescan-bot" || u.ID != 2001 {
		t.Fatalf("user: %+v %v", u, err)
	}
	mr, _, err := gl.MergeRequests.GetMergeRequest(path, 7, nil)
	if err != nil || mr.SHA != sha {
		t.Fatalf("merge request: %+v %v %+v", mr, err, h.Requests()[len(h.Requests())-1])
	}
	n, _, err := gl.Notes.CreateMergeRequestNote(path, 7, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gl.Notes.UpdateMergeRequestNote(path, 7, n.ID, &gitlab.UpdateMergeRequestNoteOptions{Body: gitlab.Ptr("edited")}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h.AddNote(path, 7, gitlabhost.User{ID: 9, Username: "dev"}, "lgtm")
	}
	list, res, err := gl.Notes.ListMergeRequestNotes(path, 7, &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 2}, Sort: gitlab.Ptr("asc")})
	if err != nil || len(list) != 2 || list[0].Body != "edited" || res.NextPage != 2 {
		t.Fatalf("notes: %d %v next %d", len(list), err, res.NextPage)
	}
	if _, _, err := gl.Commits.SetCommitStatus(path, sha, &gitlab.SetCommitStatusOptions{State: gitlab.Failed, Name: gitlab.Ptr("codescan/api")}); err != nil {
		t.Fatal(err)
	}
	if st := h.Statuses(path, sha); len(st) != 1 || st[0].State != "failed" || st[0].Name != "codescan/api" {
		t.Fatalf("statuses: %+v", st)
	}
	if got := h.RequestsFor("postApiV4ProjectsIdStatusesSha"); len(got) != 1 || !strings.Contains(got[0].Path, "platform%2Fpayments%2Fapi") {
		t.Fatalf("status request: %+v", got)
	}
}

// What GitLab would not accept is a violation: an operation the
// description does not have, a body parameter GitLab does not document, a
// bad token is GitLab's 401.
func TestViolationsAreRecorded(t *testing.T) {
	h := gitlabhost.New(t)
	h.AddMergeRequest(path, gitlabhost.MergeRequest{IID: 7, SHA: sha})
	gl := client(t, h, "glpat-test")
	if _, _, err := gl.MergeRequests.AcceptMergeRequest(path, 7, nil); err == nil {
		t.Fatal("an undescribed operation was answered")
	}
	req, _ := http.NewRequest("POST", h.HostURL()+"/api/v4/projects/"+strings.ReplaceAll(path, "/", "%2F")+"/merge_requests/7/notes",
		strings.NewReader(`{"body":"x","mention":"@all"}`))
	req.Header.Set("PRIVATE-TOKEN", "glpat-test")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("undocumented parameter: %v %v", res, err)
	}
	v := h.TakeViolations()
	if len(v) != 2 || v[0].Operation != "" || !strings.Contains(v[0].Err, gitlabhost.ErrNotDescribed.Error()) ||
		v[1].Operation != "postApiV4ProjectsIdMergeRequestsNoteableIdNotes" || !strings.Contains(v[1].Err, "mention") {
		t.Fatalf("violations: %v", v)
	}
	_, res2, err := client(t, h, "wrong").Users.CurrentUser()
	if err == nil || res2 == nil || res2.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %v %v", res2, err)
	}
	if got := h.Requests(); len(got) != 3 || got[0].Status != http.StatusNotFound || got[1].Status != http.StatusBadRequest || got[2].Status != http.StatusUnauthorized {
		t.Fatalf("recorded: %+v", got)
	}
}
