package pipelinetest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Meter counts the AWS requests made through the clients of an aws.Config
// it is installed in, and the DynamoDB capacity each one consumed, as AWS
// bills them: one request per HTTP attempt, read and write units as
// DynamoDB reports them with ReturnConsumedCapacity TOTAL (which the meter
// sets on every DynamoDB request), through the SDK's middleware stack. It
// is safe for concurrent use.
type Meter struct {
	mu    sync.Mutex
	calls []Call
}

// Call is one metered operation.
type Call struct {
	Service   string // the SDK's service ID: "DynamoDB", "SQS"
	Operation string // "PutItem", "SendMessage", ...
	// Item is what a DynamoDB call touched: "event" or "payload" (the
	// inbox's items), "ledger" (an effect's record in the inbox table),
	// "shop" (the business's table), or "" when it names no single item.
	Item     string
	Attempts int     // HTTP requests sent, retries included
	RCU, WCU float64 // consumed capacity, DynamoDB only
	// ConditionFailed is a DynamoDB write refused by its condition. AWS
	// bills it (the larger of the existing and the new item, at least one
	// write unit) but reports no capacity with the error.
	ConditionFailed bool
}

// Install adds the meter to cfg's API options: every client made from cfg
// afterwards is metered. businessTables are tables whose
// items are counted as "shop".
func (m *Meter) Install(cfg *aws.Config, businessTables ...string) {
	cfg.APIOptions = append(cfg.APIOptions, func(st *middleware.Stack) error {
		return m.addTo(st, businessTables)
	})
}

// attemptsKey carries a call's attempt counter down the middleware stack.
type attemptsKey struct{}

func (m *Meter) addTo(st *middleware.Stack, businessTables []string) error {
	err := st.Initialize.Add(middleware.InitializeMiddlewareFunc("hookinbox.meter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c := Call{Service: awsmiddleware.GetServiceID(ctx), Operation: awsmiddleware.GetOperationName(ctx)}
			table := requestCapacity(in.Parameters)
			c.Item = itemKind(in.Parameters, table, businessTables)
			attempts := new(int)
			ctx = middleware.WithStackValue(ctx, attemptsKey{}, attempts)
			out, md, err := next.HandleInitialize(ctx, in)
			c.Attempts = *attempts
			c.RCU, c.WCU = consumed(out.Result)
			var ccf *types.ConditionalCheckFailedException
			c.ConditionFailed = errors.As(err, &ccf)
			m.mu.Lock()
			m.calls = append(m.calls, c)
			m.mu.Unlock()
			return out, md, err
		}), middleware.Before)
	if err != nil {
		return err
	}
	return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("hookinbox.meter.attempt",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if n, ok := middleware.GetStackValue(ctx, attemptsKey{}).(*int); ok {
				*n++
			}
			return next.HandleFinalize(ctx, in)
		}), middleware.After) // after the retry middleware: once per attempt
}

// Take returns the calls metered since the last Take and forgets them.
func (m *Meter) Take() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.calls
	m.calls = nil
	return c
}

// Cost sums calls: DynamoDB and SQS requests, read and write units.
type Cost struct {
	DynamoDBRequests, SQSRequests int
	// RCU and WCU are the units DynamoDB reported, plus one write unit
	// for each write refused by its condition (see Call.ConditionFailed;
	// every conditional write hookinbox makes is on an item under 1 KB).
	RCU, WCU float64
	// ConditionFailed counts the writes refused by their condition.
	ConditionFailed int
	// WCUByItem splits WCU by Call.Item.
	WCUByItem map[string]float64
	// Operations counts requests by "Service.Operation".
	Operations map[string]int
}

