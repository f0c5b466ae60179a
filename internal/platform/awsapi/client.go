// Package awsapi is a small client for the few AWS operations hookinbox's
// receiver makes (DynamoDB, SQS and Secrets Manager, all spoken with AWS's
// JSON protocol), signed with Signature Version 4 by aws-sdk-go-v2's own
// signer. It exists for the receiver's size: aws-sdk-go-v2's service
// packages register a schema for every shape of their API when they are
// linked, which costs more than the receiver's whole 8 MB budget, while
// the receiver needs six operations.
//
// A Client behaves as the SDK's clients do where a caller can tell:
//   - endpoints come from the same places (FromConfig: AWS_ENDPOINT_URL_<SERVICE>,
//     then AWS_ENDPOINT_URL, then the service's regional endpoint);
//   - credentials come from the aws.Config's provider (a Lambda function's
//     are the execution role's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
//     and AWS_SESSION_TOKEN);
//   - retries are the SDK's standard retryer's (the same one, aws/retry):
//     throttling, 5xx and connection errors, with capped, fully jittered
//     exponential backoff and the retry quota, as many attempts as the
//     SDK makes for the service (DynamoDB 4, others 3);
//   - DynamoDB's answers are checked against their X-Amz-Crc32 header
//     (asked for uncompressed, so the checksum covers the bytes read),
//     and one that does not match is sent again: a ChecksumError;
//   - the context's deadline and cancellation end a call, backoff included;
//   - one HTTP client (keep-alive connections) serves every Client of the
//     process unless the configuration brings its own.
//
// An error the service returned is an *Error carrying its code
// ("ConditionalCheckFailedException") and how many attempts the call made:
// a conditional write refused on a retry may have been applied by an
// earlier attempt whose answer was lost, which only the caller can tell
// (internal/inbox does). A Client is safe for concurrent use.
package awsapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Service describes an AWS service spoken with the JSON protocol.
type Service struct {
	// ID is the SDK's service ID, which names its endpoint variable:
	// AWS_ENDPOINT_URL_<ID upper-cased, spaces as underscores>.
	ID string
	// SigningName is the SigV4 service name; EndpointPrefix the first
	// label of its regional host name.
	SigningName, EndpointPrefix string
	// TargetPrefix prefixes the operation in X-Amz-Target.
	TargetPrefix string
	// JSONVersion is the x-amz-json version of the Content-Type: "1.0" or "1.1".
	JSONVersion string
	// QueryCompatible services (SQS) are told so with X-Amzn-Query-Mode.
	QueryCompatible bool
	// ChecksumCRC32 services (DynamoDB) send X-Amz-Crc32, the CRC-32 of
	// the body as sent: the answer is asked for uncompressed, and one
	// whose body does not match is sent again, as the SDK's client does.
	ChecksumCRC32 bool
	// MaxAttempts and BaseDelay are the SDK's default retry settings for
	// the service; zero means the standard retryer's.
	MaxAttempts int
	BaseDelay   time.Duration
}

// The services hookinbox calls through this package.
var (
	// DynamoDBService is DynamoDB; its SDK client makes 4 attempts from a
	// 25 ms base delay.
	DynamoDBService = Service{ID: "DynamoDB", SigningName: "dynamodb", EndpointPrefix: "dynamodb",
		TargetPrefix: "DynamoDB_20120810", JSONVersion: "1.0", MaxAttempts: 4, BaseDelay: 25 * time.Millisecond,
		ChecksumCRC32: true}
	// SQSService is SQS.
	SQSService = Service{ID: "SQS", SigningName: "sqs", EndpointPrefix: "sqs",
		TargetPrefix: "AmazonSQS", JSONVersion: "1.0", QueryCompatible: true}
	// SecretsManagerService is Secrets Manager.
	SecretsManagerService = Service{ID: "Secrets Manager", SigningName: "secretsmanager", EndpointPrefix: "secretsmanager",
		TargetPrefix: "secretsmanager", JSONVersion: "1.1"}
)

// Config is what a Client needs. FromConfig fills it from an aws.Config.
type Config struct {
	Region      string
	Credentials aws.CredentialsProvider
	// Endpoint is the base URL requests go to; "" means the service's
	// regional endpoint (DefaultEndpoint).
	Endpoint string
	// HTTPClient sends the requests; nil means the process's shared
	// client (the SDK's default transport settings, keep-alive).
	HTTPClient aws.HTTPClient
	// Retryer decides retries and backoff; nil means the SDK's standard
	// retryer with the service's defaults.
	Retryer aws.Retryer
	// Hook, when set, runs around every call (a meter in tests).
	Hook Hook
}

