package pipelinetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/github"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// recording is a business that records the hash of every payload it is
// handed, and succeeds; with parkFirst it parks each event the first
// time it sees it (webhook.Permanent).
type recording struct {
	parkFirst bool
	mu        sync.Mutex
	seen      map[webhook.Key][]string
}

func (b *recording) Handle(_ context.Context, ev webhook.Event, _ effects.Runner) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen[ev.Key()] = append(b.seen[ev.Key()], inbox.PayloadSHA256(ev.Raw))
	if b.parkFirst && len(b.seen[ev.Key()]) == 1 {
		return webhook.Permanent(errors.New("parked on purpose"))
	}
	return nil
}

func (b *recording) hashes(key webhook.Key) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.seen[key])
}

// bigJSON returns a JSON object of exactly n bytes: head's members, then
// a padding string, as a large push or order pads its lists.
func bigJSON(head string, n int) []byte {
	open := `{` + head + `,"padding":"`
	return []byte(open + strings.Repeat("a", n-len(open)-2) + `"}`)
}

// providerRequest is the API Gateway request delivering body, signed as
// provider signs it; id is the event's id.
func providerRequest(provider, id string, body []byte) events.APIGatewayV2HTTPRequest {
	var headers map[string]string
	switch provider {
	case "github":
		headers = github.Headers(body, GitHubSecret, id, "push")
	case "shopify":
		headers = shopify.Headers(body, ShopifySecret, id, "orders/create", time.Now())
	}
	headers["content-type"] = "application/json"
	req := events.APIGatewayV2HTTPRequest{
		RouteKey: "POST /webhooks/{provider}", RawPath: "/webhooks/" + provider,
		Headers: headers, PathParameters: map[string]string{"provider": provider}, Body: string(body),
	}
	req.RequestContext.HTTP.Method = http.MethodPost
	return req
}

// objects returns the names of the body bucket's objects of key.
func objects(t *testing.T, p *Pipeline, key webhook.Key) []string {
	t.Helper()
	out, err := p.Stack.Emulators.S3().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{
		Bucket: aws.String(p.Stack.Buckets["BodyBucket"]), Prefix: aws.String(inbox.BodyPrefix + url.PathEscape(string(key)) + "/"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range out.Contents {
		names = append(names, aws.ToString(o.Key))
	}
	return names
}

// TestProviderSizedBodiesAreKept delivers, twice each, bodies of the sizes
// GitHub and Shopify send, too large for a DynamoDB item: each is accepted
// once and answered duplicate once, its body is stored once in S3, the
// processor reads it whole, and after the event is parked a replay
// finds it and the processor reads it again.
func TestProviderSizedBodiesAreKept(t *testing.T) {
	business := &recording{parkFirst: true, seen: map[webhook.Key][]string{}}
	p := NewWith(t, Options{Processor: processorfn.Builder(func(context.Context, aws.Config, func(string) string) (processorfn.Business, error) {
		return business, nil
	})})
	replayer := p.Build(t, "DlqReplayFunction", nil).(func(context.Context, replay.Request) (replay.Summary, error))
	for _, tc := range []struct {
		provider, id string
		size         int
		head         string
	}{
		{"github", "d-1mib", 1 << 20, `"ref":"refs/heads/main","repository":{"full_name":"octo/big"}`},
		{"github", "d-5mib", 5 << 20, `"ref":"refs/heads/main","repository":{"full_name":"octo/huge"}`},
		{"shopify", "e-2mib", 2 << 20, `"id":820982911946154508,"line_items":[{"id":1,"quantity":1}]`},
	} {
		t.Run(fmt.Sprintf("%s %d MiB", tc.provider, tc.size>>20), func(t *testing.T) {
			body := bigJSON(tc.head, tc.size)
			key := webhook.Key(tc.provider + "#" + tc.id)
			for i, want := range []string{"accepted", "duplicate"} {
				resp := p.Send(t, providerRequest(tc.provider, tc.id, body))
				var got struct{ Status string }
				_ = json.Unmarshal([]byte(resp.Body), &got)
				if resp.StatusCode != http.StatusOK || got.Status != want {
					t.Fatalf("delivery %d: %d %s; want 200 %s", i+1, resp.StatusCode, resp.Body, want)
				}
			}
			if got := objects(t, p, key); len(got) != 1 {
				t.Errorf("body objects %v; want one, written by the first delivery only", got)
			}
			it, err := p.Inbox.Get(context.Background(), key)
			if err != nil || it.PayloadObject == "" || it.PayloadSHA256 != inbox.PayloadSHA256(body) {
				t.Fatalf("claim %+v, %v; want it naming its object and the body's hash", it, err)
			}

			sum := inbox.PayloadSHA256(body)
			p.ProcessUntil(t, time.Minute, func() bool { return p.AllIn(t, []webhook.Key{key}, inbox.Dead) })
			if got := business.hashes(key); len(got) != 1 || got[0] != sum {
				t.Fatalf("the business was handed %v; want the whole body once", got)
			}
			if _, ok := p.DLQReasons(t)[key]; !ok {
				t.Fatalf("%s is not in the DLQ", key)
			}
			sumry, err := replayer(context.Background(), replay.Request{All: true})
			if err != nil || sumry.Moved != 1 || sumry.Failed != 0 {
				t.Fatalf("replay = %+v, %v; want the parked event moved", sumry, err)
			}
			p.ProcessUntil(t, time.Minute, func() bool { return p.AllIn(t, []webhook.Key{key}, inbox.Done) })
			if got := business.hashes(key); len(got) != 2 || got[1] != sum {
				t.Errorf("after the replay the business was handed %v; want the whole body again", got)
			}
		})
	}
}
