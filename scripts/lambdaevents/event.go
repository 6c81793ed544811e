package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/routes"
)

// Where the sample events were "received": a regional REST API's stage.
const (
	apiID     = "k3x9q2m7vd"
	accountID = "123456789012"
	region    = "us-east-1"
	stage     = "prod"
	userAgent = "codescan-cli/2.14.0 (linux; amd64) go1.26"
	sourceIP  = "203.0.113.24"
)

// sampleKey is a well-formed API key that no store holds. Replays put a
// seeded user's key in its place; with sam local invoke, put one from
// .local/demo.json there.
var sampleKey = func() string {
	sum := sha256.Sum256([]byte("codescan-api sample event"))
	return auth.APIKeyPrefix + base64.RawURLEncoding.EncodeToString(sum[:])
}()

// epoch is when the first sample was received; each next one a second later.
var epoch = time.Date(2025, 11, 21, 9, 30, 0, 0, time.UTC)

// proxyEvent is an API Gateway REST API proxy event (payload 1.0) with the
// members in the order, and the nulls, API Gateway sends.
type proxyEvent struct {
	Resource                        string              `json:"resource"`
	Path                            string              `json:"path"`
	HTTPMethod                      string              `json:"httpMethod"`
	Headers                         map[string]string   `json:"headers"`
	MultiValueHeaders               map[string][]string `json:"multiValueHeaders"`
	QueryStringParameters           map[string]string   `json:"queryStringParameters"`
	MultiValueQueryStringParameters map[string][]string `json:"multiValueQueryStringParameters"`
	PathParameters                  map[string]string   `json:"pathParameters"`
	StageVariables                  map[string]string   `json:"stageVariables"`
	RequestContext                  requestContext      `json:"requestContext"`
	Body                            *string             `json:"body"`
	IsBase64Encoded                 bool                `json:"isBase64Encoded"`
}

type requestContext struct {
	ResourceID        string   `json:"resourceId"`
	ResourcePath      string   `json:"resourcePath"`
	HTTPMethod        string   `json:"httpMethod"`
	ExtendedRequestID string   `json:"extendedRequestId"`
	RequestTime       string   `json:"requestTime"`
	Path              string   `json:"path"`
	AccountID         string   `json:"accountId"`
	Protocol          string   `json:"protocol"`
	Stage             string   `json:"stage"`
	DomainPrefix      string   `json:"domainPrefix"`
	RequestTimeEpoch  int64    `json:"requestTimeEpoch"`
	RequestID         string   `json:"requestId"`
	Identity          identity `json:"identity"`
	DomainName        string   `json:"domainName"`
	DeploymentID      string   `json:"deploymentId"`
	APIID             string   `json:"apiId"`
}

type identity struct {
	CognitoIdentityPoolID         *string `json:"cognitoIdentityPoolId"`
	AccountID                     *string `json:"accountId"`
	CognitoIdentityID             *string `json:"cognitoIdentityId"`
	Caller                        *string `json:"caller"`
	SourceIP                      string  `json:"sourceIp"`
	PrincipalOrgID                *string `json:"principalOrgId"`
	AccessKey                     *string `json:"accessKey"`
	CognitoAuthenticationType     *string `json:"cognitoAuthenticationType"`
	CognitoAuthenticationProvider *string `json:"cognitoAuthenticationProvider"`
	UserArn                       *string `json:"userArn"`
	UserAgent                     string  `json:"userAgent"`
	User                          *string `json:"user"`
}

// newEvent builds the event API Gateway sends for sample s of route r,
// received at `at`.
func newEvent(r routes.Route, s sample, at time.Time) (proxyEvent, error) {
	path := r.FullPath()
	for _, p := range r.PathParams() {
		v, ok := s.Path[p]
		if !ok {
			return proxyEvent{}, fmt.Errorf("%s: no value for path parameter %s", r.Pattern(), p)
		}
		path = strings.Replace(path, "{"+p+"}", url.PathEscape(v), 1)
	}
	if len(s.Path) != len(r.PathParams()) {
		return proxyEvent{}, fmt.Errorf("%s: sample has path values the route does not have", r.Pattern())
	}
	sum := sha256.Sum256([]byte(r.Pattern()))
	id := hex.EncodeToString(sum[:])
	domain := apiID + ".execute-api." + region + ".amazonaws.com"
	headers := map[string]string{
		"Accept":            "application/json",
		"Accept-Encoding":   "gzip",
		"Host":              domain,
		"User-Agent":        userAgent,
		"X-Amzn-Trace-Id":   fmt.Sprintf("Root=1-%08x-%s", at.Unix(), id[:24]),
		"X-Forwarded-For":   sourceIP,
		"X-Forwarded-Port":  "443",
		"X-Forwarded-Proto": "https",
	}
	if r.Access != routes.Public && r.Access != routes.PathToken {
		headers[auth.APIKeyHeader] = sampleKey
	}
	if s.Body != "" {
		headers["Content-Type"] = s.ContentType
		headers["Content-Length"] = fmt.Sprint(len(s.Body))
	}
	e := proxyEvent{
		Resource:          r.FullPath(),
		Path:              path,
		HTTPMethod:        r.Method,
		Headers:           headers,
		MultiValueHeaders: multi(headers),
		RequestContext: requestContext{
			ResourceID:        id[:6],
			ResourcePath:      r.FullPath(),
			HTTPMethod:        r.Method,
			ExtendedRequestID: strings.ToUpper(id[6:10]) + "EHv" + id[10:16] + "=",
			RequestTime:       at.Format("02/Jan/2006:15:04:05 -0700"),
			Path:              "/" + stage + path,
			AccountID:         accountID,
			Protocol:          "HTTP/1.1",
			Stage:             stage,
			DomainPrefix:      apiID,
			RequestTimeEpoch:  at.UnixMilli(),
			RequestID:         id[:8] + "-" + id[8:12] + "-4" + id[13:16] + "-a" + id[17:20] + "-" + id[20:32],
			Identity:          identity{SourceIP: sourceIP, UserAgent: userAgent},
			DomainName:        domain,
			DeploymentID:      "w7t1b5",
			APIID:             apiID,
		},
	}
	if len(s.Query) > 0 {
		e.QueryStringParameters = s.Query
		e.MultiValueQueryStringParameters = multi(s.Query)
	}
	if len(s.Path) > 0 {
		e.PathParameters = s.Path
	}
	if s.Body != "" {
		e.Body = &s.Body
	}
	return e, nil
}

func multi(m map[string]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = []string{v}
	}
	return out
}

// routeOf returns the route of the table an event was sent to.
func routeOf(resource, method string) (routes.Route, bool) {
	for _, r := range routes.Table {
		if r.FullPath() == resource && r.Method == method {
			return r, true
		}
	}
	return routes.Route{}, false
}
