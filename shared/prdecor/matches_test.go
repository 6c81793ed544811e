package prdecor_test

import (
	"testing"

	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Which integration decorates which pull or merge request: the provider
// must be the pull request's; GitLab's host is the repository's own (no
// api. host); GitLab's allow-list names top-level groups.
func TestMatchesByProvider(t *testing.T) {
	gh := schema.Integration{BaseURL: "https://api.github.com", OrgAllowlist: []string{"acme"}}
	gl := schema.Integration{BaseURL: "https://gitlab.com", Provider: "gitlab", OrgAllowlist: []string{"Platform"}}
	ghPR := pullrequest.PullRequest{Provider: pullrequest.GitHub, Host: "github.com", Repo: "acme/payments"}
	glMR := pullrequest.PullRequest{Provider: pullrequest.GitLab, Host: "gitlab.com", Repo: "platform/payments/api"}
	cases := []struct {
		name string
		in   schema.Integration
		pr   pullrequest.PullRequest
		want bool
	}{
		{"github", gh, ghPR, true},
		{"gitlab", gl, glMR, true},
		{"a GitHub integration, a merge request", gh, glMR, false},
		{"a GitLab integration, a pull request", gl, ghPR, false},
		{"GitLab has no api. host", schema.Integration{BaseURL: "https://api.gitlab.com", Provider: "gitlab"}, glMR, false},
		{"a subgroup is not a top-level group", schema.Integration{BaseURL: "https://gitlab.com", Provider: "gitlab", OrgAllowlist: []string{"payments"}}, glMR, false},
		{"another GitLab instance", schema.Integration{BaseURL: "https://gitlab.example.com", Provider: "gitlab"}, glMR, false},
		{"expired", schema.Integration{BaseURL: "https://gitlab.com", Provider: "gitlab", Expired: true}, glMR, false},
	}
	for _, c := range cases {
		if got := prdecor.Matches(c.in, c.pr); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
