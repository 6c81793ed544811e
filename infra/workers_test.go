package main

import (
	"encoding/json"
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

// The ingester reads new scans of uploaded reports from the table's stream
// (its own filter, one scan per invocation, retries, bisection, partial
// batch failures and its own failure queue), within 256 MB; it may read
// reports only, and it neither decrypts nor sends email.
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
				"FilterCriteria": map[string]any{"Filters": []any{map[string]any{"Pattern": deployspec.IngestFilter}, map[string]any{"Pattern": deployspec.TriageFilter}}},
			})
		})
		fn := s.doc.Resources[ingester]
		if mem := fn.Properties["MemorySize"]; mem != float64(256) {
			t.Errorf("%s ingester memory %v", s.region, mem)
		}
		env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		if env[deployspec.ReportsEnv] == nil || env["MAIL_FROM"] != nil || env[deployspec.KMSKeyEnv] != nil || env[deployspec.GoMemLimitEnv] != "230MiB" {
			t.Errorf("%s ingester environment %v", s.region, env)
		}
		objects := func(prefix string) map[string]any {
			return map[string]any{"Fn::Join": []any{"", []any{map[string]any{"Fn::GetAtt": []any{bucket, "Arn"}}, "/" + prefix + "*"}}}
		}
		assert(t, s.region+" ingester reads reports and source files only", func() {
			s.template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
				"Roles": assertions.Match_ArrayWith(&[]any{map[string]any{"Ref": assertions.Match_StringLikeRegexp(jsii.String("IngesterFunctionServiceRole"))}}),
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
					assertions.Match_ObjectLike(&map[string]any{
						"Action":   "s3:GetObject",
						"Resource": []any{objects(deployspec.ReportsPrefix), objects(deployspec.SourcesPrefix)},
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

// The exporter reads new export items from the table's stream (its own
// filter, one export per invocation, retries, partial batch failures, its
// own failure queue); it may write and abort objects under exports/ only,
// and it neither decrypts nor sends email.
func TestExporter(t *testing.T) {
	for _, s := range synth(t, "prod") {
		exporter := s.logicalID(s.stack.Workers[deployspec.WorkerExporter])
		queue := s.logicalID(s.stack.ExportFailureQueue)
		bucket := s.logicalID(s.stack.Reports)
		assert(t, s.region+" exporter event source mapping", func() {
			s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
				"FunctionName":          map[string]any{"Ref": exporter},
				"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{s.logicalID(s.stack.Table), "StreamArn"}},
				"BatchSize":             1,
				"MaximumRetryAttempts":  5,
				"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
				"DestinationConfig": map[string]any{"OnFailure": map[string]any{
					"Destination": map[string]any{"Fn::GetAtt": []any{queue, "Arn"}},
				}},
				"FilterCriteria": map[string]any{"Filters": []any{map[string]any{"Pattern": deployspec.ExportFilter}}},
			})
		})
		assert(t, s.region+" exporter writes exports only", func() {
			s.template.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
				"Roles": assertions.Match_ArrayWith(&[]any{map[string]any{"Ref": assertions.Match_StringLikeRegexp(jsii.String("ExporterFunctionServiceRole"))}}),
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Action":   []any{"s3:AbortMultipartUpload", "s3:PutObject"},
					"Resource": map[string]any{"Fn::Join": []any{"", []any{map[string]any{"Fn::GetAtt": []any{bucket, "Arn"}}, "/" + deployspec.ExportsPrefix + "*"}}},
				})})},
			})
		})
		env := s.doc.Resources[exporter].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		if env[deployspec.ReportsEnv] == nil || env["MAIL_FROM"] != nil || env[deployspec.KMSKeyEnv] != nil {
			t.Errorf("%s exporter environment %v", s.region, env)
		}
	}
}
