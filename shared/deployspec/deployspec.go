// Package deployspec is the one place that says what each Lambda group needs
// in AWS: the DynamoDB actions its code performs on the table, the KMS actions
// it performs with the integration-secrets key, and its memory and timeout.
// template.yaml and the CDK stacks are built from it (least privilege: a group
// is granted exactly its list), and the event replay test fails when a group
// calls DynamoDB in a way its list does not allow. It depends only on the
// route table, so the CDK app can import it cheaply.
package deployspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/routes"
)

// GoMemLimitEnv is the Go runtime's soft memory limit (see GoMemLimit).
const GoMemLimitEnv = "GOMEMLIMIT"

// GoMemLimit is the function's GOMEMLIMIT, 90 % of its memory: by default
// the collector lets garbage grow the heap to twice what is live, past
// Lambda's limit, which kills the instance; with the limit it collects
// harder as the heap nears it (the ingester's peak at 25,000 results:
// README, asynchronous ingestion).
func (f Function) GoMemLimit() string { return fmt.Sprintf("%dMiB", f.GoMemLimitMiB()) }

// GoMemLimitMiB is GoMemLimit in MiB.
func (f Function) GoMemLimitMiB() int { return f.MemoryMB * 9 / 10 }

// KMSKeyEnv names the environment variable that carries the integration
// secrets key id to the groups that use it.
const KMSKeyEnv = "INTEGRATION_KMS_KEY_ID"

// AccessLogFormat is the API stage's access log line: one JSON object per
// request, the same in the SAM and the CDK deployments. It names the route
// (resource), never the request path: the IDE's legacy verify route carries
// an API key in its path.
const AccessLogFormat = `{"requestId":"$context.requestId","extendedRequestId":"$context.extendedRequestId",` +
	`"ip":"$context.identity.sourceIp","userAgent":"$context.identity.userAgent",` +
	`"requestTime":"$context.requestTime","method":"$context.httpMethod","resource":"$context.resourcePath",` +
	`"status":"$context.status","responseLength":"$context.responseLength",` +
	`"latencyMs":"$context.responseLatency","integrationError":"$context.integration.error",` +
	`"xrayTraceId":"$context.xrayTraceId"}`

// Function is one group's deployment needs.
type Function struct {
	Group          string
	TableActions   []string // sorted; empty: the group never touches the table
	KMSActions     []string // sorted; empty: the group never uses the key
	MemoryMB       int
	TimeoutSeconds int
	// Report bucket access: each of ReportObjects on the objects under
	// its prefixes, ReportBucketActions on the bucket itself; empty: the
	// function never touches the bucket.
	ReportObjects       []ObjectGrant
	ReportBucketActions []string
	// Env is constant environment the function gets in AWS.
	Env map[string]string
	// StreamFilters are the filter patterns of the function's event source
	// mapping on the table's stream, ORed; empty: it does not read the
	// stream.
	StreamFilters []string
}

// ObjectGrant is Actions on the report bucket's objects under Prefixes
// (reportstore's key prefixes).
type ObjectGrant struct {
	Actions  []string // sorted
	Prefixes []string
}

// UsesReports reports whether the function reads or writes the report
// bucket (it then gets REPORTS_BUCKET).
func (f Function) UsesReports() bool { return len(f.ReportObjects) > 0 }

// ReadsStream reports whether the function has an event source mapping on
// the table's stream.
func (f Function) ReadsStream() bool { return len(f.StreamFilters) > 0 }

// authn is what every authenticated request needs: the API key or token
// subject look-up is a single-item read, the user and company one batch
// read, the per-credential rate limit one conditional update (and one more
// to refund a 304), and an API key's last use (at most once per key in
// five minutes) a transaction of two updates.
var authn = []string{"dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:UpdateItem"}

