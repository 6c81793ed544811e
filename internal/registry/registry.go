// Package registry maps every endpoint group to its handler constructor, for
// the processes that serve all groups at once (the local dev server, the
// event replayer). Lambda mains import only their own group.
package registry

import (
	"net/http"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/functions/components"
	"github.com/acme/codescan-api/functions/docs"
	"github.com/acme/codescan-api/functions/integrations"
	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/functions/policies"
	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/functions/teams"
	"github.com/acme/codescan-api/functions/tickets"
	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/functions/vex"
	"github.com/acme/codescan-api/functions/webhooks"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
)

// Constructors builds each group's http.Handler.
var Constructors = map[string]func(config.Deps) http.Handler{
	routes.GroupDocs:          docs.New,
	routes.GroupIntegrations:  integrations.New,
	routes.GroupIssues:        issues.New,
	routes.GroupNotifications: notifications.New,
	routes.GroupPolicies:      policies.New,
	routes.GroupTeams:         teams.New,
	routes.GroupUploads:       uploads.New,
	routes.GroupWebhooks:      webhooks.New,
	// Accounts: API keys, users, audit log.
	routes.GroupAccounts: accounts.New,
	// The client workflow.
	routes.GroupProjects: projects.New,
	// VEX import.
	routes.GroupVEX: vex.New,
	// The component inventory.
	routes.GroupComponents: components.New,
	// Tickets: Jira integrations, ticket rules, trackers' events.
	routes.GroupTickets: tickets.New,
}

// Handlers builds every group's handler.
func Handlers(d config.Deps) map[string]http.Handler {
	out := map[string]http.Handler{}
	for g, c := range Constructors {
		out[g] = c(d)
	}
	return out
}

// Mux serves every route of the table with its group's handler, exactly as
// API Gateway routes them to the Lambda functions.
func Mux(d config.Deps) http.Handler {
	groups := Handlers(d)
	byPattern := map[string]http.Handler{}
	for _, rt := range routes.Table {
		if h, ok := groups[rt.Group]; ok {
			byPattern[rt.Pattern()] = h
		}
	}
	return httpapi.Router(byPattern, d.Server.Log)
}
