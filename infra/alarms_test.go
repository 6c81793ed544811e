package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/routes"
)

// flat is a template value as a string: a Ref is the logical id, a GetAtt
// "id.Attribute", a Fn::Join its parts joined (so a dashboard body reads as
// JSON with ids in place of references).
func flat(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if ref, ok := v["Ref"].(string); ok {
			return ref
		}
		if att, ok := v["Fn::GetAtt"].([]any); ok {
			return fmt.Sprint(att[0]) + "." + fmt.Sprint(att[1])
		}
		if join, ok := v["Fn::Join"].([]any); ok {
			var parts []string
			for _, p := range join[1].([]any) {
				parts = append(parts, flat(p))
			}
			return strings.Join(parts, join[0].(string))
		}
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// metricKey names one metric: "namespace name dim=value ...", dimensions
// sorted, values flattened.
func metricKey(namespace, name string, dims map[string]string) string {
	var kv []string
	for k, v := range dims {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(append([]string{namespace, name}, kv...), " ")
}

// alarmMetrics are the metrics an alarm reads, in either of the forms
// CloudFormation takes (one metric, or metric math over MetricStats).
func alarmMetrics(props map[string]any) []string {
	dims := func(list any) map[string]string {
		out := map[string]string{}
		l, _ := list.([]any)
		for _, d := range l {
			d := d.(map[string]any)
			out[d["Name"].(string)] = flat(d["Value"])
		}
		return out
	}
	if name, ok := props["MetricName"].(string); ok {
		return []string{metricKey(props["Namespace"].(string), name, dims(props["Dimensions"]))}
	}
	var out []string
	metrics, _ := props["Metrics"].([]any)
	for _, m := range metrics {
		stat, ok := m.(map[string]any)["MetricStat"].(map[string]any)
		if !ok {
			continue
		}
		metric := stat["Metric"].(map[string]any)
		out = append(out, metricKey(metric["Namespace"].(string), metric["MetricName"].(string), dims(metric["Dimensions"])))
	}
	return out
}

// wantedAlarms is, per metric that must be watched, the alarm name suffix
// expected for it.
func wantedAlarms(s synthesized) map[string]string {
	stage := map[string]string{"ApiName": "codescan-api-prod", "Stage": s.logicalID(s.stack.API.DeploymentStage())}
	want := map[string]string{
		metricKey("AWS/ApiGateway", "5XXError", stage): "Api5xxRate",
		metricKey("AWS/ApiGateway", "Latency", stage):  "ApiLatencyP99",
	}
	for _, n := range s.stack.namedFunctions() {
		fn := map[string]string{"FunctionName": s.logicalID(n.fn)}
		want[metricKey("AWS/Lambda", "Errors", fn)] = n.name + "Errors"
		want[metricKey("AWS/Lambda", "Throttles", fn)] = n.name + "Throttles"
	}
	for _, op := range deployspec.TableOperations {
		table := map[string]string{"TableName": s.logicalID(s.stack.Table), "Operation": op}
		want[metricKey("AWS/DynamoDB", "ThrottledRequests", table)] = "TableThrottles"
		want[metricKey("AWS/DynamoDB", "SystemErrors", table)] = "TableSystemErrors"
	}
	for name, q := range map[string]string{"DispatcherFailureQueue": s.logicalID(s.stack.FailureQueue), "IngesterFailureQueue": s.logicalID(s.stack.IngestFailureQueue)} {
		want[metricKey("AWS/SQS", "ApproximateNumberOfMessagesVisible", map[string]string{"QueueName": q + ".QueueName"})] = name + "Messages"
	}
	for _, j := range deployspec.JobAlarms {
		want[metricKey(metrics.Namespace, metrics.JobFailures, map[string]string{"Service": "scheduler", "Job": j.Job})] = j.ID
	}
	want[metricKey("AWS/SES", "Reputation.BounceRate", nil)] = "MailBounceRate"
	want[metricKey("AWS/SES", "Reputation.ComplaintRate", nil)] = "MailComplaintRate"
	for _, f := range deployspec.Workers() {
		if f.ReadsStream() {
			want[metricKey("AWS/Lambda", "IteratorAge", map[string]string{"FunctionName": s.logicalID(s.stack.Workers[f.Group])})] = f.Name() + "IteratorAge"
		}
	}
	return want
}

// Every function of the stack (route groups and workers) has an errors
// and a throttles alarm, the API stage a 5xx rate and a p99 latency alarm,
// the table a throttled requests and a system errors alarm over every
// operation the store performs, each failure queue and stream consumer
// its alarm, each job alarm of deployspec its failures; nothing else alarms.
func TestAlarmsCoverFunctionsAPIAndTable(t *testing.T) {
	for _, s := range synth(t, "prod") {
		prefix := *s.stack.StackName() + "-"
		want := wantedAlarms(s)
		found := map[string]bool{}
		alarms := 0
		for id, r := range s.doc.Resources {
			if r.Type != "AWS::CloudWatch::Alarm" {
				continue
			}
			alarms++
			name, _ := r.Properties["AlarmName"].(string)
			for _, m := range alarmMetrics(r.Properties) {
				if prefix+want[m] != name {
					t.Errorf("%s: alarm %s (%s) reads %s", s.region, id, name, m)
				}
				found[m] = true
			}
		}
		for m, name := range want {
			if !found[m] {
				t.Errorf("%s: no alarm %s on %s", s.region, name, m)
			}
		}
		// Two per stream reader: its failure queue and its iterator age.
		if want := 2 + 2*len(s.stack.namedFunctions()) + 2 + 2 + 2*2 + len(deployspec.JobAlarms); alarms != want {
			t.Errorf("%s: %d alarms, want %d", s.region, alarms, want)
		}
	}
}

// The thresholds README "Alarms" promises.
func TestAlarmThresholds(t *testing.T) {
	for _, s := range synth(t, "prod") {
		name := func(id string) string { return *s.stack.StackName() + "-" + id }
		for what, props := range map[string]map[string]any{
			"5xx rate":  {"AlarmName": name("Api5xxRate"), "Statistic": "Average", "Period": 60, "Threshold": 0.01, "DatapointsToAlarm": 3, "EvaluationPeriods": 5},
			"latency":   {"AlarmName": name("ApiLatencyP99"), "ExtendedStatistic": "p99", "Period": 300, "Threshold": 2000, "DatapointsToAlarm": 2, "EvaluationPeriods": 3},
			"errors":    {"AlarmName": name("UploadsErrors"), "Statistic": "Sum", "Period": 300, "Threshold": 1, "EvaluationPeriods": 1},
			"throttles": {"AlarmName": name("IngesterThrottles"), "Statistic": "Sum", "Period": 300, "Threshold": 1, "EvaluationPeriods": 1},
			"table throttles": {"AlarmName": name("TableThrottles"), "Threshold": 1, "DatapointsToAlarm": 3, "EvaluationPeriods": 5,
				"Metrics": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{"Expression": assertions.Match_StringLikeRegexp(jsii.String(`^SUM\(\[`))})})},
			"failure queue": {"AlarmName": name("IngesterFailureQueueMessages"), "Threshold": 1, "EvaluationPeriods": 1},
			"iterator age":  {"AlarmName": name("IngesterIteratorAge"), "Threshold": 15 * 60 * 1000, "EvaluationPeriods": 1},
			"bounce rate":   {"AlarmName": name("MailBounceRate"), "Namespace": "AWS/SES", "Statistic": "Maximum", "Threshold": 0.05, "EvaluationPeriods": 1},
			"complaints":    {"AlarmName": name("MailComplaintRate"), "Namespace": "AWS/SES", "Statistic": "Maximum", "Threshold": 0.001, "EvaluationPeriods": 1},
		} {
			props["ComparisonOperator"] = "GreaterThanOrEqualToThreshold"
			assert(t, s.region+" "+what, func() { s.template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), props) })
		}
	}
}

