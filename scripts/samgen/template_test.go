package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/tabledef"
)

// samTemplate is the part of template.yaml the tests read. Intrinsic
// function tags (!Ref, !GetAtt, !Sub) decode to their argument.
type samTemplate struct {
	Resources map[string]struct {
		Type       string
		Properties struct {
			CodeUri       string
			Handler       string
			Runtime       string
			Architectures []string
			Environment   struct{ Variables map[string]string }
			Policies      []struct {
				Statement []struct {
					Effect   string
					Action   []string
					Resource any
				}
			}
			Events map[string]struct {
				Type       string
				Properties struct{ RestApiId, Path, Method string }
			}
			// AWS::DynamoDB::Table
			BillingMode            string
			AttributeDefinitions   []struct{ AttributeName, AttributeType string }
			KeySchema              []struct{ AttributeName, KeyType string }
			GlobalSecondaryIndexes []struct {
				IndexName  string
				KeySchema  []struct{ AttributeName, KeyType string }
				Projection struct{ ProjectionType string }
			}
			PointInTimeRecoverySpecification struct{ PointInTimeRecoveryEnabled bool }
			SSESpecification                 struct{ SSEEnabled bool }
			TimeToLiveSpecification          struct {
				AttributeName string
				Enabled       bool
			}
			// AWS::Serverless::Api
			EndpointConfiguration struct{ Type string }
			TracingEnabled        bool
			// AWS::CloudWatch::Alarm
			AlarmName    string
			MetricName   string
			Dimensions   []struct{ Name, Value string }
			AlarmActions []string
			OKActions    []string
			// AWS::SES::ConfigurationSet
			Name string
		}
	}
	Rules map[string]struct {
		RuleCondition any
		Assertions    []struct{ AssertDescription string }
	}
	Globals struct {
		Function struct {
			Runtime       string
			Handler       string
			Architectures []string
			Environment   struct{ Variables map[string]string }
		}
	}
}

func readTemplate(t *testing.T) ([]byte, samTemplate) {
	t.Helper()
	root, err := dynamolocal.Root()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// YAML to JSON, then into the struct: encoding/json matches the
	// template's CamelCase keys to the field names.
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var tpl samTemplate
	if err := json.Unmarshal(j, &tpl); err != nil {
		t.Fatal(err)
	}
	return raw, tpl
}

func TestTemplateIsGeneratedFromTheRouteTable(t *testing.T) {
	raw, _ := readTemplate(t)
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, want) {
		t.Fatal("template.yaml is stale: run go run ./scripts/samgen (or make template)")
	}
}

// TestEveryRouteAndNothingElse reads template.yaml as SAM does: every route
// of the table is an Api event of its group's function on the one REST API,
// and there is no other event and no other function.
func TestEveryRouteAndNothingElse(t *testing.T) {
	_, tpl := readTemplate(t)
	type routeKey struct{ method, path string }
	got := map[routeKey]string{} // route -> function logical id
	functions := map[string]string{}
	for id, res := range tpl.Resources {
		if res.Type != "AWS::Serverless::Function" {
			continue
		}
		if workerEvents(t, id, res.Properties.Events) {
			continue
		}
		functions[id] = res.Properties.CodeUri
		for name, ev := range res.Properties.Events {
			if ev.Type != "Api" || ev.Properties.RestApiId != "Api" {
				t.Errorf("%s event %s: type %s on %q, want Api on the Api resource", id, name, ev.Type, ev.Properties.RestApiId)
			}
			k := routeKey{strings.ToUpper(ev.Properties.Method), ev.Properties.Path}
			if prev, dup := got[k]; dup {
				t.Errorf("%s %s is routed twice (%s and %s)", k.method, k.path, prev, id)
			}
			got[k] = id
		}
	}
	for _, g := range routes.Groups() {
		id := deployspec.Of(g).Name() + "Function"
		codeURI, ok := functions[id]
		if !ok {
			t.Errorf("group %s has no function %s", g, id)
			continue
		}
		if codeURI != "build/"+g+"/" {
			t.Errorf("%s CodeUri %q, want build/%s/", id, codeURI, g)
		}
		delete(functions, id)
		for _, r := range routes.Of(g) {
			k := routeKey{r.Method, r.FullPath()}
			if got[k] != id {
				t.Errorf("%s is routed to %q, want %s", r.Pattern(), got[k], id)
			}
			delete(got, k)
		}
	}
	for id := range functions {
		t.Errorf("function %s serves no group of the route table", id)
	}
	for k, id := range got {
		t.Errorf("%s %s (function %s) is not a route of the table", k.method, k.path, id)
	}
}

