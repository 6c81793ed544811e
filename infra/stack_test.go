package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/tabledef"
)

// The sender the test stacks send from: production refuses example domains.
const (
	testMailFrom    = "notifications@mail.codescan-test.net"
	testSESIdentity = "mail.codescan-test.net"
)

// tmp holds the placeholder build directory and the synthesis output.
var tmp string

func TestMain(m *testing.M) {
	var err error
	if tmp, err = os.MkdirTemp("", "infra-test"); err != nil {
		panic(err)
	}
	code := m.Run()
	jsii.Close()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// synthesized is one stack and its CloudFormation template.
type synthesized struct {
	stack    *APIStack
	region   string
	template assertions.Template
	doc      cfnTemplate
}

type cfnTemplate struct {
	Resources map[string]struct {
		Type           string
		DeletionPolicy string
		Properties     map[string]any
	}
	Outputs map[string]struct{ Value any }
}

// apps holds, per stage, the synthesized stacks of that stage's app.
var apps sync.Map // stage -> func() ([]synthesized, error)

// settingsFor is what `cdk synth -c account=... -c stage=<stage>` gives,
// with a build directory of placeholder bootstraps: these tests read the
// templates, which do not depend on the binaries.
func settingsFor(stage string) (Settings, error) {
	s := Settings{
		Account: "123456789012", PrimaryRegion: "us-east-1", EURegion: "eu-central-1", Stage: stage,
		JWTIssuer: "https://login.example.com/", JWTAudience: "codescan-api", JWKSURL: "https://login.example.com/.well-known/jwks.json",
		ThrottleRate: 100, ThrottleBurst: 200, BuildDir: filepath.Join(tmp, "build"),
		MailFrom: testMailFrom, SESIdentity: testSESIdentity, SESConfigurationSet: "codescan-notifications",
		AppBaseURL: "https://app.example.com", AuditRetentionDays: 400,
	}
	groups := routes.Groups()
	for _, w := range deployspec.Workers() {
		groups = append(groups, w.Group)
	}
	for _, g := range groups {
		if err := os.MkdirAll(filepath.Join(s.BuildDir, g), 0o755); err != nil {
			return s, err
		}
		if err := os.WriteFile(filepath.Join(s.BuildDir, g, "bootstrap"), []byte("placeholder "+g), 0o755); err != nil {
			return s, err
		}
	}
	return s, s.validate()
}

// synth builds the app for a stage once per test binary (synthesis is the
// slow part) and returns its two stacks.
func synth(t *testing.T, stage string) []synthesized {
	t.Helper()
	f, _ := apps.LoadOrStore(stage, sync.OnceValues(func() ([]synthesized, error) {
		s, err := settingsFor(stage)
		if err != nil {
			return nil, err
		}
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(filepath.Join(tmp, "cdk.out."+stage))})
		primary, eu := NewStacks(app, s)
		var out []synthesized
		for _, st := range []struct {
			stack  *APIStack
			region string
		}{{primary, s.PrimaryRegion}, {eu, s.EURegion}} {
			tpl := assertions.Template_FromStack(st.stack.Stack, nil)
			raw, err := json.Marshal(tpl.ToJSON())
			if err != nil {
				return nil, err
			}
			var doc cfnTemplate
			if err := json.Unmarshal(raw, &doc); err != nil {
				return nil, err
			}
			out = append(out, synthesized{stack: st.stack, region: st.region, template: tpl, doc: doc})
		}
		return out, nil
	}))
	stacks, err := f.(func() ([]synthesized, error))()
	if err != nil {
		t.Fatal(err)
	}
	return stacks
}

// assert runs an assertions check, turning its panic into a test error.
func assert(t *testing.T, what string, check func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	check()
}

func (s synthesized) logicalID(c constructs.IConstruct) string {
	return s.stack.Resolve(c.Node().DefaultChild().(awscdk.CfnElement).LogicalId()).(string)
}

func TestStacksAreInTheirRegions(t *testing.T) {
	stacks := synth(t, "prod")
	if len(stacks) != 2 {
		t.Fatalf("%d stacks, want primary and EU", len(stacks))
	}
	for _, s := range stacks {
		if got := *s.stack.Region(); got != s.region {
			t.Errorf("%s: region %s, want %s", *s.stack.StackName(), got, s.region)
		}
		if got := *s.stack.Account(); got != "123456789012" {
			t.Errorf("%s: account %s, want the explicit one", *s.stack.StackName(), got)
		}
	}
	if eu := *stacks[1].stack.Region(); !strings.HasPrefix(eu, "eu-") || !strings.HasSuffix(*stacks[1].stack.StackName(), "-eu") {
		t.Errorf("second stack %s is in %s, want the EU stack in an EU region", *stacks[1].stack.StackName(), eu)
	}
}

