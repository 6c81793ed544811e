package tickets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/netguard"
	"github.com/acme/codescan-api/shared/outbound"
)

// No maintained Go client speaks Jira Cloud's REST API v3 (go-jira v1
// targets v2, where descriptions are wiki markup rather than the Atlassian
// Document Format), so the calls we make are typed requests over net/http,
// through the guarded dialer.

// JiraClient calls one Jira Cloud site as one account (basic auth with
// the account's email and API token).
type JiraClient struct {
	HTTP         *http.Client
	Site         string // https://<site>.atlassian.net, no trailing slash
	Email, Token string
}

// JiraError is a non-2xx answer of the site.
type JiraError struct {
	Status     int
	RetryAfter time.Duration
	Messages   []string
}

func (e *JiraError) Error() string {
	if len(e.Messages) == 0 {
		return fmt.Sprintf("jira answered %d", e.Status)
	}
	return fmt.Sprintf("jira answered %d: %s", e.Status, strings.Join(e.Messages, "; "))
}

// maxJiraAnswer bounds what one answer may be read to.
const maxJiraAnswer = 4 << 20

func (c *JiraClient) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Site+path, body)
	if err != nil {
		return err
	}
	req.SetBasicAuth(c.Email, c.Token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxJiraAnswer))
	if err != nil {
		return err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		e := &JiraError{Status: res.StatusCode}
		if s, err := time.ParseDuration(res.Header.Get("Retry-After") + "s"); err == nil {
			e.RetryAfter = s
		}
		var msg struct {
			ErrorMessages []string          `json:"errorMessages"`
			Errors        map[string]string `json:"errors"`
		}
		if json.Unmarshal(raw, &msg) == nil {
			e.Messages = msg.ErrorMessages
			for k, v := range msg.Errors {
				e.Messages = append(e.Messages, k+": "+v)
			}
		}
		return e
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// JiraUser is GET /rest/api/3/myself's answer (what we read of it).
type JiraUser struct {
	AccountID   string `json:"accountId"`
	DisplayName string `json:"displayName"`
	Active      bool   `json:"active"`
}

// Myself is the account of the credentials.
// The site's texts are the site's: the display name is made visible
// (shared/cleantext) and bounded before we store or show it, its id
// bounded.
func (c *JiraClient) Myself(ctx context.Context) (JiraUser, error) {
	var u JiraUser
	if err := c.call(ctx, http.MethodGet, "/rest/api/3/myself", nil, &u); err != nil {
		return JiraUser{}, err
	}
	u.DisplayName = clip(cleantext.Visible(u.DisplayName), maxDisplayName)
	if len(u.AccountID) > maxDisplayName {
		u.AccountID = "" // no Jira account id; the caller refuses the site
	}
	return u, nil
}

// maxDisplayName bounds a Jira account's display name and id, in bytes.
const maxDisplayName = 128

// JiraProject is GET /rest/api/3/project/{key}'s answer (what we read).
type JiraProject struct {
	ID         string `json:"id"`
	Key        string `json:"key"`
	Name       string `json:"name"`
	IssueTypes []struct {
		Name string `json:"name"`
	} `json:"issueTypes"`
}

// Project reads a project by key.
func (c *JiraClient) Project(ctx context.Context, key string) (JiraProject, error) {
	var p JiraProject
	return p, c.call(ctx, http.MethodGet, "/rest/api/3/project/"+url.PathEscape(key), nil, &p)
}

// ADF is a document of the Atlassian Document Format (v1).
type ADF struct {
	Type    string    `json:"type"`
	Version int       `json:"version"`
	Content []ADFNode `json:"content"`
}

// ADFNode is a block or inline node.
type ADFNode struct {
	Type    string    `json:"type"`
	Text    string    `json:"text,omitempty"`
	Content []ADFNode `json:"content,omitempty"`
}

// Document is text as an ADF document: one paragraph per line.
func Document(text string) ADF {
	doc := ADF{Type: "doc", Version: 1, Content: []ADFNode{}}
	for _, line := range strings.Split(text, "\n") {
		p := ADFNode{Type: "paragraph"}
		if line != "" {
			p.Content = []ADFNode{{Type: "text", Text: line}}
		}
		doc.Content = append(doc.Content, p)
	}
	return doc
}

type jiraRef struct {
	Key  string `json:"key,omitempty"`
	Name string `json:"name,omitempty"`
	ID   string `json:"id,omitempty"`
}

// JiraNewIssue is POST /rest/api/3/issue's body.
type JiraNewIssue struct {
	Fields struct {
		Project     jiraRef  `json:"project"`
		IssueType   jiraRef  `json:"issuetype"`
		Summary     string   `json:"summary"`
		Description ADF      `json:"description"`
		Labels      []string `json:"labels,omitempty"`
	} `json:"fields"`
}

// JiraCreated is its answer.
type JiraCreated struct {
	ID   string `json:"id"`
	Key  string `json:"key"`
	Self string `json:"self"`
}

// CreateIssue creates an issue.
func (c *JiraClient) CreateIssue(ctx context.Context, in JiraNewIssue) (JiraCreated, error) {
	var out JiraCreated
	return out, c.call(ctx, http.MethodPost, "/rest/api/3/issue", in, &out)
}

// JiraIssue is an issue as GET and search answer it (what we read).
type JiraIssue struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	Fields struct {
		Labels     []string `json:"labels"`
		Resolution *struct {
			Name string `json:"name"`
		} `json:"resolution"`
		Status struct {
			Name           string `json:"name"`
			StatusCategory struct {
				Key string `json:"key"`
			} `json:"statusCategory"`
		} `json:"status"`
	} `json:"fields"`
}

