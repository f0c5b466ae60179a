package lambdalocal

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Schedule invokes a function every Interval with a scheduled EventBridge
// event, as an AWS::Serverless::Function's Schedule event does.
type Schedule struct {
	Name     string
	Interval time.Duration
	Function Invoker
	Log      *slog.Logger
}

// Run invokes the function every Interval until ctx is cancelled.
func (s *Schedule) Run(ctx context.Context) error {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			if _, err := s.Fire(ctx, now); err != nil && ctx.Err() == nil {
				log := s.Log
				if log == nil {
					log = slog.New(slog.DiscardHandler)
				}
				log.Warn("schedule: function failed", "schedule", s.Name, "reason", err.Error())
			}
		}
	}
}

// Fire invokes the function once, as the schedule would at now.
func (s *Schedule) Fire(ctx context.Context, now time.Time) ([]byte, error) {
	payload, err := json.Marshal(events.EventBridgeEvent{
		Version:    "0",
		ID:         "local-" + now.UTC().Format("20060102T150405.000"),
		DetailType: "Scheduled Event",
		Source:     "aws.events",
		AccountID:  "123456789012",
		Time:       now.UTC(),
		Region:     "us-east-1",
		Resources:  []string{"arn:aws:events:us-east-1:123456789012:rule/" + s.Name},
		Detail:     json.RawMessage("{}"),
	})
	if err != nil {
		return nil, err
	}
	return s.Function.Invoke(ctx, payload)
}