// Every alarm notifies the stack's topic when it fires and when it clears,
// and takes missing data (no traffic) as fine.
func TestEveryAlarmNotifiesTheTopic(t *testing.T) {
	for _, s := range synth(t, "prod") {
		topic := []any{map[string]any{"Ref": s.logicalID(s.stack.AlarmTopic)}}
		for id, r := range s.doc.Resources {
			if r.Type != "AWS::CloudWatch::Alarm" {
				continue
			}
			for _, actions := range []string{"AlarmActions", "OKActions"} {
				raw, _ := json.Marshal(r.Properties[actions])
				if want, _ := json.Marshal(topic); string(raw) != string(want) {
					t.Errorf("%s: alarm %s %s = %s, want the topic only", s.region, id, actions, raw)
				}
			}
			if r.Properties["TreatMissingData"] != "notBreaching" {
				t.Errorf("%s: alarm %s treats missing data as %v", s.region, id, r.Properties["TreatMissingData"])
			}
		}
	}
}

// The topic is encrypted with a key CloudWatch may use for this stack's
// alarms only, takes TLS only, lets those alarms publish, and has an email
// subscriber exactly when the AlarmEmail parameter is not empty.
func TestAlarmTopicAndEmailParameter(t *testing.T) {
	for _, s := range synth(t, "prod") {
		topic := s.logicalID(s.stack.AlarmTopic)
		props := s.doc.Resources[topic].Properties
		key, _ := props["KmsMasterKeyId"].(map[string]any)["Fn::GetAtt"].([]any)
		if len(key) != 2 || key[0] == s.logicalID(s.stack.Key) || s.doc.Resources[key[0].(string)].Type != "AWS::KMS::Key" {
			t.Fatalf("%s: topic key %v, want a key of its own", s.region, props["KmsMasterKeyId"])
		}
		ourAlarms := map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": "123456789012"},
			"ArnLike": map[string]any{"aws:SourceArn": map[string]any{"Fn::Join": []any{"", []any{
				"arn:", map[string]any{"Ref": "AWS::Partition"}, ":cloudwatch:" + s.region + ":123456789012:alarm:" + *s.stack.StackName() + "-*",
			}}}},
		}
		cloudwatch := map[string]any{"Service": "cloudwatch.amazonaws.com"}
		assert(t, s.region+" key lets CloudWatch encrypt", func() {
			s.template.HasResourceProperties(jsii.String("AWS::KMS::Key"), map[string]any{
				"EnableKeyRotation": true,
				"KeyPolicy": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{map[string]any{
					"Effect": "Allow", "Principal": cloudwatch, "Action": []any{"kms:Decrypt", "kms:GenerateDataKey*"}, "Resource": "*", "Condition": ourAlarms,
				}})},
			})
		})
		assert(t, s.region+" topic policy", func() {
			s.template.HasResourceProperties(jsii.String("AWS::SNS::TopicPolicy"), map[string]any{
				"Topics": []any{map[string]any{"Ref": topic}},
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
					assertions.Match_ObjectLike(&map[string]any{"Effect": "Deny", "Action": "sns:Publish", "Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}}),
					assertions.Match_ObjectLike(&map[string]any{"Effect": "Allow", "Principal": cloudwatch, "Action": "sns:Publish", "Condition": ourAlarms}),
				})},
			})
		})
		assert(t, s.region+" parameter", func() {
			s.template.HasParameter(jsii.String("AlarmEmail"), map[string]any{"Type": "String", "Default": ""})
		})
		assert(t, s.region+" condition", func() {
			s.template.HasCondition(jsii.String("HasAlarmEmail"), map[string]any{
				"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "AlarmEmail"}, ""}}},
			})
		})
		assert(t, s.region+" subscription", func() {
			s.template.ResourceCountIs(jsii.String("AWS::SNS::Subscription"), jsii.Number(1))
			s.template.HasResource(jsii.String("AWS::SNS::Subscription"), map[string]any{
				"Condition": "HasAlarmEmail",
				"Properties": map[string]any{
					"TopicArn": map[string]any{"Ref": topic}, "Protocol": "email", "Endpoint": map[string]any{"Ref": "AlarmEmail"},
				},
			})
		})
	}
}

