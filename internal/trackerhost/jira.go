package trackerhost

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Jira is a loopback Jira Cloud site with one project.
type Jira struct {
	base
	// DisplayName is the account's name the site answers ("Codescan Bot"
	// when empty); set it before the first request.
	DisplayName                      string
	email, token, accountID, project string
	issues                           []*JiraIssue
	nextComment                      atomic.Int64
}

// JiraIssue is an issue the site keeps.
type JiraIssue struct {
	ID, Key, Summary string
	Description      any // the ADF document as sent
	Labels           []string
	Status           string // To Do, Done
	Category         string // new, done
	Resolution       string // "", Done, Won't Do
	Comments         []any  // ADF documents
}

// The site's workflow: its transitions by id.
var jiraTransitions = []struct{ id, name, status, category, resolution string }{
	{"11", "To Do", "To Do", "new", ""},
	{"31", "Done", "Done", "done", "Done"},
	{"41", "Won't Do", "Done", "done", "Won't Do"},
}

// AccountID is the site's account of the test's credentials.
const AccountID = "5b10a2844c20165700ede21g"

// NewJira starts a site that accepts email:token (basic auth) as
// AccountID's, with project key.
func NewJira(t testing.TB, email, token, project string) *Jira {
	t.Helper()
	j := &Jira{email: email, token: token, accountID: AccountID, project: project}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rest/api/3/myself", j.myself)
	mux.HandleFunc("GET /rest/api/3/project/{key}", j.projectGet)
	mux.HandleFunc("POST /rest/api/3/issue", j.create)
	mux.HandleFunc("GET /rest/api/3/issue/{key}", j.get)
	mux.HandleFunc("POST /rest/api/3/issue/{key}/comment", j.comment)
	mux.HandleFunc("GET /rest/api/3/issue/{key}/transitions", j.transitions)
	mux.HandleFunc("POST /rest/api/3/issue/{key}/transitions", j.transition)
	mux.HandleFunc("POST /rest/api/3/search/jql", j.search)
	j.start(t, NewJiraValidator, j.authorized(mux))
	return j
}

func (j *Jira) authorized(next http.Handler) http.Handler {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(j.email+":"+j.token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte("Client must be authenticated to access this resource."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func jiraError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"errorMessages": []string{msg}, "errors": map[string]any{}})
}

func (j *Jira) myself(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"accountId": j.accountID, "accountType": "atlassian", "active": true,
		"displayName": cmp.Or(j.DisplayName, "Codescan Bot"), "emailAddress": j.email, "self": j.srv.URL + "/rest/api/3/user?accountId=" + j.accountID, "timeZone": "UTC"})
}

func (j *Jira) projectGet(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("key") != j.project {
		jiraError(w, http.StatusNotFound, "No project could be found with key '"+r.PathValue("key")+"'.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": "10000", "key": j.project, "name": "Security", "self": j.srv.URL + "/rest/api/3/project/10000",
		"issueTypes": []map[string]any{{"id": "10001", "name": "Bug"}, {"id": "10002", "name": "Task"}}})
}

// Issues are the site's issues, by creation.
func (j *Jira) Issues() []JiraIssue {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]JiraIssue, 0, len(j.issues))
	for _, i := range j.issues {
		c := *i
		c.Comments = append([]any(nil), i.Comments...)
		out = append(out, c)
	}
	return out
}

// jiraDecode reads a request body into v, answering Jira's 400 when it
// cannot.
func jiraDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		jiraError(w, http.StatusBadRequest, "bad body")
		return false
	}
	return true
}

// issue is the path's issue, or nil with Jira's 404 answered (the caller
// holds the lock).
func (j *Jira) issue(w http.ResponseWriter, r *http.Request) *JiraIssue {
	i := j.find(r.PathValue("key"))
	if i == nil {
		jiraError(w, http.StatusNotFound, "Issue does not exist or you do not have permission to see it.")
	}
	return i
}

func (j *Jira) find(key string) *JiraIssue {
	for _, i := range j.issues {
		if i.Key == key || i.ID == key {
			return i
		}
	}
	return nil
}

func (j *Jira) view(i *JiraIssue) map[string]any {
	var res any
	if i.Resolution != "" {
		res = map[string]any{"name": i.Resolution, "id": "1"}
	}
	return map[string]any{"id": i.ID, "key": i.Key, "self": j.srv.URL + "/rest/api/3/issue/" + i.ID,
		"fields": map[string]any{"summary": i.Summary, "labels": i.Labels, "resolution": res,
			"status":  map[string]any{"name": i.Status, "statusCategory": map[string]any{"key": i.Category}},
			"updated": time.Now().UTC().Format("2006-01-02T15:04:05.000-0700")}}
}