// Hook runs around one call: it may change c.Input before it calls send,
// and reads c.Output and c.Attempts after. It returns send's error, or
// its own.
type Hook func(ctx context.Context, c *Call, send func(context.Context) error) error

// Call is one operation as a Hook sees it.
type Call struct {
	Service   string // Service.ID: "DynamoDB", "SQS", "Secrets Manager"
	Operation string // "PutItem", "SendMessage", ...
	Input     any    // the operation's *...Input
	Output    any    // its *...Output, filled when the call succeeded
	Attempts  int    // HTTP requests sent, retries included
}

// Client calls one service. Build it once per process and share it.
type Client struct {
	svc      Service
	cfg      Config
	signer   *v4.Signer
	endpoint string
}

// sharedHTTPClient is the HTTP client of every Client whose Config brings
// none: one pool of keep-alive connections for the whole process, so a
// warm Lambda function reuses its connections across invocations.
var sharedHTTPClient = awshttp.NewBuildableClient()

// New returns a Client for svc.
func New(svc Service, cfg Config) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = sharedHTTPClient
	}
	if cfg.Retryer == nil {
		cfg.Retryer = StandardRetryer(svc)
	}
	ep := strings.TrimSuffix(cfg.Endpoint, "/")
	if ep == "" {
		ep = DefaultEndpoint(svc, cfg.Region)
	}
	return &Client{svc: svc, cfg: cfg, signer: v4.NewSigner(), endpoint: ep}
}

// StandardRetryer returns the retryer the SDK's client for svc uses by
// default: aws/retry's standard retryer with the service's attempts and
// base delay.
func StandardRetryer(svc Service) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		if svc.MaxAttempts > 0 {
			o.MaxAttempts = svc.MaxAttempts
		}
		if svc.BaseDelay > 0 {
			o.BaseDelay = svc.BaseDelay
		}
	})
}

// FromConfig returns a Client for svc configured as the SDK's client made
// from cfg would be: cfg's region, credentials and HTTP client; cfg's
// retryer when it has one (with RetryMaxAttempts applied), else the
// service's standard one; the endpoint that cfg's ConfigSources give for
// svc.ID (AWS_ENDPOINT_URL_<SERVICE>, unless
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true), else cfg.BaseEndpoint
// (AWS_ENDPOINT_URL), else the regional endpoint. A Hook in cfg's
// ConfigSources is installed too.
func FromConfig(svc Service, cfg aws.Config) *Client {
	c := Config{Region: cfg.Region, Credentials: cfg.Credentials, HTTPClient: cfg.HTTPClient, Endpoint: ConfiguredEndpoint(svc, cfg)}
	if cfg.Retryer != nil {
		c.Retryer = cfg.Retryer()
	}
	if cfg.RetryMaxAttempts > 0 {
		if c.Retryer == nil {
			c.Retryer = StandardRetryer(svc)
		}
		c.Retryer = retry.AddWithMaxAttempts(c.Retryer, cfg.RetryMaxAttempts)
	}
	for _, s := range cfg.ConfigSources {
		if h, ok := s.(Hook); ok {
			c.Hook = h
		}
	}
	return New(svc, c)
}

// ConfiguredEndpoint returns the endpoint cfg configures for svc, in the
// SDK's order (see FromConfig), or "" when none is configured.
func ConfiguredEndpoint(svc Service, cfg aws.Config) string {
	ctx := context.Background()
	ignored := false
	for _, s := range cfg.ConfigSources {
		if p, ok := s.(interface {
			GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error)
		}); ok {
			if v, found, err := p.GetIgnoreConfiguredEndpoints(ctx); err == nil && found {
				ignored = v
				break
			}
		}
	}
	if !ignored {
		for _, s := range cfg.ConfigSources {
			if p, ok := s.(interface {
				GetServiceBaseEndpoint(context.Context, string) (string, bool, error)
			}); ok {
				u, found, err := p.GetServiceBaseEndpoint(ctx, svc.ID)
				if err != nil {
					break
				}
				if found && u != "" {
					return u
				}
			}
		}
	}
	if cfg.BaseEndpoint != nil {
		return *cfg.BaseEndpoint
	}
	return ""
}

// DefaultEndpoint returns svc's regional endpoint in the AWS partition
// region belongs to: https://<prefix>.<region>.amazonaws.com, .com.cn in
// the China regions.
func DefaultEndpoint(svc Service, region string) string {
	suffix := "amazonaws.com"
	switch {
	case strings.HasPrefix(region, "cn-"):
		suffix = "amazonaws.com.cn"
	case strings.HasPrefix(region, "us-isob-"):
		suffix = "sc2s.sgov.gov"
	case strings.HasPrefix(region, "us-iso-"):
		suffix = "c2s.ic.gov"
	}
	return "https://" + svc.EndpointPrefix + "." + region + "." + suffix
}