// dashboard is a dashboard body with ids in place of references.
type dashboard struct {
	Widgets []struct {
		Type       string
		Properties struct {
			Title   string
			Metrics [][]any
			Alarms  []string
		}
	}
}

// One dashboard per stack, named after it: the API's requests, errors and
// latency, every function's errors, throttles and duration, the table's
// throttled requests and system errors, the failure queues, the stream
// consumers' iterator age and every alarm's state.
func TestDashboard(t *testing.T) {
	for _, s := range synth(t, "prod") {
		var body dashboard
		for _, r := range s.doc.Resources {
			if r.Type != "AWS::CloudWatch::Dashboard" {
				continue
			}
			if r.Properties["DashboardName"] != *s.stack.StackName() {
				t.Errorf("%s: dashboard name %v", s.region, r.Properties["DashboardName"])
			}
			if err := json.Unmarshal([]byte(flat(r.Properties["DashboardBody"])), &body); err != nil {
				t.Fatalf("%s: dashboard body: %v", s.region, err)
			}
		}
		shows := map[string][]string{} // widget title -> metric keys
		var alarms []string
		for _, w := range body.Widgets {
			alarms = append(alarms, w.Properties.Alarms...)
			for _, row := range w.Properties.Metrics {
				if len(row) < 2 {
					continue // an expression
				}
				dims := map[string]string{}
				for i := 2; i+1 < len(row); i += 2 {
					if k, ok := row[i].(string); ok {
						dims[k] = fmt.Sprint(row[i+1])
					}
				}
				shows[w.Properties.Title] = append(shows[w.Properties.Title], metricKey(row[0].(string), row[1].(string), dims))
			}
		}
		stage := map[string]string{"ApiName": "codescan-api-prod", "Stage": s.logicalID(s.stack.API.DeploymentStage())}
		want := map[string][]string{
			"API requests and errors a minute": {metricKey("AWS/ApiGateway", "Count", stage), metricKey("AWS/ApiGateway", "5XXError", stage)},
			"API latency (ms)":                 {metricKey("AWS/ApiGateway", "Latency", stage)},
			"Table throttled requests and system errors a minute": {
				metricKey("AWS/DynamoDB", "ThrottledRequests", map[string]string{"TableName": s.logicalID(s.stack.Table), "Operation": "TransactWriteItems"}),
				metricKey("AWS/DynamoDB", "SystemErrors", map[string]string{"TableName": s.logicalID(s.stack.Table), "Operation": "Query"}),
			},
			"Failure queue messages": {
				metricKey("AWS/SQS", "ApproximateNumberOfMessagesVisible", map[string]string{"QueueName": s.logicalID(s.stack.FailureQueue) + ".QueueName"}),
				metricKey("AWS/SQS", "ApproximateNumberOfMessagesVisible", map[string]string{"QueueName": s.logicalID(s.stack.IngestFailureQueue) + ".QueueName"}),
			},
			"Stream iterator age (ms)":      {metricKey("AWS/Lambda", "IteratorAge", map[string]string{"FunctionName": s.logicalID(s.stack.Workers[deployspec.WorkerIngester])})},
			"SES bounce and complaint rate": {metricKey("AWS/SES", "Reputation.BounceRate", nil), metricKey("AWS/SES", "Reputation.ComplaintRate", nil)},
		}
		for _, g := range routes.Groups() {
			dims := map[string]string{"Service": "api", "Group": g}
			want["Rate-limited answers (429) a minute by group"] = append(want["Rate-limited answers (429) a minute by group"], metricKey(metrics.Namespace, metrics.RateLimited, dims))
			want["Unavailable answers (503) a minute by group"] = append(want["Unavailable answers (503) a minute by group"], metricKey(metrics.Namespace, metrics.Unavailable, dims))
		}
		for _, ch := range []string{metrics.ChannelEmail, metrics.ChannelWebhook} {
			for _, o := range metrics.DeliveryOutcomes {
				dims := map[string]string{"Service": "delivery", "Channel": ch, "Outcome": o}
				want["Delivery attempts by outcome (5 min)"] = append(want["Delivery attempts by outcome (5 min)"], metricKey(metrics.Namespace, metrics.DeliveryAttempts, dims))
			}
			want["Delivery latency p99 (ms)"] = append(want["Delivery latency p99 (ms)"],
				metricKey(metrics.Namespace, metrics.DeliveryLatency, map[string]string{"Service": "delivery", "Channel": ch, "Outcome": metrics.OutcomeDelivered}))
		}
		for _, j := range deployspec.Schedules {
			dims := map[string]string{"Service": "scheduler", "Job": j.Name}
			want["Scheduled job duration, max an hour (ms)"] = append(want["Scheduled job duration, max an hour (ms)"], metricKey(metrics.Namespace, metrics.JobDuration, dims))
			want["Scheduled job items and failures an hour"] = append(want["Scheduled job items and failures an hour"],
				metricKey(metrics.Namespace, metrics.JobItems, dims), metricKey(metrics.Namespace, metrics.JobFailures, dims))
		}
		for _, n := range s.stack.namedFunctions() {
			fn := map[string]string{"FunctionName": s.logicalID(n.fn)}
			want["Function errors"] = append(want["Function errors"], metricKey("AWS/Lambda", "Errors", fn))
			want["Function throttles"] = append(want["Function throttles"], metricKey("AWS/Lambda", "Throttles", fn))
			want["Function duration p99 (ms)"] = append(want["Function duration p99 (ms)"], metricKey("AWS/Lambda", "Duration", fn))
		}
		for title, metrics := range want {
			for _, m := range metrics {
				if !slices.Contains(shows[title], m) {
					t.Errorf("%s: dashboard widget %q does not show %s (shows %v)", s.region, title, m, shows[title])
				}
			}
		}
		var wantAlarms []string
		for id, r := range s.doc.Resources {
			if r.Type == "AWS::CloudWatch::Alarm" {
				wantAlarms = append(wantAlarms, id+".Arn")
			}
		}
		slices.Sort(alarms)
		slices.Sort(wantAlarms)
		if !slices.Equal(alarms, wantAlarms) {
			t.Errorf("%s: the alarm widget lists %v, want every alarm %v", s.region, alarms, wantAlarms)
		}
	}
}

// The table alarms sum every operation the store may perform: each
// DynamoDB action a function is granted (ConditionCheckItem only inside a
// transaction), and TransactWriteItems, which IAM authorizes as its items.
func TestTableAlarmsCoverTheStoreOperations(t *testing.T) {
	for _, f := range slices.Concat(deployspec.All(), deployspec.Workers()) {
		for _, action := range f.TableActions {
			op := strings.TrimPrefix(action, "dynamodb:")
			if op != "ConditionCheckItem" && !slices.Contains(deployspec.TableOperations, op) {
				t.Errorf("%s performs %s, which the table alarms do not watch", f.Group, op)
			}
		}
	}
	if !slices.Contains(deployspec.TableOperations, "TransactWriteItems") {
		t.Error("the table alarms do not watch TransactWriteItems")
	}
	if len(deployspec.TableOperations) > 10 {
		t.Errorf("%d operations: an alarm's math expression may use 10 metrics", len(deployspec.TableOperations))
	}
}
