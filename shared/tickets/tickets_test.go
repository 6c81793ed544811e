package tickets

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/internal/trackerhost"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	"github.com/acme/codescan-api/shared/triagemodel"
)

func TestMatchesAndGroups(t *testing.T) {
	i := findings.Issue{ID: "i1", ProjectID: 3, Branch: "main", Tool: "semgrep", RuleID: "sqli", CWE: 89, FilePath: "api/q.py", Urgency: "HI", ScanID: "s1"}
	rule := func(m schema.TicketMatcher, project int64) schema.TicketRule {
		return schema.TicketRule{ProjectID: project, Matcher: m}
	}
	for _, c := range []struct {
		name string
		r    schema.TicketRule
		want bool
	}{
		{"everything", rule(schema.TicketMatcher{}, 0), true},
		{"its project", rule(schema.TicketMatcher{}, 3), true},
		{"another project", rule(schema.TicketMatcher{}, 4), false},
		{"its CWE", rule(schema.TicketMatcher{Matcher: triagemodel.Matcher{CWE: 89}}, 0), true},
		{"another CWE", rule(schema.TicketMatcher{Matcher: triagemodel.Matcher{CWE: 79}}, 0), false},
		{"a path glob", rule(schema.TicketMatcher{Matcher: triagemodel.Matcher{Path: "api/**"}}, 0), true},
		{"another path", rule(schema.TicketMatcher{Matcher: triagemodel.Matcher{Path: "web/**"}}, 0), false},
		{"at least critical", rule(schema.TicketMatcher{Matcher: triagemodel.Matcher{UrgencyAtLeast: "CR"}}, 0), false},
		{"new on the default branch", rule(schema.TicketMatcher{NewOnDefaultBranch: true}, 0), true},
	} {
		if got := Matches(c.r, i, "s1", "main"); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
	if Matches(rule(schema.TicketMatcher{NewOnDefaultBranch: true}, 0), i, "s2", "main") {
		t.Error("a finding an earlier scan reported is not new")
	}
	if Matches(rule(schema.TicketMatcher{NewOnDefaultBranch: true}, 0), i, "s1", "develop") {
		t.Error("a finding off the default branch is not on it")
	}
	j := i
	j.ID, j.FilePath = "i2", "api/r.py"
	if GroupKey(GroupCWE, i) != GroupKey(GroupCWE, j) || GroupKey(GroupRule, i) != GroupKey(GroupRule, j) || GroupKey(GroupFinding, i) == GroupKey(GroupFinding, j) {
		t.Error("groups of two findings of one rule and CWE")
	}
	j.ProjectID = 4
	if GroupKey(GroupCWE, i) == GroupKey(GroupCWE, j) {
		t.Error("a CWE's group is per project")
	}
	if MarkerLabel("r", "g") == MarkerLabel("r", "h") || strings.ContainsAny(MarkerLabel("r", "g"), " \t") {
		t.Error("marker labels")
	}
}

func TestRemoteStates(t *testing.T) {
	var done, wont, open JiraIssue
	done.Fields.Status.StatusCategory.Key = "done"
	done.Fields.Resolution = &struct {
		Name string `json:"name"`
	}{"Done"}
	wont = done
	wont.Fields.Resolution = &struct {
		Name string `json:"name"`
	}{"Won't Do"}
	open.Fields.Status.StatusCategory.Key = "indeterminate"
	in := schema.JiraIntegration{}
	if r := JiraRemote(done, in); r != (Remote{State: "closed", Resolution: "done"}) {
		t.Errorf("done: %+v", r)
	}
	if r := JiraRemote(wont, in); r != (Remote{State: "closed", Resolution: "wont_do"}) {
		t.Errorf("won't do: %+v", r)
	}
	if r := JiraRemote(wont, schema.JiraIntegration{WontDoTransition: "Declined"}); r.Resolution != "done" {
		t.Errorf("won't do with another name configured: %+v", r)
	}
	if r := JiraRemote(open, in); r != (Remote{State: "open"}) {
		t.Errorf("in progress: %+v", r)
	}
	if GitHubRemote("closed", "not_planned").Resolution != "wont_do" || GitHubRemote("closed", "completed").Resolution != "done" ||
		GitHubRemote("open", "reopened").State != "open" {
		t.Error("GitHub states")
	}
}

func TestNormalizeSite(t *testing.T) {
	for in, want := range map[string]string{
		"https://Acme.atlassian.net":  "https://acme.atlassian.net",
		"https://acme.atlassian.net/": "https://acme.atlassian.net",
		"http://127.0.0.1:8080":       "http://127.0.0.1:8080",
	} {
		if got, err := NormalizeSite(in, true); err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	for _, in := range []string{"http://acme.atlassian.net", "https://atlassian.net", "https://acme.atlassian.net.evil.com", "https://acme.atlassian.net:8443",
		"https://u:p@acme.atlassian.net", "https://acme.atlassian.net/jira", "https://acme.atlassian.net?x=1", "http://127.0.0.1:8080/x", "https://10.0.0.1"} {
		if _, err := NormalizeSite(in, true); err == nil {
			t.Errorf("%s was taken", in)
		}
	}
	if _, err := NormalizeSite("http://127.0.0.1:8080", false); err == nil {
		t.Error("loopback without the switch")
	}
}

func TestJiraFailures(t *testing.T) {
	if o := jiraFailure("x", &JiraError{Status: http.StatusTooManyRequests, RetryAfter: 30e9}); !o.Retryable || o.RetryAfter != 30e9 {
		t.Errorf("rate limited: %+v", o)
	}
	if o := jiraFailure("x", &JiraError{Status: http.StatusBadRequest}); o.Retryable {
		t.Errorf("a refused request is retried: %+v", o)
	}
	if o := jiraFailure("x", errors.New("dial tcp: refused")); !o.Retryable || strings.Contains(o.Err, "refused") {
		t.Errorf("an unreachable site: %+v", o)
	}
	doc := Document("a\n\nb")
	if doc.Type != "doc" || doc.Version != 1 || len(doc.Content) != 3 || doc.Content[1].Content != nil {
		t.Errorf("document: %+v", doc)
	}
}

// The channel keeps the area it is given and reads its clock.
func TestNewChannel(t *testing.T) {
	area := storetickets.New(dynamodb.New(dynamodb.Options{Region: "eu-west-1"}), "t", func() time.Time { return time.Unix(0, 0) })
	if c := NewChannel(Store{}, area, nil, "https://app", true); c.Name() != Channel || c.Tickets != area || c.Host == nil || c.Jira == nil || c.AppURL != "https://app" || !c.now().Equal(time.Unix(0, 0)) {
		t.Fatalf("channel %+v", c)
	}
}

// The site's display name is the site's text: made visible and bounded
// before it is stored or shown.
func TestMyselfCleansTheSitesText(t *testing.T) {
	site := trackerhost.NewJira(t, "bot@acme.test", "tok", "SEC")
	site.DisplayName = "Bot\u202e\x07" + strings.Repeat("é", 200)
	c := &JiraClient{HTTP: NewJiraHTTP(5*time.Second, true), Site: site.URL(), Email: "bot@acme.test", Token: "tok"}
	me, err := c.Myself(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if me.AccountID != trackerhost.AccountID || strings.ContainsAny(me.DisplayName, "\u202e\x07") || len(me.DisplayName) > maxDisplayName ||
		!strings.HasPrefix(me.DisplayName, "Bot") || !strings.HasSuffix(me.DisplayName, "…") {
		t.Fatalf("myself: %+v", me)
	}
}

// Report text in a GitHub ticket mentions no one, opens no link and
// cannot pass for a marker; our own marker and the text stay readable.
func TestGitHubTextIsInert(t *testing.T) {
	hostile := "Title @acme/security [click](https://evil.example) " + Marker("r", "g") + " " + ReplyMarker
	got := gitHubText(hostile)
	for _, bad := range []string{"@acme", " [click]", "<!-- codescan:"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q survives in %q", bad, got)
		}
	}
	if !strings.Contains(got, "Title @<!-- -->acme/security \\[click](https://evil.example) &lt;!-- codescan:ticket rule=r group=g --&gt;") {
		t.Errorf("escaped text: %q", got)
	}
}
