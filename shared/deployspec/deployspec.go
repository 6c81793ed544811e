// Package deployspec is the one place that says what each Lambda group needs
// in AWS: the DynamoDB actions its code performs on the table, the KMS actions
// it performs with the integration-secrets key, and its memory and timeout.
// template.yaml and the CDK stacks are built from it (least privilege: a group
// is granted exactly its list), and the event replay test fails when a group
// calls DynamoDB in a way its list does not allow. It depends only on the
// route table, so the CDK app can import it cheaply.
package deployspec

import (
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/routes"
)

// KMSKeyEnv names the environment variable that carries the integration
// secrets key id to the groups that use it.
const KMSKeyEnv = "INTEGRATION_KMS_KEY_ID"

// AccessLogFormat is the API stage's access log line: one JSON object per
// request, the same in the SAM and the CDK deployments.
const AccessLogFormat = `{"requestId":"$context.requestId","extendedRequestId":"$context.extendedRequestId",` +
	`"ip":"$context.identity.sourceIp","userAgent":"$context.identity.userAgent",` +
	`"requestTime":"$context.requestTime","method":"$context.httpMethod","resource":"$context.resourcePath",` +
	`"path":"$context.path","status":"$context.status","responseLength":"$context.responseLength",` +
	`"latencyMs":"$context.responseLatency","integrationError":"$context.integration.error",` +
	`"xrayTraceId":"$context.xrayTraceId"}`

// Function is one group's deployment needs.
type Function struct {
	Group          string
	TableActions   []string // sorted; empty: the group never touches the table
	KMSActions     []string // sorted; empty: the group never uses the key
	MemoryMB       int
	TimeoutSeconds int
}

// authn is what every authenticated request needs: the API key, token
// subject and user look-ups are single-item reads, and the per-user rate
// limit counts the request with one conditional update.
var authn = []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}

// tableActions lists, per group, the DynamoDB actions its code performs. A
// transaction (TransactWriteItems) is authorised by the actions of its items
// (PutItem, UpdateItem, DeleteItem, ConditionCheckItem), so it appears here
// as those.
var tableActions = map[string][]string{
	routes.GroupNotifications: with(authn, "dynamodb:Query", "dynamodb:UpdateItem"),
	// Group counters, scans and SCA issues by key, lists and project
	// look-ups by Query, the drill-down's issues by BatchGetItem; triage
	// writes issues, history and counters in transactions of puts and
	// updates.
	routes.GroupIssues: with(authn, "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:Query"),
	// Scans, projects and issues with their counters (ApplyScan reads
	// existing issues and counters with BatchGetItem, the previous scan's
	// members by Query, writes the scan's members with BatchWriteItem and
	// issues, history and counters in transactions of puts and updates, and
	// the scan's counter journal with deletes);
	// CI metadata; run and project look-ups.
	routes.GroupUploads: with(authn, "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem",
		"dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// Team and name guard put in one transaction, the id counter, users and
	// projects of the company read by Query.
	routes.GroupTeams: with(authn, "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// Deactivation is one conditional update.
	routes.GroupPolicies: with(authn, "dynamodb:UpdateItem"),
	// The list reads GSI1; updates are revision-conditional.
	routes.GroupIntegrations: with(authn, "dynamodb:Query", "dynamodb:UpdateItem"),
}

var kmsActions = map[string][]string{
	routes.GroupIntegrations: {"kms:Decrypt", "kms:Encrypt"},
}

// Defaults for every group; API Gateway gives up on an integration after 29
// seconds, so no function runs longer than that.
const (
	defaultMemoryMB       = 256
	defaultTimeoutSeconds = 10
)

// big lists the groups that parse large request bodies (scan reports up to
// the upload limit) and get more memory, which also means more CPU.
var big = map[string]bool{routes.GroupUploads: true}

// Of returns the needs of one group.
func Of(group string) Function {
	f := Function{
		Group:          group,
		TableActions:   tableActions[group],
		KMSActions:     kmsActions[group],
		MemoryMB:       defaultMemoryMB,
		TimeoutSeconds: defaultTimeoutSeconds,
	}
	if big[group] {
		f.MemoryMB, f.TimeoutSeconds = 1024, 25
	}
	return f
}

// All returns the needs of every group of the route table, in table order.
func All() []Function {
	var out []Function
	for _, g := range routes.Groups() {
		out = append(out, Of(g))
	}
	return out
}

// NeedsIndexes reports whether the group reads the table's global secondary
// indexes (which IAM addresses as <table ARN>/index/*).
func (f Function) NeedsIndexes() bool {
	return slices.Contains(f.TableActions, "dynamodb:Query")
}

// Name is the group's name in CamelCase, the stem of its logical ids
// ("NotificationsFunction").
func (f Function) Name() string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(f.Group, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

func with(base []string, more ...string) []string {
	out := slices.Concat(base, more)
	slices.Sort(out)
	return slices.Compact(out)
}
