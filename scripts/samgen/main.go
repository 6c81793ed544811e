// Command samgen writes template.yaml, the SAM template of the whole API, from
// the route table (routes), the table definition (tabledef) and each group's
// needs (deployspec): one function per group with an Api event per route,
// the single table, the integration-secrets key and a regional REST API.
//
//	go run ./scripts/samgen            # rewrite template.yaml
//	go run ./scripts/samgen -check     # fail if template.yaml is stale
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/tabledef"
)

//go:embed template.yaml.tmpl
var templateText string

func main() {
	check := flag.Bool("check", false, "only report whether template.yaml is up to date")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "samgen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := dynamolocal.Root()
	if err != nil {
		return err
	}
	out, err := Generate()
	if err != nil {
		return err
	}
	path := filepath.Join(root, "template.yaml")
	if check {
		cur, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(cur, out) {
			return fmt.Errorf("template.yaml is stale: run go run ./scripts/samgen")
		}
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}

// function is one group's AWS::Serverless::Function.
type function struct {
	deployspec.Function
	Events []event
}

// event is one Api event of a function: one route.
type event struct {
	ID, Path, Method string
}

// Generate renders template.yaml.
func Generate() ([]byte, error) {
	var fns []function
	ids := map[string]bool{}
	for _, f := range deployspec.All() {
		fn := function{Function: f}
		for _, r := range routes.Of(f.Group) {
			id := EventID(r)
			if ids[id] {
				return nil, fmt.Errorf("two routes map to event id %s", id)
			}
			ids[id] = true
			fn.Events = append(fn.Events, event{ID: id, Path: r.FullPath(), Method: strings.ToLower(r.Method)})
		}
		fns = append(fns, fn)
	}
	t, err := template.New("sam").Funcs(template.FuncMap{"json": mustJSON}).Parse(templateText)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, map[string]any{
		"Functions":         fns,
		"Attributes":        tabledef.AttributeNames(),
		"PK":                tabledef.PK,
		"SK":                tabledef.SK,
		"TTL":               tabledef.TTLAttribute,
		"Indexes":           tabledef.Indexes,
		"LogFormat":         deployspec.AccessLogFormat,
		"KMSKeyEnv":         deployspec.KMSKeyEnv,
		"Workers":           deployspec.Workers(),
		"SESAction":         deployspec.SESAction,
		"ExportsPrefix":     deployspec.ExportsPrefix,
		"ExportDays":        deployspec.ExportDays,
		"AbortUploadDays":   deployspec.AbortUploadDays,
		"ReportsEnv":        deployspec.ReportsEnv,
		"GoMemLimitEnv":     deployspec.GoMemLimitEnv,
		"ReportsPrefix":     deployspec.ReportsPrefix,
		"ChunksPrefix":      deployspec.ChunksPrefix,
		"ReportDays":        deployspec.ReportDays,
		"ChunkDays":         deployspec.ChunkDays,
		"SourcesPrefix":     deployspec.SourcesPrefix,
		"SourceDays":        deployspec.SourceDays,
		"StreamReadActions": deployspec.StreamReadActions,
		"Schedules":         schedules(),
		"AllFunctions":      append(deployspec.All(), deployspec.Workers()...),
		"TableAlarms":       tableAlarms(),
		"JobAlarms":         deployspec.JobAlarms,
		"MetricsNamespace":  metrics.Namespace,
		"JobFailures":       metrics.JobFailures,
		"StreamConsumers":   streamConsumers(),
	})
	return b.Bytes(), err
}

// streamConsumers are the names of the workers that read the table's
// stream: each has a failure queue and an iterator age alarm.
func streamConsumers() []string {
	var out []string
	for _, w := range deployspec.Workers() {
		if w.ReadsStream() {
			out = append(out, w.Name())
		}
	}
	return out
}

// tableAlarm is an alarm on one table metric summed over every operation
// the store performs (the metrics exist per operation only).
type tableAlarm struct {
	ID, Why, Metric, Expression string
	Operations                  []tableOperation
}

type tableOperation struct{ ID, Metric, Operation string }

func tableAlarms() []tableAlarm {
	out := []tableAlarm{
		{ID: "TableThrottles", Metric: "ThrottledRequests", Why: "table: throttled requests in 3 of 5 minutes (a hot partition or a surge; retries run out as 503s)"},
		{ID: "TableSystemErrors", Metric: "SystemErrors", Why: "table: DynamoDB system errors in 3 of 5 minutes (a regional DynamoDB problem)"},
	}
	for i, a := range out {
		var ids []string
		for _, op := range deployspec.TableOperations {
			id := strings.ToLower(a.Metric + "_" + op)
			ids = append(ids, id)
			out[i].Operations = append(out[i].Operations, tableOperation{ID: id, Metric: a.Metric, Operation: op})
		}
		out[i].Expression = "SUM([" + strings.Join(ids, ",") + "])"
	}
	return out
}

// schedule is one Schedule event of the scheduler function.
type schedule struct{ ID, Expression, Input string }

func schedules() []schedule {
	var out []schedule
	for _, s := range deployspec.Schedules {
		out = append(out, schedule{ID: "Schedule" + strings.ToUpper(s.Name[:1]) + s.Name[1:], Expression: s.Expression, Input: s.Input()})
	}
	return out
}

// EventID is the logical id of a route's Api event: method and path words
// in CamelCase ("GET /teams/{team_id}" is GetTeamsTeamId).
func EventID(r routes.Route) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(strings.ToLower(r.Method)+"/"+r.Path, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
