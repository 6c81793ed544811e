package githost

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// docsURL is what GitHub puts in documentation_url of generic errors.
const docsURL = "https://docs.github.com/rest"

// errorBody is GitHub's error object (basic-error in the description).
type errorBody struct {
	Message          string `json:"message"`
	DocumentationURL string `json:"documentation_url"`
	Status           string `json:"status,omitempty"`
}

var (
	notFound       = errorBody{Message: "Not Found", DocumentationURL: docsURL}
	badCredentials = errorBody{Message: "Bad credentials", DocumentationURL: docsURL}
)

// fieldError is one entry of a 422's "errors" (validation-error).
type fieldError struct {
	Resource string `json:"resource,omitempty"`
	Field    string `json:"field,omitempty"`
	Code     string `json:"code"`
	Message  string `json:"message,omitempty"`
}

type validationFailed struct {
	errorBody
	Errors []fieldError `json:"errors,omitempty"`
}

// setCommonHeaders sets what GitHub sends with every JSON answer.
func setCommonHeaders(h http.Header) {
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	setCommonHeaders(w.Header())
	b, err := json.Marshal(v)
	if err != nil {
		// Every value written here is built by this package from plain types.
		panic(fmt.Sprintf("githost: marshal answer: %v", err))
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, e errorBody) {
	e.Status = strconv.Itoa(status)
	writeJSON(w, status, e)
}

// writeValidationFailed answers a request the description refuses the way
// GitHub answers a schema error: 422 "Invalid request." with the details.
func writeValidationFailed(w http.ResponseWriter, err error) {
	writeError(w, http.StatusUnprocessableEntity, errorBody{Message: "Invalid request.\n\n" + err.Error(), DocumentationURL: docsURL})
}

// writeUnprocessable answers a well-formed request GitHub would still refuse
// (an unknown sha, a line outside the diff): 422 "Validation Failed".
func writeUnprocessable(w http.ResponseWriter, errs ...fieldError) {
	writeJSON(w, http.StatusUnprocessableEntity, validationFailed{
		errorBody: errorBody{Message: "Validation Failed", DocumentationURL: docsURL, Status: "422"},
		Errors:    errs,
	})
}

// timestamp formats times as GitHub does (ISO 8601, UTC, seconds).
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// userJSON is a simple-user.
type userJSON struct {
	Login             string  `json:"login"`
	ID                int64   `json:"id"`
	NodeID            string  `json:"node_id"`
	AvatarURL         string  `json:"avatar_url"`
	GravatarID        string  `json:"gravatar_id"`
	URL               string  `json:"url"`
	HTMLURL           string  `json:"html_url"`
	FollowersURL      string  `json:"followers_url"`
	FollowingURL      string  `json:"following_url"`
	GistsURL          string  `json:"gists_url"`
	StarredURL        string  `json:"starred_url"`
	SubscriptionsURL  string  `json:"subscriptions_url"`
	OrganizationsURL  string  `json:"organizations_url"`
	ReposURL          string  `json:"repos_url"`
	EventsURL         string  `json:"events_url"`
	ReceivedEventsURL string  `json:"received_events_url"`
	Type              string  `json:"type"`
	SiteAdmin         bool    `json:"site_admin"`
	UserViewType      string  `json:"user_view_type"`
	Name              *string `json:"name,omitempty"`
}

// links builds the URLs GitHub puts in objects: API URLs under the API base,
// web URLs under the host (for github.com these are two hosts; a loopback
// server has one).
type links struct{ api, web string }

func (s *Server) links() links { return links{api: s.srv.URL + s.prefix, web: s.srv.URL} }

func (l links) user(a account) userJSON {
	u := l.api + "/users/" + a.login
	return userJSON{
		Login: a.login, ID: a.id, NodeID: nodeID("U_", a.id),
		AvatarURL: l.web + "/avatars/u/" + strconv.FormatInt(a.id, 10), URL: u, HTMLURL: l.web + "/" + a.login,
		FollowersURL: u + "/followers", FollowingURL: u + "/following{/other_user}", GistsURL: u + "/gists{/gist_id}",
		StarredURL: u + "/starred{/owner}{/repo}", SubscriptionsURL: u + "/subscriptions", OrganizationsURL: u + "/orgs",
		ReposURL: u + "/repos", EventsURL: u + "/events{/privacy}", ReceivedEventsURL: u + "/received_events",
		Type: "User", UserViewType: "public",
	}
}

// nodeID makes a GraphQL-style node id; clients must treat it as opaque.
func nodeID(kind string, id int64) string { return kind + strconv.FormatInt(id, 36) }

// page reads per_page (default 30, at most 100, as GitHub) and page.
func page(r *http.Request) (perPage, number int) {
	perPage, number = 30, 1
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		number = v
	}
	return perPage, number
}

// paginate returns one page of items and sets the Link header GitHub sends
// (next/last/first/prev), which is how clients know to fetch more.
func paginate[T any](w http.ResponseWriter, r *http.Request, apiOrigin string, items []T) []T {
	perPage, number := page(r)
	last := max(1, (len(items)+perPage-1)/perPage)
	if rel := linkHeader(r, apiOrigin, number, last); rel != "" {
		w.Header().Set("Link", rel)
	}
	start := min((number-1)*perPage, len(items))
	return items[start:min(start+perPage, len(items))]
}

func linkHeader(r *http.Request, apiOrigin string, number, last int) string {
	at := func(p int, rel string) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		return fmt.Sprintf("<%s%s>; rel=%q", apiOrigin, u.String(), rel)
	}
	var parts []string
	if number < last {
		parts = append(parts, at(number+1, "next"), at(last, "last"))
	}
	if number > 1 {
		parts = append(parts, at(1, "first"), at(min(number-1, last), "prev"))
	}
	return strings.Join(parts, ", ")
}
