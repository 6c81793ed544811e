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
	// PathToken routes carry an API key as their {token} path segment
	// instead of a header (the IDE's legacy verify); any active user. The
	// segment never reaches a log line.
	PathToken
)

// TokenParam is the path wildcard of PathToken routes.
const TokenParam = "token"

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
	// Chosen: exporting issues (POST /exports, GET /exports/{export_id});
	// an export without a project filter also needs the company admin flag.
	PermExportIssues = "issues.export_issues"
)

// AllPermissions lists every permission a user can be granted.
var AllPermissions = []string{
	PermChangeContentAccess, PermViewIntegration, PermManageIntegration,
	PermManagePolicy, PermUploadScan, PermTriageIssue, PermExportIssues,
}

// Route is one method and path of the API.
type Route struct {
	Method     string
	Path       string // relative to BasePath, Go ServeMux wildcard syntax
	Group      string // the Lambda function that serves it
	Access     Access
	Permission string // set when Access is Permission
	// Params declares the route's path and query parameters; the edge
	// checks them before the handler runs (see params.go). Undeclared path
	// parameters are bounded text, undeclared query parameters are ignored
	// but bounded by MaxQueryValueBytes.
	Params []Param
	// MaxBodyBytes bounds the request body after decoding
	// (DefaultMaxBodyBytes when 0).
	MaxBodyBytes int64
	// MaxDecodedBytes, when set, is the bound of a gzip-encoded body once
	// decoded (counted while reading), MaxBodyBytes then bounding it as
	// sent: a compressed report may expand past what the wire carries.
	MaxDecodedBytes int64
	// StreamsBody: the handler reads the body itself, first thing, and
	// names what exceeds which limit (a report, CI data); the edge reads
	// every other body before the handler runs.
	StreamsBody bool
	// Headers are the request headers the handler reads besides the
	// credential and Content-Encoding, and the response headers it sets:
	// the OpenAPI document lists them (a test checks it).
	Headers, ResponseHeaders []string
	// Errors is the shape of the route's error bodies.
	Errors ErrorForm
	// TextFields are the JSON body's top-level members that people read
	// (names, titles, comments, patterns, tags; a string or an array of
	// strings): the edge refuses control and bidi characters in them (see
	// shared/cleantext), naming the member. Multi-line ones are in
	// MultilineFields.
	TextFields, MultilineFields []string
	// Objects are body members holding declared parameters (see Object).
	Objects []Object
	// Creates: the route creates a record (answers 201), so a client may
	// send Idempotency-Key to retry it safely (see shared/httpapi).
	Creates bool
	// Idempotent: the route takes Idempotency-Key as a creation does,
	// though it answers 200 or 202 (a write whose retry must not start
	// its work twice).
	Idempotent bool
	// SecretAnswer: the creation's answer carries a secret shown once (an
	// API key, a signing secret); an idempotent retry does not repeat it.
	SecretAnswer bool
}

// Validated says whether the route's 200 answers carry an ETag and honour
// If-None-Match: every authenticated read.
func (r Route) Validated() bool { return r.Method == "GET" && r.Access != Public }

// Groups, one Lambda function each.
const (
	GroupDocs          = "docs"
	GroupNotifications = "notifications"
	GroupIssues        = "issues"
	GroupTeams         = "teams"
	GroupPolicies      = "policies"
	GroupIntegrations  = "integrations"
	GroupUploads       = "uploads"
	GroupWebhooks      = "webhooks"
	// Accounts: API keys, users, the audit log.
	GroupAccounts = "accounts"
	// The client's everyday routes around a scan.
	GroupProjects = "projects"
	// VEX import: statements applied to the company's SCA findings.
	GroupVEX = "vex"
	// The component inventory: which projects and branches hold a package.
	GroupComponents = "components"
	// Tickets (docs/tickets.md): Jira integrations, ticket rules, the
	// trackers' inbound events.
	GroupTickets = "tickets"
)

