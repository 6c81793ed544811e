// Package routes is the single source of truth for the API surface: every
// route's method, path, Lambda group and access rule. The dev server, the
// Lambda entries, template.yaml, the CDK stacks and the OpenAPI tests all
// read or are tested against this table.
package routes

import "strings"

// BasePath is the version segment every route lives under, inside the API's
// own resource tree (so API Gateway stages never reach the handlers).
const BasePath = "/api/v1"

// Access says who may call a route.
type Access int

const (
	// Authenticated routes need any active user of a company.
	Authenticated Access = iota
	// Permission routes need the route's Permission (company admins hold all).
	Permission
	// Admin routes need the company admin flag.
	Admin
	// Public routes need no credential.
	Public
)

// Permissions the spec names, and the ones it leaves unshown that we chose.
const (
	PermChangeContentAccess = "user_management.change_content_access"
	PermViewIntegration     = "integrations.view_integration"
	PermManageIntegration   = "integrations.manage_integration"
	// Chosen: deactivating a policy.
	PermManagePolicy = "policies.manage_policy"
	// Chosen: uploading third-party scan reports, CI metadata and Git config.
	PermUploadScan = "scans.upload_scan"
	// Chosen: triaging issues (status, reason, assignee; bulk triage).
	PermTriageIssue = "issues.triage_issue"
)

// AllPermissions lists every permission a user can be granted.
var AllPermissions = []string{
	PermChangeContentAccess, PermViewIntegration, PermManageIntegration,
	PermManagePolicy, PermUploadScan, PermTriageIssue,
}

// Route is one method and path of the API.
type Route struct {
	Method     string
	Path       string // relative to BasePath, Go ServeMux wildcard syntax
	Group      string // the Lambda function that serves it
	Access     Access
	Permission string // set when Access is Permission
}

// Groups, one Lambda function each.
const (
	GroupDocs          = "docs"
	GroupNotifications = "notifications"
	GroupIssues        = "issues"
	GroupTeams         = "teams"
	GroupPolicies      = "policies"
	GroupIntegrations  = "integrations"
	GroupUploads       = "uploads"
)

// Table is every route of the API.
var Table = []Route{
	{Method: "GET", Path: "/openapi.json", Group: GroupDocs, Access: Public},

	{Method: "GET", Path: "/notifications/preferences", Group: GroupNotifications, Access: Authenticated},
	{Method: "POST", Path: "/notifications/preferences/{type_code}", Group: GroupNotifications, Access: Authenticated},
	{Method: "POST", Path: "/notifications/company-defaults/{type_code}", Group: GroupNotifications, Access: Admin},

	{Method: "GET", Path: "/issues/groups", Group: GroupIssues, Access: Authenticated},
	{Method: "GET", Path: "/issues", Group: GroupIssues, Access: Authenticated},
	{Method: "GET", Path: "/issues/sca/{issue_id}", Group: GroupIssues, Access: Authenticated},
	{Method: "GET", Path: "/scan/{scan_id}/issues/quality", Group: GroupIssues, Access: Authenticated},
	{Method: "GET", Path: "/issue/{issue_id}", Group: GroupIssues, Access: Authenticated},
	{Method: "GET", Path: "/issue/{issue_id}/history", Group: GroupIssues, Access: Authenticated},
	{Method: "PATCH", Path: "/issue/{issue_id}", Group: GroupIssues, Access: Permission, Permission: PermTriageIssue},
	{Method: "POST", Path: "/issues/triage", Group: GroupIssues, Access: Permission, Permission: PermTriageIssue},
	{Method: "GET", Path: "/scan/{scan_id}/issues", Group: GroupIssues, Access: Authenticated},
	{Method: "GET", Path: "/scan/{scan_id}/issues/sca", Group: GroupIssues, Access: Authenticated},
	{Method: "GET", Path: "/issues/sca", Group: GroupIssues, Access: Authenticated},
	{Method: "GET", Path: "/issues/code-quality", Group: GroupIssues, Access: Authenticated},

	{Method: "POST", Path: "/teams", Group: GroupTeams, Access: Permission, Permission: PermChangeContentAccess},
	{Method: "GET", Path: "/teams", Group: GroupTeams, Access: Permission, Permission: PermChangeContentAccess},
	{Method: "GET", Path: "/teams/{team_id}", Group: GroupTeams, Access: Permission, Permission: PermChangeContentAccess},

	{Method: "DELETE", Path: "/policies/{policy_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy},

	{Method: "GET", Path: "/integrations/scm-provider", Group: GroupIntegrations, Access: Permission, Permission: PermViewIntegration},
	{Method: "GET", Path: "/integrations/scm-provider/{integration_uuid}", Group: GroupIntegrations, Access: Permission, Permission: PermViewIntegration},
	{Method: "PATCH", Path: "/integrations/scm-provider/{integration_uuid}", Group: GroupIntegrations, Access: Permission, Permission: PermManageIntegration},

	{Method: "POST", Path: "/scan-upload", Group: GroupUploads, Access: Permission, Permission: PermUploadScan},
	{Method: "POST", Path: "/ci-data-upload", Group: GroupUploads, Access: Permission, Permission: PermUploadScan},
	{Method: "POST", Path: "/git-config-upload", Group: GroupUploads, Access: Permission, Permission: PermUploadScan},
}

// Pattern is the route's Go ServeMux pattern, e.g. "GET /api/v1/issues".
func (r Route) Pattern() string { return r.Method + " " + BasePath + r.Path }

// FullPath is the path including BasePath.
func (r Route) FullPath() string { return BasePath + r.Path }

// Of returns the routes served by one group, in table order.
func Of(group string) []Route {
	var out []Route
	for _, r := range Table {
		if r.Group == group {
			out = append(out, r)
		}
	}
	return out
}

// Groups returns every group name, in order of first appearance.
func Groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range Table {
		if !seen[r.Group] {
			seen[r.Group] = true
			out = append(out, r.Group)
		}
	}
	return out
}

// PathParams returns the names of the wildcards in the route's path.
func (r Route) PathParams() []string {
	var out []string
	for _, seg := range strings.Split(r.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}"))
		}
	}
	return out
}
