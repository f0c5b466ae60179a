package devstack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// Moto is a running moto_server, the second family of AWS emulators (pip
// package moto[server]; it speaks Secrets Manager, DynamoDB, SQS, SNS and
// CloudWatch among others), on 127.0.0.1.
type Moto struct {
	// URL is the endpoint of every service, such as http://127.0.0.1:41236.
	URL string
	// SerialDynamoDB is true when moto's DynamoDB requests are taken one at
	// a time (motoSerialDynamoDB), so its conditional writes decide races
	// as DynamoDB's do; false for stock moto_server.
	SerialDynamoDB bool

	proc *child
}

// StartMoto starts moto_server on a free 127.0.0.1 port, with
// MOTO_ACCOUNT_ID set to AccountID so the ARNs it makes match the ones
// CreateStack builds, and returns once it answers HTTP. ctx bounds the
// start only; it runs until Stop or until this process exits.
func StartMoto(ctx context.Context, opts Options) (*Moto, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("start moto_server: not found in PATH (pip install 'moto[server]'): %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	// A port found free may be taken by another process before moto binds
	// it (test binaries run side by side): moto then exits, and whatever
	// holds the port must not pass for moto. So moto is asked for its own
	// API, and started again on another port if it exits.
	for try := 1; ; try++ {
		m, err := startMotoOnce(ctx, bin, opts)
		if err == nil || try == 3 || ctx.Err() != nil {
			return m, err
		}
	}
}

func startMotoOnce(ctx context.Context, bin string, opts Options) (*Moto, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	cmd, serial := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port)), false
	if py, err := exec.LookPath("python3"); err == nil && exec.Command(py, "-c", "import moto.moto_server.werkzeug_app, werkzeug.serving").Run() == nil {
		// moto_server itself, but with DynamoDB's requests taken one at a
		// time, as DynamoDB orders the writes to one item: stock
		// moto_server lets two racing conditional writes both succeed.
		cmd, serial = exec.Command(py, "-c", motoSerialDynamoDB, "127.0.0.1", strconv.Itoa(port)), true
	}
	cmd.Env = append(os.Environ(), "MOTO_ACCOUNT_ID="+AccountID)
	proc, err := startChild(cmd, opts.Stdout, opts.Stderr)
	if err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	m := &Moto{URL: fmt.Sprintf("http://127.0.0.1:%d", port), SerialDynamoDB: serial, proc: proc}
	if err := waitAnswer(ctx, m.URL+"/moto-api/data.json", proc, func(status int) bool { return status == http.StatusOK }); err != nil {
		_ = m.Stop()
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	return m, nil
}

// Stop stops moto_server and waits for it to exit. It is idempotent.
func (m *Moto) Stop() error {
	if m == nil || m.proc == nil {
		return nil
	}
	if err := m.proc.stop(3 * time.Second); err != nil {
		return fmt.Errorf("stop moto_server: %w", err)
	}
	return nil
}

// SecretsManager returns a Secrets Manager client for moto, configured as
// Emulators.AWSConfig configures clients (region, credentials, retries).
func (m *Moto) SecretsManager() *secretsmanager.Client {
	return secretsmanager.NewFromConfig((&Emulators{}).configAt(m.URL))
}

// motoSerialDynamoDB runs moto's server app (as moto_server does) behind a
// WSGI wrapper that serialises DynamoDB requests (X-Amz-Target
// DynamoDB_20120810.*), so moto's conditional writes decide races as
// DynamoDB's do. Other services stay concurrent: SQS long polls must not
// block anything.
const motoSerialDynamoDB = `
import os, sys, threading
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple
host, port = sys.argv[1], int(sys.argv[2])
os.environ.setdefault("MOTO_PORT", str(port))
app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()
def serial(environ, start_response):
    if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
        with lock:
            return list(app(environ, start_response))
    return app(environ, start_response)
run_simple(host, port, serial, threaded=True, use_reloader=False)
`
