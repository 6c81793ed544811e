package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/routes"
)

// The dispatcher reads new outbox items from the table's stream, reports
// partial batch failures and sends what it gives up on to the failure
// queue; the scheduler runs each job on its rule; both may send email only
// from the configured SES identity.
func TestNotificationDelivery(t *testing.T) {
	for _, s := range synth(t, "prod") {
		assert(t, s.region+" stream", func() {
			s.template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"StreamSpecification": map[string]any{"StreamViewType": "NEW_IMAGE"},
			})
		})
		dispatcher := s.logicalID(s.stack.Workers[deployspec.WorkerDispatcher])
		queue := s.logicalID(s.stack.FailureQueue)
		assert(t, s.region+" event source mapping", func() {
			s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
				"FunctionName":               map[string]any{"Ref": dispatcher},
				"EventSourceArn":             map[string]any{"Fn::GetAtt": []any{s.logicalID(s.stack.Table), "StreamArn"}},
				"StartingPosition":           "TRIM_HORIZON",
				"FunctionResponseTypes":      []any{"ReportBatchItemFailures"},
				"BisectBatchOnFunctionError": true,
				"DestinationConfig": map[string]any{"OnFailure": map[string]any{
					"Destination": map[string]any{"Fn::GetAtt": []any{queue, "Arn"}},
				}},
				"FilterCriteria": map[string]any{"Filters": []any{map[string]any{"Pattern": deployspec.StreamFilter}}},
			})
		})
		scheduler := s.logicalID(s.stack.Workers[deployspec.WorkerScheduler])
		for _, sch := range deployspec.Schedules {
			assert(t, s.region+" schedule "+sch.Name, func() {
				s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
					"ScheduleExpression": sch.Expression,
					"Targets": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
						"Arn":   map[string]any{"Fn::GetAtt": []any{scheduler, "Arn"}},
						"Input": sch.Input(),
					})}),
				})
			})
		}
		for _, w := range deployspec.Workers() {
			if !w.Mailer() {
				continue
			}
			fn := s.doc.Resources[s.logicalID(s.stack.Workers[w.Group])]
			env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			if env["MAIL_FROM"] != testMailFrom || env["SES_CONFIGURATION_SET"] != "codescan-notifications" || env["APP_BASE_URL"] == nil {
				t.Errorf("%s %s environment %v", s.region, w.Group, env)
			}
		}
		// SES permissions name the identity and the configuration set, never "*".
		for id, r := range s.doc.Resources {
			if r.Type != "AWS::IAM::Policy" {
				continue
			}
			doc := r.Properties["PolicyDocument"].(map[string]any)
			for _, st := range doc["Statement"].([]any) {
				stm := st.(map[string]any)
				if stm["Action"] != deployspec.SESAction {
					continue
				}
				res, ok := stm["Resource"].([]any)
				if !ok || len(res) != 2 {
					t.Errorf("%s %s: SES resources %v", s.region, id, stm["Resource"])
				}
			}
		}
		assert(t, s.region+" SES scoped to the identity", func() {
			s.template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Action": deployspec.SESAction,
					"Resource": assertions.Match_ArrayWith(&[]any{map[string]any{"Fn::Join": []any{"", []any{
						"arn:", map[string]any{"Ref": "AWS::Partition"}, ":ses:" + s.region + ":123456789012:identity/" + testSESIdentity,
					}}}}),
				})})},
			})
		})
	}
}

