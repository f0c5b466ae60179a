package iamcheck

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Place is where the requests go: the local stack's Region and AccountID,
// which every ARN is built with, and the tables' partition keys.
type Place struct {
	Region, AccountID string
	// PartitionKey returns the partition key attribute of table, or of its
	// index when index is not empty; "" when unknown.
	PartitionKey func(table, index string) string
}

// errUnsigned is returned by Credential for a request with no SigV4
// credential.
var errUnsigned = errors.New("request carries no SigV4 credential")

var credentialField = regexp.MustCompile(`Credential=([^/,\s]+)/[^/]+/([^/]+)/([^/]+)/aws4_request`)

// Credential returns the access key ID and the signing service of a
// SigV4-signed request (header or presigned query).
func Credential(r *http.Request) (accessKeyID, service string, err error) {
	if m := credentialField.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		return m[1], m[3], nil
	}
	if c := r.URL.Query().Get("X-Amz-Credential"); c != "" {
		if parts := strings.Split(c, "/"); len(parts) == 5 {
			return parts[0], parts[3], nil
		}
	}
	return "", "", errUnsigned
}

// Request returns the permissions r, whose body is body, needs: the IAM
// action of its operation (DynamoDB's and SQS's X-Amz-Target, the query
// protocol's Action, the REST routes of SES v2 and S3, CloudWatch's
// operation) and the ARNs of the resources it names in p.
func (p Place) Request(r *http.Request, body []byte) ([]Access, error) {
	_, service, err := Credential(r)
	if err != nil {
		return nil, err
	}
	op, params, err := operation(r, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", service, r.URL.Path, err)
	}
	var out []Access
	switch service {
	case "dynamodb":
		out, err = p.dynamoDB(op, params)
	case "sqs":
		out, err = p.sqs(op, params, r.URL.Path)
	case "secretsmanager":
		out, err = p.secret(op, params)
	case "events":
		out, err = p.events(op, params)
	case "monitoring":
		out = []Access{{Action: "cloudwatch:" + op, Resources: []string{"*"}}}
	case "ses":
		if op == "" && len(body) > 0 { // SES v2 is REST with a JSON body
			if err := json.Unmarshal(body, &params); err != nil {
				return nil, fmt.Errorf("ses %s body: %w", r.URL.Path, err)
			}
		}
		out, err = p.ses(r, op, params)
	case "s3":
		out, err = p.s3(r, body)
	default:
		err = fmt.Errorf("service %s is not mapped to IAM actions", service)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", service, op, err)
	}
	return out, nil
}

// operation returns the operation of an RPC-style request and its
// parameters: the JSON protocol (X-Amz-Target, JSON body), the query
// protocol (Action=, form body) or the RPC v2 path
// (/service/<name>/operation/<op>). REST requests (SES v2, S3) give "".
func operation(r *http.Request, body []byte) (string, map[string]any, error) {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		_, op, _ := strings.Cut(t, ".")
		var params map[string]any
		if len(body) > 0 {
			if err := json.Unmarshal(body, &params); err != nil {
				return "", nil, fmt.Errorf("%s body: %w", t, err)
			}
		}
		return op, params, nil
	}
	if _, op, ok := strings.Cut(r.URL.Path, "/operation/"); ok && strings.HasPrefix(r.URL.Path, "/service/") {
		return op, nil, nil
	}
	form := r.URL.Query()
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		f, err := url.ParseQuery(string(body))
		if err != nil {
			return "", nil, fmt.Errorf("form body: %w", err)
		}
		for k, v := range f {
			form[k] = v
		}
	}
	if a := form.Get("Action"); a != "" {
		params := map[string]any{}
		for k, v := range form {
			params[k] = v[0]
		}
		return a, params, nil
	}
	return "", nil, nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func (p Place) arn(service, resource string) string {
	return "arn:aws:" + service + ":" + p.Region + ":" + p.AccountID + ":" + resource
}

func (p Place) table(name string) string {
	if strings.HasPrefix(name, "arn:") {
		return name
	}
	return p.arn("dynamodb", "table/"+name)
}

func (p Place) dynamoDB(op string, params map[string]any) ([]Access, error) {
	if op == "" {
		return nil, errors.New("no X-Amz-Target")
	}
	action := "dynamodb:" + op
	switch op {
	case "BatchGetItem", "BatchWriteItem":
		items, _ := params["RequestItems"].(map[string]any)
		names := make([]string, 0, len(items))
		for name := range items {
			names = append(names, name)
		}
		sort.Strings(names)
		out := make([]Access, 0, len(names))
		for _, name := range names {
			out = append(out, Access{Action: action, Resources: []string{p.table(name)}, LeadingKeys: p.batchKeys(name, items[name])})
		}
		return out, nil
	case "TransactWriteItems", "TransactGetItems":
		items, _ := params["TransactItems"].([]any)
		var out []Access
		for _, it := range items {
			for kind, v := range it.(map[string]any) {
				sub, _ := v.(map[string]any)
				a := map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}[kind]
				if a == "" {
					return nil, fmt.Errorf("transact item %s is not mapped", kind)
				}
				name := str(sub, "TableName")
				out = append(out, Access{Action: "dynamodb:" + a, Resources: []string{p.table(name)}, LeadingKeys: p.leadingKeys(name, sub)})
			}
		}
		return out, nil
	case "ListTables", "DescribeLimits", "DescribeEndpoints":
		return []Access{{Action: action, Resources: []string{"*"}}}, nil
	}
	name := str(params, "TableName")
	if name == "" {
		name = str(params, "ResourceArn")
	}
	if name == "" {
		return nil, errors.New("no TableName")
	}
	res := p.table(name)
	if idx := str(params, "IndexName"); idx != "" {
		res += "/index/" + idx
	}
	return []Access{{Action: action, Resources: []string{res}, LeadingKeys: p.leadingKeys(name, params)}}, nil
}

