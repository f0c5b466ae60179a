package inbox

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// subjectCursor is where DynamoDB.SubjectEvents goes on: its source (a
// shard of the pending index, then each hash's index partition in turn)
// and the last key read there (nil: the source's start). As text it is
// JSON: only string and number keys occur.
type subjectCursor struct {
	source int
	after  attrs
}

// cursorJSON is a subjectCursor as text.
type cursorJSON struct {
	Source int               `json:"source"`
	S      map[string]string `json:"s,omitempty"`
	N      map[string]string `json:"n,omitempty"`
}

// errCursor: a cursor SubjectEvents did not give, or gave for other
// hashes.
var errCursor = errors.New("inbox: not a cursor of these subjects' events")

// parseCursor reads a cursor of hashes hashes; "" is the start.
func parseCursor(s string, hashes int) (subjectCursor, error) {
	if s == "" {
		return subjectCursor{}, nil
	}
	var j cursorJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil || j.Source < 0 || j.Source >= PendingShards+hashes {
		return subjectCursor{}, fmt.Errorf("%w: %q", errCursor, s)
	}
	c := subjectCursor{source: j.Source}
	for name, v := range j.S {
		c.set(name, &types.AttributeValueMemberS{Value: v})
	}
	for name, v := range j.N {
		c.set(name, &types.AttributeValueMemberN{Value: v})
	}
	return c, nil
}

func (c *subjectCursor) set(name string, v types.AttributeValue) {
	if c.after == nil {
		c.after = attrs{}
	}
	c.after[name] = v
}

// next returns the cursor after a page of c's source that ended at last
// (nil: the source's end), or "" when every source is read.
func (c subjectCursor) next(last attrs, hashes int) string {
	j := cursorJSON{Source: c.source}
	if len(last) == 0 {
		j.Source++
		if j.Source == PendingShards+hashes {
			return ""
		}
	}
	for name, v := range last {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			j.S = mapSet(j.S, name, v.Value)
		case *types.AttributeValueMemberN:
			j.N = mapSet(j.N, name, v.Value)
		}
	}
	b, _ := json.Marshal(j) // strings and ints only
	return string(b)
}

func mapSet(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
