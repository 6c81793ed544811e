package schema

import (
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// The keys and items of tickets (shared/tickets, docs/tickets.md): Jira
// Cloud integrations, ticket rules, the link item of each ticket opened on
// a tracker (GitHub issues or Jira), the look-up of a link by the
// tracker's key, each issue's set of links, and the memory of inbound
// ticket events. Every partition starts with the company except the
// inbound look-up of a Jira integration by uuid.

// JiraIntegrationPK is the partition of a company's Jira integrations,
// sorted by uuid.
func JiraIntegrationPK(companyID int64) string { return CompanyPK(companyID) + "#JIRA" }

// JiraIntegrationKey is a Jira integration of a company.
func JiraIntegrationKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: JiraIntegrationPK(companyID), SK: id}
}

// JiraIntegration is a Jira Cloud site and project tickets go to. The API
// token and the webhook secret are sealed (shared/secrets), each bound to
// its own record.
type JiraIntegration struct {
	ddb.Key
	UUID        string `dynamodbav:"uuid"`
	CompanyID   int64  `dynamodbav:"company_id"`
	Name        string `dynamodbav:"name"`
	SiteURL     string `dynamodbav:"site_url"`
	Email       string `dynamodbav:"email"`
	SealedToken string `dynamodbav:"sealed_token"`
	// AccountID is the site's account of the token (GET /myself): events
	// this account caused are our own echoes.
	AccountID   string `dynamodbav:"account_id"`
	AccountName string `dynamodbav:"account_name"`
	ProjectKey  string `dynamodbav:"project_key"`
	IssueType   string `dynamodbav:"issue_type"`
	// DoneTransition and WontDoTransition name the workflow transitions
	// (or the resolutions) that close a ticket as done and as won't do.
	DoneTransition   string `dynamodbav:"done_transition,omitempty"`
	WontDoTransition string `dynamodbav:"wont_do_transition,omitempty"`
	ReopenTransition string `dynamodbav:"reopen_transition,omitempty"`
	// SealedWebhookSecret signs the site's webhook deliveries.
	SealedWebhookSecret string `dynamodbav:"sealed_webhook_secret"`
	Revision            int64  `dynamodbav:"revision"`
	CreatedAt           string `dynamodbav:"created_at"`
	UpdatedAt           string `dynamodbav:"updated_at"`
}

// JiraHookKey is the global look-up of a Jira integration by uuid (the
// inbound events route knows only the uuid).
func JiraHookKey(id string) ddb.Key { return ddb.Key{PK: "JIRAHOOK#" + id, SK: "JIRAHOOK"} }

// JiraHookRef points a Jira integration's uuid at its company.
type JiraHookRef struct {
	ddb.Key
	CompanyID int64  `dynamodbav:"company_id"`
	UUID      string `dynamodbav:"uuid"`
}

// TicketRulePK is the partition of a company's ticket rules, by id.
func TicketRulePK(companyID int64) string { return CompanyPK(companyID) + "#TRULE" }

// TicketRuleKey is a ticket rule of a company.
func TicketRuleKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: TicketRulePK(companyID), SK: id}
}

// TicketMatcher is a ticket rule's matcher: the triage rules' matcher
// (its attributes stored flat beside this one's, as attributevalue
// flattens an embedded struct) and "new on the default branch".
type TicketMatcher struct {
	triagemodel.Matcher
	NewOnDefaultBranch bool `dynamodbav:"new_on_default_branch,omitempty"`
}

// TicketDestination is where a rule's tickets open: a GitHub repository
// through a source-code-host integration, or a Jira integration's project.
type TicketDestination struct {
	Kind        string `dynamodbav:"kind"` // github, jira
	Integration string `dynamodbav:"integration_uuid"`
	Repository  string `dynamodbav:"repository,omitempty"` // owner/repo (github)
}

