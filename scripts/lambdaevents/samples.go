package main

import (
	"net/http"

	"github.com/acme/codescan-api/shared/routes"
)

// sample is what one route's event carries and what a replay of it against
// the demo data must answer.
type sample struct {
	File        string            // events/<File>.json
	Path        map[string]string // path parameter values
	Query       map[string]string
	Body        string
	ContentType string
	// Seeded names, per path or query parameter, the demo resource
	// (.local/demo.json "resources") whose value a replay puts in its place,
	// so the event addresses records that exist.
	Seeded map[string]string
	Status int      // the answer's status code
	Keys   []string // members the answer's JSON object must have
}

const jsonType = "application/json"

// samples holds one sample per route of the table, by route pattern.
var samples = map[string]sample{
	"GET /api/v1/openapi.json": {
		File: "docs-openapi", Status: http.StatusOK, Keys: []string{"openapi", "info", "paths", "components"},
	},

	"GET /api/v1/notifications/preferences": {
		File: "notifications-preferences-list", Status: http.StatusOK, Keys: []string{"status", "preferences"},
	},
	"POST /api/v1/notifications/preferences/{type_code}": {
		File: "notifications-preferences-set", Path: map[string]string{"type_code": "scan_completed"},
		Body: `{"email_enabled":false}`, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status"},
	},
	"POST /api/v1/notifications/company-defaults/{type_code}": {
		File: "notifications-company-defaults-set", Path: map[string]string{"type_code": "new_critical_issue"},
		Body: `{"email_enabled":true,"webhook_enabled":null}`, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status"},
	},

	"GET /api/v1/issues/groups": {
		File: "issues-groups", Query: map[string]string{"group_by": "cwe", "breakdown": "true", "page": "1", "page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "page", "total_pages", "total_groups", "groups"},
	},
	"GET /api/v1/issues": {
		File: "issues-list", Query: map[string]string{"cwe": "CWE-89", "status": "open", "page": "1", "page_size": "50"},
		Status: http.StatusOK, Keys: []string{"status", "page", "total_pages", "total_issues", "issues"},
	},
	"GET /api/v1/issues/sca/{issue_id}": {
		File: "issues-sca-get", Path: map[string]string{"issue_id": "5b0e8f57-2a4c-4d1b-9c3e-7f6a8b9c0d12"},
		Seeded: map[string]string{"issue_id": "sca_issue_ids"},
		Status: http.StatusOK, Keys: []string{"status", "issue"},
	},
	"GET /api/v1/scan/{scan_id}/issues/quality": {
		File: "issues-quality", Path: map[string]string{"scan_id": "0c9d7e21-64f3-4a8b-b5d2-91e0f3a4c6b8"},
		Query:  map[string]string{"classification": "complexity", "page": "1", "page_size": "50"},
		Seeded: map[string]string{"scan_id": "scan_ids_with_quality_issues"},
		Status: http.StatusOK, Keys: []string{"status", "page", "total_pages", "total_issues", "issues"},
	},

	"GET /api/v1/issue/{issue_id}": {
		File: "issues-get", Path: map[string]string{"issue_id": "7d8e9f60-1a2b-5c3d-8e4f-5a6b7c8d9e0f"},
		Seeded: map[string]string{"issue_id": "sast_issue_ids"},
		Status: http.StatusOK, Keys: []string{"status", "issue"},
	},
	"GET /api/v1/issue/{issue_id}/history": {
		File: "issues-history", Path: map[string]string{"issue_id": "7d8e9f60-1a2b-5c3d-8e4f-5a6b7c8d9e0f"},
		Seeded: map[string]string{"issue_id": "sast_issue_ids"},
		Status: http.StatusOK, Keys: []string{"status", "history"},
	},
	"PATCH /api/v1/issue/{issue_id}": {
		File: "issues-update", Path: map[string]string{"issue_id": "7d8e9f60-1a2b-5c3d-8e4f-5a6b7c8d9e0f"},
		Seeded: map[string]string{"issue_id": "sast_issue_ids"},
		Body:   `{"status":"fix_in_progress","reason":"Patch in review"}`, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status", "issue"},
	},
	"POST /api/v1/exports": {
		File: "issues-export-create", ContentType: jsonType,
		Body:   `{"format":"sarif","filters":{"cwe":"CWE-89","status":"open"}}`,
		Status: http.StatusAccepted, Keys: []string{"status", "export"},
	},
	"GET /api/v1/exports/{export_id}": {
		File: "issues-export-get", Path: map[string]string{"export_id": "3f1c9a62-8b4d-4e7a-9c21-5d6e7f8a9b0c"},
		Seeded: map[string]string{"export_id": "export_ids"},
		Status: http.StatusOK, Keys: []string{"status", "export"},
	},
	"GET /api/v1/issues/triage/{operation_id}": {
		File: "issues-triage-get", Path: map[string]string{"operation_id": "6b2d8e4f-1a3c-4d5e-9f70-8a1b2c3d4e5f"},
		Seeded: map[string]string{"operation_id": "triage_operation_ids"},
		Status: http.StatusOK, Keys: []string{"status", "operation"},
	},
	"POST /api/v1/issues/triage": {
		File: "issues-triage", ContentType: jsonType,
		Body:   `{"filters":{"cwe":"CWE-611","branch":"main"},"status":"accepted_risk","reason":"XML parsing is disabled in production"}`,
		Status: http.StatusOK, Keys: []string{"status", "matched", "changed"},
	},
	"GET /api/v1/scan/{scan_id}/issues": {
		File: "issues-scan-list", Path: map[string]string{"scan_id": "2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901"},
		Query:  map[string]string{"page": "1", "page_size": "30"},
		Seeded: map[string]string{"scan_id": "scan_ids"},
		Status: http.StatusOK, Keys: []string{"status", "page", "total_pages", "total_issues", "issues"},
	},

	"GET /api/v1/scan/{scan_id}/issues/sca": {
		File: "issues-scan-sca", Path: map[string]string{"scan_id": "2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901"},
		Query:  map[string]string{"page": "1", "page_size": "30"},
		Seeded: map[string]string{"scan_id": "scan_ids"},
		Status: http.StatusOK, Keys: []string{"status", "page", "total_pages", "total_issues", "issues"},
	},
	"GET /api/v1/issues/sca": {
		File: "issues-sca-list", Query: map[string]string{"project": "payments-service", "page": "1"},
		Seeded: map[string]string{"project": "project_names"},
		Status: http.StatusOK, Keys: []string{"status", "page", "total_pages", "total_issues", "issues"},
	},
	"GET /api/v1/issues/code-quality": {
		File: "issues-code-quality", Query: map[string]string{"project": "payments-service", "page": "1", "page_size": "30"},
		Seeded: map[string]string{"project": "project_names"},
		Status: http.StatusOK, Keys: []string{"status", "page", "total_pages", "total_issues", "issues"},
	},
	"GET /api/v1/metrics/trend": {
		File: "metrics-trend", Query: map[string]string{"project": "payments-service", "days": "90"},
		Seeded: map[string]string{"project": "project_names"},
		Status: http.StatusOK, Keys: []string{"status", "project_id", "days", "series", "time_to_fix", "sla"},
	},

	"POST /api/v1/teams": {
		File: "teams-create", ContentType: jsonType,
		Body:   `{"name":"Release Engineering","member_ids":[],"project_ids":[],"project_tags":["backend"],"repo_url_patterns":["github.com/acme-corp/"]}`,
		Status: http.StatusCreated, Keys: []string{"team"},
	},
	"GET /api/v1/teams": {
		File: "teams-list", Query: map[string]string{"page": "1", "page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "page", "total_pages", "total_teams", "teams"},
	},
	"GET /api/v1/teams/{team_id}": {
		File: "teams-get", Path: map[string]string{"team_id": "3"}, Seeded: map[string]string{"team_id": "team_ids"},
		Status: http.StatusOK, Keys: []string{"status", "team"},
	},

	"DELETE /api/v1/policies/{policy_id}": {
		File: "policies-deactivate", Path: map[string]string{"policy_id": "12"}, Seeded: map[string]string{"policy_id": "policy_ids"},
		Status: http.StatusOK, Keys: []string{"status", "policy"},
	},

	"GET /api/v1/integrations/scm-provider": {
		File: "integrations-list", Query: map[string]string{"page": "1", "page_size": "50"},
		Status: http.StatusOK, Keys: []string{"status", "integrations", "page", "total_pages", "total_integrations"},
	},
	"GET /api/v1/integrations/scm-provider/{integration_uuid}": {
		File: "integrations-get", Path: map[string]string{"integration_uuid": "e4b1c2d3-5f60-4a7b-8c9d-0e1f2a3b4c5d"},
		Seeded: map[string]string{"integration_uuid": "integration_uuids"},
		Status: http.StatusOK, Keys: []string{"status", "integration"},
	},
	"PATCH /api/v1/integrations/scm-provider/{integration_uuid}": {
		File: "integrations-update", Path: map[string]string{"integration_uuid": "e4b1c2d3-5f60-4a7b-8c9d-0e1f2a3b4c5d"},
		Seeded: map[string]string{"integration_uuid": "integration_uuids"},
		Body:   `{"name":"GitHub (acme-corp)","org_allowlist":["acme-corp","acme-labs"]}`, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status", "integration", "credentials_verified"},
	},
	// GitHub's ping as a delivery carries it, without X-Hub-Signature-256
	// (events carry no GitHub headers, and the demo's integration has no
	// webhook secret): the route answers 401 before reading the body, as
	// it answers any delivery that is not the host's.
	"POST /api/v1/integrations/scm-provider/{integration_uuid}/events": {
		File: "integrations-events", Path: map[string]string{"integration_uuid": "e4b1c2d3-5f60-4a7b-8c9d-0e1f2a3b4c5d"},
		Seeded: map[string]string{"integration_uuid": "integration_uuids"},
		Body: `{"zen":"Design for failure.","hook_id":4242,"hook":{"type":"Repository","id":4242,"name":"web","active":true,` +
			`"events":["issue_comment"],"config":{"content_type":"json","insecure_ssl":"0"}}}`, ContentType: jsonType,
		Status: http.StatusUnauthorized, Keys: []string{"error"},
	},

	"POST /api/v1/scan-upload": {
		File: "uploads-scan",
		Query: map[string]string{
			"engine": "sarif", "run_id": "3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098", "project": "payments-service",
			"branch": "main", "repo_url": "https://github.com/acme-corp/payments-service", "ci": "true", "ci_platform": "github",
		},
		Seeded: map[string]string{"run_id": "scan_upload_run_id"},
		Body:   sarifReport, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status", "sast_scan_id", "project_id"},
	},
	"POST /api/v1/code-upload": {
		File: "uploads-code", Query: map[string]string{"run_id": "3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098", "path": "payments/views/refunds.py"},
		Body: sourceFile, ContentType: "multipart/form-data; boundary=" + sourceBoundary,
		Status: http.StatusOK, Keys: []string{"status", "path"},
	},
	"POST /api/v1/ci-data-upload": {
		File: "uploads-ci-data", Query: map[string]string{"run_id": "3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098", "platform": "github"},
		Seeded: map[string]string{"run_id": "third_party_run_ids"},
		Body:   githubEnv, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status"},
	},
	"POST /api/v1/git-config-upload": {
		File: "uploads-git-config", Query: map[string]string{"run_id": "3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098"},
		Seeded: map[string]string{"run_id": "third_party_run_ids"},
		Body:   gitConfig, ContentType: "text/plain; charset=utf-8",
		Status: http.StatusOK, Keys: []string{"status"},
	},

	// Notification delivery.
	"POST /api/v1/webhooks": {
		File: "webhooks-create", ContentType: jsonType,
		Body:   `{"url":"https://hooks.acme-corp.example/codescan","types":["scan_completed","new_critical_issue"],"description":"Security team's intake"}`,
		Status: http.StatusCreated, Keys: []string{"status", "webhook", "secret"},
	},
	"GET /api/v1/webhooks": {
		File: "webhooks-list", Query: map[string]string{"page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "webhooks", "total_webhooks", "next_page_token"},
	},
	"GET /api/v1/webhooks/{webhook_id}": {
		File: "webhooks-get", Path: map[string]string{"webhook_id": "7d0c9a52-3b1e-4f6a-9c8d-2e4f6a8b0c1d"},
		Seeded: map[string]string{"webhook_id": "webhook_ids"}, Status: http.StatusOK, Keys: []string{"status", "webhook"},
	},
	"PATCH /api/v1/webhooks/{webhook_id}": {
		File: "webhooks-update", Path: map[string]string{"webhook_id": "7d0c9a52-3b1e-4f6a-9c8d-2e4f6a8b0c1d"},
		Seeded: map[string]string{"webhook_id": "webhook_ids"}, ContentType: jsonType,
		Body:   `{"types":["scan_completed","scan_failed"],"active":true}`,
		Status: http.StatusOK, Keys: []string{"status", "webhook"},
	},
	"POST /api/v1/webhooks/filter-dry-run": {
		File: "webhooks-filter-dry-run", ContentType: jsonType,
		Body:   `{"filter":"event.type == \"scan_completed\" && event.new_findings.exists(f, f.urgency == \"CR\")","limit":20}`,
		Status: http.StatusOK, Keys: []string{"status", "events", "totals"},
	},
	"DELETE /api/v1/webhooks/{webhook_id}": {
		File: "webhooks-delete", Path: map[string]string{"webhook_id": "7d0c9a52-3b1e-4f6a-9c8d-2e4f6a8b0c1d"},
		Seeded: map[string]string{"webhook_id": "retired_webhook_ids"}, Status: http.StatusOK, Keys: []string{"status"},
	},
	"POST /api/v1/webhooks/{webhook_id}/rotate-secret": {
		File: "webhooks-rotate-secret", Path: map[string]string{"webhook_id": "7d0c9a52-3b1e-4f6a-9c8d-2e4f6a8b0c1d"},
		Seeded: map[string]string{"webhook_id": "webhook_ids"}, Status: http.StatusOK, Keys: []string{"status", "webhook", "secret"},
	},
	"POST /api/v1/webhooks/{webhook_id}/test": {
		File: "webhooks-test", Path: map[string]string{"webhook_id": "7d0c9a52-3b1e-4f6a-9c8d-2e4f6a8b0c1d"},
		Seeded: map[string]string{"webhook_id": "webhook_ids"}, Status: http.StatusOK, Keys: []string{"status", "delivered", "status_code"},
	},
	"GET /api/v1/webhooks/{webhook_id}/deliveries": {
		File: "webhooks-deliveries", Path: map[string]string{"webhook_id": "7d0c9a52-3b1e-4f6a-9c8d-2e4f6a8b0c1d"},
		Query:  map[string]string{"status": "failed", "page_size": "20"},
		Seeded: map[string]string{"webhook_id": "webhook_ids"}, Status: http.StatusOK, Keys: []string{"status", "deliveries", "next_page_token"},
	},
	"POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": {
		File:   "webhooks-redeliver",
		Path:   map[string]string{"webhook_id": "7d0c9a52-3b1e-4f6a-9c8d-2e4f6a8b0c1d", "delivery_id": "3f1b2c4d5e6f708192a3b4c5d6e7f809"},
		Seeded: map[string]string{"webhook_id": "webhook_ids", "delivery_id": "webhook_delivery_ids"},
		Status: http.StatusOK, Keys: []string{"status", "delivery"},
	},
	"GET /api/v1/sla-settings": {
		File: "notifications-sla-get", Status: http.StatusOK, Keys: []string{"status", "sla_settings"},
	},
	"PUT /api/v1/sla-settings": {
		File: "notifications-sla-put", ContentType: jsonType, Body: `{"days_to_fix":{"CR":5,"HI":21},"due_soon_days":2}`,
		Status: http.StatusOK, Keys: []string{"status", "sla_settings"},
	},
	"POST /api/v1/api-keys": {
		File: "accounts-api-keys-create", Body: `{"name":"GitHub Actions (payments-service)","expires_in_days":90}`, ContentType: jsonType,
		Status: http.StatusCreated, Keys: []string{"status", "key", "api_key"},
	},
	"GET /api/v1/api-keys": {
		File: "accounts-api-keys-list", Query: map[string]string{"page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "page", "page_size", "total_pages", "total_api_keys", "api_keys", "next_page_token"},
	},
	"DELETE /api/v1/api-keys/{key_id}": {
		File: "accounts-api-keys-revoke", Path: map[string]string{"key_id": "42"}, Seeded: map[string]string{"key_id": "api_key_ids"},
		Status: http.StatusOK, Keys: []string{"status", "api_key"},
	},
	"GET /api/v1/users": {
		File: "accounts-users-list", Query: map[string]string{"role": "member", "page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "page", "page_size", "total_pages", "total_users", "users", "next_page_token"},
	},
	"POST /api/v1/users": {
		File: "accounts-users-create", ContentType: jsonType,
		Body:   `{"email":"dana.lee@acme.example","first_name":"Dana","last_name":"Lee","permissions":["integrations.view_integration"],"is_admin":false,"subject":"auth0|6512f0c2a4"}`,
		Status: http.StatusCreated, Keys: []string{"status", "user"},
	},
	"PATCH /api/v1/users/{user_id}": {
		File: "accounts-users-update", Path: map[string]string{"user_id": "2"}, Seeded: map[string]string{"user_id": "member_user_id"},
		Body: `{"permissions":["integrations.view_integration"]}`, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status", "user"},
	},
	"GET /api/v1/audit-log": {
		File: "accounts-audit-log", Query: map[string]string{"action": "api_key.create", "page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "page", "page_size", "entries", "next_page_token"},
	},
	// The client workflow.
	"GET /api/v1/verify": {
		File: "projects-verify", Status: http.StatusOK, Keys: []string{"status"},
	},
	"GET /api/v1/verify/{token}": {
		File: "projects-verify-legacy", Path: map[string]string{routes.TokenParam: sampleKey},
		Query: map[string]string{"url": "https://api.example.com"}, Status: http.StatusOK, Keys: []string{"status"},
	},
	"GET /api/v1/projects": {
		File: "projects-list", Query: map[string]string{"repo_url": "acme-demo/web", "page": "1", "page_size": "50"},
		Status: http.StatusOK, Keys: []string{"status", "projects", "page", "total_pages", "total_projects"},
	},
	"PATCH /api/v1/projects/{project_id}": {
		File: "projects-update", Path: map[string]string{"project_id": "4"}, Seeded: map[string]string{"project_id": "project_ids"},
		Body: `{"default_branch":"main"}`, ContentType: jsonType, Status: http.StatusOK, Keys: []string{"status", "project"},
	},
	"GET /api/v1/scans": {
		File: "projects-scans-list", Query: map[string]string{"project": "payments-api", "page": "1", "page_size": "30"},
		Seeded: map[string]string{"project": "project_names"},
		Status: http.StatusOK, Keys: []string{"status", "scans", "page", "total_pages"},
	},
	"GET /api/v1/scan/{scan_id}": {
		File: "projects-scan-get", Path: map[string]string{"scan_id": "0c9d7e21-64f3-4a8b-b5d2-91e0f3a4c6b8"},
		Seeded: map[string]string{"scan_id": "third_party_scan_ids"},
		Status: http.StatusOK, Keys: []string{"id", "project", "engine", "created_at", "scan_errors"},
	},
	"GET /api/v1/scan/{scan_id}/report": {
		File: "projects-scan-report", Path: map[string]string{"scan_id": "0c9d7e21-64f3-4a8b-b5d2-91e0f3a4c6b8"},
		Query: map[string]string{"format": "json"}, Seeded: map[string]string{"scan_id": "third_party_scan_ids"},
		Status: http.StatusOK, Keys: []string{"status", "scan", "issues"},
	},
	"GET /api/v1/scan/{scan_id}/check_blocking_rules": {
		File: "projects-scan-gate", Path: map[string]string{"scan_id": "0c9d7e21-64f3-4a8b-b5d2-91e0f3a4c6b8"},
		Query: map[string]string{"block_on": "new-injection", "page": "1"}, Seeded: map[string]string{"scan_id": "third_party_scan_ids"},
		Status: http.StatusOK, Keys: []string{"block", "blocking_issues", "total_pages", "stats"},
	},
	"POST /api/v1/blocking-rules": {
		File: "policies-blocking-rules-create", ContentType: jsonType,
		Body:   `{"slug":"no-secrets","name":"No hard-coded secrets","active":true,"ci":true,"conditions":{"cwes":["CWE-798"],"paths":["src/**"],"statuses":["open"],"only_new":true}}`,
		Status: http.StatusCreated, Keys: []string{"status", "rule"},
	},
	"GET /api/v1/blocking-rules": {
		File: "policies-blocking-rules-list", Query: map[string]string{"page": "1", "page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "rules", "page", "total_pages", "total_rules"},
	},
	"GET /api/v1/blocking-rules/{rule_id}": {
		File: "policies-blocking-rules-get", Path: map[string]string{"rule_id": "2"}, Seeded: map[string]string{"rule_id": "blocking_rule_ids"},
		Status: http.StatusOK, Keys: []string{"status", "rule"},
	},
	"PATCH /api/v1/blocking-rules/{rule_id}": {
		File: "policies-blocking-rules-update", Path: map[string]string{"rule_id": "2"}, Seeded: map[string]string{"rule_id": "blocking_rule_ids"},
		Body: `{"name":"Block critical and high issues","conditions":{"min_urgency":"HI"}}`, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status", "rule"},
	},
	"DELETE /api/v1/blocking-rules/{rule_id}": {
		File: "policies-blocking-rules-delete", Path: map[string]string{"rule_id": "2"}, Seeded: map[string]string{"rule_id": "blocking_rule_ids"},
		Status: http.StatusOK, Keys: []string{"status", "rule"},
	},
	"POST /api/v1/triage-rules": {
		File: "policies-triage-rules-create", ContentType: jsonType,
		Body:   `{"matcher":{"tool":"gosec","path":"test/**"},"action":{"status":"false_positive","reason":"test code"},"requires_approval":true}`,
		Status: http.StatusCreated, Keys: []string{"status", "rule"},
	},
	"GET /api/v1/triage-rules": {
		File: "policies-triage-rules-list", Query: map[string]string{"page": "1", "page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "rules", "page", "total_pages", "total_rules"},
	},
	"GET /api/v1/triage-rules/{rule_id}": {
		File: "policies-triage-rules-get", Path: map[string]string{"rule_id": "01936f1e-7c2a-7b3d-9e4f-5a6b7c8d9e0f"}, Seeded: map[string]string{"rule_id": "triage_rule_ids"},
		Status: http.StatusOK, Keys: []string{"status", "rule"},
	},
	"PATCH /api/v1/triage-rules/{rule_id}": {
		File: "policies-triage-rules-update", Path: map[string]string{"rule_id": "01936f1e-7c2a-7b3d-9e4f-5a6b7c8d9e0f"}, Seeded: map[string]string{"rule_id": "triage_rule_ids"},
		Body: `{"enabled":false}`, ContentType: jsonType,
		Status: http.StatusOK, Keys: []string{"status", "rule"},
	},
	"DELETE /api/v1/triage-rules/{rule_id}": {
		File: "policies-triage-rules-delete", Path: map[string]string{"rule_id": "01936f1e-7c2a-7b3d-9e4f-5a6b7c8d9e0f"}, Seeded: map[string]string{"rule_id": "triage_rule_ids"},
		Status: http.StatusOK, Keys: []string{"status", "rule"},
	},
	"POST /api/v1/triage-rules/{rule_id}/approve": {
		File: "policies-triage-rules-approve", Path: map[string]string{"rule_id": "01936f1e-7c2a-7b3d-9e4f-5a6b7c8d9e0f"}, Seeded: map[string]string{"rule_id": "triage_rule_ids"},
		Status: http.StatusOK, Keys: []string{"status", "rule"},
	},
	"POST /api/v1/triage-rules/{rule_id}/apply": {
		File: "policies-triage-rules-apply", Path: map[string]string{"rule_id": "01936f1e-7c2a-7b3d-9e4f-5a6b7c8d9e0f"}, Seeded: map[string]string{"rule_id": "triage_rule_ids"},
		Query: map[string]string{"dry_run": "true"}, Status: http.StatusOK, Keys: []string{"status", "dry_run", "changed", "sample_issue_ids"},
	},
	"POST /api/v1/vex": {
		File: "vex-import", ContentType: jsonType, Query: map[string]string{"dry_run": "true"},
		Body: `{"@context":"https://openvex.dev/ns/v0.2.0","@id":"https://example.com/vex/demo-1","author":"Demo","timestamp":"2026-11-01T00:00:00Z","version":1,` +
			`"statements":[{"vulnerability":{"name":"CVE-2021-23337"},"products":[{"@id":"pkg:npm/lodash@4.17.20"}],` +
			`"status":"not_affected","justification":"vulnerable_code_not_in_execute_path"}]}`,
		Status: http.StatusOK, Keys: []string{"status", "dry_run", "document", "summary", "statements"},
	},
	// Tickets (docs/tickets.md): the demo company has no Jira integration
	// or ticket rule, so reads by id answer 404, a site that points
	// inside answers 400 before any call, and a delivery without the
	// site's signature answers 401.
	"POST /api/v1/integrations/jira": {
		File: "tickets-jira-create", ContentType: jsonType,
		Body:   `{"site_url":"https://10.0.0.1","email":"bot@acme.test","api_token":"token","project_key":"SEC"}`,
		Status: http.StatusBadRequest, Keys: []string{"error"},
	},
	"GET /api/v1/integrations/jira": {
		File: "tickets-jira-list", Status: http.StatusOK, Keys: []string{"status", "integrations"},
	},
	"GET /api/v1/integrations/jira/{integration_uuid}": {
		File: "tickets-jira-get", Path: map[string]string{"integration_uuid": "7d2f4a10-3b5c-4e6d-8f70-1a2b3c4d5e6f"},
		Status: http.StatusNotFound, Keys: []string{"error"},
	},
	"PATCH /api/v1/integrations/jira/{integration_uuid}": {
		File: "tickets-jira-update", Path: map[string]string{"integration_uuid": "7d2f4a10-3b5c-4e6d-8f70-1a2b3c4d5e6f"},
		Body: `{"name":"Security tickets"}`, ContentType: jsonType, Status: http.StatusNotFound, Keys: []string{"error"},
	},
	"DELETE /api/v1/integrations/jira/{integration_uuid}": {
		File: "tickets-jira-delete", Path: map[string]string{"integration_uuid": "7d2f4a10-3b5c-4e6d-8f70-1a2b3c4d5e6f"},
		Status: http.StatusNotFound, Keys: []string{"error"},
	},
	"POST /api/v1/integrations/jira/{integration_uuid}/events": {
		File: "tickets-jira-events", Path: map[string]string{"integration_uuid": "7d2f4a10-3b5c-4e6d-8f70-1a2b3c4d5e6f"},
		Body: `{"timestamp":1764230400000,"webhookEvent":"jira:issue_updated","issue":{"id":"10001","key":"SEC-1"}}`, ContentType: jsonType,
		Status: http.StatusUnauthorized, Keys: []string{"error"},
	},
	"POST /api/v1/integrations/scm-provider/{integration_uuid}/ticket-events": {
		File: "tickets-github-events", Path: map[string]string{"integration_uuid": "e4b1c2d3-5f60-4a7b-8c9d-0e1f2a3b4c5d"},
		Seeded:      map[string]string{"integration_uuid": "integration_uuids"},
		Body:        `{"action":"closed","issue":{"number":12,"state":"closed","state_reason":"not_planned"},"repository":{"full_name":"acme-corp/payments-service"}}`,
		ContentType: jsonType, Status: http.StatusUnauthorized, Keys: []string{"error"},
	},
	"POST /api/v1/ticket-rules": {
		File: "tickets-rules-create", ContentType: jsonType,
		Body:   `{"matcher":{"cwe":"CWE-89"},"destination":{"kind":"jira","integration_uuid":"7d2f4a10-3b5c-4e6d-8f70-1a2b3c4d5e6f"},"grouping":"cwe"}`,
		Status: http.StatusBadRequest, Keys: []string{"error"},
	},
	"GET /api/v1/ticket-rules": {
		File: "tickets-rules-list", Status: http.StatusOK, Keys: []string{"status", "rules"},
	},
	"GET /api/v1/ticket-rules/{rule_id}": {
		File: "tickets-rules-get", Path: map[string]string{"rule_id": "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"},
		Status: http.StatusNotFound, Keys: []string{"error"},
	},
	"PATCH /api/v1/ticket-rules/{rule_id}": {
		File: "tickets-rules-update", Path: map[string]string{"rule_id": "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"},
		Body: `{"labels":["security"]}`, ContentType: jsonType, Status: http.StatusNotFound, Keys: []string{"error"},
	},
	"DELETE /api/v1/ticket-rules/{rule_id}": {
		File: "tickets-rules-delete", Path: map[string]string{"rule_id": "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"},
		Status: http.StatusNotFound, Keys: []string{"error"},
	},
	"GET /api/v1/components": {
		File: "components-list", Query: map[string]string{"purl": "pkg:maven/org.apache.logging.log4j/log4j-core", "version_lt": "2.17.1"},
		Status: http.StatusOK, Keys: []string{"status", "components", "summary", "total_components", "next_page_token"},
	},
	"POST /api/v1/policies": {
		File: "policies-create", ContentType: jsonType,
		Body:   `{"name":"No SQL built from strings","description":"Queries take parameters.","guidance_text":"Use placeholders.","cwes":["CWE-89"],"glob_pattern":"**/*.py"}`,
		Status: http.StatusCreated, Keys: []string{"status", "policy"},
	},
	"GET /api/v1/policies": {
		File: "policies-list", Query: map[string]string{"page": "1", "page_size": "20"},
		Status: http.StatusOK, Keys: []string{"status", "policies", "page", "total_pages", "total_policies"},
	},
	"GET /api/v1/policies/{policy_id}": {
		File: "policies-get", Path: map[string]string{"policy_id": "12"}, Seeded: map[string]string{"policy_id": "policy_ids"},
		Status: http.StatusOK, Keys: []string{"status", "policy"},
	},
}

// sarifReport is what a Semgrep run in CI uploads: SARIF 2.1.0 with one
// SQL injection result whose rule carries its CWE as a tag.
const sarifReport = `{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{` +
	`"tool":{"driver":{"name":"Semgrep OSS","semanticVersion":"1.85.0","rules":[{` +
	`"id":"python.django.security.injection.sql.sql-injection-using-raw","name":"sql-injection-using-raw",` +
	`"shortDescription":{"text":"Raw SQL built from request data"},` +
	`"defaultConfiguration":{"level":"error"},` +
	`"properties":{"precision":"high","security-severity":"8.8","tags":["CWE-89: Improper Neutralization of Special Elements used in an SQL Command ('SQL Injection')","OWASP-A03:2021 - Injection","security"]}}]}},` +
	`"results":[{"ruleId":"python.django.security.injection.sql.sql-injection-using-raw","level":"error",` +
	`"message":{"text":"User input flows into a raw SQL query; use parameters."},` +
	`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"payments/views/refunds.py","uriBaseId":"%SRCROOT%"},` +
	`"region":{"startLine":42,"startColumn":9,"endLine":42,"endColumn":71}}}]}],` +
	`"versionControlProvenance":[{"repositoryUri":"https://github.com/acme-corp/payments-service","revisionId":"9fceb02d0ae598e95dc970b74767f19372d61af8","branch":"main"}]}]}`

// sourceFile is the file the SARIF sample flags, as the client sends it
// before the report: multipart, in the part named file.
const (
	sourceBoundary = "c0de5ca9b0undary"
	sourceFile     = "--" + sourceBoundary + "\r\n" +
		"Content-Disposition: form-data; name=\"file\"; filename=\"refunds.py\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n" +
		"from django.db import connection\n\n\ndef refund(request):\n" +
		"    order = request.GET[\"order\"]\n" +
		"    with connection.cursor() as cur:\n" +
		"        cur.execute(\"SELECT amount FROM orders WHERE id = '%s'\" % order)\n" +
		"        return cur.fetchone()\n" +
		"\r\n--" + sourceBoundary + "--\r\n"
)

// githubEnv is what the client uploads from a GitHub Actions job: the
// job's GITHUB_* variables.
const githubEnv = `{"GITHUB_ACTIONS":"true","GITHUB_ACTOR":"octo-dev","GITHUB_EVENT_NAME":"pull_request",` +
	`"GITHUB_HEAD_REF":"fix/refund-query","GITHUB_BASE_REF":"main","GITHUB_REF":"refs/pull/318/merge",` +
	`"GITHUB_REPOSITORY":"acme-corp/payments-service","GITHUB_RUN_ID":"9876543210","GITHUB_RUN_NUMBER":"1542",` +
	`"GITHUB_SERVER_URL":"https://github.com","GITHUB_SHA":"9fceb02d0ae598e95dc970b74767f19372d61af8",` +
	`"GITHUB_WORKFLOW":"security-scan","GITHUB_JOB":"sast"}`

// gitConfig is a clone's .git/config as older clients send it.
const gitConfig = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n" +
	"[remote \"origin\"]\n\turl = git@github.com:acme-corp/payments-service.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n" +
	"[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"

// sampleOf returns the sample of route r.
func sampleOf(r routes.Route) (sample, bool) {
	s, ok := samples[r.Pattern()]
	return s, ok
}
