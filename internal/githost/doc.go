// Package githost is a loopback GitHub for tests of the pull-request
// decoration path: it speaks GitHub's REST wire format for the operations we
// call and checks every request against GitHub's own published API
// description, so a client that passes here sends what GitHub accepts.
//
// Covered operations (github.com paths, or under /api/v3 with WithEnterprise):
//
//	GET   /user                                           users/get-authenticated
//	POST  /repos/{owner}/{repo}/statuses/{sha}            repos/create-commit-status
//	GET   /repos/{owner}/{repo}/issues/{n}/comments       issues/list-comments (since, paging, Link)
//	POST  /repos/{owner}/{repo}/issues/{n}/comments       issues/create-comment
//	PATCH /repos/{owner}/{repo}/issues/comments/{id}      issues/update-comment
//	GET   /repos/{owner}/{repo}/pulls/{n}                 pulls/get (head and base: branch, sha, repository)
//	GET   /repos/{owner}/{repo}/pulls/{n}/files           pulls/list-files (paging, Link)
//	GET   /repos/{owner}/{repo}/pulls/{n}/comments        pulls/list-review-comments
//	POST  /repos/{owner}/{repo}/pulls/{n}/comments        pulls/create-review-comment
//	POST  /repos/{owner}/{repo}/issues/comments/{id}/reactions  reactions/create-for-issue-comment
//
// State is in memory and seeded by the test (AddRepo, AddCommit,
// AddPullRequest with files and patches, AddIssueComment); what the client
// did is read back with Statuses, IssueComments, ReviewComments, Requests
// and RequestsFor. GitHub's own refusals are modelled where a client must
// handle them: 401 "Bad credentials", 404 for unknown repositories, issues
// and comments, 422 for a status on an unknown commit, an empty or too long
// comment body, and a review comment outside the diff.
//
// Every request is matched and validated with Validator (path, method,
// parameters, JSON body; internal/apicontract does the checking, as for
// internal/gitlabhost, and keeps the Requests and Violations). A request the description does not allow is a
// contract violation: it is answered 422 "Invalid request." (404 when no
// such operation exists, as GitHub answers), recorded, and fails the test at
// cleanup unless the test takes it with TakeViolations. The server's own
// answers are validated against the description too, so the shapes clients
// parse are GitHub's.
//
// SecondaryRateLimit and PrimaryRateLimit make the next requests answer with
// GitHub's rate limits, to test back-off. SignedEvent and
// IssueCommentCreated build webhook deliveries signed as GitHub signs them.
//
// The package is test support only; no Lambda links internal/.
package githost