// Sum adds calls up.
func Sum(calls []Call) Cost {
	c := Cost{WCUByItem: map[string]float64{}, Operations: map[string]int{}}
	for _, call := range calls {
		switch call.Service {
		case "DynamoDB":
			c.DynamoDBRequests += call.Attempts
		case "SQS":
			c.SQSRequests += call.Attempts
		}
		wcu := call.WCU
		if call.ConditionFailed {
			c.ConditionFailed++
			wcu++
		}
		c.RCU += call.RCU
		c.WCU += wcu
		if wcu > 0 {
			c.WCUByItem[call.Item] += wcu
		}
		c.Operations[call.Service+"."+call.Operation] += call.Attempts
	}
	return c
}

// Add returns c + d.
func (c Cost) Add(d Cost) Cost {
	s := Cost{
		DynamoDBRequests: c.DynamoDBRequests + d.DynamoDBRequests, SQSRequests: c.SQSRequests + d.SQSRequests,
		RCU: c.RCU + d.RCU, WCU: c.WCU + d.WCU, ConditionFailed: c.ConditionFailed + d.ConditionFailed, WCUByItem: map[string]float64{}, Operations: map[string]int{},
	}
	for _, x := range []Cost{c, d} {
		for k, v := range x.WCUByItem {
			s.WCUByItem[k] += v
		}
		for k, v := range x.Operations {
			s.Operations[k] += v
		}
	}
	return s
}

// OperationList returns Operations as "Service.Operation×n", sorted.
func (c Cost) OperationList() string {
	var ops []string
	for op, n := range c.Operations {
		ops = append(ops, fmt.Sprintf("%s×%d", strings.TrimPrefix(strings.TrimPrefix(op, "DynamoDB."), "SQS."), n))
	}
	sort.Strings(ops)
	return strings.Join(ops, " ")
}

// requestCapacity asks DynamoDB for the capacity a request consumes and
// returns the table it names.
func requestCapacity(params any) (table string) {
	total := types.ReturnConsumedCapacityTotal
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = total
		return deref(in.TableName)
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = total
		return deref(in.TableName)
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = total
		return deref(in.TableName)
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
		return deref(in.TableName)
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
		return deref(in.TableName)
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = total
	}
	return ""
}

// consumed returns the units a DynamoDB output reports.
func consumed(result any) (rcu, wcu float64) {
	var cc []types.ConsumedCapacity
	switch out := result.(type) {
	case *dynamodb.PutItemOutput:
		cc = one(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		cc = one(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		cc = one(out.ConsumedCapacity)
	case *dynamodb.GetItemOutput:
		cc = one(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		cc = one(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		cc = out.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		cc = out.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		cc = out.ConsumedCapacity
	}
	for _, c := range cc {
		r, w := units(c.ReadCapacityUnits, c.WriteCapacityUnits, c.CapacityUnits, isRead(result))
		rcu, wcu = rcu+r, wcu+w
	}
	return rcu, wcu
}

// units splits one ConsumedCapacity into read and write units. dynalite
// reports CapacityUnits only, as AWS does for a single table without
// indexes asked for TOTAL: a read's are read units, a write's write units.
func units(read, write, total *float64, isRead bool) (rcu, wcu float64) {
	switch {
	case read != nil || write != nil:
		return deref(read), deref(write)
	case isRead:
		return deref(total), 0
	}
	return 0, deref(total)
}

func isRead(result any) bool {
	switch result.(type) {
	case *dynamodb.GetItemOutput, *dynamodb.QueryOutput, *dynamodb.BatchGetItemOutput:
		return true
	}
	return false
}

// itemKind names the item a single-item DynamoDB call touches.
func itemKind(params any, table string, businessTables []string) string {
	var key map[string]types.AttributeValue
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		key = in.Item
	case *dynamodb.UpdateItemInput:
		key = in.Key
	case *dynamodb.DeleteItemInput:
		key = in.Key
	case *dynamodb.GetItemInput:
		key = in.Key
	default:
		return ""
	}
	for _, b := range businessTables {
		if table == b {
			return "shop"
		}
	}
	sk, ok := key["sk"].(*types.AttributeValueMemberS)
	switch {
	case !ok:
		return ""
	case sk.Value == "event" || sk.Value == "payload":
		return sk.Value
	}
	return "ledger"
}

func one(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
