// Package pullrequest reads which pull (or merge) request a CI run built
// from the CI metadata the real client uploads (POST /ci-data-upload: the
// CI's environment variables as a JSON object): GitHub Actions'
// GITHUB_REF `refs/pull/N/merge` with GITHUB_HEAD_REF, GITHUB_BASE_REF,
// GITHUB_SHA, GITHUB_REPOSITORY and GITHUB_SERVER_URL, or GitLab CI's
// CI_MERGE_REQUEST_IID with CI_COMMIT_SHA, CI_PROJECT_PATH,
// CI_MERGE_REQUEST_TARGET_BRANCH_NAME, CI_MERGE_REQUEST_SOURCE_BRANCH_NAME
// and CI_SERVER_URL. It holds no storage and makes no call.
package pullrequest

import (
	"net/url"
	"regexp"
	"strings"
)

// Providers of pull requests.
const (
	GitHub = "github"
	GitLab = "gitlab"
)

// PullRequest is what a scan records of the pull request it built.
type PullRequest struct {
	Provider string `dynamodbav:"provider"`
	// Host is the web host of the repository (github.com, a GitHub
	// Enterprise or GitLab host), lower case, no port stripped.
	Host string `dynamodbav:"host"`
	// Repo is the repository's full name: owner/name (GitLab: the project
	// path, which may hold groups).
	Repo string `dynamodbav:"repo"`
	// Number is the pull request's number (GitLab: the merge request's
	// iid), a string as the real client reads it.
	Number string `dynamodbav:"number"`
	// HeadSHA is the commit CI built: on GitHub the merge commit of a
	// pull_request run (the head's own sha is read from the host when a
	// status is set), on GitLab the head commit.
	HeadSHA    string `dynamodbav:"head_sha,omitempty"`
	HeadBranch string `dynamodbav:"head_branch,omitempty"`
	BaseBranch string `dynamodbav:"base_branch,omitempty"`
}

// Owner is the repository's owner (GitLab: its top-level group), lower
// case: what an integration's org allow-list names.
func (p PullRequest) Owner() string {
	owner, _, _ := strings.Cut(p.Repo, "/")
	return strings.ToLower(owner)
}

// EventType is the outbox event that asks for the pull request of a
// complete scan to be decorated when its CI metadata came after its
// completion (the scan_completed event asks otherwise); its data is
// {"scan_id"}.
const EventType = "pull_request_scan"

// EventID is the id of a scan's EventType event: one per scan.
func EventID(scanID string) string { return EventType + "-" + scanID }

// Limits of the values kept: a repository path, a ref name, a sha.
const (
	maxRepo   = 512
	maxBranch = 255
)

var (
	pullRef  = regexp.MustCompile(`^refs/pull/([1-9][0-9]{0,9})/(merge|head)$`)
	number   = regexp.MustCompile(`^[1-9][0-9]{0,9}$`)
	sha      = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)
	repoPath = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$`)
)

// FromCI reads the pull request of a CI run from its variables, and false
// when the run built none (a push, a schedule) or says too little to find
// it again (no repository or number, or values no host would give).
func FromCI(vars map[string]string) (PullRequest, bool) {
	if pr, ok := fromGitHub(vars); ok {
		return pr, true
	}
	return fromGitLab(vars)
}

func fromGitHub(v map[string]string) (PullRequest, bool) {
	m := pullRef.FindStringSubmatch(v["GITHUB_REF"])
	if m == nil {
		return PullRequest{}, false
	}
	pr := PullRequest{Provider: GitHub, Host: hostOf(v["GITHUB_SERVER_URL"], "github.com"), Repo: v["GITHUB_REPOSITORY"],
		Number: m[1], HeadSHA: v["GITHUB_SHA"], HeadBranch: v["GITHUB_HEAD_REF"], BaseBranch: v["GITHUB_BASE_REF"]}
	return pr, pr.valid()
}

func fromGitLab(v map[string]string) (PullRequest, bool) {
	iid := v["CI_MERGE_REQUEST_IID"]
	if iid == "" {
		return PullRequest{}, false
	}
	pr := PullRequest{Provider: GitLab, Host: hostOf(v["CI_SERVER_URL"], "gitlab.com"), Repo: v["CI_PROJECT_PATH"],
		Number: iid, HeadSHA: v["CI_COMMIT_SHA"], HeadBranch: v["CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"],
		BaseBranch: v["CI_MERGE_REQUEST_TARGET_BRANCH_NAME"]}
	return pr, pr.valid()
}

// valid holds a pull request to what a host gives: a number, a
// repository path, a hex sha (or none), branch names within bounds.
func (p *PullRequest) valid() bool {
	if p.HeadSHA != "" && !sha.MatchString(p.HeadSHA) {
		p.HeadSHA = ""
	}
	p.HeadSHA = strings.ToLower(p.HeadSHA)
	for _, b := range []*string{&p.HeadBranch, &p.BaseBranch} {
		if len(*b) > maxBranch || strings.ContainsAny(*b, "\x00\r\n") {
			*b = ""
		}
	}
	return number.MatchString(p.Number) && len(p.Repo) <= maxRepo && repoPath.MatchString(p.Repo) && !dotSegment(p.Repo) && p.Host != ""
}

// dotSegment reports a path segment "." or "..": the repository names a
// path of the host's API, which such a segment would leave.
func dotSegment(repo string) bool {
	for s := range strings.SplitSeq(repo, "/") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// hostOf is the lower-case host of a server URL, or def when it names
// none.
func hostOf(server, def string) string {
	if server == "" {
		return def
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	return strings.ToLower(u.Host)
}