// Endpoint returns the base URL the client sends to.
func (c *Client) Endpoint() string { return c.endpoint }

// Call makes operation op with the JSON of in and decodes the answer into
// out (a pointer, or nil to discard it). It retries as the SDK would and
// returns an *Error for an error the service answered.
func (c *Client) Call(ctx context.Context, op string, in, out any) error {
	call := &Call{Service: c.svc.ID, Operation: op, Input: in, Output: out}
	send := func(ctx context.Context) error { return c.send(ctx, call) }
	if c.cfg.Hook != nil {
		return c.cfg.Hook(ctx, call, send)
	}
	return send(ctx)
}

// send runs the retry loop of aws/retry's middleware: an initial token
// for the first attempt, a retry-quota token for every retry, the
// retryer's backoff between attempts, and no retry once ctx is done.
func (c *Client) send(ctx context.Context, call *Call) error {
	var body []byte
	var err error
	if a, ok := call.Input.(appender); ok {
		body, err = a.appendJSON(nil) // each sizes its buffer
	} else {
		body, err = json.Marshal(call.Input)
	}
	if err != nil {
		return fmt.Errorf("%s %s: encode request: %w", c.svc.ID, call.Operation, err)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	r := c.cfg.Retryer
	release := func(error) error { return nil }
	for attempt := 1; ; attempt++ {
		initial := func(error) error { return nil }
		if attempt == 1 {
			initial = r.GetInitialToken()
		}
		call.Attempts = attempt
		err := c.attempt(ctx, call, body, hash, attempt)
		_ = release(err)
		_ = initial(err)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !r.IsErrorRetryable(err) || attempt >= r.MaxAttempts() {
			return err
		}
		rel, terr := r.GetRetryToken(ctx, err)
		if terr != nil {
			return fmt.Errorf("%w (no retry: %v)", err, terr)
		}
		release = rel
		delay, derr := r.RetryDelay(attempt, err)
		if derr != nil {
			return derr
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			// Both wrapped: the caller sees the deadline, and what the
			// service last answered (a 5xx, a throttle, no answer), so it
			// can still tell an unavailable service from its own fault.
			return fmt.Errorf("%s %s: %w (waiting to retry after %d attempts: %w)", c.svc.ID, call.Operation, ctx.Err(), attempt, err)
		case <-t.C:
		}
	}
}

// attempt sends one signed request and decodes its answer.
func (c *Client) attempt(ctx context.Context, call *Call, body []byte, hash string, attempt int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.svc.ID, call.Operation, err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-"+c.svc.JSONVersion)
	req.Header.Set("X-Amz-Target", c.svc.TargetPrefix+"."+call.Operation)
	if c.svc.QueryCompatible {
		req.Header.Set("X-Amzn-Query-Mode", "true")
	}
	req.Header.Set("User-Agent", "hookinbox-awsapi")
	if c.svc.ChecksumCRC32 {
		// The checksum covers the bytes as sent: no transparent gzip.
		req.Header.Set("Accept-Encoding", "identity")
	}
	if c.cfg.Credentials == nil {
		return fmt.Errorf("%s %s: no credentials", c.svc.ID, call.Operation)
	}
	creds, err := c.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("%s %s: credentials: %w", c.svc.ID, call.Operation, err)
	}
	if err := c.signer.SignHTTP(ctx, creds, req, hash, c.svc.SigningName, c.cfg.Region, time.Now().UTC()); err != nil {
		return fmt.Errorf("%s %s: sign: %w", c.svc.ID, call.Operation, err)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return &SendError{Service: c.svc.ID, Operation: call.Operation, Attempts: attempt, Err: err}
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return &SendError{Service: c.svc.ID, Operation: call.Operation, Attempts: attempt, Err: err}
	}
	if c.svc.ChecksumCRC32 {
		if err := checkCRC32(resp.Header, data); err != nil {
			return &SendError{Service: c.svc.ID, Operation: call.Operation, Attempts: attempt, Err: err}
		}
	}
	if resp.StatusCode/100 != 2 {
		return c.apiError(call.Operation, resp, data, attempt)
	}
	if call.Output == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, call.Output); err != nil {
		return fmt.Errorf("%s %s: decode answer (HTTP %d): %w", c.svc.ID, call.Operation, resp.StatusCode, err)
	}
	return nil
}

