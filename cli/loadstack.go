package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/floor"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/provider"
)

// stackTargets returns the running stack's receiver of p's deliveries
// and, unless --floor=false, the floor program served in this process on
// the stack's emulators; and the stack, nil when --url and --secret name
// it.
func stackTargets(ctx context.Context, f *loadFlags, p provider.Provider) ([]*loadTarget, *devState, func(), error) {
	st, err := loadState(f.stateFile)
	if err != nil && (f.url == "" || f.secret == "" || f.floor) {
		return nil, nil, nil, err
	}
	if f.url == "" {
		f.url = st.BaseURL + webhookPath + p.Name()
	}
	if f.secret == "" {
		f.secret = st.receiverSecret(p)
	}
	if err := requireLoopback(f.url); err != nil {
		return nil, nil, nil, err
	}
	targets := []*loadTarget{{name: "receiver", url: f.url}}
	if !f.floor {
		return targets, st, func() {}, nil
	}
	floorURL, stop, err := startFloor(ctx, st, p)
	if err != nil {
		return nil, nil, nil, err
	}
	return append(targets, &loadTarget{name: "floor", url: floorURL}), st, stop, nil
}

// requireLoopback refuses a URL whose host is not a loopback address.
func requireLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return usagef("--url %q is not a URL", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return usagef("--url %s: load sends only to the loopback interface (127.0.0.1, ::1, localhost)", raw)
	}
	return nil
}

// startFloor serves the floor program on a free loopback port, on a
// stack of its own (tables and queues from template.yaml) on the running
// stack's emulators, and returns its webhook URL and how to stop it.
func startFloor(ctx context.Context, st *devState, p provider.Provider) (string, func(), error) {
	emu := &devstack.Emulators{DynamoDBURL: st.Endpoints["AWS_ENDPOINT_URL_DYNAMODB"], SQSURL: st.Endpoints["AWS_ENDPOINT_URL_SQS"], External: true}
	if err := requireLoopback(emu.DynamoDBURL); err != nil {
		return "", nil, fmt.Errorf("the stack's DynamoDB endpoint: %w", err)
	}
	if err := requireLoopback(emu.SQSURL); err != nil {
		return "", nil, fmt.Errorf("the stack's SQS endpoint: %w", err)
	}
	tpl, err := samtemplate.Load(filepath.Join(st.Root, "template.yaml"))
	if err != nil {
		return "", nil, err
	}
	stack, err := emu.CreateStack(ctx, tpl, "floor"+randomHex(4))
	if err != nil {
		return "", nil, fmt.Errorf("create the floor's tables and queues: %w", err)
	}
	h := floor.New(emu.DynamoDB(), emu.SQS(), stack.Tables["InboxTable"], stack.Queues["EventsQueue"].URL)
	api := &lambdalocal.HTTPAPI{Routes: []lambdalocal.Route{{Method: p.Webhook().HTTPMethod(), Path: webhookPath + "{provider}", Function: lambdalocal.InProcess(h.Handle)}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = stack.Delete(context.Background())
		return "", nil, err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() {
		_ = srv.Close()
		_ = stack.Delete(context.Background())
	}
	return "http://" + ln.Addr().String() + webhookPath + p.Name(), stop, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