func (j *Jira) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Fields struct {
			Project struct {
				Key string `json:"key"`
			} `json:"project"`
			Summary     string   `json:"summary"`
			Description any      `json:"description"`
			Labels      []string `json:"labels"`
		} `json:"fields"`
	}
	if !jiraDecode(w, r, &in) {
		return
	}
	if in.Fields.Project.Key != j.project {
		writeJSON(w, http.StatusBadRequest, map[string]any{"errorMessages": []string{}, "errors": map[string]any{"project": "valid project is required"}})
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	n := len(j.issues) + 1
	i := &JiraIssue{ID: strconv.Itoa(10000 + n), Key: j.project + "-" + strconv.Itoa(n), Summary: in.Fields.Summary,
		Description: in.Fields.Description, Labels: in.Fields.Labels, Status: "To Do", Category: "new"}
	j.issues = append(j.issues, i)
	writeJSON(w, http.StatusCreated, map[string]any{"id": i.ID, "key": i.Key, "self": j.srv.URL + "/rest/api/3/issue/" + i.ID})
}

func (j *Jira) get(w http.ResponseWriter, r *http.Request) {
	j.mu.Lock()
	defer j.mu.Unlock()
	i := j.issue(w, r)
	if i == nil {
		return
	}
	writeJSON(w, http.StatusOK, j.view(i))
}

func (j *Jira) comment(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Body any `json:"body"`
	}
	if !jiraDecode(w, r, &in) {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	i := j.issue(w, r)
	if i == nil {
		return
	}
	i.Comments = append(i.Comments, in.Body)
	writeJSON(w, http.StatusCreated, map[string]any{"id": strconv.FormatInt(j.nextComment.Add(1), 10), "body": in.Body,
		"author": map[string]any{"accountId": j.accountID}})
}

func (j *Jira) transitions(w http.ResponseWriter, r *http.Request) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.issue(w, r) == nil {
		return
	}
	out := []map[string]any{}
	for _, t := range jiraTransitions {
		out = append(out, map[string]any{"id": t.id, "name": t.name, "hasScreen": false, "isAvailable": true,
			"to": map[string]any{"name": t.status, "statusCategory": map[string]any{"key": t.category}}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"transitions": out})
}

func (j *Jira) transition(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Transition struct {
			ID string `json:"id"`
		} `json:"transition"`
	}
	if !jiraDecode(w, r, &in) {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	i := j.issue(w, r)
	if i == nil {
		return
	}
	if !j.apply(i, in.Transition.ID) {
		jiraError(w, http.StatusBadRequest, "Transition id '"+in.Transition.ID+"' is not valid for this issue.")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (j *Jira) apply(i *JiraIssue, id string) bool {
	for _, t := range jiraTransitions {
		if t.id == id {
			i.Status, i.Category, i.Resolution = t.status, t.category, t.resolution
			return true
		}
	}
	return false
}

// Transition moves an issue as a person on the site would (by the
// transition's name: To Do, Done, Won't Do).
func (j *Jira) Transition(key, name string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	i := j.find(key)
	for _, t := range jiraTransitions {
		if t.name == name && i != nil {
			j.apply(i, t.id)
		}
	}
	if i == nil {
		j.t.Errorf("trackerhost: no issue %s to move", key)
	}
}

var (
	jqlLabel = regexp.MustCompile(`labels\s*=\s*"([^"]+)"`)
	jqlKeys  = regexp.MustCompile(`key\s+in\s*\(([^)]*)\)`)
)

// search answers the JQL our client writes: labels = "<label>", or
// key in (K-1, K-2).
func (j *Jira) search(w http.ResponseWriter, r *http.Request) {
	var in struct {
		JQL string `json:"jql"`
	}
	if !jiraDecode(w, r, &in) {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var match func(*JiraIssue) bool
	if m := jqlLabel.FindStringSubmatch(in.JQL); m != nil {
		match = func(i *JiraIssue) bool {
			for _, l := range i.Labels {
				if l == m[1] {
					return true
				}
			}
			return false
		}
	} else if m := jqlKeys.FindStringSubmatch(in.JQL); m != nil {
		keys := map[string]bool{}
		for _, k := range strings.Split(m[1], ",") {
			keys[strings.Trim(strings.TrimSpace(k), `"`)] = true
		}
		match = func(i *JiraIssue) bool { return keys[i.Key] }
	} else {
		jiraError(w, http.StatusBadRequest, "Error in the JQL Query: "+in.JQL)
		return
	}
	out := []map[string]any{}
	for _, i := range j.issues {
		if match(i) {
			out = append(out, j.view(i))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"issues": out, "isLast": true})
}

// IssueUpdated is the body of a jira:issue_updated webhook delivery about
// key, caused by accountID.
func (j *Jira) IssueUpdated(key, accountID string) []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"timestamp": time.Now().UnixMilli(), "webhookEvent": "jira:issue_updated",
		"issue_event_type_name": "issue_generic", "user": map[string]any{"accountId": accountID}, "issue": j.view(j.find(key)),
		"changelog": map[string]any{"id": "1", "items": []map[string]any{{"field": "status", "fieldtype": "jira"}}}})
	return b
}
