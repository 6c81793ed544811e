// Package gitlabhost is a loopback GitLab (gitlab.com or self-managed) for
// tests of the merge-request decoration and of GitLab's note webhooks: it
// speaks GitLab's REST wire format for the operations we call and checks
// every request against GitLab's own published OpenAPI description
// (doc/api/openapi/openapi_v3.yaml, an excerpt in testdata), so a client
// that passes here sends what GitLab accepts.
//
// Covered operations (under /api/v4, below WithRelativeRoot when set):
//
//	GET  /user                                            getApiV4User
//	GET  /projects/{id}/merge_requests/{iid}              getApiV4ProjectsIdMergeRequestsMergeRequestIid
//	GET  /projects/{id}/merge_requests/{iid}/notes        getApiV4ProjectsIdMergeRequestsNoteableIdNotes (page, per_page, X-Next-Page, Link)
//	POST /projects/{id}/merge_requests/{iid}/notes        postApiV4ProjectsIdMergeRequestsNoteableIdNotes
//	PUT  /projects/{id}/merge_requests/{iid}/notes/{nid}  putApiV4ProjectsIdMergeRequestsNoteableIdNotesNoteId
//	POST /projects/{id}/statuses/{sha}                    postApiV4ProjectsIdStatusesSha
//
// {id} is a project's numeric id or its URL-encoded path (group%2Fproject),
// matched as one segment as GitLab does. Tokens are read from PRIVATE-TOKEN
// or "Authorization: Bearer". GitLab's refusals are modelled where a client
// must handle them: 401, 404 for unknown projects, merge requests, notes
// and commits, 403 for editing another user's note, 400 for an empty or
// too long note and an unknown status state; RateLimit makes the next
// requests answer 429 with Retry-After and RateLimit-Reset.
//
// Requests are matched and validated through internal/apicontract (as
// internal/githost's). A request the description does not describe
// (method and path), whose parameters or content type it does not allow,
// or whose JSON body holds a parameter GitLab does not document for the
// operation, is a contract
// violation: answered 404 or 400, recorded, and failing the test at
// cleanup unless taken with TakeViolations. The description's response
// schemas are not carried (testdata/README.md), so answers are not
// validated; they follow GitLab's documented examples.
//
// Payload and Headers build note hook deliveries as GitLab sends them.
//
// The package is test support only; no Lambda links internal/.
package gitlabhost