// The ingester reads new scans of uploaded reports, bulk triage operations
// and exports from the table's stream (its own filters, one job per
// invocation, retries, bisection, partial batch failures and its own
// failure queue), within 256 MB and 900 s; it may read reports and source
// files and write and abort exports, nothing else of the bucket, and it
// neither decrypts nor sends email.
func TestIngester(t *testing.T) {
	for _, s := range synth(t, "prod") {
		ingester := s.logicalID(s.stack.Workers[deployspec.WorkerIngester])
		queue := s.logicalID(s.stack.IngestFailureQueue)
		bucket := s.logicalID(s.stack.Reports)
		assert(t, s.region+" ingester event source mapping", func() {
			s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
				"FunctionName":               map[string]any{"Ref": ingester},
				"EventSourceArn":             map[string]any{"Fn::GetAtt": []any{s.logicalID(s.stack.Table), "StreamArn"}},
				"StartingPosition":           "TRIM_HORIZON",
				"BatchSize":                  1,
				"MaximumRetryAttempts":       5,
				"FunctionResponseTypes":      []any{"ReportBatchItemFailures"},
				"BisectBatchOnFunctionError": true,
				"DestinationConfig": map[string]any{"OnFailure": map[string]any{
					"Destination": map[string]any{"Fn::GetAtt": []any{queue, "Arn"}},
				}},
				"FilterCriteria": map[string]any{"Filters": []any{map[string]any{"Pattern": deployspec.IngestFilter}, map[string]any{"Pattern": deployspec.TriageFilter},
					map[string]any{"Pattern": deployspec.ExportFilter}}},
			})
		})
		fn := s.doc.Resources[ingester]
		if mem, timeout := fn.Properties["MemorySize"], fn.Properties["Timeout"]; mem != float64(256) || timeout != float64(900) {
			t.Errorf("%s ingester memory %v, timeout %v", s.region, mem, timeout)
		}
		env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		if env[deployspec.ReportsEnv] == nil || env["MAIL_FROM"] != nil || env[deployspec.KMSKeyEnv] != nil || env[deployspec.GoMemLimitEnv] != "230MiB" {
			t.Errorf("%s ingester environment %v", s.region, env)
		}
		objects := func(prefix string) map[string]any {
			return map[string]any{"Fn::Join": []any{"", []any{map[string]any{"Fn::GetAtt": []any{bucket, "Arn"}}, "/" + prefix + "*"}}}
		}
		assert(t, s.region+" ingester reads reports and source files, writes exports", func() {
			s.template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
				"Roles": assertions.Match_ArrayWith(&[]any{map[string]any{"Ref": assertions.Match_StringLikeRegexp(jsii.String("IngesterFunctionServiceRole"))}}),
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
					assertions.Match_ObjectLike(&map[string]any{
						"Action":   "s3:GetObject",
						"Resource": []any{objects(deployspec.ReportsPrefix), objects(deployspec.SourcesPrefix)},
					}),
					assertions.Match_ObjectLike(&map[string]any{
						"Action":   []any{"s3:AbortMultipartUpload", "s3:PutObject"},
						"Resource": objects(deployspec.ExportsPrefix),
					}),
					assertions.Match_ObjectLike(&map[string]any{
						"Action": "s3:ListBucket", "Resource": map[string]any{"Fn::GetAtt": []any{bucket, "Arn"}},
					}),
				})},
			})
		})
		// Only the mailers may send email or decrypt.
		for id, r := range s.doc.Resources {
			if r.Type != "AWS::IAM::Policy" || !strings.Contains(id, "Ingester") {
				continue
			}
			doc, _ := json.Marshal(r.Properties["PolicyDocument"])
			if strings.Contains(string(doc), "ses:") || strings.Contains(string(doc), "kms:") {
				t.Errorf("%s %s grants %s", s.region, id, doc)
			}
		}
	}
}