func TestFunctionsRunTheBuiltBootstrapOnArm(t *testing.T) {
	_, tpl := readTemplate(t)
	f := tpl.Globals.Function
	if f.Runtime != "provided.al2023" || f.Handler != "bootstrap" || !slices.Equal(f.Architectures, []string{"arm64"}) {
		t.Errorf("Globals.Function = %s %s %v, want provided.al2023 bootstrap [arm64]", f.Runtime, f.Handler, f.Architectures)
	}
	for _, v := range []string{"TABLE_NAME", "JWT_ISSUER", "JWT_AUDIENCE", "JWKS_URL"} {
		if _, ok := f.Environment.Variables[v]; !ok {
			t.Errorf("functions lack environment variable %s", v)
		}
	}
	api := tpl.Resources["Api"]
	if api.Type != "AWS::Serverless::Api" || api.Properties.EndpointConfiguration.Type != "REGIONAL" || !api.Properties.TracingEnabled {
		t.Errorf("Api: %s %s tracing %v, want a REGIONAL AWS::Serverless::Api with tracing", api.Type, api.Properties.EndpointConfiguration.Type, api.Properties.TracingEnabled)
	}
}

// TestPoliciesAreExactlyTheGroupsNeeds: each function may do on the table
// what deployspec lists for its group and nothing more.
func TestPoliciesAreExactlyTheGroupsNeeds(t *testing.T) {
	_, tpl := readTemplate(t)
	for _, f := range deployspec.All() {
		res := tpl.Resources[f.Name()+"Function"]
		var table, kms, objects, bucket []string
		for _, p := range res.Properties.Policies {
			for _, st := range p.Statement {
				if st.Effect != "Allow" {
					t.Errorf("%s: unexpected %s statement", f.Group, st.Effect)
				}
				for _, a := range st.Action {
					switch {
					case strings.HasSuffix(a, "*"):
						t.Errorf("%s is granted the wildcard %s", f.Group, a)
					case strings.HasPrefix(a, "dynamodb:"):
						table = append(table, a)
					case strings.HasPrefix(a, "kms:"):
						kms = append(kms, a)
					case a == "s3:ListBucket":
						bucket = append(bucket, a)
					case strings.HasPrefix(a, "s3:"):
						objects = append(objects, a)
					default:
						t.Errorf("%s is granted %s, which deployspec does not list", f.Group, a)
					}
				}
			}
		}
		if !slices.Equal(table, f.TableActions) {
			t.Errorf("%s table actions %v, want %v", f.Group, table, f.TableActions)
		}
		if !slices.Equal(kms, f.KMSActions) {
			t.Errorf("%s KMS actions %v, want %v", f.Group, kms, f.KMSActions)
		}
		var want []string
		for _, g := range f.ReportObjects {
			want = append(want, g.Actions...)
		}
		if !slices.Equal(objects, want) || !slices.Equal(bucket, f.ReportBucketActions) {
			t.Errorf("%s report bucket actions %v %v, want %v %v", f.Group, objects, bucket, want, f.ReportBucketActions)
		}
		if _, ok := res.Properties.Environment.Variables[deployspec.ReportsEnv]; ok != f.UsesReports() {
			t.Errorf("%s: %s set %v, uses the report bucket %v", f.Group, deployspec.ReportsEnv, ok, f.UsesReports())
		}
		if _, ok := res.Properties.Environment.Variables[deployspec.KMSKeyEnv]; ok != (len(f.KMSActions) > 0) {
			t.Errorf("%s: %s set %v, want it exactly when the group uses the key", f.Group, deployspec.KMSKeyEnv, ok)
		}
	}
}

