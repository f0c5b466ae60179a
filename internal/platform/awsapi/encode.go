package awsapi

import (
	"encoding/base64"
	"slices"
	"strconv"
)

// appender is a request that writes its own JSON, the bytes encoding/json
// would write for it, without encoding/json's reflection and its second
// pass over each MarshalJSON's output: the requests a new webhook makes
// (the claim, the payload write, the message) do.
type appender interface {
	appendJSON(b []byte) ([]byte, error)
}

// object writes the members of a JSON object in the order given, as
// encoding/json writes a struct's fields.
type object struct {
	b   []byte
	err error
}

func (o *object) name(n string) {
	if len(o.b) > 0 && o.b[len(o.b)-1] != '{' {
		o.b = append(o.b, ',')
	}
	o.b = appendString(o.b, n)
	o.b = append(o.b, ':')
}

// str writes a string member; omitEmpty leaves out "".
func (o *object) str(n, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	o.name(n)
	o.b = appendString(o.b, v)
}

// int writes an integer member; omitEmpty leaves out 0.
func (o *object) int(n string, v int64, omitEmpty bool) {
	if omitEmpty && v == 0 {
		return
	}
	o.name(n)
	o.b = strconv.AppendInt(o.b, v, 10)
}

// item writes an Item member; omitEmpty leaves out an empty one.
func (o *object) item(n string, m Item, omitEmpty bool) {
	if (omitEmpty && len(m) == 0) || o.err != nil {
		return
	}
	o.name(n)
	if m == nil {
		o.b = append(o.b, "null"...)
		return
	}
	o.b, o.err = appendItem(o.b, m)
}

// names writes a map[string]string member, keys sorted, leaving out an
// empty one (every such field is omitempty).
func (o *object) names(n string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	o.name(n)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	o.b = append(o.b, '{')
	for i, k := range keys {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = appendString(o.b, k)
		o.b = append(o.b, ':')
		o.b = appendString(o.b, m[k])
	}
	o.b = append(o.b, '}')
}

func (o *object) end() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	return append(o.b, '}'), nil
}

func newObject(b []byte) *object { return &object{b: append(b, '{')} }

func (in *PutItemInput) appendJSON(b []byte) ([]byte, error) {
	o := newObject(b)
	o.str("TableName", in.TableName, false)
	o.item("Item", in.Item, false)
	o.str("ConditionExpression", in.ConditionExpression, true)
	o.names("ExpressionAttributeNames", in.ExpressionAttributeNames)
	o.item("ExpressionAttributeValues", in.ExpressionAttributeValues, true)
	o.str("ReturnValues", in.ReturnValues, true)
	o.str("ReturnValuesOnConditionCheckFailure", in.ReturnValuesOnConditionCheckFailure, true)
	o.str("ReturnConsumedCapacity", in.ReturnConsumedCapacity, true)
	return o.end()
}

func (in *UpdateItemInput) appendJSON(b []byte) ([]byte, error) {
	o := newObject(b)
	o.str("TableName", in.TableName, false)
	o.item("Key", in.Key, false)
	o.str("UpdateExpression", in.UpdateExpression, true)
	o.str("ConditionExpression", in.ConditionExpression, true)
	o.names("ExpressionAttributeNames", in.ExpressionAttributeNames)
	o.item("ExpressionAttributeValues", in.ExpressionAttributeValues, true)
	o.str("ReturnValues", in.ReturnValues, true)
	o.str("ReturnValuesOnConditionCheckFailure", in.ReturnValuesOnConditionCheckFailure, true)
	o.str("ReturnConsumedCapacity", in.ReturnConsumedCapacity, true)
	return o.end()
}

func (in *SendMessageInput) appendJSON(b []byte) ([]byte, error) {
	o := newObject(b)
	o.str("QueueUrl", in.QueueUrl, false)
	o.str("MessageBody", in.MessageBody, false)
	o.int("DelaySeconds", int64(in.DelaySeconds), true)
	o.attributes("MessageAttributes", in.MessageAttributes)
	o.attributes("MessageSystemAttributes", in.MessageSystemAttributes)
	return o.end()
}

// attributes writes a map of message attributes, names sorted, leaving out
// an empty one (both such fields are omitempty).
func (o *object) attributes(n string, m map[string]MessageAttributeValue) {
	if len(m) == 0 {
		return
	}
	o.name(n)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	o.b = append(o.b, '{')
	for i, k := range keys {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = appendString(o.b, k)
		o.b = append(o.b, ':')
		v := m[k]
		a := newObject(o.b)
		a.str("DataType", v.DataType, false)
		a.str("StringValue", v.StringValue, true)
		if len(v.BinaryValue) > 0 {
			a.name("BinaryValue")
			a.b = append(a.b, '"')
			a.b = base64.StdEncoding.AppendEncode(a.b, v.BinaryValue)
			a.b = append(a.b, '"')
		}
		o.b, _ = a.end()
	}
	o.b = append(o.b, '}')
}