// leadingKeys returns the partition key values of an item request (Key or
// Item) or a Query (the equality on the partition key in
// KeyConditionExpression).
func (p Place) leadingKeys(table string, params map[string]any) []string {
	if p.PartitionKey == nil {
		return nil
	}
	index := str(params, "IndexName")
	pk := p.PartitionKey(table, index)
	if pk == "" {
		return nil
	}
	for _, k := range []string{"Key", "Item"} {
		if item, ok := params[k].(map[string]any); ok {
			if v, ok := attributeString(item[pk]); ok {
				return []string{v}
			}
		}
	}
	expr := str(params, "KeyConditionExpression")
	if expr == "" {
		return nil
	}
	names, _ := params["ExpressionAttributeNames"].(map[string]any)
	values, _ := params["ExpressionAttributeValues"].(map[string]any)
	for _, clause := range regexp.MustCompile(`(?i)\s+and\s+`).Split(expr, -1) {
		left, right, ok := strings.Cut(clause, "=")
		if !ok {
			continue
		}
		left, right = strings.Trim(strings.TrimSpace(left), "()"), strings.Trim(strings.TrimSpace(right), "()")
		if n, ok := names[left].(string); ok {
			left = n
		}
		if left != pk {
			continue
		}
		if v, ok := attributeString(values[right]); ok {
			return []string{v}
		}
	}
	return nil
}

func (p Place) batchKeys(table string, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any: // BatchGetItem: {Keys: [...]}
		keys, _ := v["Keys"].([]any)
		for _, k := range keys {
			km, _ := k.(map[string]any)
			out = append(out, p.leadingKeys(table, map[string]any{"Key": km})...)
		}
	case []any: // BatchWriteItem: [{PutRequest: {Item}}, {DeleteRequest: {Key}}]
		for _, w := range v {
			for _, req := range w.(map[string]any) {
				rm, _ := req.(map[string]any)
				out = append(out, p.leadingKeys(table, rm)...)
			}
		}
	}
	return out
}

// attributeString returns a DynamoDB attribute value of type S, N or B as
// IAM compares it.
func attributeString(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	for _, t := range []string{"S", "N", "B"} {
		if s, ok := m[t].(string); ok {
			return s, true
		}
	}
	return "", false
}