func TestTableMatchesTheTableDefinition(t *testing.T) {
	_, tpl := readTemplate(t)
	var tables []string
	for id, res := range tpl.Resources {
		if res.Type == "AWS::DynamoDB::Table" {
			tables = append(tables, id)
		}
	}
	if !slices.Equal(tables, []string{"Table"}) {
		t.Fatalf("tables %v, want the single table Table", tables)
	}
	p := tpl.Resources["Table"].Properties
	var attrs []string
	for _, a := range p.AttributeDefinitions {
		if a.AttributeType != "S" {
			t.Errorf("attribute %s has type %s, want S", a.AttributeName, a.AttributeType)
		}
		attrs = append(attrs, a.AttributeName)
	}
	if !slices.Equal(attrs, tabledef.AttributeNames()) {
		t.Errorf("attributes %v, want %v", attrs, tabledef.AttributeNames())
	}
	if len(p.KeySchema) != 2 || p.KeySchema[0].AttributeName != tabledef.PK || p.KeySchema[0].KeyType != "HASH" ||
		p.KeySchema[1].AttributeName != tabledef.SK || p.KeySchema[1].KeyType != "RANGE" {
		t.Errorf("key schema %v, want %s HASH, %s RANGE", p.KeySchema, tabledef.PK, tabledef.SK)
	}
	if len(p.GlobalSecondaryIndexes) != len(tabledef.Indexes) {
		t.Fatalf("%d indexes, want %d", len(p.GlobalSecondaryIndexes), len(tabledef.Indexes))
	}
	for i, ix := range tabledef.Indexes {
		g := p.GlobalSecondaryIndexes[i]
		if g.IndexName != ix.Name || len(g.KeySchema) != 2 || g.KeySchema[0].AttributeName != ix.PK ||
			g.KeySchema[1].AttributeName != ix.SK || g.Projection.ProjectionType != ix.Projection {
			t.Errorf("index %d = %+v, want %+v with projection ALL", i, g, ix)
		}
	}
	if ttl := p.TimeToLiveSpecification; !ttl.Enabled || ttl.AttributeName != tabledef.TTLAttribute {
		t.Errorf("time to live %+v, want enabled on %s", ttl, tabledef.TTLAttribute)
	}
	if p.BillingMode != "PAY_PER_REQUEST" || !p.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled || !p.SSESpecification.SSEEnabled {
		t.Errorf("table: billing %s, PITR %v, SSE %v; want on-demand with PITR and encryption", p.BillingMode,
			p.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled, p.SSESpecification.SSEEnabled)
	}
}

// The integrations function finds its key through the variable the
// secrets package reads.
func TestKMSKeyVariableIsTheOneSecretsReads(t *testing.T) {
	if deployspec.KMSKeyEnv != secrets.EnvKMSKeyID {
		t.Errorf("deployspec sets %s, secrets reads %s", deployspec.KMSKeyEnv, secrets.EnvKMSKeyID)
	}
}

// workerEvents reports whether id is a worker function (deployspec.Workers)
// and checks its events: the dispatcher's one stream source, the
// scheduler's one Schedule event per deployspec.Schedules.
func workerEvents[E any](t *testing.T, id string, events map[string]E) bool {
	t.Helper()
	for _, w := range deployspec.Workers() {
		if w.Name()+"Function" != id {
			continue
		}
		raw, _ := json.Marshal(events)
		var evs map[string]struct{ Type string }
		_ = json.Unmarshal(raw, &evs)
		want := map[string]int{}
		if w.ReadsStream() {
			want["DynamoDB"] = 1
		} else {
			want["Schedule"] = len(deployspec.Schedules)
		}
		got := map[string]int{}
		for _, e := range evs {
			got[e.Type]++
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s events %v, want %v", id, got, want)
		}
		return true
	}
	return false
}
