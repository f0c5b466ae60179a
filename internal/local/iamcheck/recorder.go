package iamcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The variables of the check's two steps: the tests' local stacks record
// their functions' requests in $HOOKINBOX_IAM_RECORD, and the check reads
// every record under $HOOKINBOX_IAM_CHECK (make test-iam, make test).
const (
	RecordVariable = "HOOKINBOX_IAM_RECORD"
	CheckVariable  = "HOOKINBOX_IAM_CHECK"
)

// AccessKeyID is the access key ID the function logicalID signs with in a
// recorded local stack; the emulators accept any.
func AccessKeyID(logicalID string) string { return "LOCAL-" + logicalID }

// Stack is a recorded stack: what its functions' roles resolve with.
type Stack struct {
	Name   string            `json:"name"`
	Test   string            `json:"test,omitempty"`
	Params map[string]string `json:"params,omitempty"`
	Region string            `json:"region"`
	// AccountID is the local stack's account.
	AccountID string `json:"accountId"`
	// Resources are the physical values of its resources: logical ID →
	// attribute ("" for Ref, "Arn", ...) → value.
	Resources map[string]map[string]string `json:"resources"`
}

// Call is one distinct request a function made: the permissions it
// needs, or why they could not be told.
type Call struct {
	Function string   `json:"function"`
	Access   []Access `json:"access,omitempty"`
	Error    string   `json:"error,omitempty"`
}

type line struct {
	Stack *Stack `json:"stack,omitempty"`
	Call  *Call  `json:"call,omitempty"`
}

// Recorder proxies the local AWS endpoints of one stack and writes each
// distinct request of its functions to <dir>/<stack>.jsonl.
type Recorder struct {
	place     Place
	functions map[string]string // access key ID → logical ID

	mu      sync.Mutex
	file    *os.File
	seen    map[string]bool
	fronts  map[string]string // upstream URL → proxy URL
	servers []*http.Server
}

// NewRecorder starts the record of stack st in dir for functions, whose
// requests p maps.
func NewRecorder(dir string, st Stack, p Place, functions []string) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("iam record: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, st.Name+".jsonl"))
	if err != nil {
		return nil, fmt.Errorf("iam record: %w", err)
	}
	r := &Recorder{place: p, functions: map[string]string{}, file: f, seen: map[string]bool{}, fronts: map[string]string{}}
	for _, fn := range functions {
		r.functions[AccessKeyID(fn)] = fn
	}
	if err := r.write(line{Stack: &st}); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *Recorder) write(l line) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("iam record: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[string(b)] {
		return nil
	}
	r.seen[string(b)] = true
	if _, err := r.file.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("iam record: %w", err)
	}
	return nil
}

// Front returns the URL of a proxy on 127.0.0.1 that records each request
// and passes it on to upstream unchanged (its Host header too, which
// SigV4 signed). When upstream cannot be reached, the proxy closes the
// connection without an answer, as the upstream would have.
func (r *Recorder) Front(upstream string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u, ok := r.fronts[upstream]; ok {
		return u, nil
	}
	target, err := url.Parse(upstream)
	if err != nil {
		return "", fmt.Errorf("iam record: front %s: %w", upstream, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("iam record: front %s: %w", upstream, err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
		// As many idle connections as the functions keep to the emulator.
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute},
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.record(req, body)
		proxy.ServeHTTP(w, req)
	})}
	go srv.Serve(ln)
	r.servers = append(r.servers, srv)
	u := "http://" + ln.Addr().String()
	r.fronts[upstream] = u
	return u, nil
}

// record writes the call req makes, if a function of the stack signed it;
// the test's own requests are not a function's.
func (r *Recorder) record(req *http.Request, body []byte) {
	key, _, err := Credential(req)
	fn, ok := r.functions[key]
	if err != nil || !ok {
		return
	}
	call := Call{Function: fn}
	if call.Access, err = r.place.Request(req, body); err != nil {
		call.Error = err.Error()
	}
	if err := r.write(line{Call: &call}); err != nil {
		// The record is incomplete: say so in it, where Check reads it.
		_ = r.write(line{Call: &Call{Function: fn, Error: err.Error()}})
	}
}

// Close stops the proxies and closes the record.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, s := range r.servers {
		errs = append(errs, s.Close())
	}
	errs = append(errs, r.file.Close())
	return errors.Join(errs...)
}

// Recorded is one stack's record: the stack and its functions' distinct
// calls.
type Recorded struct {
	Stack Stack
	Calls []Call
}

// ReadDir reads every record in dir and its subdirectories (one per
// emulator family, say).
func ReadDir(dir string) ([]Recorded, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read iam records: %w", err)
	}
	var out []Recorded
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read iam records: %w", err)
		}
		var rec Recorded
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var l line
			if err := dec.Decode(&l); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("read iam record %s: %w", path, err)
			}
			switch {
			case l.Stack != nil:
				rec.Stack = *l.Stack
			case l.Call != nil:
				rec.Calls = append(rec.Calls, *l.Call)
			}
		}
		if rec.Stack.Name == "" {
			return nil, fmt.Errorf("read iam record %s: no stack line", path)
		}
		out = append(out, rec)
	}
	return out, nil
}
