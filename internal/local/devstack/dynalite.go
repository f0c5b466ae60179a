package devstack

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// startDynalite starts familyDynalite: local/emulators.js under node, which
// serves dynalite and local-aws-sqs on opts' ports and prints their
// endpoints as its first line of output. It finds the repository root
// (RepoRoot) and runs from EmulatorDir, installing the emulators there
// first (npm ci) when they are missing.
func startDynalite(ctx context.Context, opts Options) (*Emulators, error) {
	root, err := RepoRoot(opts.Root)
	if err != nil {
		return nil, err
	}
	dir, err := EmulatorDir(root)
	if err != nil {
		return nil, err
	}
	if err := ensureNodeModules(ctx, root, dir, opts.Stderr); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}

	// gofakes3 starts beside node (its first build takes a while).
	type s3Server struct {
		url  string
		proc *child
		err  error
	}
	s3Started := make(chan s3Server, 1)
	go func() {
		url, proc, err := startS3(ctx, opts)
		s3Started <- s3Server{url, proc, err}
	}()
	withS3 := func(e *Emulators, err error) (*Emulators, error) {
		s := <-s3Started
		if err == nil && s.err != nil {
			_ = e.Stop()
			err = s.err
		}
		if err != nil {
			if s.proc != nil {
				_ = s.proc.stop(time.Second)
			}
			return nil, err
		}
		e.S3URL, e.s3proc = s.url, s.proc
		return e, nil
	}
	return withS3(startNode(ctx, dir, opts))
}

// startNode starts emulators.js from dir, the emulators directory (see
// startDynalite).
func startNode(ctx context.Context, dir string, opts Options) (*Emulators, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("start emulators: node not found in PATH (install Node 20): %w", err)
	}
	args := []string{filepath.Join(dir, "emulators.js"),
		"--dynamodb-port", strconv.Itoa(opts.DynamoDBPort),
		"--sqs-port", strconv.Itoa(opts.SQSPort)}
	if !opts.WarmUp {
		args = append(args, "--warmup", "0")
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	proc, stdin, stdout, err := startPiped(cmd, opts.Stderr)
	if err != nil {
		return nil, fmt.Errorf("start emulators: %w", err)
	}
	e := &Emulators{Family: familyDynalite, proc: proc, stdin: stdin}
	if err := e.readEndpoints(ctx, stdout, orDiscard(opts.Stdout)); err != nil {
		_ = e.Stop()
		return nil, err
	}
	if err := e.waitReady(ctx); err != nil {
		_ = e.Stop()
		return nil, err
	}
	return e, nil
}

// startPiped starts cmd with pipes for its stdin and stdout, and returns
// their ends it does not hold.
func startPiped(cmd *exec.Cmd, stderr io.Writer) (proc *child, stdin, stdout *os.File, err error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, nil, nil, err
	}
	cmd.Stdin = stdinR
	cmd.Stdout = stdoutW
	proc, err = startChild(cmd, nil, stderr)
	// The child holds its own copies of these ends now.
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, nil, nil, err
	}
	return proc, stdinW, stdoutR, nil
}

// readEndpoints reads the emulators' endpoints, the one JSON line they
// print first, from stdout, then passes the rest of it on to out.
func (e *Emulators) readEndpoints(ctx context.Context, stdout io.ReadCloser, out io.Writer) error {
	type endpoints struct {
		DynamoDB string `json:"dynamodb"`
		SQS      string `json:"sqs"`
	}
	lines := make(chan endpoints, 1)
	readErr := make(chan error, 1)
	go func() {
		defer stdout.Close()
		br := bufio.NewReader(stdout)
		line, err := br.ReadBytes('\n')
		var ep endpoints
		if err == nil {
			err = json.Unmarshal(line, &ep)
		}
		if err == nil && (ep.DynamoDB == "" || ep.SQS == "") {
			err = fmt.Errorf("unexpected first line %q", line)
		}
		if err != nil {
			readErr <- err
		} else {
			lines <- ep
		}
		_, _ = io.Copy(out, br)
	}()
	select {
	case ep := <-lines:
		e.DynamoDBURL, e.SQSURL = ep.DynamoDB, ep.SQS
		return nil
	case err := <-readErr:
		// Usually the process died; give Wait a moment to report why.
		select {
		case <-e.proc.done:
			return fmt.Errorf("start emulators: %w", e.proc.exitError("node local/emulators.js"))
		case <-time.After(time.Second):
			return fmt.Errorf("start emulators: read endpoints: %w", err)
		}
	case <-ctx.Done():
		return fmt.Errorf("start emulators: no endpoints from node local/emulators.js: %w", ctx.Err())
	}
}