// Table is every route of the API.
var Table = []Route{
	{Method: "GET", Path: "/openapi.json", Group: GroupDocs, Access: Public},

	{Method: "GET", Path: "/notifications/preferences", Group: GroupNotifications, Access: Authenticated},
	{Method: "POST", Path: "/notifications/preferences/{type_code}", Group: GroupNotifications, Access: Authenticated, Params: []Param{TextParam("type_code", 64)},
		MultilineFields: []string{"filter"}},
	{Method: "POST", Path: "/notifications/company-defaults/{type_code}", Group: GroupNotifications, Access: Admin, Params: []Param{TextParam("type_code", 64)}},

	{Method: "GET", Path: "/issues/groups", Group: GroupIssues, Access: Authenticated,
		Params: append(append(Paging(100), projectFilters()...), TextParam("group_by", 32), BoolParam("breakdown"), TextParam("status", 32))},
	{Method: "GET", Path: "/issues", Group: GroupIssues, Access: Authenticated,
		Params: append(append(append(Paging(100), IssueFilters()...), PageTokens()...), TextParam("accepted_until_before", 64),
			BoolParam("has_ticket"), EnumParam("ticket_state", "open", "closed"))},
	{Method: "GET", Path: "/issues/sca/{issue_id}", Group: GroupIssues, Access: Authenticated, Params: []Param{TextParam("issue_id", 64)}},
	{Method: "GET", Path: "/scan/{scan_id}/issues/quality", Group: GroupIssues, Access: Authenticated, Params: append(CursorPaging(50), UUIDParam("scan_id"), TextParam("classification", 256))},
	{Method: "GET", Path: "/issue/{issue_id}", Group: GroupIssues, Access: Authenticated, Params: []Param{UUIDParam("issue_id")}},
	{Method: "GET", Path: "/issue/{issue_id}/history", Group: GroupIssues, Access: Authenticated, Params: []Param{UUIDParam("issue_id")}},
	{Method: "PATCH", Path: "/issue/{issue_id}", Group: GroupIssues, Access: Permission, Permission: PermTriageIssue, Params: []Param{UUIDParam("issue_id")},
		TextFields: []string{"status", "expires_at"}, MultilineFields: []string{"reason"}},
	// The bulk triage's filters are GET /issues's, with its bounds.
	// Past store.MaxTriage matches it answers 202 with an operation (run by
	// the ingester's worker), which the next route follows.
	{Method: "POST", Path: "/issues/triage", Group: GroupIssues, Access: Permission, Permission: PermTriageIssue, Idempotent: true,
		TextFields: []string{"status", "expires_at"}, MultilineFields: []string{"reason"}, Objects: []Object{{Member: "filters", Params: IssueFilters()}}},
	// Any user of the company may follow an operation (it shows what the
	// issue lists show): its starter may hold policies.manage_policy only.
	{Method: "GET", Path: "/issues/triage/{operation_id}", Group: GroupIssues, Access: Authenticated, Params: []Param{UUIDParam("operation_id")}},
	{Method: "GET", Path: "/scan/{scan_id}/issues", Group: GroupIssues, Access: Authenticated, Params: append(CursorPaging(100), UUIDParam("scan_id"), TextParam("baseline", MaxNameBytes))},
	{Method: "GET", Path: "/scan/{scan_id}/issues/sca", Group: GroupIssues, Access: Authenticated, Params: append(CursorPaging(100), UUIDParam("scan_id"), EnumParam("kev", "true"), TextParam("epss_gte", 32))},
	{Method: "GET", Path: "/issues/sca", Group: GroupIssues, Access: Authenticated, Params: append(CursorPaging(100), TextParam("project", MaxNameBytes),
		EnumParam("kev", "true"), TextParam("epss_gte", 32))},
	{Method: "GET", Path: "/issues/code-quality", Group: GroupIssues, Access: Authenticated, Params: append(CursorPaging(50), TextParam("project", MaxNameBytes))},
	// Trends kept on write (docs/insight.md): whoever may read issues. `project`
	// is a name, as every other findings filter; `project_id` the id.
	{Method: "GET", Path: "/metrics/trend", Group: GroupIssues, Access: Authenticated,
		Params: []Param{TextParam("project", MaxNameBytes), IDParam("project_id"), IntParam("days", 1, 365), TextParam("urgency", 16)}},
	// Exports: the issue list's filters (with its bounds) and a format;
	// the job runs in the export worker (shared/exportjob, in the ingester);
	// Idempotency-Key keeps a retry from starting a second export.
	{Method: "POST", Path: "/exports", Group: GroupIssues, Access: Permission, Permission: PermExportIssues, Idempotent: true,
		TextFields: []string{"format"}, Objects: []Object{{Member: "filters", Params: IssueFilters()}}},
	{Method: "GET", Path: "/exports/{export_id}", Group: GroupIssues, Access: Permission, Permission: PermExportIssues, Params: []Param{UUIDParam("export_id")}},

	{Method: "POST", Path: "/teams", Creates: true, Group: GroupTeams, Access: Permission, Permission: PermChangeContentAccess,
		TextFields: []string{"name", "project_tags", "repo_url_patterns"}},
	{Method: "GET", Path: "/teams", Group: GroupTeams, Access: Permission, Permission: PermChangeContentAccess, Params: CursorPaging(100)},
	{Method: "GET", Path: "/teams/{team_id}", Group: GroupTeams, Access: Permission, Permission: PermChangeContentAccess, Params: []Param{IDParam("team_id")}},

	{Method: "DELETE", Path: "/policies/{policy_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{IDParam("policy_id")}},

	{Method: "GET", Path: "/integrations/scm-provider", Group: GroupIntegrations, Access: Permission, Permission: PermViewIntegration, Params: CursorPaging(50)},
	{Method: "GET", Path: "/integrations/scm-provider/{integration_uuid}", Group: GroupIntegrations, Access: Permission, Permission: PermViewIntegration, Params: []Param{UUIDParam("integration_uuid")}},
	{Method: "PATCH", Path: "/integrations/scm-provider/{integration_uuid}", Group: GroupIntegrations, Access: Permission, Permission: PermManageIntegration, Params: []Param{UUIDParam("integration_uuid")},
		TextFields: []string{"name", "org_allowlist", "base_url", "gateway_prefix", "secure_token"}},
	// The host's webhook deliveries (GitHub calls it): public, because the
	// host holds no credential of ours; the body's signature with the
	// integration's webhook secret is checked before anything of it is
	// read, and an unknown uuid answers as a bad signature does (401).
	// Only issue comments are acted on, so 1 MiB (GitHub's cap is 25 MB).
	{Method: "POST", Path: "/integrations/scm-provider/{integration_uuid}/events", Group: GroupIntegrations, Access: Public,
		Params: []Param{UUIDParam("integration_uuid")}, MaxBodyBytes: MaxSCMEventBytes,
		Headers: []string{"X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery"}},

	// Reports: 10 MiB as sent (GitHub's limit of a gzip report; Lambda's
	// 6 MB payload limit comes first in AWS, bigger reports come in chunks:
	// Upload-Offset/Upload-Length), 64 MiB once decompressed.
	{Method: "POST", Path: "/scan-upload", Group: GroupUploads, Access: Permission, Permission: PermUploadScan, Errors: StatusMessage, StreamsBody: true,
		MaxBodyBytes: 10 << 20, MaxDecodedBytes: 64 << 20,
		Headers: []string{"Upload-Offset", "Upload-Length"}, ResponseHeaders: []string{"Upload-Offset"},
		Params: []Param{TextParam("engine", 32), UUIDParam("run_id"), TextParam("project", MaxNameBytes), TextParam("branch", MaxNameBytes), TextParam("repo_url", MaxURLBytes), BoolParam("ci"), TextParam("ci_platform", MaxNameBytes), TextParam("category", 100)}},
	// Source files the report names, sent before it (at most 1 MiB each).
	{Method: "POST", Path: "/code-upload", Group: GroupUploads, Access: Permission, Permission: PermUploadScan, Errors: StatusMessage, StreamsBody: true,
		Params: []Param{UUIDParam("run_id"), FilePathParam("path")}},
	{Method: "POST", Path: "/ci-data-upload", Group: GroupUploads, Access: Permission, Permission: PermUploadScan, Errors: StatusMessage, StreamsBody: true,
		Params: []Param{UUIDParam("run_id"), TextParam("platform", MaxNameBytes)}},
	{Method: "POST", Path: "/git-config-upload", Group: GroupUploads, Access: Permission, Permission: PermUploadScan, Errors: StatusMessage, StreamsBody: true,
		Params: []Param{UUIDParam("run_id")}},

	// Notification delivery: webhook endpoints and their delivery log, and
	// the company's SLA settings (company admin).
	{Method: "POST", Path: "/webhooks", Creates: true, SecretAnswer: true, Group: GroupWebhooks, Access: Admin, TextFields: []string{"url", "description", "types", "kind"},
		MultilineFields: []string{"filter"}},
	{Method: "GET", Path: "/webhooks", Group: GroupWebhooks, Access: Admin, Params: CursorPaging(100)},
	{Method: "GET", Path: "/webhooks/{webhook_id}", Group: GroupWebhooks, Access: Admin, Params: []Param{UUIDParam("webhook_id")}},
	{Method: "PATCH", Path: "/webhooks/{webhook_id}", Group: GroupWebhooks, Access: Admin, Params: []Param{UUIDParam("webhook_id")},
		TextFields: []string{"url", "description", "types"}, MultilineFields: []string{"filter"}},
	{Method: "POST", Path: "/webhooks/filter-dry-run", Group: GroupWebhooks, Access: Admin, TextFields: []string{"types"}, MultilineFields: []string{"filter"}},
	{Method: "DELETE", Path: "/webhooks/{webhook_id}", Group: GroupWebhooks, Access: Admin, Params: []Param{UUIDParam("webhook_id")}},
	{Method: "POST", Path: "/webhooks/{webhook_id}/rotate-secret", Group: GroupWebhooks, Access: Admin, Params: []Param{UUIDParam("webhook_id")}},
	{Method: "POST", Path: "/webhooks/{webhook_id}/test", Group: GroupWebhooks, Access: Admin, Params: []Param{UUIDParam("webhook_id")}},
	{Method: "GET", Path: "/webhooks/{webhook_id}/deliveries", Group: GroupWebhooks, Access: Admin, Params: append(CursorPaging(100), UUIDParam("webhook_id"), TextParam("status", 16))},
	{Method: "POST", Path: "/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", Group: GroupWebhooks, Access: Admin,
		Params: []Param{UUIDParam("webhook_id"), TextParam("delivery_id", 64)}},
	{Method: "GET", Path: "/sla-settings", Group: GroupNotifications, Access: Admin},
	{Method: "PUT", Path: "/sla-settings", Group: GroupNotifications, Access: Admin},
	// Accounts: any user manages their own API keys, a company admin every
	// key, the users and the audit log.
	{Method: "POST", Path: "/api-keys", Creates: true, SecretAnswer: true, Group: GroupAccounts, Access: Authenticated, TextFields: []string{"name"}},
	{Method: "GET", Path: "/api-keys", Group: GroupAccounts, Access: Authenticated, Params: append(CursorPaging(100), IDParam("user_id"))},
	{Method: "DELETE", Path: "/api-keys/{key_id}", Group: GroupAccounts, Access: Authenticated, Params: []Param{IDParam("key_id")}},
	{Method: "GET", Path: "/users", Group: GroupAccounts, Access: Admin, Params: append(CursorPaging(100), TextParam("role", 16), TextParam("permission", 64))},
	{Method: "POST", Path: "/users", Creates: true, Group: GroupAccounts, Access: Admin, TextFields: []string{"email", "first_name", "last_name", "subject", "permissions"}},
	{Method: "PATCH", Path: "/users/{user_id}", Group: GroupAccounts, Access: Admin, Params: []Param{IDParam("user_id")}, TextFields: []string{"permissions", "scm_login"}},
	{Method: "GET", Path: "/audit-log", Group: GroupAccounts, Access: Admin,
		Params: append(CursorPaging(100), TextParam("actor", 32), TextParam("action", 64), TextParam("from", 64), TextParam("to", 64))},
	// The client workflow (docs/client-workflow.md): account check, projects, scans,
	// reports, the CI gate; blocking rules and policies.
	{Method: "GET", Path: "/verify", Group: GroupProjects, Access: Authenticated, Params: []Param{BoolParam("user_info")}},
	{Method: "GET", Path: "/verify/{token}", Group: GroupProjects, Access: PathToken, Params: []Param{TextParam(TokenParam, 256)}},
	{Method: "GET", Path: "/projects", Group: GroupProjects, Access: Authenticated, Params: append(CursorPaging(100), TextParam("repo_url", MaxURLBytes))},
	{Method: "PATCH", Path: "/projects/{project_id}", Group: GroupProjects, Access: Permission, Permission: PermUploadScan, Params: []Param{IDParam("project_id")},
		TextFields: []string{"default_branch"}},
	{Method: "GET", Path: "/scans", Group: GroupProjects, Access: Authenticated,
		Params: append(CursorPaging(100), TextParam("project", MaxNameBytes), TextParam("branch", MaxNameBytes), TextParam("sha", 64), TextParam("status", 32))},
	{Method: "GET", Path: "/scan/{scan_id}", Group: GroupProjects, Access: Authenticated, Params: []Param{UUIDParam("scan_id")}},
	{Method: "GET", Path: "/scan/{scan_id}/report", Group: GroupProjects, Access: Authenticated, Params: []Param{UUIDParam("scan_id"), TextParam("format", 16)},
		ResponseHeaders: []string{"Content-Security-Policy"}},
	// The CI gate answers every error in the client's BlockOnError form.
	{Method: "GET", Path: "/scan/{scan_id}/check_blocking_rules", Group: GroupProjects, Access: Authenticated, Errors: BlockOnMessage,
		Params: append(Paging(50), UUIDParam("scan_id"), TextParam("block_on", MaxQueryValueBytes), TextParam("baseline", MaxNameBytes))},
	{Method: "POST", Path: "/blocking-rules", Creates: true, Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, TextFields: []string{"slug", "name"},
		Objects: []Object{{Member: "conditions", Params: ruleConditions()}}},
	{Method: "GET", Path: "/blocking-rules", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: CursorPaging(100)},
	{Method: "GET", Path: "/blocking-rules/{rule_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{IDParam("rule_id")}},
	{Method: "PATCH", Path: "/blocking-rules/{rule_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{IDParam("rule_id")},
		TextFields: []string{"slug", "name"}, Objects: []Object{{Member: "conditions", Params: ruleConditions()}}},
	{Method: "DELETE", Path: "/blocking-rules/{rule_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{IDParam("rule_id")}},
	// Triage rules: the matcher and action are objects (see triagerule).
	{Method: "POST", Path: "/triage-rules", Creates: true, Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy,
		Objects: []Object{{Member: "matcher", Params: triageMatcher()}, {Member: "action", Params: triageAction()}}},
	{Method: "GET", Path: "/triage-rules", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: CursorPaging(100)},
	{Method: "GET", Path: "/triage-rules/{rule_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{UUIDParam("rule_id")}},
	{Method: "PATCH", Path: "/triage-rules/{rule_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{UUIDParam("rule_id")}},
	{Method: "POST", Path: "/triage-rules/{rule_id}/approve", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{UUIDParam("rule_id")}},
	// Past store.MaxRuleApply it answers 202 with an operation, which GET
	// /issues/triage/{operation_id} follows.
	{Method: "POST", Path: "/triage-rules/{rule_id}/apply", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Idempotent: true,
		Params: []Param{UUIDParam("rule_id"), BoolParam("dry_run")}},
	// Last: the event replay deletes the demo rule the routes above address.
	{Method: "DELETE", Path: "/triage-rules/{rule_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{UUIDParam("rule_id")}},
	{Method: "POST", Path: "/policies", Creates: true, Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy,
		TextFields:      []string{"name", "policy_type", "source_type", "instruction_type", "glob_pattern", "cwes", "excludes", "projects"},
		MultilineFields: []string{"description", "guidance_text"}},
	{Method: "GET", Path: "/policies", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: CursorPaging(100)},
	{Method: "GET", Path: "/policies/{policy_id}", Group: GroupPolicies, Access: Permission, Permission: PermManagePolicy, Params: []Param{IDParam("policy_id")}},
	// VEX import (docs/vex.md): a CycloneDX or OpenVEX document, checked
	// against its schema, whose statements triage the company's SCA
	// findings; dry_run answers what an apply changes, changing nothing.
	{Method: "POST", Path: "/vex", Group: GroupVEX, Access: Permission, Permission: PermTriageIssue, MaxBodyBytes: 5 << 20,
		Params: []Param{EnumParam("format", "cyclonedx", "openvex"), BoolParam("dry_run"), IDParam("project_id")}},
	// The component inventory (docs/components.md): whoever may read
	// projects and issues; a package URL with or without version, and
	// version bounds compared by the package's ecosystem.
	{Method: "GET", Path: "/components", Group: GroupComponents, Access: Authenticated,
		Params: append(CursorPaging(100), TextParam("purl", MaxPURLBytes), TextParam("version_lt", MaxVersionBytes),
			TextParam("version_lte", MaxVersionBytes), TextParam("version_gt", MaxVersionBytes), TextParam("version_gte", MaxVersionBytes))},

	// Tickets (docs/tickets.md): Jira Cloud integrations (checked against
	// the site when saved; the token and webhook secret write-only) and
	// ticket rules, for whoever manages integrations / the company admin.
	{Method: "POST", Path: "/integrations/jira", Creates: true, Group: GroupTickets, Access: Permission, Permission: PermManageIntegration,
		TextFields: []string{"name", "site_url", "email", "api_token", "project_key", "issue_type", "done_transition", "wont_do_transition", "reopen_transition", "webhook_secret"}},
	{Method: "GET", Path: "/integrations/jira", Group: GroupTickets, Access: Permission, Permission: PermViewIntegration},
	{Method: "GET", Path: "/integrations/jira/{integration_uuid}", Group: GroupTickets, Access: Permission, Permission: PermViewIntegration, Params: []Param{UUIDParam("integration_uuid")}},
	{Method: "PATCH", Path: "/integrations/jira/{integration_uuid}", Group: GroupTickets, Access: Permission, Permission: PermManageIntegration, Params: []Param{UUIDParam("integration_uuid")},
		TextFields: []string{"name", "site_url", "email", "api_token", "project_key", "issue_type", "done_transition", "wont_do_transition", "reopen_transition", "webhook_secret"}},
	{Method: "DELETE", Path: "/integrations/jira/{integration_uuid}", Group: GroupTickets, Access: Permission, Permission: PermManageIntegration, Params: []Param{UUIDParam("integration_uuid")}},
	// The trackers' deliveries: public (the tracker holds no credential of
	// ours); the body's signature with the integration's webhook secret is
	// checked before anything of it is read, an unknown uuid answers as a
	// bad signature does (401).
	{Method: "POST", Path: "/integrations/jira/{integration_uuid}/events", Group: GroupTickets, Access: Public,
		Params: []Param{UUIDParam("integration_uuid")}, MaxBodyBytes: MaxSCMEventBytes,
		Headers: []string{"X-Hub-Signature", "X-Atlassian-Webhook-Identifier"}},
	{Method: "POST", Path: "/integrations/scm-provider/{integration_uuid}/ticket-events", Group: GroupTickets, Access: Public,
		Params: []Param{UUIDParam("integration_uuid")}, MaxBodyBytes: MaxSCMEventBytes,
		Headers: []string{"X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery"}},
	{Method: "POST", Path: "/ticket-rules", Creates: true, Group: GroupTickets, Access: Admin, TextFields: []string{"grouping", "labels"}},
	{Method: "GET", Path: "/ticket-rules", Group: GroupTickets, Access: Admin},
	{Method: "GET", Path: "/ticket-rules/{rule_id}", Group: GroupTickets, Access: Admin, Params: []Param{UUIDParam("rule_id")}},
	{Method: "PATCH", Path: "/ticket-rules/{rule_id}", Group: GroupTickets, Access: Admin, Params: []Param{UUIDParam("rule_id")}, TextFields: []string{"grouping", "labels"}},
	{Method: "DELETE", Path: "/ticket-rules/{rule_id}", Group: GroupTickets, Access: Admin, Params: []Param{UUIDParam("rule_id")}},
}

// Bounds of the component inventory's query parameters
// (shared/components' limits).
const (
	MaxPURLBytes    = 512
	MaxVersionBytes = 128
)

// MaxSCMEventBytes bounds a host's webhook delivery.
const MaxSCMEventBytes = 1 << 20

// projectFilters are the project filters of the findings reads.
func projectFilters() []Param {
	return []Param{TextParam("project", MaxNameBytes), TextParam("repo", MaxURLBytes), TextParam("branch", MaxNameBytes)}
}

// IssueFilters are the filters of GET /issues, also the filters of a bulk
// triage.
func IssueFilters() []Param {
	return append(projectFilters(), TextParam("cwe", 32), TextParam("file_path_exact", MaxFilePathBytes), TextParam("urgency", 16), TextParam("status", 32))
}

// ruleConditions are the text members of a blocking rule's conditions
// (each a string or an array of strings); a path glob is at most 500
// bytes (shared/gate.MaxPatternLen).
func ruleConditions() []Param {
	return []Param{TextParam("min_urgency", 16), TextParam("cwes", 32), TextParam("paths", 500), TextParam("statuses", 32)}
}

// triageMatcher and triageAction bound a triage rule's members
// (triagerule's limits; the reason is multi-line text people read).
func triageMatcher() []Param {
	return []Param{TextParam("tool", 512), TextParam("rule_id", 512), TextParam("path", 500), TextParam("package", 512),
		TextParam("ecosystem", 64), TextParam("urgency_at_least", 16), TextParam("urgency_at_most", 16)}
}

func triageAction() []Param {
	return []Param{TextParam("status", 32), LinesParam("reason", 2000), TextParam("expires_at", 64), TextParam("urgency", 16)}
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