func TestSettingsRefuseMisplacedStacks(t *testing.T) {
	good := Settings{Account: "123456789012", PrimaryRegion: "us-east-1", EURegion: "eu-west-1", Stage: "prod", ThrottleRate: 1, ThrottleBurst: 1, AuditRetentionDays: 400,
		MailFrom: testMailFrom, SESIdentity: testSESIdentity, SESConfigurationSet: "codescan-notifications"}
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Settings){
		"no account":                 func(s *Settings) { s.Account = "" },
		"EU stack outside EU":        func(s *Settings) { s.EURegion = "us-west-2" },
		"both in one region":         func(s *Settings) { s.PrimaryRegion = s.EURegion },
		"stage not a name":           func(s *Settings) { s.Stage = "prod/v2" },
		"no throttling at all":       func(s *Settings) { s.ThrottleRate = 0 },
		"no audit retention":         func(s *Settings) { s.AuditRetentionDays = 0 },
		"sender of another identity": func(s *Settings) { s.MailFrom = "alerts@elsewhere.net" },
		"sender not an address":      func(s *Settings) { s.MailFrom = "notifications" },
		"identity an other address":  func(s *Settings) { s.SESIdentity = "someone@" + testSESIdentity },
		"no configuration set":       func(s *Settings) { s.SESConfigurationSet = "" },
	} {
		s := good
		change(&s)
		if s.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestResourceCounts(t *testing.T) {
	for _, s := range synth(t, "prod") {
		for typ, n := range map[string]int{
			"AWS::Lambda::Function":           len(routes.Groups()) + len(deployspec.Workers()),
			"AWS::DynamoDB::Table":            1,
			"AWS::KMS::Key":                   2, // integration secrets, alarm topic
			"AWS::ApiGateway::RestApi":        1,
			"AWS::ApiGateway::Stage":          1,
			"AWS::ApiGateway::Method":         len(routes.Table),
			"AWS::Lambda::Permission":         len(routes.Table) + len(deployspec.Schedules), // per method (scoped to it) and schedule
			"AWS::Logs::LogGroup":             len(routes.Groups()) + len(deployspec.Workers()) + 1,
			"AWS::Lambda::EventSourceMapping": 2, // dispatcher, ingester
			"AWS::S3::Bucket":                 1,
			"AWS::Events::Rule":               len(deployspec.Schedules),
			"AWS::SQS::Queue":                 2, // their failure queues
			"AWS::ApiGateway::Account":        1,
			"AWS::DynamoDB::GlobalTable":      0,
			"AWS::SNS::Topic":                 1,
			"AWS::CloudWatch::Dashboard":      1,
		} {
			assert(t, s.region+" "+typ, func() { s.template.ResourceCountIs(jsii.String(typ), jsii.Number(n)) })
		}
	}
}

// TestEveryRouteReachesItsFunction rebuilds the REST API's paths from its
// resources and checks that every route of the table, and nothing else, is
// a method whose proxy integration invokes its group's function.
func TestEveryRouteReachesItsFunction(t *testing.T) {
	for _, s := range synth(t, "prod") {
		fnGroup := map[string]string{}
		for g, fn := range s.stack.Functions {
			fnGroup[s.logicalID(fn)] = g
		}
		path := map[string]string{} // resource logical id -> full path
		var resolve func(id string) string
		resolve = func(id string) string {
			if p, ok := path[id]; ok {
				return p
			}
			props := s.doc.Resources[id].Properties
			parent := ""
			if ref, ok := props["ParentId"].(map[string]any)["Ref"].(string); ok {
				parent = resolve(ref)
			}
			path[id] = parent + "/" + props["PathPart"].(string)
			return path[id]
		}
		got := map[string]string{} // "METHOD /path" -> group
		for id, r := range s.doc.Resources {
			if r.Type != "AWS::ApiGateway::Method" {
				continue
			}
			resID, _ := r.Properties["ResourceId"].(map[string]any)["Ref"].(string)
			integ, _ := r.Properties["Integration"].(map[string]any)
			if integ["Type"] != "AWS_PROXY" || integ["IntegrationHttpMethod"] != "POST" {
				t.Errorf("%s: method %s is not a Lambda proxy integration: %v", s.region, id, integ)
			}
			uri, _ := json.Marshal(integ["Uri"])
			var target []string
			for fnID, g := range fnGroup {
				if strings.Contains(string(uri), `"Fn::GetAtt":["`+fnID+`","Arn"]`) {
					target = append(target, g)
				}
			}
			if len(target) != 1 {
				t.Errorf("%s: method %s invokes %v, want one group function", s.region, id, target)
				continue
			}
			key := r.Properties["HttpMethod"].(string) + " " + resolve(resID)
			if _, dup := got[key]; dup {
				t.Errorf("%s: %s defined twice", s.region, key)
			}
			got[key] = target[0]
		}
		for _, r := range routes.Table {
			if got[r.Pattern()] != r.Group {
				t.Errorf("%s: %s reaches %q, want %s", s.region, r.Pattern(), got[r.Pattern()], r.Group)
			}
			delete(got, r.Pattern())
		}
		for k, g := range got {
			t.Errorf("%s: %s (function %s) is not a route of the table", s.region, k, g)
		}
	}
}

// statement is an IAM policy statement as CloudFormation holds it.
type statement struct {
	Effect   string
	Action   any // string or list
	Resource any
}

func actionsOf(st statement) []string {
	switch a := st.Action.(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, x := range a {
			out = append(out, x.(string))
		}
		return out
	}
	return nil
}

// TestLeastPrivilege: every function's role may do exactly what
// deployspec lists for its group; no policy anywhere grants a service
// wildcard, and no role carries a full-access managed policy.
func TestLeastPrivilege(t *testing.T) {
	for _, s := range synth(t, "prod") {
		roleGroup := map[string]string{}
		for g, fn := range s.stack.Functions {
			roleGroup[s.logicalID(fn.Role())] = g
		}
		for g, fn := range s.stack.Workers {
			roleGroup[s.logicalID(fn.Role())] = g
		}
		granted := map[string][]string{}
		for id, r := range s.doc.Resources {
			switch r.Type {
			case "AWS::IAM::Policy":
				raw, _ := json.Marshal(r.Properties["PolicyDocument"].(map[string]any)["Statement"])
				var sts []statement
				if err := json.Unmarshal(raw, &sts); err != nil {
					t.Fatal(err)
				}
				roles, _ := json.Marshal(r.Properties["Roles"])
				var groups []string
				for roleID, g := range roleGroup {
					if strings.Contains(string(roles), `"`+roleID+`"`) {
						groups = append(groups, g)
					}
				}
				for _, st := range sts {
					for _, a := range actionsOf(st) {
						if a == "*" || strings.HasSuffix(a, ":*") {
							t.Errorf("%s: policy %s grants %s", s.region, id, a)
						}
						if strings.HasPrefix(a, "dynamodb:") || strings.HasPrefix(a, "kms:") {
							if len(groups) != 1 {
								t.Errorf("%s: policy %s grants %s to %v, want one group's role", s.region, id, a, groups)
								continue
							}
							granted[groups[0]] = append(granted[groups[0]], a)
						}
					}
				}
			case "AWS::IAM::Role":
				raw, _ := json.Marshal(r.Properties["ManagedPolicyArns"])
				for _, bad := range []string{"FullAccess", "AdministratorAccess", "PowerUserAccess"} {
					if strings.Contains(string(raw), bad) {
						t.Errorf("%s: role %s has a managed policy with %s: %s", s.region, id, bad, raw)
					}
				}
			}
		}
		for _, f := range slices.Concat(deployspec.All(), deployspec.Workers()) {
			got := granted[f.Group]
			slices.Sort(got)
			want := slices.Concat(f.TableActions, f.KMSActions)
			if f.ReadsStream() {
				want = slices.Concat(want, deployspec.StreamReadActions)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s is granted %v, want %v", s.region, f.Group, got, want)
			}
		}
	}
}

func TestTableKeepsItsDataInProduction(t *testing.T) {
	for _, s := range synth(t, "prod") {
		var gsis []any
		for _, ix := range tabledef.Indexes {
			gsis = append(gsis, map[string]any{
				"IndexName": ix.Name,
				"KeySchema": []any{
					map[string]any{"AttributeName": ix.PK, "KeyType": "HASH"},
					map[string]any{"AttributeName": ix.SK, "KeyType": "RANGE"},
				},
				"Projection": map[string]any{"ProjectionType": ix.Projection},
			})
		}
		assert(t, s.region+" table", func() {
			s.template.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"DeletionPolicy":      "Retain",
				"UpdateReplacePolicy": "Retain",
				"Properties": map[string]any{
					"BillingMode": "PAY_PER_REQUEST",
					"KeySchema": []any{
						map[string]any{"AttributeName": tabledef.PK, "KeyType": "HASH"},
						map[string]any{"AttributeName": tabledef.SK, "KeyType": "RANGE"},
					},
					"GlobalSecondaryIndexes":           gsis,
					"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
					"SSESpecification":                 map[string]any{"SSEEnabled": true},
					"TimeToLiveSpecification":          map[string]any{"AttributeName": tabledef.TTLAttribute, "Enabled": true},
					"DeletionProtectionEnabled":        true,
				},
			})
		})
		assert(t, s.region+" key", func() {
			s.template.HasResource(jsii.String("AWS::KMS::Key"), map[string]any{
				"DeletionPolicy": "Retain",
				"Properties":     map[string]any{"EnableKeyRotation": true},
			})
		})
	}
	for _, s := range synth(t, "dev") {
		assert(t, s.region+" dev table", func() {
			s.template.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"DeletionPolicy": "Delete",
				"Properties": map[string]any{
					"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
					"DeletionProtectionEnabled":        false,
				},
			})
		})
	}
}