// TicketRule turns matching findings into tickets.
type TicketRule struct {
	ddb.Key
	ID          string            `dynamodbav:"id"`
	CompanyID   int64             `dynamodbav:"company_id"`
	ProjectID   int64             `dynamodbav:"project_id,omitempty"` // 0: company-wide
	Matcher     TicketMatcher     `dynamodbav:"matcher"`
	Destination TicketDestination `dynamodbav:"destination"`
	Grouping    string            `dynamodbav:"grouping"`
	Labels      []string          `dynamodbav:"labels,omitempty"`
	Revision    int64             `dynamodbav:"revision"`
	CreatedAt   string            `dynamodbav:"created_at"`
	UpdatedAt   string            `dynamodbav:"updated_at"`
}

// TicketLinkPK is the partition of a company's ticket links.
func TicketLinkPK(companyID int64) string { return CompanyPK(companyID) + "#TLINK" }

// TicketLinkID names the ticket of a rule's group.
func TicketLinkID(ruleID, group string) string { return ruleID + "#" + group }

// TicketLinkKey is the link item of a rule's group's ticket.
func TicketLinkKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: TicketLinkPK(companyID), SK: id}
}

// TicketLink maps a rule's group of findings to its ticket on the
// tracker. Until the ticket exists it holds only the lease of the attempt
// creating it; a retry reads it, then looks for the marker on the far
// side, before it creates anything.
type TicketLink struct {
	ddb.Key
	ID          string `dynamodbav:"id"`
	CompanyID   int64  `dynamodbav:"company_id"`
	RuleID      string `dynamodbav:"rule_id"`
	Group       string `dynamodbav:"group"`
	ProjectID   int64  `dynamodbav:"project_id,omitempty"`
	System      string `dynamodbav:"system,omitempty"` // github, jira
	Integration string `dynamodbav:"integration_uuid,omitempty"`
	Repo        string `dynamodbav:"repo,omitempty"`
	// TicketKey is the tracker's name of the ticket: owner/repo#12 or ABC-12.
	TicketKey string `dynamodbav:"ticket_key,omitempty"`
	Number    int    `dynamodbav:"number,omitempty"` // GitHub's issue number
	URL       string `dynamodbav:"url,omitempty"`
	// State is open or closed on the tracker, Resolution how it was
	// closed (done, wont_do; "" while open).
	State      string `dynamodbav:"state,omitempty"`
	Resolution string `dynamodbav:"resolution,omitempty"`
	// IssueIDs are the ticket's findings: issue ids, and SCA finding ids
	// marked "sca:" (store/tickets.SCAPrefix).
	IssueIDs []string `dynamodbav:"issue_ids,omitempty"`
	// Synced is the last state we set on the tracker (open/closed), so a
	// reconciliation or an event that reports it is known as our own.
	Synced     string `dynamodbav:"synced,omitempty"`
	Version    int64  `dynamodbav:"ver"`
	LeaseOwner string `dynamodbav:"lease_owner,omitempty"`
	LeaseUntil string `dynamodbav:"lease_until,omitempty"`
	CreatedAt  string `dynamodbav:"created_at,omitempty"`
	UpdatedAt  string `dynamodbav:"updated_at,omitempty"`
	CheckedAt  string `dynamodbav:"checked_at,omitempty"`
}

// TicketKeyRefKey finds a link by the tracker's key of its ticket.
func TicketKeyRefKey(companyID int64, integration, ticketKey string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID) + "#TKEY", SK: integration + "#" + ticketKey}
}

// TicketKeyRef names the link of a tracker's ticket.
type TicketKeyRef struct {
	ddb.Key
	LinkID string `dynamodbav:"link_id"`
}

// IssueTicketsKey is an issue's set of ticket links.
func IssueTicketsKey(companyID int64, issueID string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID) + "#TISSUE", SK: issueID}
}

// IssueTickets lists the links whose ticket holds an issue.
type IssueTickets struct {
	ddb.Key
	Links []string `dynamodbav:"links,stringset,omitempty"`
}

// TicketEventKey remembers an inbound ticket event (replay protection).
func TicketEventKey(companyID int64, integration, deliveryID string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "TEVENT#" + integration + "#" + deliveryID}
}
