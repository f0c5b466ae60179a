package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Region, AccountID and the static credentials are what the emulators and
// the clients built here agree on. local-aws-sqs puts Region and AccountID in
// its queue ARNs and URLs.
const (
	Region    = "us-east-1"
	AccountID = "123456789012"
	accessKey = "test"
	secretKey = "test"
)

// startTimeout bounds how long Start waits for the emulators when ctx has no
// earlier deadline; npm ci, when needed, is not counted.
const startTimeout = 2 * time.Minute // a loaded machine warms the emulators up slowly

// Options configures Start and StartFunction.
type Options struct {
	// Stdout and Stderr receive the child processes' output; nil discards
	// it. The tail of stderr is kept for error messages either way. A
	// Stdout that is an *os.File becomes the children's own stdout: they
	// write to it directly, with no pipe and no copying in this process
	// (`hookinbox load` uses a file, so that the functions' log lines cost
	// the load generator nothing, as in Lambda, where the platform ships
	// them).
	Stdout, Stderr io.Writer

	// DynamoDBPort and SQSPort are the emulators' ports on 127.0.0.1; 0
	// lets each server pick a free one.
	DynamoDBPort, SQSPort int

	// Root is the repository root holding go.mod and local/. Empty means
	// walking up from the working directory to the first go.mod.
	Root string

	// Family is the emulators to run: familyDynalite or FamilyMoto.
	// Empty means what HOOKINBOX_EMULATORS says, else familyDynalite.
	Family string

	// WarmUp has dynalite and local-aws-sqs serve themselves the requests
	// of 800 events' lives before they are ready (local/warmup.js, about
	// 3.5 s on 2 cores), so that node has compiled their code paths before
	// the first caller's request: `hookinbox dev` and `hookinbox load`
	// use it, tests do not. It leaves no table or queue behind. moto_server
	// is not warmed.
	WarmUp bool
}

// Emulators are running local AWS-compatible servers, or endpoints found in
// the environment. Its methods are safe for concurrent use.
type Emulators struct {
	// DynamoDBURL and SQSURL are the endpoints, such as
	// http://127.0.0.1:41235.
	DynamoDBURL, SQSURL string
	// S3URL is the S3 endpoint (gofakes3 for familyDynalite, moto_server
	// for FamilyMoto); empty when External and AWS_ENDPOINT_URL_S3 and
	// AWS_ENDPOINT_URL are unset: no bucket is created then.
	S3URL string

	// External is true when the endpoints came from AWS_ENDPOINT_URL* and
	// Start started nothing.
	External bool

	// Family is the emulators running: familyDynalite or FamilyMoto
	// (empty when External).
	Family string

	// racyConditions: concurrent conditional writes on one item can both
	// succeed (stock moto_server; see MotoRacyConditions).
	racyConditions bool

	proc   *child   // nil when External
	s3proc *child   // gofakes3, for familyDynalite
	stdin  *os.File // write end of the node process's stdin
}

// Start starts the emulators of opts.Family (or of HOOKINBOX_EMULATORS):
// for FamilyMoto, moto_server (see startMoto); by default, as follows.
//
// It starts local/emulators.js under node from EmulatorDir: hookinbox's
// local/ when `make local/node_modules` installed the emulators there, else
// a copy in the user's cache directory, where `npm ci` installs them on the
// first run (under a file lock, so parallel test binaries do not race). If AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS or
// AWS_ENDPOINT_URL is set it uses those endpoints instead and starts nothing.
// It returns once both endpoints answer HTTP. ctx bounds the start only; the
// emulators run until Stop or until this process exits.
func Start(ctx context.Context, opts Options) (*Emulators, error) {
	if e, ok, err := fromEnv(); ok || err != nil {
		if err != nil {
			return nil, err
		}
		if err := e.waitReady(ctx); err != nil {
			return nil, err
		}
		return e, nil
	}

	fam, err := family(opts.Family)
	if opts.Family == "" {
		fam, err = familyFromEnv()
	}
	if err != nil {
		return nil, fmt.Errorf("start emulators: %w", err)
	}
	if fam == FamilyMoto {
		return startMotoFamily(ctx, opts)
	}
	return startDynalite(ctx, opts)
}

// fromEnv returns the endpoints the SDK would use from the environment, if
// any is set.
func fromEnv() (*Emulators, bool, error) {
	all := os.Getenv("AWS_ENDPOINT_URL")
	ddb := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")
	q := os.Getenv("AWS_ENDPOINT_URL_SQS")
	if all == "" && ddb == "" && q == "" {
		return nil, false, nil
	}
	if ddb == "" {
		ddb = all
	}
	if q == "" {
		q = all
	}
	if ddb == "" || q == "" {
		return nil, true, errors.New("start emulators: set both AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS, or AWS_ENDPOINT_URL, or none of them to start the local emulators")
	}
	s3URL := os.Getenv("AWS_ENDPOINT_URL_S3")
	if s3URL == "" {
		s3URL = all
	}
	return &Emulators{DynamoDBURL: ddb, SQSURL: q, S3URL: s3URL, External: true}, true, nil
}