func TestFunctionsAndTheirConfiguration(t *testing.T) {
	for _, s := range synth(t, "prod") {
		for _, f := range deployspec.All() {
			env := map[string]any{
				"TABLE_NAME":   map[string]any{"Ref": s.logicalID(s.stack.Table)},
				"JWT_ISSUER":   "https://login.example.com/",
				"JWT_AUDIENCE": "codescan-api",
				"JWKS_URL":     "https://login.example.com/.well-known/jwks.json",
				// Audit entries expire after the retention the stack is given.
				"AUDIT_RETENTION_DAYS": "400",
				// 90 % of the function's memory.
				deployspec.GoMemLimitEnv: fmt.Sprintf("%dMiB", f.MemoryMB*9/10),
			}
			if len(f.KMSActions) > 0 {
				env[deployspec.KMSKeyEnv] = map[string]any{"Fn::GetAtt": []any{s.logicalID(s.stack.Key), "Arn"}}
			}
			if f.UsesReports() {
				env[deployspec.ReportsEnv] = map[string]any{"Ref": s.logicalID(s.stack.Reports)}
			}
			assert(t, s.region+" "+f.Group+" function", func() {
				s.template.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
					"Description":   "codescan-api " + f.Group + " endpoints",
					"Runtime":       "provided.al2023",
					"Architectures": []any{"arm64"},
					"Handler":       "bootstrap",
					"MemorySize":    f.MemoryMB,
					"Timeout":       f.TimeoutSeconds,
					"TracingConfig": map[string]any{"Mode": "Active"},
					"Environment":   map[string]any{"Variables": assertions.Match_ObjectEquals(&env)},
				})
			})
		}
	}
}

func TestAPIStage(t *testing.T) {
	for _, s := range synth(t, "prod") {
		assert(t, s.region+" api", func() {
			s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::RestApi"), map[string]any{
				"EndpointConfiguration": map[string]any{"Types": []any{"REGIONAL"}},
			})
		})
		assert(t, s.region+" stage", func() {
			s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{
				"StageName":      "prod",
				"TracingEnabled": true,
				"AccessLogSetting": map[string]any{
					"DestinationArn": assertions.Match_AnyValue(),
					"Format":         deployspec.AccessLogFormat,
				},
				"MethodSettings": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"HttpMethod": "*", "ResourcePath": "/*",
					"ThrottlingRateLimit": 100, "ThrottlingBurstLimit": 200,
				})}),
			})
		})
		out, _ := json.Marshal(s.doc.Outputs["ApiBaseUrl"].Value)
		if !strings.Contains(string(out), `".execute-api.`+s.region+`."`) || !strings.HasSuffix(string(out), `"/api/v1"]]}`) {
			t.Errorf("%s: ApiBaseUrl = %s, want https://<id>.execute-api.%s.<suffix>/<stage>/api/v1", s.region, out, s.region)
		}
	}
}
