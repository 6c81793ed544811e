package pullrequest_test

import (
	"testing"

	"github.com/acme/codescan-api/shared/pullrequest"
)

// The variables of a GitHub Actions pull_request job, as GitHub documents
// them ("Store information in variables", default environment variables),
// and of a GitLab merge request pipeline (predefined CI/CD variables).
var (
	github = map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_HEAD_REF": "fix/refund-query", "GITHUB_BASE_REF": "main", "GITHUB_REF": "refs/pull/318/merge",
		"GITHUB_REPOSITORY": "acme-corp/payments-service", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_SHA": "9FCEB02D0AE598E95DC970B74767F19372D61AF8"}
	gitlab = map[string]string{"GITLAB_CI": "true", "CI_MERGE_REQUEST_IID": "42", "CI_PROJECT_PATH": "acme/platform/api",
		"CI_COMMIT_SHA": "1f9d2c3b4a5e6f708192a3b4c5d6e7f809102030", "CI_SERVER_URL": "https://gitlab.example.com",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/x", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "develop"}
)

func TestFromCI(t *testing.T) {
	pr, ok := pullrequest.FromCI(github)
	want := pullrequest.PullRequest{Provider: "github", Host: "github.com", Repo: "acme-corp/payments-service", Number: "318",
		HeadSHA: "9fceb02d0ae598e95dc970b74767f19372d61af8", HeadBranch: "fix/refund-query", BaseBranch: "main"}
	if !ok || pr != want || pr.Owner() != "acme-corp" {
		t.Fatalf("GitHub: %+v %v", pr, ok)
	}
	pr, ok = pullrequest.FromCI(gitlab)
	want = pullrequest.PullRequest{Provider: "gitlab", Host: "gitlab.example.com", Repo: "acme/platform/api", Number: "42",
		HeadSHA: "1f9d2c3b4a5e6f708192a3b4c5d6e7f809102030", HeadBranch: "feature/x", BaseBranch: "develop"}
	if !ok || pr != want || pr.Owner() != "acme" {
		t.Fatalf("GitLab: %+v %v", pr, ok)
	}
	ghe := clone(github, "GITHUB_SERVER_URL", "https://GHE.acme.example:8443")
	if pr, ok := pullrequest.FromCI(ghe); !ok || pr.Host != "ghe.acme.example:8443" {
		t.Fatalf("GitHub Enterprise: %+v %v", pr, ok)
	}
}

// A push, a schedule, or values no host gives: no pull request.
func TestFromCINone(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"push":               clone(github, "GITHUB_REF", "refs/heads/main"),
		"no repository":      clone(github, "GITHUB_REPOSITORY", ""),
		"dot segment":        clone(github, "GITHUB_REPOSITORY", "acme/.."),
		"query in repo":      clone(github, "GITHUB_REPOSITORY", "acme/x?y=1"),
		"number zero":        clone(github, "GITHUB_REF", "refs/pull/0/merge"),
		"ref with more":      clone(github, "GITHUB_REF", "refs/pull/12/merge/x"),
		"server not http":    clone(github, "GITHUB_SERVER_URL", "file:///etc"),
		"gitlab no iid":      clone(gitlab, "CI_MERGE_REQUEST_IID", ""),
		"gitlab bad iid":     clone(gitlab, "CI_MERGE_REQUEST_IID", "12a"),
		"gitlab one segment": clone(gitlab, "CI_PROJECT_PATH", "api"),
		"nothing":            {},
	} {
		if pr, ok := pullrequest.FromCI(vars); ok {
			t.Errorf("%s: %+v", name, pr)
		}
	}
	// A sha that is none, or a branch with a line break, is dropped; the
	// pull request stays.
	pr, ok := pullrequest.FromCI(clone(clone(github, "GITHUB_SHA", "not-a-sha"), "GITHUB_BASE_REF", "main\nx"))
	if !ok || pr.HeadSHA != "" || pr.BaseBranch != "" {
		t.Fatalf("bad sha and branch: %+v %v", pr, ok)
	}
}

func clone(m map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}