// waitReady polls both endpoints until each answers HTTP with any status.
func (e *Emulators) waitReady(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	for _, u := range []string{e.DynamoDBURL, e.SQSURL} {
		if err := waitHTTP(ctx, u, e.proc); err != nil {
			return fmt.Errorf("start emulators: %w", err)
		}
	}
	return nil
}

// waitHTTP polls url with GET until any HTTP response arrives, ctx ends, or
// proc (if not nil) exits.
func waitHTTP(ctx context.Context, url string, proc *child) error {
	return waitAnswer(ctx, url, proc, func(int) bool { return true })
}

// waitAnswer is waitHTTP, done only once an answer's status is ok.
func waitAnswer(ctx context.Context, url string, proc *child, ok func(status int) bool) error {
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("wait for %s: %w", url, err)
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if ok(resp.StatusCode) {
				return nil
			}
			err = fmt.Errorf("answered %s", resp.Status)
		}
		var exited <-chan struct{}
		if proc != nil {
			exited = proc.done
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w (last error: %v)", url, ctx.Err(), err)
		case <-exited:
			return proc.exitError(proc.cmd.Path)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop closes the emulators' stdin, kills their process group and waits for
// it to exit. It is idempotent, and does nothing for External endpoints.
func (e *Emulators) Stop() error {
	if e == nil || e.proc == nil {
		return nil
	}
	// Closing stdin alone makes node exit; the signal is for a node that is
	// stuck. moto_server has no stdin pipe: the signal stops it.
	if e.stdin != nil {
		_ = e.stdin.Close()
	}
	if e.s3proc != nil {
		if err := e.s3proc.stop(3 * time.Second); err != nil {
			return fmt.Errorf("stop gofakes3: %w", err)
		}
	}
	if err := e.proc.stop(3 * time.Second); err != nil {
		return fmt.Errorf("stop emulators: %w", err)
	}
	return nil
}

// PID returns the process ID of the node process, or 0 for External
// endpoints.
func (e *Emulators) PID() int {
	if e.proc == nil {
		return 0
	}
	return e.proc.pid()
}

// AWSConfig returns a configuration for the emulators: region us-east-1,
// static credentials "test"/"test" and a retryer that gives up after three
// quick attempts, so a test fails fast instead of backing off. It sets no
// endpoint; the clients below set BaseEndpoint each.
func (e *Emulators) AWSConfig() aws.Config {
	return aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.MaxBackoff = 200 * time.Millisecond
				o.RateLimiter = ratelimit.None
			})
		},
	}
}

// configAt returns AWSConfig with BaseEndpoint url.
func (e *Emulators) configAt(url string) aws.Config {
	cfg := e.AWSConfig()
	cfg.BaseEndpoint = aws.String(url)
	return cfg
}

// DynamoDB returns a client for the DynamoDB endpoint.
func (e *Emulators) DynamoDB() *dynamodb.Client {
	return dynamodb.NewFromConfig(e.configAt(e.DynamoDBURL))
}

// SQS returns a client for the SQS endpoint.
func (e *Emulators) SQS() *sqs.Client {
	return sqs.NewFromConfig(e.configAt(e.SQSURL))
}

// EnvMap returns the variables that point an AWS SDK in another process at
// these endpoints: AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS,
// AWS_ENDPOINT_URL_S3 (when there is one), AWS_REGION, AWS_ACCESS_KEY_ID
// and AWS_SECRET_ACCESS_KEY.
func (e *Emulators) EnvMap() map[string]string {
	m := map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": e.DynamoDBURL,
		"AWS_ENDPOINT_URL_SQS":      e.SQSURL,
		"AWS_REGION":                Region,
		"AWS_ACCESS_KEY_ID":         accessKey,
		"AWS_SECRET_ACCESS_KEY":     secretKey,
	}
	if e.S3URL != "" {
		m["AWS_ENDPOINT_URL_S3"] = e.S3URL
	}
	return m
}

// RacyConditions reports whether concurrent conditional writes on one
// item can both succeed here: only on a stock moto_server (the harness's
// moto, when python3 can import moto, takes DynamoDB's requests one at a
// time).
func (e *Emulators) RacyConditions() bool { return e.racyConditions }

// Env returns EnvMap as KEY=value strings, sorted, for exec.Cmd.Env.
func (e *Emulators) Env() []string {
	return envList(e.EnvMap())
}

// CPUTime returns the CPU time (user + system) the emulators' processes
// have used so far; 0 when External (nothing of theirs runs here).
func (e *Emulators) CPUTime() (time.Duration, error) {
	if e.proc == nil {
		return 0, nil
	}
	total, err := ProcessCPU(e.proc.pid())
	if err != nil {
		return 0, fmt.Errorf("cpu time of the emulators: %w", err)
	}
	for _, pid := range Descendants(e.proc.pid()) {
		if d, err := ProcessCPU(pid); err == nil {
			total += d
		}
	}
	return total, nil
}
