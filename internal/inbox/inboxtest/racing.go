package inboxtest

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Racing is a DynamoDB client for inbox.NewDynamoDB that drops the item
// from a refused UpdateItem's error, as dynalite does, and runs Between
// once before it returns: another worker's write lands between the
// refusal and the store's read of the item.
type Racing struct {
	*dynamodb.Client
	mu      sync.Mutex
	between func()
}

// Between sets what runs after the next refused UpdateItem.
func (r *Racing) Between(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.between = f
}

// UpdateItem calls DynamoDB, then on a refusal drops its item and runs
// the pending Between.
func (r *Racing) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := r.Client.UpdateItem(ctx, in, opts...)
	var e *types.ConditionalCheckFailedException
	if errors.As(err, &e) {
		e.Item = nil
		r.mu.Lock()
		between := r.between
		r.between = nil
		r.mu.Unlock()
		if between != nil {
			between()
		}
	}
	return out, err
}