// sqsBatch are the SQS batch operations, authorized as their single form.
var sqsBatch = map[string]string{
	"SendMessageBatch":             "SendMessage",
	"DeleteMessageBatch":           "DeleteMessage",
	"ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}

func (p Place) sqs(op string, params map[string]any, urlPath string) ([]Access, error) {
	if op == "" {
		return nil, errors.New("no X-Amz-Target or Action")
	}
	action := op
	if single, ok := sqsBatch[op]; ok {
		action = single
	}
	var name string
	switch {
	case str(params, "QueueUrl") != "":
		u, err := url.Parse(str(params, "QueueUrl"))
		if err != nil {
			return nil, fmt.Errorf("QueueUrl: %w", err)
		}
		name = u.Path[strings.LastIndex(u.Path, "/")+1:]
	case str(params, "QueueName") != "":
		name = str(params, "QueueName")
	case str(params, "SourceArn") != "":
		return []Access{{Action: "sqs:" + action, Resources: []string{str(params, "SourceArn")}}}, nil
	case strings.Count(urlPath, "/") >= 2: // the query protocol's /<account>/<queue>
		name = urlPath[strings.LastIndex(urlPath, "/")+1:]
	case op == "ListQueues":
		return []Access{{Action: "sqs:" + action, Resources: []string{"*"}}}, nil
	default:
		return nil, errors.New("no queue named")
	}
	return []Access{{Action: "sqs:" + action, Resources: []string{p.arn("sqs", name)}}}, nil
}

func (p Place) secret(op string, params map[string]any) ([]Access, error) {
	id := str(params, "SecretId")
	if id == "" {
		id = str(params, "Name")
	}
	if id == "" {
		return nil, errors.New("no SecretId")
	}
	if !strings.HasPrefix(id, "arn:") {
		// By name: IAM sees the ARN, whose random suffix a policy matches
		// with ??????.
		id = p.arn("secretsmanager", "secret:"+id+"-??????")
	}
	return []Access{{Action: "secretsmanager:" + op, Resources: []string{id}}}, nil
}

func (p Place) events(op string, params map[string]any) ([]Access, error) {
	if op != "PutEvents" {
		bus := str(params, "EventBusName")
		if bus == "" {
			bus = str(params, "Name")
		}
		return []Access{{Action: "events:" + op, Resources: []string{p.bus(bus)}}}, nil
	}
	entries, _ := params["Entries"].([]any)
	seen := map[string]bool{}
	var out []Access
	for _, e := range entries {
		b := p.bus(str(e.(map[string]any), "EventBusName"))
		if !seen[b] {
			seen[b] = true
			out = append(out, Access{Action: "events:PutEvents", Resources: []string{b}})
		}
	}
	return out, nil
}

func (p Place) bus(name string) string {
	if strings.HasPrefix(name, "arn:") {
		return name
	}
	if name == "" {
		name = "default"
	}
	return p.arn("events", "event-bus/"+name)
}

// ses maps SES v2's SendEmail (POST /v2/email/outbound-emails) and SES
// v1's query-protocol SendEmail and SendRawEmail. SES authorizes a send on
// the identity it sends from, the address or, when only its domain is
// verified, the domain: either may allow it. A configuration set needs
// its own grant.
func (p Place) ses(r *http.Request, op string, params map[string]any) ([]Access, error) {
	var from, configSet, identityARN string
	switch {
	case op == "SendEmail" || op == "SendRawEmail":
		from, configSet = str(params, "Source"), str(params, "ConfigurationSetName")
	case r.Method == http.MethodPost && r.URL.Path == "/v2/email/outbound-emails":
		op = "SendEmail"
		from, configSet, identityARN = str(params, "FromEmailAddress"), str(params, "ConfigurationSetName"), str(params, "FromEmailAddressIdentityArn")
	default:
		return nil, fmt.Errorf("%s %s is not mapped", r.Method, r.URL.Path)
	}
	if i := strings.LastIndex(from, "<"); i >= 0 {
		from = strings.TrimSuffix(from[i+1:], ">")
	}
	_, domain, ok := strings.Cut(from, "@")
	if !ok {
		return nil, fmt.Errorf("from address %q has no domain", from)
	}
	ids := []string{p.arn("ses", "identity/"+from), p.arn("ses", "identity/"+domain)}
	if identityARN != "" {
		ids = []string{identityARN}
	}
	out := []Access{{Action: "ses:" + op, Resources: ids}}
	if configSet != "" {
		out = append(out, Access{Action: "ses:" + op, Resources: []string{p.arn("ses", "configuration-set/"+configSet)}})
	}
	return out, nil
}

// s3 maps path-style S3 REST requests (what the SDK sends to a local
// endpoint with UsePathStyle) to the object and bucket actions.
func (p Place) s3(r *http.Request, body []byte) ([]Access, error) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket == "" {
		return []Access{{Action: "s3:ListAllMyBuckets", Resources: []string{"*"}}}, nil
	}
	q := r.URL.Query()
	bucketARN, object := "arn:aws:s3:::"+bucket, "arn:aws:s3:::"+bucket+"/"+key
	one := func(action, res string) []Access { return []Access{{Action: action, Resources: []string{res}}} }
	if key == "" {
		switch {
		case r.Method == http.MethodPost && q.Has("delete"):
			var del struct {
				Objects []struct{ Key string } `xml:"Object"`
			}
			if err := xml.Unmarshal(body, &del); err != nil {
				return nil, fmt.Errorf("DeleteObjects body: %w", err)
			}
			var out []Access
			for _, o := range del.Objects {
				out = append(out, one("s3:DeleteObject", bucketARN+"/"+o.Key)...)
			}
			return out, nil
		case r.Method == http.MethodGet && q.Has("versions"):
			return one("s3:ListBucketVersions", bucketARN), nil
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			return one("s3:ListBucket", bucketARN), nil
		case r.Method == http.MethodPut && len(q) == 0:
			return one("s3:CreateBucket", bucketARN), nil
		case r.Method == http.MethodDelete && len(q) == 0:
			return one("s3:DeleteBucket", bucketARN), nil
		}
		return nil, fmt.Errorf("bucket request %s ?%s is not mapped", r.Method, r.URL.RawQuery)
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if q.Has("tagging") {
			return one("s3:GetObjectTagging", object), nil
		}
		return one("s3:GetObject", object), nil
	case http.MethodPut:
		out := one("s3:PutObject", object)
		if src := r.Header.Get("X-Amz-Copy-Source"); src != "" {
			src, _ = url.PathUnescape(strings.TrimPrefix(src, "/"))
			src, _, _ = strings.Cut(src, "?")
			out = append(out, one("s3:GetObject", "arn:aws:s3:::"+src)...)
		}
		if q.Has("tagging") {
			out = one("s3:PutObjectTagging", object)
		}
		return out, nil
	case http.MethodPost: // multipart create and complete
		return one("s3:PutObject", object), nil
	case http.MethodDelete:
		if q.Has("uploadId") {
			return one("s3:AbortMultipartUpload", object), nil
		}
		return one("s3:DeleteObject", object), nil
	}
	return nil, fmt.Errorf("object request %s is not mapped", r.Method)
}