// tableActions lists, per group, the DynamoDB actions its code performs. A
// transaction (TransactWriteItems) is authorised by the actions of its items
// (PutItem, UpdateItem, DeleteItem, ConditionCheckItem), so it appears here
// as those.
var tableActions = map[string][]string{
	// SLA settings are one item written with PutItem.
	routes.GroupNotifications: with(authn, "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
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
	// CI metadata; run and project look-ups. A new project or repository URL
	// reads the teams' selectors by Query and moves their project counts.
	routes.GroupUploads: with(authn, "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem",
		"dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// Team, name guard, team count, selectors and audit entry put in one
	// transaction with a check of the projects revision; the id counter;
	// pages by Query (the Offset index for numbered pages), members and named
	// ids by BatchGetItem; the projects counted at creation by Query.
	routes.GroupTeams: with(authn, "dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// Endpoints with their counter (transactions of puts, updates and
	// deletes), the list and the attempt log by Query (GSI1), a
	// redelivery's claim and outcome.
	routes.GroupWebhooks: with(authn, "dynamodb:BatchGetItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// Deactivation is one conditional update (with its audit entry, a put);
	// creating a policy or a blocking rule takes an id (UpdateItem) and
	// writes the item, its slug guard and the count in one transaction
	// (PutItem, UpdateItem), which deletion undoes (DeleteItem); lists read
	// by Query.
	routes.GroupPolicies: with(authn, "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// The client workflow: projects, scans and rules read by key and Query,
	// company scans and a scan's issues by BatchGetItem; setting a project's
	// default branch is one update, in a transaction with its audit entry
	// (a put).
	routes.GroupProjects: with(authn, "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// The list reads GSI1 (and the Offset index for numbered pages) and the
	// count by GetItem; updates are revision-conditional, in a transaction
	// with their audit entry (puts).
	routes.GroupIntegrations: with(authn, "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// Keys, users and their list copies, counters, guards and audit entries
	// are written in transactions (puts, updates, deletes; a new user's
	// subject checked against its mapping from before subjects were per
	// company: a condition check); lists are Queries of the table and
	// GSI1/GSI2.
	routes.GroupAccounts: with(authn, "dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// VEX import: the SCA findings' list by Query (its count and a
	// project by GetItem), the findings to change read again by
	// BatchGetItem and written conditionally in transactions of updates
	// with the audit entry (puts).
	routes.GroupVEX: with(authn, "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
	// The component inventory reads only: a package's version and project
	// directories and its holders by Query (GSI1), the page's set heads
	// by BatchGetItem.
	routes.GroupComponents: with(authn, "dynamodb:BatchGetItem", "dynamodb:Query"),
	// Tickets: Jira integrations and ticket rules read by key and Query,
	// written in transactions with their audit entry and the uuid's
	// look-up (puts, updates, deletes); inbound events remembered by a
	// conditional put (deleted again when applying fails), links read by
	// key and Query and updated, findings triaged through the issue write
	// path (BatchGetItem, transactions of puts and updates).
	routes.GroupTickets: with(authn, "dynamodb:BatchGetItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
}

// ReportsEnv names the environment variable that carries the report
// bucket's name (reportstore.EnvBucket).
const ReportsEnv = "REPORTS_BUCKET"

// Report key prefixes (reportstore.ReportsPrefix, ChunksPrefix,
// SourcesPrefix) and their lifetimes in days (the bucket's lifecycle rules).
const (
	ReportsPrefix = "reports/"
	ChunksPrefix  = "chunks/"
	SourcesPrefix = "sources/"
	ReportDays    = 7
	ChunkDays     = 1
	SourceDays    = 1
	// Exports of findings (reportstore.ExportsPrefix, ExportDays), read
	// through links while their export item lives.
	ExportsPrefix = "exports/"
	ExportDays    = 3
	// A streamed object whose writer died before completing or aborting
	// it leaves parts, which the bucket removes after this many days.
	AbortUploadDays = 1
)

var kmsActions = map[string][]string{
	routes.GroupIntegrations: {"kms:Decrypt", "kms:Encrypt"},
	routes.GroupWebhooks:     {"kms:Decrypt", "kms:Encrypt"},
	routes.GroupTickets:      {"kms:Decrypt", "kms:Encrypt"},
}

// Defaults for every group; API Gateway gives up on an integration after 29
// seconds, so no function runs longer than that.
const (
	defaultMemoryMB       = 256
	defaultTimeoutSeconds = 10
)

// idempotency is what Idempotency-Key on a creation needs (shared/httpapi):
// a conditional put claims the key, an update keeps the answer, a delete
// frees the key of a failed request.
var idempotency = []string{"dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}

// groupTableActions is a group's tableActions, with idempotency's when it
// serves a creation.
func groupTableActions(group string) []string {
	for _, rt := range routes.Of(group) {
		if rt.Creates || rt.Idempotent {
			return with(tableActions[group], idempotency...)
		}
	}
	return tableActions[group]
}

// big lists the groups that parse large request bodies (scan reports up to
// the upload limit) and get more memory, which also means more CPU.
var big = map[string]bool{routes.GroupUploads: true, routes.GroupVEX: true}

// Of returns the needs of one group.
func Of(group string) Function {
	f := Function{
		Group:          group,
		TableActions:   groupTableActions(group),
		KMSActions:     kmsActions[group],
		MemoryMB:       defaultMemoryMB,
		TimeoutSeconds: defaultTimeoutSeconds,
	}
	if big[group] {
		f.MemoryMB, f.TimeoutSeconds = 1024, 25
	}
	if group == routes.GroupIssues {
		// Finished exports are linked by presigned GETs, which S3 allows
		// as the signer may read.
		f.ReportObjects = []ObjectGrant{{Actions: []string{"s3:GetObject"}, Prefixes: []string{ExportsPrefix}}}
	}
	if group == routes.GroupUploads {
		// Reports and chunks are written and read back (a chunked upload
		// assembles its chunks); the chunks of an upload are listed.
		// Source files are written.
		f.ReportObjects = []ObjectGrant{{Actions: []string{"s3:GetObject", "s3:PutObject"}, Prefixes: []string{ReportsPrefix, ChunksPrefix, SourcesPrefix}}}
		f.ReportBucketActions = []string{"s3:ListBucket"}
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

// Functions no route reaches: the dispatcher reads the table's stream (an
// event source mapping with a failure queue), the scheduler runs the
// scheduled jobs (delivery retries, SLA checks, the weekly digest), the
// ingester reads the same stream for new scans of uploaded reports, bulk
// triage operations and exports (an event source mapping of its own, with
// its own failure queue).
const (
	WorkerDispatcher = "dispatcher"
	WorkerScheduler  = "scheduler"
	WorkerIngester   = "ingester"
)

// MaxStreamReaders bounds the event source mappings on the table's stream:
// AWS advises at most two readers per stream shard, as a third gets its
// GetRecords calls throttled and slows every reader. New stream work joins
// the ingester's mapping as one more filter.
const MaxStreamReaders = 2

// MaxStreamFilters is how many filter patterns one event source mapping
// may OR (a Lambda quota).
const MaxStreamFilters = 5

// StreamReadActions are what a stream reader's event source mapping needs
// on the table's stream.
var StreamReadActions = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"}

// SESAction is what the workers that send email may do, on the sender
// identity and configuration set only.
const SESAction = "ses:SendEmail"

// Schedules of the scheduler, each an EventBridge rule whose input names
// the job ({"job": Name}).
var Schedules = []Schedule{
	{Name: "retries", Expression: "rate(1 minute)"},
	{Name: "sla", Expression: "rate(1 hour)"},
	{Name: "digest", Expression: "cron(0 8 ? * MON *)"},
	{Name: "stalled", Expression: "rate(10 minutes)"},
	// CISA updates KEV on working days, FIRST publishes EPSS once a day
	// (about 12:00 UTC): one import a day after both.
	{Name: "exploits", Expression: "cron(30 14 * * ? *)"},
	// Tickets compared with their trackers once a day (shared/tickets
	// Reconcile): what a lost inbound event left behind is repaired.
	{Name: "tickets", Expression: "cron(0 3 * * ? *)"},
}

// The exploitability feeds the scheduler's exploits job reads: the
// variables name their URLs; the stacks set them to the public files.
const (
	KEVFeedEnv  = "KEV_FEED_URL"
	EPSSFeedEnv = "EPSS_FEED_URL"
	KEVFeedURL  = "https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json"
	EPSSFeedURL = "https://epss.empiricalsecurity.com/epss_scores-current.csv.gz"
)

// JobAlarm is an alarm on a scheduled job's failure metric (the
// scheduler's JobFailures of the job, summed over Period seconds).
type JobAlarm struct {
	ID, Job, Why string
	Period       int
}

// JobAlarms are the jobs whose failures have an alarm of their own (any
// job's failure also fails the scheduler's invocation: SchedulerErrors).
var JobAlarms = []JobAlarm{
	// A day: the job runs daily, and the alarm stays until a run succeeds.
	{ID: "ExploitsImportFailed", Job: "exploits", Period: 86400,
		Why: "exploits import failed (a KEV or EPSS feed did not download or parse; the previous values stay; see the scheduler's log)"},
}

// Schedule is one scheduled job.
type Schedule struct {
	Name       string
	Expression string
}

// Input is the rule's constant input to the scheduler.
func (s Schedule) Input() string { return `{"job":"` + s.Name + `"}` }

// StreamFilter is the dispatcher's event source mapping filter: only new
// outbox items (store.EventEntity) invoke it.
const StreamFilter = `{"dynamodb":{"NewImage":{"entity":{"S":["event"]}}},"eventName":["INSERT"]}`

// IngestFilter is the ingester's event source mapping filter: only new
// scan items (sort key SCAN#...) of uploaded reports (with a run id) in
// status processing invoke it (ingester.JobOf reads the same).
const IngestFilter = `{"dynamodb":{"NewImage":{"SK":{"S":[{"prefix":"SCAN#"}]},"run_id":{"S":[{"exists":true}]},"status":{"S":["processing"]}}},"eventName":["INSERT"]}`

// TriageFilter is the ingester's second event source mapping filter: new
// bulk triage operation items invoke it too (bulktriage.JobOf reads the
// same).
const TriageFilter = `{"dynamodb":{"NewImage":{"entity":{"S":["triage"]}}},"eventName":["INSERT"]}`

// ExportFilter is the ingester's third event source mapping filter: new
// export items invoke it too (exportjob.JobOf reads the same).
const ExportFilter = `{"dynamodb":{"NewImage":{"entity":{"S":["export"]}}},"eventName":["INSERT"]}`

// Workers returns the needs of the non-route functions. The dispatcher
// and the scheduler read deliveries, endpoints, users and settings
// (GetItem, Query), claim and finish deliveries (PutItem, UpdateItem,
// transactions of them), open signing secrets (kms:Decrypt) and send
// email. The ingester reads a scan and its project (GetItem), the report
// (s3:GetObject under reports/) and the run's source files (listed, read
// under sources/), and writes the findings as the upload did
// before it was asynchronous (ApplyScan: BatchGetItem, Query, BatchWriteItem,
// transactions of puts, updates and deletes); it runs the bulk triage
// operations with the same actions (the list by Query, the issues by
// BatchGetItem, transactions); it neither decrypts nor sends email.
// It runs the exports too: an export's item claimed and updated
// (UpdateItem, GetItem), the issues read as the list reads them (counters
// by GetItem and Query, pages by Query, SCA findings by BatchGetItem), the
// object written in parts under exports/ (PutObject covers the multipart
// calls) and aborted on failure.
func Workers() []Function {
	actions := []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}
	return []Function{
		// The dispatcher also reads a scan's new issues for filters and
		// chat messages (the scan's members by Query, the issues by
		// BatchGetItem) and writes the recent-event index (PutItem).
		{Group: WorkerDispatcher, TableActions: with(actions, "dynamodb:BatchGetItem"), KMSActions: []string{"kms:Decrypt"}, MemoryMB: 256, TimeoutSeconds: 60,
			StreamFilters: []string{StreamFilter}},
		// The SLA check reads the issues past due (the Due index by Query,
		// the issues by BatchGetItem); the stalled-scan sweep deletes the
		// markers of scans it ends.
		// The exploits job reads the feeds from their public URLs (Env) and
		// writes CVE items in batches (BatchWriteItem), issues in
		// transactions.
		{Group: WorkerScheduler, TableActions: with(actions, "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem"), KMSActions: []string{"kms:Decrypt"}, MemoryMB: 512, TimeoutSeconds: 300,
			Env: map[string]string{KEVFeedEnv: KEVFeedURL, EPSSFeedEnv: EPSSFeedURL}},
		// A report of 25,000 results: parsed in memory (at most 64 MiB
		// decompressed), written in some minutes at worst. An export's
		// memory holds a page of issues and an upload part; it takes
		// minutes at most too (the export worker had the same 256 MB and
		// 900 s as a function of its own).
		{Group: WorkerIngester, TableActions: with(actions, "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem"),
			MemoryMB: 256, TimeoutSeconds: 900,
			ReportObjects: []ObjectGrant{
				{Actions: []string{"s3:GetObject"}, Prefixes: []string{ReportsPrefix, SourcesPrefix}},
				{Actions: []string{"s3:AbortMultipartUpload", "s3:PutObject"}, Prefixes: []string{ExportsPrefix}},
			},
			// The run's source files are listed.
			ReportBucketActions: []string{"s3:ListBucket"},
			StreamFilters:       []string{IngestFilter, TriageFilter, ExportFilter}},
	}
}

// Mailer reports whether the worker sends email (and gets the mail
// settings, kms:Decrypt on the secrets key and ses:SendEmail).
func (f Function) Mailer() bool { return f.Group == WorkerDispatcher || f.Group == WorkerScheduler }

// TableOperations are the DynamoDB operations the store performs, which the
// table alarms of both templates sum. ThrottledRequests and SystemErrors
// exist only per operation, and an alarm's math expression may use at most
// 10 metrics.
var TableOperations = []string{"BatchGetItem", "BatchWriteItem", "DeleteItem", "GetItem", "PutItem", "Query", "TransactWriteItems", "UpdateItem"}
