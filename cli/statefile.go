package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/provider"
)

// stateFileEnv names the variable that overrides the default state file.
const stateFileEnv = "HOOKINBOX_STATE_FILE"

// devState is what `hookinbox dev` writes to its state file once it is
// ready, so that send, inspect, state and replay find the running stack.
// Everything in it is local and safe to print: the credentials are the
// emulators' fixed "test" ones and the secrets are the local ones.
type devState struct {
	PID        int       `json:"pid"`
	StartedAt  time.Time `json:"started_at"`
	Mode       string    `json:"mode"` // "in-process" or "rie"
	StackName  string    `json:"stack_name"`
	Region     string    `json:"region"`
	Root       string    `json:"root"`        // repository root
	BaseURL    string    `json:"base_url"`    // http://127.0.0.1:3000
	WebhookURL string    `json:"webhook_url"` // BaseURL + /webhooks/<the first provider>
	HealthURL  string    `json:"health_url"`

	// WebhookSecret signs the deliveries to WebhookURL (dev --secret).
	WebhookSecret string `json:"webhook_secret"`

	// Endpoints maps AWS_ENDPOINT_URL_* and STRIPE_API_URL to their values.
	Endpoints map[string]string `json:"endpoints"`
	// Env is what another process needs to reach the stack with an AWS
	// SDK or the AWS CLI: endpoints, region and the emulators' credentials.
	Env map[string]string `json:"env"`

	// MetricsFile is every function's METRICS_FILE: the metric lines
	// `hookinbox status` sums.
	MetricsFile string `json:"metrics_file"`

	Tables    map[string]string     `json:"tables"`            // logical ID → name
	Buckets   map[string]string     `json:"buckets,omitempty"` // logical ID → name
	Queues    map[string]stateQueue `json:"queues"`            // logical ID → queue
	Functions []stateFunction       `json:"functions"`
}

type stateQueue struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	ARN  string `json:"arn"`
}

type stateFunction struct {
	LogicalID string   `json:"logical_id"`
	Triggers  []string `json:"triggers,omitempty"` // "POST /webhooks/{provider}", "SQS hookinbox-events", "rate(5 minutes)"
	// Env is the function's resolved environment, for `sam local invoke`
	// style debugging. Secrets in it are the local ones.
	Env map[string]string `json:"env"`
}

// functionEnv returns the variable key of the function logicalID's
// environment, or "".
func (st *devState) functionEnv(logicalID, key string) string {
	for _, f := range st.Functions {
		if f.LogicalID == logicalID {
			return f.Env[key]
		}
	}
	return ""
}

// receiverSecret returns p's secret variable as the running stack's
// receiver has it; that of the provider WebhookURL names is `hookinbox
// dev --secret` (WebhookSecret).
func (st *devState) receiverSecret(p provider.Provider) string {
	if v := st.functionEnv("ReceiverFunction", p.Webhook().SecretEnv); v != "" {
		return v
	}
	if strings.HasSuffix(st.WebhookURL, "/webhooks/"+p.Name()) {
		return st.WebhookSecret
	}
	return ""
}

// defaultStateFile returns $HOOKINBOX_STATE_FILE, or hookinbox-dev.json in
// the temporary directory.
func defaultStateFile() string {
	if p := os.Getenv(stateFileEnv); p != "" {
		return p
	}
	return filepath.Join(os.TempDir(), "hookinbox-dev.json")
}

// writeState writes st to path atomically, readable by the user only.
func writeState(path string, st *devState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write state file: %w", err)
	}
	return nil
}

// removeState removes path if it still describes this process's stack.
func removeState(path string) {
	st, err := readStateFile(path)
	if err == nil && st.PID == os.Getpid() {
		_ = os.Remove(path)
	}
}

// errNoStack means no running `hookinbox dev` was found.
var errNoStack = errors.New("no running local stack")

// readStateFile reads and decodes path.
func readStateFile(path string) (*devState, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st devState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	return &st, nil
}

// loadState returns the running stack described by path (the default
// state file when empty). It fails with errNoStack, and says how to start
// one, when the file is missing or its process is gone.
func loadState(path string) (*devState, error) {
	if path == "" {
		path = defaultStateFile()
	}
	st, err := readStateFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist; start one with `make dev` (or `%s dev`) in another terminal, or pass --state-file", errNoStack, path, selfCommand())
	}
	if err != nil {
		return nil, err
	}
	if !devstack.ProcessAlive(st.PID) {
		return nil, fmt.Errorf("%w: %s names process %d, which is not running; start the stack again with `make dev`", errNoStack, path, st.PID)
	}
	return st, nil
}

// stateOf returns what the state file says about the running stack st.
func (d *devStack) stateOf(root, baseURL string, st *pipeline.Stack, fns []pipeline.Function) (*devState, error) {
	mode := "in-process"
	if d.flags.rie {
		mode = "rie"
	}
	s := &devState{
		PID: os.Getpid(), StartedAt: time.Now().UTC(), Mode: mode,
		StackName: st.Name, Region: devstack.Region, Root: root,
		BaseURL: baseURL, WebhookURL: baseURL + "/webhooks/" + d.app.firstProvider().Name(), HealthURL: baseURL + "/healthz",
		WebhookSecret: d.flags.secret, Endpoints: st.Endpoints, Env: st.Emulators.EnvMap(),
		Tables: st.Tables, Buckets: st.Buckets, Queues: map[string]stateQueue{},
		MetricsFile: metricsFileFor(d.flags.stateFile),
	}
	s.Env["AWS_ENDPOINT_URL_SESV2"] = st.Endpoints["AWS_ENDPOINT_URL_SESV2"]
	// The AWS CLI v1 reads its region from AWS_DEFAULT_REGION only.
	s.Env["AWS_DEFAULT_REGION"] = devstack.Region
	for id, q := range st.Queues {
		s.Queues[id] = stateQueue{Name: q.Name, URL: q.URL, ARN: q.ARN}
	}
	for _, fn := range fns {
		env, err := st.Env(fn.LogicalID, nil)
		if err != nil {
			return nil, err
		}
		f := stateFunction{LogicalID: fn.LogicalID, Env: env}
		for _, t := range fn.Triggers {
			f.Triggers = append(f.Triggers, t.String())
		}
		s.Functions = append(s.Functions, f)
	}
	return s, nil
}

// Stack is the running local stack (hookinbox dev), as a command of a
// module's own reaches it (LocalStack).
type Stack struct {
	Name   string            // the stack name, which prefixes its tables' and queues'
	Tables map[string]string // each table's name, by its logical ID in the template
	AWS    aws.Config        // reaches the stack's emulators: region, endpoints, credentials
}

// LocalStack returns the running local stack the state file at path
// describes; "" is the file hookinbox dev writes by default
// ($HOOKINBOX_STATE_FILE, else hookinbox-dev.json in the temporary
// directory). When no stack runs, its error says how to start one.
func LocalStack(path string) (Stack, error) {
	st, err := loadState(path)
	if err != nil {
		return Stack{}, err
	}
	cfg, err := st.awsConfig()
	if err != nil {
		return Stack{}, err
	}
	return Stack{Name: st.StackName, Tables: st.Tables, AWS: cfg}, nil
}
