package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/github"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/webhook"
)

// providerRun returns the summary's run of provider.
func providerRun(t *testing.T, sum reconcile.Summary, provider string) reconcile.ProviderRun {
	t.Helper()
	for _, pr := range sum.Providers {
		if pr.Provider == provider {
			return pr
		}
	}
	t.Fatalf("the run has no %s source: %+v", provider, sum.Providers)
	return reconcile.ProviderRun{}
}

// A hook had 30 deliveries in the last 40 minutes; 10 failed while the
// endpoint was down. One run brings back exactly those 10 from their
// records, each processed once; a second run brings nothing and fetches
// nothing.
func TestGitHubDeliveriesThatFailedAreClaimedOnceFromTheirRecords(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	const hook = "repos/acme/shop/hooks/12345"
	s.GitHub.MaxPage = 7 // 30 deliveries in 5 pages, linked by their Link headers
	start := time.Now().Add(-40 * time.Minute)
	var delivered, all []webhook.Key
	missed := map[webhook.Key]int{}
	for i := range 30 {
		guid := fmt.Sprintf("9f1c2d3e-0000-4000-8000-%012d", i)
		body := fmt.Appendf(nil, `{"action":"opened","issue":{"number":%d},"repository":{"full_name":"acme/shop"}}`, i)
		headers := github.Headers(body, pipelinetest.GitHubSecret, guid, "issues")
		key := webhook.NewKey("github", guid)
		all = append(all, key)
		status := 200
		if i%3 == 1 {
			status = 502 // the endpoint was down
			missed[key] = 1
		} else {
			resp := s.Send(t, lambdalocal.WebhookEvent("github", "POST", headers, body))
			if resp.StatusCode != 200 {
				t.Fatalf("delivery %d: %d %s", i, resp.StatusCode, resp.Body)
			}
			delivered = append(delivered, key)
		}
		s.GitHub.AddDelivery(hook, standin.GitHubDelivery{GUID: guid, DeliveredAt: start.Add(time.Duration(i) * time.Minute).UTC().Truncate(time.Second),
			StatusCode: status, Event: "issues", Action: "opened", Headers: headers, Payload: body})
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllFinal(t, delivered) })

	run := reconciler(t, s, map[string]string{"GITHUB_RECONCILE_HOOKS": hook, "GITHUB_RECONCILE_LOOKBACK": "1h"})
	sum, err := run(ctx)
	if err != nil {
		t.Fatalf("reconciler: %v\n%+v", err, sum)
	}
	if gh := providerRun(t, sum, "github"); gh.Missed != 10 || gh.Errors != 0 {
		t.Errorf("github source: %+v, want 10 missed, no errors", gh)
	}
	if diff := cmp.Diff(missed, queued(t, s)); diff != "" {
		t.Errorf("enqueued by the reconciler (-want +got):\n%s", diff)
	}
	for _, k := range all {
		want := missed[k] // a record is read only for a delivery that has no claim
		if got := s.GitHub.Records(k.EventID()); got != want {
			t.Errorf("%s: record fetched %d times, want %d", k, got, want)
		}
	}
	if n := s.GitHub.Redelivered(); n != 0 {
		t.Errorf("%d redeliveries asked for, want none: the records are claimed", n)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllFinal(t, all) })
	for k := range missed {
		it, err := s.Inbox.Get(ctx, k)
		if err != nil || it.Attempts != 1 || it.Status != inbox.Ignored {
			t.Errorf("%s: %+v, %v; want processed once (IGNORED: the shop has no GitHub handler)", k, it, err)
		}
		if it.EventType != "issues" {
			t.Errorf("%s: type %q, want the delivery's X-GitHub-Event", k, it.EventType)
		}
	}

	again, err := run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gh := providerRun(t, again, "github"); gh.Missed != 0 {
		t.Errorf("second run: %+v, want nothing", gh)
	}
	if got := queued(t, s); len(got) != 0 {
		t.Errorf("events queue after the second run: %v", got)
	}
	for k := range missed {
		if got := s.GitHub.Records(k.EventID()); got != 1 {
			t.Errorf("%s: record fetched %d times after two runs, want 1", k, got)
		}
	}
}

// A source that fails does not keep the others from running: with the
// GitHub token refused, the Stripe source still claims its missed event,
// and the run's error and the github source's errors say which failed.
func TestOneSourceFailingDoesNotStopTheOthers(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	keys, _ := stripeHas(t, s, 400, 1, func(int) time.Time { return time.Now().Add(-20 * time.Minute) })
	s.GitHub.AddDelivery("repos/acme/shop/hooks/7", standin.GitHubDelivery{GUID: "5e7a9b10-0000-4000-8000-000000000001",
		DeliveredAt: time.Now().Add(-20 * time.Minute).UTC(), StatusCode: 502, Event: "push", Payload: []byte(`{}`)})
	run := reconciler(t, s, map[string]string{"STRIPE_EVENTS_LOOKBACK": "1h", "GITHUB_RECONCILE_HOOKS": "repos/acme/shop/hooks/7",
		"GITHUB_RECONCILE_LOOKBACK": "1h", "GITHUB_TOKEN": "ghp_revoked"})
	sum, err := run(ctx)
	if err == nil || !strings.Contains(err.Error(), "github: ") || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("run error = %v, want the github source's refused token", err)
	}
	if gh := providerRun(t, sum, "github"); gh.Errors != 1 || gh.Missed != 0 {
		t.Errorf("github source: %+v, want 1 error, nothing claimed", gh)
	}
	if st := providerRun(t, sum, "stripe"); st.Errors != 0 || st.Missed != 1 {
		t.Errorf("stripe source: %+v, want its missed event claimed", st)
	}
	if diff := cmp.Diff(map[webhook.Key]int{keys[0]: 1}, queued(t, s)); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
	lines := s.Metrics(t)
	if got := emf.Sum(lines, metrics.ReconcileErrors, map[string]string{metrics.DimProvider: "github"}, time.Time{}); got != 1 {
		t.Errorf("ReconcileErrors{Provider=github} = %v, want 1", got)
	}
	if got := emf.Sum(lines, metrics.ReconcileErrors, map[string]string{metrics.DimProvider: "stripe"}, time.Time{}); got != 0 {
		t.Errorf("ReconcileErrors{Provider=stripe} = %v, want 0", got)
	}
}
