package inbox

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hookinbox/hookinbox/webhook"
)

// MaxSubjects is the most subjects an event is indexed under: 32 KB on
// its claim, far within DynamoDB's item limit, so a body that names
// thousands of addresses is still claimed.
const MaxSubjects = 1000

// FindSubjects returns the keyed hashes of the people ev is about, as
// find gives them (privacy.Subjects; nil finds none): the first
// MaxSubjects, with a warning on log when ev names more. It is how the
// intake finds what a claim carries and the processor what it indexes of
// an event it fetched.
func FindSubjects(ctx context.Context, find func(context.Context, webhook.Event) ([]string, error), ev webhook.Event, log *slog.Logger) ([]string, error) {
	if find == nil {
		return nil, nil
	}
	hashes, err := find(ctx, ev)
	if err != nil {
		return nil, fmt.Errorf("the subjects of %s: %w", ev.Key(), err)
	}
	if len(hashes) > MaxSubjects {
		log.WarnContext(ctx, "the event names more people than a claim holds; indexed under the first",
			"key", ev.Key().String(), "type", ev.Type, "subjects", len(hashes), "kept", MaxSubjects)
		hashes = hashes[:MaxSubjects]
	}
	return hashes, nil
}
