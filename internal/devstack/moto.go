package devstack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// Families of emulators Start runs. Neither is trusted alone: make test
// runs the conformance suites and pipeline tests on both, and
// docs/reliability.md lists each one's quirks.
const (
	// FamilyDynalite is dynalite (DynamoDB) and local-aws-sqs (SQS), the
	// Node packages pinned in local/: the default.
	FamilyDynalite = "dynalite"
	// FamilyMoto is moto_server (pip install "moto[server]"), one server
	// for DynamoDB and SQS, started with MOTO_ACCOUNT_ID set to AccountID
	// so its ARNs match the ones the stack builds.
	FamilyMoto = "moto"
)

// FamilyEnv is the environment variable that selects the family when
// Options.Family is empty: HOOKINBOX_EMULATORS=moto.
const FamilyEnv = "HOOKINBOX_EMULATORS"

// FamilyFromEnv returns the family FamilyEnv names, FamilyDynalite when it
// is unset, or an error naming the accepted values.
func FamilyFromEnv() (string, error) {
	return family(os.Getenv(FamilyEnv))
}

func family(name string) (string, error) {
	switch name {
	case "", FamilyDynalite:
		return FamilyDynalite, nil
	case FamilyMoto:
		return FamilyMoto, nil
	}
	return "", fmt.Errorf("%s=%q: want %q (dynalite and local-aws-sqs, the default) or %q (moto_server)", FamilyEnv, name, FamilyDynalite, FamilyMoto)
}

// startMoto starts moto_server on 127.0.0.1 (opts.DynamoDBPort, else
// opts.SQSPort, else a free port) and returns once it answers HTTP. One
// server serves DynamoDB and SQS.
func startMoto(ctx context.Context, opts Options) (*Emulators, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("start moto: moto_server not found in PATH (pip install \"moto[server]\", or unset %s to use dynalite and local-aws-sqs): %w", FamilyEnv, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	port := opts.DynamoDBPort
	if port == 0 {
		port = opts.SQSPort
	}
	for attempt := 0; ; attempt++ {
		p := port
		if p == 0 {
			if p, err = freePort(); err != nil {
				return nil, fmt.Errorf("start moto: %w", err)
			}
		}
		e, err := runMoto(ctx, bin, p, opts)
		// A free port may be taken between freePort and the bind: try
		// another one, a few times.
		if err == nil || port != 0 || attempt == 2 || ctx.Err() != nil {
			return e, err
		}
	}
}

func runMoto(ctx context.Context, bin string, port int, opts Options) (*Emulators, error) {
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "MOTO_ACCOUNT_ID="+AccountID)
	proc, err := startChild(cmd, opts.Stdout, opts.Stderr)
	if err != nil {
		return nil, fmt.Errorf("start moto: %w", err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	e := &Emulators{DynamoDBURL: url, SQSURL: url, Family: FamilyMoto, proc: proc}
	if err := waitHTTP(ctx, url, proc); err != nil {
		_ = e.Stop()
		return nil, fmt.Errorf("start moto on port %d: %w", port, err)
	}
	return e, nil
}