// Each region has its report bucket: encrypted, public access blocked, TLS
// enforced, reports and chunks expired; the uploads function may write
// and read both prefixes and list the bucket, nothing else.
func TestReportBucket(t *testing.T) {
	for _, s := range synth(t, "prod") {
		bucket := s.logicalID(s.stack.Reports)
		assert(t, s.region+" bucket", func() {
			s.template.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
				"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{map[string]any{
					"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"},
				}}},
				"PublicAccessBlockConfiguration": map[string]any{
					"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
				},
				"LifecycleConfiguration": map[string]any{"Rules": []any{
					map[string]any{"Id": "expire-reports", "Prefix": deployspec.ReportsPrefix, "ExpirationInDays": deployspec.ReportDays, "Status": "Enabled"},
					map[string]any{"Id": "expire-chunks", "Prefix": deployspec.ChunksPrefix, "ExpirationInDays": deployspec.ChunkDays, "Status": "Enabled"},
					map[string]any{"Id": "expire-sources", "Prefix": deployspec.SourcesPrefix, "ExpirationInDays": deployspec.SourceDays, "Status": "Enabled"},
					map[string]any{"Id": "expire-exports", "Prefix": deployspec.ExportsPrefix, "ExpirationInDays": deployspec.ExportDays, "Status": "Enabled",
						"AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": deployspec.AbortUploadDays}},
				}},
			})
		})
		assert(t, s.region+" bucket enforces TLS", func() {
			s.template.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), map[string]any{
				"Bucket": map[string]any{"Ref": bucket},
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Effect": "Deny", "Action": "s3:*",
					"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
				})})},
			})
		})
		if s.doc.Resources[bucket].DeletionPolicy != "Retain" {
			t.Errorf("%s: production bucket deletion policy %q", s.region, s.doc.Resources[bucket].DeletionPolicy)
		}
		uploads := s.doc.Resources[s.logicalID(s.stack.Functions[routes.GroupUploads])]
		if env := uploads.Properties["Environment"].(map[string]any)["Variables"].(map[string]any); env[deployspec.ReportsEnv] == nil {
			t.Errorf("%s uploads environment %v", s.region, env)
		}
		assert(t, s.region+" uploads lists the bucket", func() {
			s.template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Action": "s3:ListBucket", "Resource": map[string]any{"Fn::GetAtt": []any{bucket, "Arn"}},
				})})},
			})
		})
		// Issues links exports (presigned GETs of exports/ only); no other
		// route function touches the bucket.
		assert(t, s.region+" issues reads exports only", func() {
			s.template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
				"Roles": assertions.Match_ArrayWith(&[]any{map[string]any{"Ref": assertions.Match_StringLikeRegexp(jsii.String("IssuesFunctionServiceRole"))}}),
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Action":   "s3:GetObject",
					"Resource": map[string]any{"Fn::Join": []any{"", []any{map[string]any{"Fn::GetAtt": []any{bucket, "Arn"}}, "/" + deployspec.ExportsPrefix + "*"}}},
				})})},
			})
		})
		for _, f := range deployspec.All() {
			if f.UsesReports() != (f.Group == routes.GroupUploads || f.Group == routes.GroupIssues) {
				t.Errorf("%s: %s uses reports: %v", s.region, f.Group, f.UsesReports())
			}
		}
	}
}

// At most deployspec.MaxStreamReaders event source mappings read the
// table's stream (AWS advises two readers per shard; a third is throttled
// and slows the others): the dispatcher's and the ingester's, each with
// exactly its deployspec filters; nothing else reads it.
func TestAtMostTwoStreamReaders(t *testing.T) {
	for _, s := range synth(t, "prod") {
		want := map[string][]string{}
		for _, f := range deployspec.Workers() {
			if f.ReadsStream() {
				want[s.logicalID(s.stack.Workers[f.Group])] = f.StreamFilters
			}
		}
		got := map[string][]string{}
		for id, r := range s.doc.Resources {
			if r.Type != "AWS::Lambda::EventSourceMapping" {
				continue
			}
			raw, _ := json.Marshal(r.Properties)
			var m struct {
				FunctionName   struct{ Ref string }
				FilterCriteria struct{ Filters []struct{ Pattern string } }
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if src, _ := json.Marshal(r.Properties["EventSourceArn"]); string(src) != `{"Fn::GetAtt":["`+s.logicalID(s.stack.Table)+`","StreamArn"]}` {
				t.Errorf("%s: mapping %s reads %s", s.region, id, src)
			}
			for _, f := range m.FilterCriteria.Filters {
				got[m.FunctionName.Ref] = append(got[m.FunctionName.Ref], f.Pattern)
			}
			if got[m.FunctionName.Ref] == nil {
				t.Errorf("%s: mapping %s is unfiltered", s.region, id)
			}
		}
		if len(got) > deployspec.MaxStreamReaders {
			t.Fatalf("%s: %d functions read the table's stream, at most %d may: %v", s.region, len(got), deployspec.MaxStreamReaders, got)
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: stream readers %v, want %v", s.region, got, want)
		}
	}
}