// apiError decodes an error answer of the JSON protocol: the code from
// X-Amzn-ErrorType or the body's __type (or code), without its namespace
// ("com.amazonaws.dynamodb.v20120810#") or suffix (":http://..."); for
// query-compatible services the code X-Amzn-Query-Error names
// ("AWS.SimpleQueueService.NonExistentQueue;Sender").
func (c *Client) apiError(op string, resp *http.Response, data []byte, attempt int) error {
	body := decodeErrorBody(data) // a body that is not JSON leaves the code to the status
	e := &Error{
		Service: c.svc.ID, Operation: op, StatusCode: resp.StatusCode, Attempts: attempt,
		RequestID: resp.Header.Get("X-Amzn-Requestid"), Message: body.Message, Item: body.Item,
	}
	if e.Message == "" {
		e.Message = body.MessageU
	}
	code := resp.Header.Get("X-Amzn-Errortype")
	if code == "" {
		code = body.Type
	}
	if code == "" {
		code = body.Code
	}
	code, _, _ = strings.Cut(code, ":")
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	if code == "" {
		code = http.StatusText(resp.StatusCode)
	}
	e.Code = code
	if c.svc.QueryCompatible {
		if q, _, _ := strings.Cut(resp.Header.Get("X-Amzn-Query-Error"), ";"); q != "" {
			e.QueryCode = q
		}
	}
	return e
}

// Error is an error answer from an AWS service.
type Error struct {
	Service, Operation string
	Code               string // "ConditionalCheckFailedException", "ThrottlingException", ...
	QueryCode          string // SQS's query-protocol code, when given ("AWS.SimpleQueueService.NonExistentQueue")
	Message            string
	StatusCode         int
	RequestID          string
	// Attempts is how many requests the call sent; this error answered
	// the last. More than one means an earlier attempt may have been
	// applied although its answer was lost.
	Attempts int
	// Item is the stored item a DynamoDB ConditionalCheckFailedException
	// carries when the write asked for ALL_OLD on condition failure.
	Item Item
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.Service, e.Operation, e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	s += fmt.Sprintf(" (HTTP %d", e.StatusCode)
	if e.RequestID != "" {
		s += ", request id " + e.RequestID
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(", %d attempts", e.Attempts)
	}
	return s + ")"
}

// ErrorCode returns the code; aws/retry classifies throttling errors by it.
func (e *Error) ErrorCode() string { return e.Code }

// HTTPStatusCode returns the HTTP status; aws/retry retries 5xx by it.
func (e *Error) HTTPStatusCode() int { return e.StatusCode }

// Is reports whether target is an *Error with the same Code (and the same
// Service, when target names one), so the sentinels below match with
// errors.Is.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code != "" && t.Code == e.Code && (t.Service == "" || t.Service == e.Service)
}

// Codes callers branch on, matched with errors.Is.
var (
	// ErrConditionalCheckFailed is DynamoDB's refusal of a conditional write.
	ErrConditionalCheckFailed = &Error{Service: "DynamoDB", Code: "ConditionalCheckFailedException"}
	// ErrResourceNotFound is a missing table, index or secret.
	ErrResourceNotFound = &Error{Code: "ResourceNotFoundException"}
)

// ChecksumError is an answer whose body does not match its X-Amz-Crc32
// header: damaged on the way, so it is read as no answer (a SendError)
// and the request is sent again.
type ChecksumError struct {
	Header string // the header as received
	Got    uint32 // the body's CRC-32 (IEEE)
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("answer's CRC-32 %d does not match its X-Amz-Crc32 %q", e.Got, e.Header)
}

// RetryableError tells aws/retry's standard retryer to send the request
// again.
func (e *ChecksumError) RetryableError() bool { return true }

// checkCRC32 checks body against the X-Amz-Crc32 header, when there is one.
func checkCRC32(h http.Header, body []byte) error {
	v := h.Get("X-Amz-Crc32")
	if v == "" {
		return nil
	}
	got := crc32.ChecksumIEEE(body)
	if want, err := strconv.ParseUint(v, 10, 32); err != nil || uint32(want) != got {
		return &ChecksumError{Header: v, Got: got}
	}
	return nil
}

// SendError is a request that got no answer (a connection refused, reset
// or timed out). The request may or may not have been applied.
type SendError struct {
	Service, Operation string
	Attempts           int
	Err                error
}

func (e *SendError) Error() string {
	return fmt.Sprintf("%s %s: send (attempt %d): %v", e.Service, e.Operation, e.Attempts, e.Err)
}

// Unwrap returns the transport's error, which aws/retry classifies.
func (e *SendError) Unwrap() error { return e.Err }

// Attempts returns how many requests the call that returned err sent,
// or 0 when err came from no call.
func Attempts(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Attempts
	}
	var s *SendError
	if errors.As(err, &s) {
		return s.Attempts
	}
	return 0
}
