package inbox_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
)

// lossy sends every request, but loses the answer of the next one whose
// X-Amz-Target ends with an operation in lose: the write is applied and
// the client sees a reset connection, as when a network drops an answer.
type lossy struct {
	mu   sync.Mutex
	lose map[string]int
}

func (l *lossy) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp, err
	}
	op := req.Header.Get("X-Amz-Target")
	op = op[strings.IndexByte(op, '.')+1:]
	l.mu.Lock()
	drop := l.lose[op] > 0
	if drop {
		l.lose[op]--
	}
	l.mu.Unlock()
	if !drop {
		return resp, nil
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
}

// TestRetriedWritesThatWereAppliedSucceed loses the answer of each
// conditional write once, after DynamoDB applied it: the client retries,
// the retry is refused by the write's own first attempt, and the store
// must recognise its marks and succeed, not report a duplicate, a held
// lease or a lost lease.
func TestRetriedWritesThatWereAppliedSucceed(t *testing.T) {
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	l := &lossy{lose: map[string]int{}}
	cfg := emu.AWSConfig()
	cfg.BaseEndpoint = aws.String(emu.DynamoDBURL)
	cfg.HTTPClient = l
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = time.Millisecond; o.RateLimiter = ratelimit.None })
	}
	s := inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), st.Tables["InboxTable"])
	ctx := context.Background()
	now := time.Now().UTC()
	ev := inboxtest.Event("evt_lost_answers")

	l.lose["PutItem"] = 1
	it, err := s.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour})
	if err != nil {
		t.Fatalf("Claim whose first answer was lost: %v, want success", err)
	}
	if it.Status != inbox.Received || !it.ReceivedAt.Equal(now) {
		t.Errorf("Claim returned %+v", it)
	}
	// A real duplicate is still a duplicate, retried or not.
	l.lose["PutItem"] = 1
	if _, err := s.Claim(ctx, inbox.Claim{Event: ev, At: now.Add(time.Second), TTL: time.Hour}); !errors.Is(err, inbox.ErrAlreadyClaimed) {
		t.Errorf("second Claim: %v, want ErrAlreadyClaimed", err)
	}

	l.lose["UpdateItem"] = 1
	if _, err := s.MarkEnqueued(ctx, it.Key, now.Add(time.Minute), now.Add(2*time.Minute)); err != nil {
		t.Errorf("MarkEnqueued whose first answer was lost: %v, want success", err)
	}
	l.lose["UpdateItem"] = 1
	leased, err := s.Lease(ctx, it.Key, "w1", now.Add(3*time.Minute), time.Minute)
	if err != nil || leased.LeaseOwner != "w1" || leased.Attempts != 1 {
		t.Errorf("Lease whose first answer was lost: %+v, %v; want owner w1, 1 attempt", leased, err)
	}
	l.lose["UpdateItem"] = 1
	done, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Done, Outcome: "ok", At: now.Add(4 * time.Minute)})
	if err != nil || done.Status != inbox.Done {
		t.Errorf("Finish whose first answer was lost: %+v, %v; want DONE", done, err)
	}
	// Another worker's Finish is still refused.
	l.lose["UpdateItem"] = 1
	if _, err := s.Finish(ctx, it.Key, "w2", inbox.Result{Status: inbox.Done, Outcome: "ok", At: now.Add(5 * time.Minute)}); !errors.Is(err, inbox.ErrLeaseLost) {
		t.Errorf("Finish by a worker without the lease: %v, want ErrLeaseLost", err)
	}

}
