package awsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
)

// request is what a test server saw of one request.
type request struct {
	header http.Header
	body   map[string]any
}

// server answers the requests in turn with answers (the last one repeats)
// and records them.
type server struct {
	mu       sync.Mutex
	seen     []request
	answers  []func(w http.ResponseWriter)
	delay    time.Duration
	endpoint string
}

func newServer(t *testing.T, answers ...func(w http.ResponseWriter)) *server {
	t.Helper()
	s := &server{answers: answers}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.endpoint = srv.URL
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(data, &body)
	s.mu.Lock()
	s.seen = append(s.seen, request{header: r.Header.Clone(), body: body})
	n := len(s.seen)
	s.mu.Unlock()
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	s.answers[min(n, len(s.answers))-1](w)
}

func (s *server) requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.seen...)
}

func answer(status int, body string, headers ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// quickRetryer is the standard retryer without waiting or quota.
func quickRetryer(attempts int) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = attempts
		o.MaxBackoff = time.Millisecond
		o.RateLimiter = ratelimit.None
	})
}

func client(s *server, session string, retryer aws.Retryer) *awsapi.DynamoDB {
	return awsapi.NewDynamoDB(awsapi.New(awsapi.DynamoDBService, awsapi.Config{
		Region:      "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", session),
		Endpoint:    s.endpoint,
		Retryer:     retryer,
	}))
}