// GetIssue reads an issue by key.
func (c *JiraClient) GetIssue(ctx context.Context, key string) (JiraIssue, error) {
	var i JiraIssue
	return i, c.call(ctx, http.MethodGet, "/rest/api/3/issue/"+url.PathEscape(key)+"?fields=status,resolution,labels", nil, &i)
}

// Comment adds a comment to an issue.
func (c *JiraClient) Comment(ctx context.Context, key, text string) error {
	return c.call(ctx, http.MethodPost, "/rest/api/3/issue/"+url.PathEscape(key)+"/comment", map[string]any{"body": Document(text)}, nil)
}

// JiraTransition is one of an issue's transitions.
type JiraTransition struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	To   struct {
		Name           string `json:"name"`
		StatusCategory struct {
			Key string `json:"key"`
		} `json:"statusCategory"`
	} `json:"to"`
}

// Transitions are the transitions an issue can take now.
func (c *JiraClient) Transitions(ctx context.Context, key string) ([]JiraTransition, error) {
	var out struct {
		Transitions []JiraTransition `json:"transitions"`
	}
	return out.Transitions, c.call(ctx, http.MethodGet, "/rest/api/3/issue/"+url.PathEscape(key)+"/transitions", nil, &out)
}

// Transition moves an issue along transition id.
func (c *JiraClient) Transition(ctx context.Context, key, id string) error {
	return c.call(ctx, http.MethodPost, "/rest/api/3/issue/"+url.PathEscape(key)+"/transitions",
		map[string]any{"transition": map[string]string{"id": id}}, nil)
}

// Search runs a JQL query (POST /rest/api/3/search/jql), at most max issues.
func (c *JiraClient) Search(ctx context.Context, jql string, max int) ([]JiraIssue, error) {
	var out struct {
		Issues []JiraIssue `json:"issues"`
	}
	in := map[string]any{"jql": jql, "maxResults": max, "fields": []string{"status", "resolution", "labels"}}
	return out.Issues, c.call(ctx, http.MethodPost, "/rest/api/3/search/jql", in, &out)
}

// NormalizeSite checks a site URL: https://<site>.atlassian.net (a
// loopback http URL only when allowLoopback, for tests), no path, query,
// fragment or credentials; it returns it without a trailing slash.
func NormalizeSite(raw string, allowLoopback bool) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !u.IsAbs() || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "" {
		return "", fmt.Errorf("must be a site URL such as https://example.atlassian.net")
	}
	host := strings.ToLower(u.Hostname())
	if allowLoopback && u.Scheme == "http" {
		if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
			return "http://" + strings.ToLower(u.Host), nil
		}
	}
	if u.Scheme != "https" || u.Port() != "" || !strings.HasSuffix(host, ".atlassian.net") || len(host) <= len(".atlassian.net") {
		return "", fmt.Errorf("must be a Jira Cloud site URL: https://<site>.atlassian.net")
	}
	return "https://" + host, nil
}

// NewJiraHTTP is the guarded client of Jira calls (internal addresses
// refused at dial time, redirects not followed).
func NewJiraHTTP(timeout time.Duration, allowLoopback bool) *http.Client {
	return netguard.Client(timeout, allowLoopback)
}

// jiraFailure classifies a failed Jira call as a delivery outcome.
func jiraFailure(doing string, err error) outbound.Outcome {
	var je *JiraError
	if errors.As(err, &je) {
		retry := je.Status == http.StatusTooManyRequests || je.Status >= 500
		return outbound.Outcome{StatusCode: je.Status, Retryable: retry, RetryAfter: je.RetryAfter,
			Err: fmt.Sprintf("%s: Jira answered %d", doing, je.Status), Gone: je.Status == http.StatusNotFound}
	}
	return outbound.Outcome{Retryable: true, Err: doing + ": the site could not be reached"}
}