func TestRequestIsSignedJSON(t *testing.T) {
	s := newServer(t, answer(200, `{"Attributes":{"pk":{"S":"a"},"n":{"N":"7"},"b":{"B":"AQI="},"ok":{"BOOL":false},"m":{"M":{"x":{"NULL":true}}},"l":{"L":[]}}}`))
	db := client(s, "TOKEN", nil)
	out, err := db.UpdateItem(context.Background(), &awsapi.UpdateItemInput{
		TableName: "inbox", Key: awsapi.Item{"pk": awsapi.S("a"), "sk": awsapi.S("event")},
		UpdateExpression: "SET n = :n", ExpressionAttributeValues: awsapi.Item{":n": awsapi.Int(7), ":b": awsapi.B([]byte{1, 2})},
		ReturnValues: awsapi.ReturnAllNew,
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	h := reqs[0].header
	for name, want := range map[string]string{
		"Content-Type":         "application/x-amz-json-1.0",
		"X-Amz-Target":         "DynamoDB_20120810.UpdateItem",
		"X-Amz-Security-Token": "TOKEN",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	auth := h.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/eu-west-1/dynamodb/aws4_request") ||
		!strings.Contains(auth, "SignedHeaders=") || !strings.Contains(auth, "x-amz-target") || h.Get("X-Amz-Date") == "" {
		t.Errorf("Authorization = %q, X-Amz-Date = %q: not a SigV4 signature over the target", auth, h.Get("X-Amz-Date"))
	}
	wantBody := map[string]any{
		"TableName":                 "inbox",
		"Key":                       map[string]any{"pk": map[string]any{"S": "a"}, "sk": map[string]any{"S": "event"}},
		"UpdateExpression":          "SET n = :n",
		"ExpressionAttributeValues": map[string]any{":n": map[string]any{"N": "7"}, ":b": map[string]any{"B": "AQI="}},
		"ReturnValues":              "ALL_NEW",
	}
	if diff := cmp.Diff(wantBody, reqs[0].body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if n, ok, err := out.Attributes["n"].Int64(); !ok || err != nil || n != 7 {
		t.Errorf("n = %d, %v, %v", n, ok, err)
	}
	if b, ok := out.Attributes["b"].Binary(); !ok || string(b) != "\x01\x02" {
		t.Errorf("b = %q, %v", b, ok)
	}
	if v, ok := out.Attributes["ok"].Boolean(); !ok || v {
		t.Errorf("ok = %v, %v", v, ok)
	}
	if m, ok := out.Attributes["m"].Map(); !ok || m["x"].Type() != "NULL" {
		t.Errorf("m = %v, %v", m, ok)
	}
	if l, ok := out.Attributes["l"].List(); !ok || len(l) != 0 {
		t.Errorf("l = %v, %v", l, ok)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	s := newServer(t, answer(400, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed","Item":{"pk":{"S":"a"}}}`,
		"X-Amzn-RequestId", "REQ1"))
	_, err := client(s, "", quickRetryer(3)).PutItem(context.Background(), &awsapi.PutItemInput{TableName: "t", Item: awsapi.Item{"pk": awsapi.S("a")}})
	if !errors.Is(err, awsapi.ErrConditionalCheckFailed) {
		t.Fatalf("err = %v, want ErrConditionalCheckFailed", err)
	}
	var e *awsapi.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %T, want *awsapi.Error", err)
	}
	if pk, _ := e.Item["pk"].String(); pk != "a" || e.RequestID != "REQ1" || e.StatusCode != 400 || e.Attempts != 1 || e.Message == "" {
		t.Errorf("error = %+v", e)
	}
	if got := len(s.requests()); got != 1 {
		t.Errorf("a condition failure was sent %d times, want once", got)
	}
	if errors.Is(err, awsapi.ErrResourceNotFound) {
		t.Errorf("a condition failure matches ErrResourceNotFound")
	}
}

func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first        func(w http.ResponseWriter)
		wantAttempts int
	}{
		{"throttling", answer(400, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`), 2},
		{"ThrottlingException by header", answer(400, `{}`, "X-Amzn-ErrorType", "ThrottlingException:http://internal"), 2},
		{"500", answer(500, `{"__type":"InternalServerError"}`), 2},
		{"503 without a body", answer(503, ``), 2},
		{"validation is not retried", answer(400, `{"__type":"com.amazon.coral.validate#ValidationException","message":"bad"}`), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.first, answer(200, `{}`))
			_, err := client(s, "", quickRetryer(4)).GetItem(context.Background(), &awsapi.GetItemInput{TableName: "t"})
			got := len(s.requests())
			if got != tc.wantAttempts {
				t.Errorf("%d requests, want %d (err %v)", got, tc.wantAttempts, err)
			}
			if (err == nil) != (tc.wantAttempts == 2) {
				t.Errorf("err = %v", err)
			}
		})
	}
	t.Run("gives up after MaxAttempts", func(t *testing.T) {
		s := newServer(t, answer(500, `{"__type":"InternalServerError"}`))
		_, err := client(s, "", quickRetryer(3)).GetItem(context.Background(), &awsapi.GetItemInput{TableName: "t"})
		if got := len(s.requests()); got != 3 || awsapi.Attempts(err) != 3 {
			t.Errorf("%d requests, Attempts(err) = %d, want 3 (err %v)", got, awsapi.Attempts(err), err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		db := awsapi.NewDynamoDB(awsapi.New(awsapi.DynamoDBService, awsapi.Config{
			Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""), Endpoint: url, Retryer: quickRetryer(3),
		}))
		_, err := db.GetItem(context.Background(), &awsapi.GetItemInput{TableName: "t"})
		var se *awsapi.SendError
		if !errors.As(err, &se) || se.Attempts != 3 {
			t.Errorf("err = %v, want a SendError after 3 attempts", err)
		}
	})
}

func TestDeadlineEndsTheCall(t *testing.T) {
	s := newServer(t, answer(500, `{}`))
	s.delay = 20 * time.Millisecond
	// The SDK's default backoff (up to 20 s) would outlast the deadline.
	db := client(s, "", retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 10; o.RateLimiter = ratelimit.None }))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := db.GetItem(ctx, &awsapi.GetItemInput{TableName: "t"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the call took %v past a 100 ms deadline", d)
	}
}

// slowRetryer waits longer than any test's deadline before a retry.
type slowRetryer struct{ aws.Retryer }

func (slowRetryer) RetryDelay(int, error) (time.Duration, error) { return time.Minute, nil }

// A deadline that ends the wait before a retry keeps the last answer in
// the error, so a caller can still tell a service that was unavailable
// (a 5xx here) from a fault of its own request.
func TestDeadlineWhileWaitingKeepsTheLastAnswer(t *testing.T) {
	s := newServer(t, answer(500, `{"__type":"InternalServerError"}`))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := client(s, "", slowRetryer{quickRetryer(5)}).GetItem(ctx, &awsapi.GetItemInput{TableName: "t"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	var ae *awsapi.Error
	if !errors.As(err, &ae) || ae.StatusCode != 500 || awsapi.Attempts(err) != 1 {
		t.Errorf("err = %v, want it to carry the 500 of its one attempt", err)
	}
	if got := len(s.requests()); got != 1 {
		t.Errorf("%d requests, want 1", got)
	}
}

func TestHookSeesEveryCall(t *testing.T) {
	s := newServer(t, answer(500, `{}`), answer(200, `{"ConsumedCapacity":{"TableName":"t","CapacityUnits":1}}`))
	var seen []awsapi.Call
	hook := func(ctx context.Context, c *awsapi.Call, send func(context.Context) error) error {
		c.Input.(*awsapi.PutItemInput).ReturnConsumedCapacity = awsapi.ReturnCapacityTotal
		err := send(ctx)
		seen = append(seen, *c)
		return err
	}
	cfg := aws.Config{
		Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""),
		BaseEndpoint: aws.String(s.endpoint), Retryer: func() aws.Retryer { return quickRetryer(3) },
		ConfigSources: []any{awsapi.Hook(hook)},
	}
	out, err := awsapi.DynamoDBFromConfig(cfg).PutItem(context.Background(), &awsapi.PutItemInput{TableName: "t", Item: awsapi.Item{"pk": awsapi.S("a")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].Operation != "PutItem" || seen[0].Service != "DynamoDB" || seen[0].Attempts != 2 {
		t.Errorf("hook saw %+v, want one PutItem of 2 attempts", seen)
	}
	if out.ConsumedCapacity == nil || *out.ConsumedCapacity.CapacityUnits != 1 {
		t.Errorf("ConsumedCapacity = %+v", out.ConsumedCapacity)
	}
	if got := s.requests()[0].body["ReturnConsumedCapacity"]; got != "TOTAL" {
		t.Errorf("ReturnConsumedCapacity sent = %v, want TOTAL", got)
	}
}

// endpoints is an aws.Config source as lambdafn.AWSConfig and the SDK's
// EnvConfig are: AWS_ENDPOINT_URL_<SERVICE> and
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS.
type endpoints struct {
	urls    map[string]string
	ignored string
}

func (e endpoints) GetServiceBaseEndpoint(_ context.Context, id string) (string, bool, error) {
	u, ok := e.urls[id]
	return u, ok, nil
}

func (e endpoints) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	return e.ignored == "true", e.ignored != "", nil
}

func TestEndpointResolution(t *testing.T) {
	for _, tc := range []struct {
		name    string
		svc     awsapi.Service
		region  string
		global  string
		service map[string]string
		ignored string
		want    string
	}{
		{"regional", awsapi.DynamoDBService, "eu-west-1", "", nil, "", "https://dynamodb.eu-west-1.amazonaws.com"},
		{"China", awsapi.SQSService, "cn-north-1", "", nil, "", "https://sqs.cn-north-1.amazonaws.com.cn"},
		{"Secrets Manager", awsapi.SecretsManagerService, "us-east-1", "", nil, "", "https://secretsmanager.us-east-1.amazonaws.com"},
		{"AWS_ENDPOINT_URL", awsapi.DynamoDBService, "eu-west-1", "http://localhost:4566", nil, "", "http://localhost:4566"},
		{"AWS_ENDPOINT_URL_DYNAMODB wins", awsapi.DynamoDBService, "eu-west-1", "http://localhost:4566", map[string]string{"DynamoDB": "http://127.0.0.1:8000"}, "", "http://127.0.0.1:8000"},
		{"another service's variable", awsapi.SQSService, "eu-west-1", "http://localhost:4566", map[string]string{"DynamoDB": "http://127.0.0.1:8000"}, "", "http://localhost:4566"},
		{"AWS_ENDPOINT_URL_SECRETS_MANAGER", awsapi.SecretsManagerService, "eu-west-1", "", map[string]string{"Secrets Manager": "http://127.0.0.1:9000/"}, "", "http://127.0.0.1:9000"},
		{"ignored", awsapi.DynamoDBService, "eu-west-1", "", map[string]string{"DynamoDB": "http://127.0.0.1:8000"}, "true", "https://dynamodb.eu-west-1.amazonaws.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := aws.Config{Region: tc.region, ConfigSources: []any{endpoints{urls: tc.service, ignored: tc.ignored}}}
			if tc.global != "" {
				cfg.BaseEndpoint = aws.String(tc.global)
			}
			if got := awsapi.FromConfig(tc.svc, cfg).Endpoint(); got != tc.want {
				t.Errorf("endpoint = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAttributeValuesRoundTrip(t *testing.T) {
	in := awsapi.Item{
		"s": awsapi.S("x"), "n": awsapi.Int(-3), "b": awsapi.B(nil), "t": awsapi.Bool(true),
		"m": awsapi.M(awsapi.Item{"in": awsapi.S("y")}), "l": awsapi.L(awsapi.S("z"), awsapi.Int(1)),
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out awsapi.Item
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(out)
	if string(again) != string(data) {
		t.Errorf("round trip:\n got %s\nwant %s", again, data)
	}
	if _, err := json.Marshal(awsapi.Item{"zero": {}}); err == nil {
		t.Errorf("a value without a type was encoded")
	}
}

// TestDynamoDBAnswersAreChecksummed: DynamoDB's answers are asked for
// uncompressed and checked against X-Amz-Crc32, as the SDK's client
// checks them; a damaged answer, success or refusal, is sent again, and
// one that stays damaged ends the call as an answer never received.
func TestDynamoDBAnswersAreChecksummed(t *testing.T) {
	const refusal = `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`
	crc := func(body string) string { return strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(body))), 10) }
	t.Run("a matching answer is read", func(t *testing.T) {
		s := newServer(t, answer(200, `{"Item":{"pk":{"S":"a"}}}`, "X-Amz-Crc32", crc(`{"Item":{"pk":{"S":"a"}}}`)))
		out, err := client(s, "", quickRetryer(4)).GetItem(context.Background(), &awsapi.GetItemInput{TableName: "t"})
		if err != nil || out.Item == nil {
			t.Fatalf("GetItem: %+v, %v", out, err)
		}
		if got := s.requests()[0].header.Get("Accept-Encoding"); got != "identity" {
			t.Errorf("Accept-Encoding %q, want identity (a gzipped answer's checksum is of the gzip)", got)
		}
	})
	t.Run("a damaged answer is sent again", func(t *testing.T) {
		s := newServer(t,
			answer(200, `{"Item":{"pk":{"S":"b"}}}`, "X-Amz-Crc32", crc(`{"Item":{"pk":{"S":"a"}}}`)),
			answer(400, refusal, "X-Amz-Crc32", "not a number"),
			answer(200, `{"Item":{"pk":{"S":"a"}}}`, "X-Amz-Crc32", crc(`{"Item":{"pk":{"S":"a"}}}`)))
		out, err := client(s, "", quickRetryer(4)).GetItem(context.Background(), &awsapi.GetItemInput{TableName: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := out.Item["pk"].String(); v != "a" || len(s.requests()) != 3 {
			t.Errorf("pk %q after %d requests, want a after 3", v, len(s.requests()))
		}
	})
	t.Run("an answer that stays damaged is no answer", func(t *testing.T) {
		s := newServer(t, answer(400, refusal, "X-Amz-Crc32", "1"))
		_, err := client(s, "", quickRetryer(3)).PutItem(context.Background(), &awsapi.PutItemInput{TableName: "t"})
		var se *awsapi.SendError
		var ce *awsapi.ChecksumError
		if !errors.As(err, &se) || !errors.As(err, &ce) || se.Attempts != 3 || errors.Is(err, awsapi.ErrConditionalCheckFailed) {
			t.Errorf("err = %v, want a SendError with a ChecksumError after 3 attempts, not the refusal", err)
		}
	})
}
